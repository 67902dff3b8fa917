package fusefs

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"gcfs/fsnode"
)

// listDir reads a directory's names through getdents buffers of bufSize.
func listDir(t *testing.T, path string, bufSize int) []string {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer unix.Close(fd)
	var names []string
	buf := make([]byte, bufSize)
	for {
		n, err := unix.ReadDirent(fd, buf)
		if err != nil {
			t.Error(err)
			return nil
		}
		if n == 0 {
			return names
		}
		names = append(names, direntNames(buf[:n])...)
	}
}

// TestListingsKeptByKernel: a read-only mount answers OPENDIR with ENOSYS,
// so the kernel keeps each listing (its no-open default, FOPEN_CACHE_DIR):
// listing a directory again, or from many readers at once through small
// buffers, gets the whole listing, and the model is asked for it once;
// the handle behind the handle-less reads is released at the end.
func TestListingsKeptByKernel(t *testing.T) {
	img, data := imageFile(t)
	const n = 500
	var kids []*mnode
	for i := range n {
		name := fmt.Sprintf("%03d", i)
		kids = append(kids, file(name, "D/"+name, fsnode.Raw, &fakeEntry{data: []byte(name)}))
	}
	mnt, _, root := mountFakeRoot(t, dir("", "", nil, dir("D", "D", nil, kids...), dir("E", "E", nil)), Options{}, img, int64(len(data)))
	if root.sys.kept == nil {
		t.Fatal("a read-only mount serves without keptListings")
	}
	check := func(what string, names []string) {
		t.Helper()
		if len(names) != n+2 {
			t.Errorf("%s: %d names, want %d", what, len(names), n+2)
			return
		}
		for i, name := range names[2:] {
			if name != fmt.Sprintf("%03d", i) {
				t.Errorf("%s: entry %d is %q", what, i, name)
				return
			}
		}
	}
	d := filepath.Join(mnt, "D")
	// Many readers at once, through buffers small enough that each needs
	// many reads at increasing offsets: the first round fills the
	// kernel's copy, the second and a last listing are served from it.
	var afterFirst, askedFirst int64
	for round := range 2 {
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				check(fmt.Sprintf("round %d reader %d", round, g), listDir(t, d, 256+64*g))
			}()
		}
		wg.Wait()
		if round == 0 {
			afterFirst = root.sys.kept.reads.Load()
			askedFirst = root.sys.kept.asked.Load()
		}
	}
	check("listed again", listDir(t, d, 4096))
	if afterFirst == 0 {
		t.Error("no handle-less read served the first listings")
	}
	if got := root.sys.kept.reads.Load() - afterFirst; got != 0 {
		t.Errorf("%d reads reached the server after the kernel had the listing; it should keep it", got)
	}
	// Opens racing the first ENOSYS each send one; after it, none.
	if askedFirst < 1 || askedFirst > 8 {
		t.Errorf("the first 8 concurrent listings sent %d OPENDIRs", askedFirst)
	}
	if got := root.sys.kept.asked.Load(); got != askedFirst {
		t.Errorf("the kernel sent %d OPENDIRs after the first ENOSYS; it should send none", got-askedFirst)
	}
	if k := root.sys.kept.open.Load(); k != 0 {
		t.Errorf("%d listing handles left open after every listing ended", k)
	}
	if names := listDir(t, filepath.Join(mnt, "E"), 4096); len(names) != 2 {
		t.Errorf("empty directory: %q", names)
	}
	if got, err := os.ReadFile(filepath.Join(d, "499")); err != nil || string(got) != "499" {
		t.Errorf("D/499: %q %v", got, err)
	}
}
