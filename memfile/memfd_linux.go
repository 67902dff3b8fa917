package memfile

import (
	"golang.org/x/sys/unix"
)

// probe checks that memfd_create works (a kernel before 3.17, or a
// sandbox that filters it, has none).
func probe() error {
	fd, err := unix.MemfdCreate("gcfs-probe", unix.MFD_CLOEXEC)
	if err != nil {
		return ErrUnsupported
	}
	closeFD(fd)
	return nil
}

// create makes an anonymous file of size bytes (its size set first, so the
// kernel reads it whole as soon as it is filled).
func create(size int64) (int, error) {
	fd, err := unix.MemfdCreate("gcfs", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if err := unix.Ftruncate(fd, size); err != nil {
		closeFD(fd)
		return -1, err
	}
	return fd, nil
}

func dup(fd int) (int, error) {
	return unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
}

func closeFD(fd int) {
	if fd >= 0 {
		_ = unix.Close(fd)
	}
}

// writeVec writes vecs at off with pwritev, again after a short write,
// skipping empty pieces, in batches the system call takes (IOV_MAX).
func writeVec(fd int, vecs [][]byte, off int64) (int, error) {
	const iovMax = 1024
	total := 0
	var batch [][]byte
	for len(vecs) > 0 {
		batch = batch[:0]
		for len(vecs) > 0 && len(batch) < iovMax {
			if len(vecs[0]) > 0 {
				batch = append(batch, vecs[0])
			}
			vecs = vecs[1:]
		}
		for len(batch) > 0 {
			n, err := unix.Pwritev(fd, batch, off)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return total, err
			}
			if n == 0 {
				return total, unix.EIO
			}
			total += n
			off += int64(n)
			for n > 0 && len(batch) > 0 {
				if n >= len(batch[0]) {
					n -= len(batch[0])
					batch = batch[1:]
				} else {
					batch[0] = batch[0][n:]
					n = 0
				}
			}
		}
	}
	return total, nil
}
