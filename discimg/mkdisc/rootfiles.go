package mkdisc

import (
	"encoding/binary"
	"fmt"
)

// systemCNF is the boot configuration, CRLF lines, padded to the retail 60
// bytes with trailing spaces (a parser trims them; a line of spaces is blank).
const systemCNF = "BOOT2 = cdrom0:\\SCUS_972.68;1\r\nVER = 1.01\r\nVMODE = NTSC\r\n   "

// plainFile builds a file the tree shows whole: the root files, MPEG1.WAD and
// MPEG2.WAD (raw video without a table).
func (g *gen) plainFile(inv invFile) (*genFile, error) {
	rng := g.rng(inv.Path)
	f := &genFile{path: inv.Path, retailLBA: inv.LBA, content: &sparseFile{size: inv.Size}}
	c := f.content
	switch inv.Path {
	case "SYSTEM.CNF":
		if len(systemCNF) != int(inv.Size) {
			return nil, fmt.Errorf("mkdisc: SYSTEM.CNF is %d bytes, want %d", len(systemCNF), inv.Size)
		}
		c.put(0, []byte(systemCNF))
	case "RC2.HDR":
		// filled by fillRC2HDR once every container is placed
	case "SCUS_972.68":
		c.put(0, elfImage(inv.Size, rng))
		rawContent(c, 0x20000, min(64<<10, inv.Size-0x20000), inv.Path, 1, styleCode, rng, true)
	case "IOPRP255.IMG":
		// an IOP reboot image starts with its ROMDIR ("RESET", "ROMDIR", …)
		b := make([]byte, 0x80)
		for i, name := range []string{"RESET", "ROMDIR", "EXTINFO", "IOPBTCONF", "CDVDMAN", "CDVDFSV"} {
			copy(b[i*16:], name)
			binary.LittleEndian.PutUint32(b[i*16+12:], uint32(0x400+i*0x1000))
		}
		c.put(0, b)
		rawContent(c, 0x800, inv.Size-0x800, inv.Path, 0, styleCode, rng, g.small())
	case "Z6TAIL.DUP":
		if g.small() {
			c.size = 1 << 20
		}
		rawContent(c, 0, c.size, inv.Path, 0, styleGeneric, rng, false)
	case "G/MPEG1.WAD", "G/MPEG2.WAD":
		if g.small() {
			c.size = 384<<10 + inv.Size%sectorSize // keep the odd tail
		}
		// the videos MPEG.WAD's table points at (mpeg.go), each a program
		// stream of its own; MPEG1.WAD's first sector is not one
		if inv.Path == "G/MPEG1.WAD" {
			rawContent(c, 0, sectorSize, inv.Path, 0, styleGeneric, rng, g.small())
		}
		first := mpegFirstBeyond // video NN of each: MPEG.WAD's table points at them
		if inv.Path == "G/MPEG2.WAD" {
			first += mpegInMPEG1
		}
		for i, v := range runVideos(inv.Path, c.size) {
			rawContent(c, v.off, v.n, inv.Path, first+i, styleVideo, g.rng(inv.Path, "video", i), g.small())
		}
		if inv.Path == "G/MPEG1.WAD" {
			// first word 7,864,320: no header size of any family
			var w [4]byte
			binary.LittleEndian.PutUint32(w[:], 7864320)
			patchChunk(c, 0, w[:])
		} // MPEG2 starts 00 00 01 BA: negative as an s32
	default:
		return nil, fmt.Errorf("mkdisc: no generator for %s", inv.Path)
	}
	return f, c.finish(inv.Path)
}

// elfImage is the first 4 KiB of a MIPS R5900 executable: ELF32 header and one
// PT_LOAD program header covering the rest of the file.
func elfImage(size int64, rng interface{ Uint32() uint32 }) []byte {
	b := make([]byte, 0x1000)
	copy(b, "\x7fELF\x01\x01\x01")
	le := binary.LittleEndian
	le.PutUint16(b[16:], 2)          // ET_EXEC
	le.PutUint16(b[18:], 8)          // EM_MIPS
	le.PutUint32(b[20:], 1)          // EV_CURRENT
	le.PutUint32(b[24:], 0x100008)   // entry
	le.PutUint32(b[28:], 52)         // phoff
	le.PutUint32(b[36:], 0x20924001) // flags: R5900
	le.PutUint16(b[40:], 52)         // ehsize
	le.PutUint16(b[42:], 32)         // phentsize
	le.PutUint16(b[44:], 1)          // phnum
	le.PutUint16(b[46:], 40)         // shentsize
	ph := b[52:]
	le.PutUint32(ph[0:], 1) // PT_LOAD
	le.PutUint32(ph[4:], 0x1000)
	le.PutUint32(ph[8:], 0x100000)
	le.PutUint32(ph[12:], 0x100000)
	le.PutUint32(ph[16:], uint32(size-0x1000))
	le.PutUint32(ph[20:], uint32(size-0x1000)+0x80000)
	le.PutUint32(ph[24:], 7)
	le.PutUint32(ph[28:], 0x1000)
	copy(b[0x100:], "Ratchet & Clank: Going Commando (synthetic boot file, not the retail ELF)")
	for i := 0x200; i < 0x1000; i += 4 {
		le.PutUint32(b[i:], 0x24020000|rng.Uint32()&0xffff) // addiu v0, zero, imm
	}
	return b
}
