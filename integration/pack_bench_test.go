package integration

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Benchmarks of editing (issue 22): packing one texture edit against a
// plain copy of the image, the time from an edit to the first readable
// sector of the served image, and the memory of `gcfs pack --serve` for a
// texture edit and for one level's gameplay edit. Outputs go to tmpfs
// (/dev/shm) where there is one; the retail input is sparse.

const benchTexture = "G/ARMOR.WAD/armor0_textures.d/00.png"

// outDir is where the benchmarks write images: tmpfs if the machine has it.
func outDir(b *testing.B) string {
	if st, err := os.Stat("/dev/shm"); err == nil && st.IsDir() {
		d, err := os.MkdirTemp("/dev/shm", "gcfs-bench-")
		if err == nil {
			b.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return b.TempDir()
}

// textureEdit writes an overlay holding the texture's PNG, top half red.
func textureEdit(b *testing.B, image string) string {
	pic, err := gcfs("cat", image, benchTexture)
	if err != nil {
		b.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(pic))
	if err != nil {
		b.Fatal(err)
	}
	bd := img.Bounds()
	out := imageNRGBA(img)
	for y := bd.Min.Y; y < bd.Min.Y+bd.Dy()/2; y++ {
		for x := bd.Min.X; x < bd.Max.X; x++ {
			out.Set(x, y, color.NRGBA{255, 0, 0, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, out); err != nil {
		b.Fatal(err)
	}
	return overlayWith(b, benchTexture, buf.Bytes())
}

func imageNRGBA(img image.Image) *image.NRGBA {
	out := image.NewNRGBA(img.Bounds())
	draw.Draw(out, out.Bounds(), img, img.Bounds().Min, draw.Src)
	return out
}

// gameplayEdit writes an overlay holding LEVEL1's gameplay, every 97th
// byte changed (same size).
func gameplayEdit(b *testing.B, image string) string {
	gp, err := gcfs("cat", image, "G/LEVEL1.WAD/gameplay")
	if err != nil {
		b.Fatal(err)
	}
	for i := 64; i < len(gp); i += 97 {
		gp[i] ^= 0x5a
	}
	return overlayWith(b, "G/LEVEL1.WAD/gameplay", gp)
}

func overlayWith(b *testing.B, p string, data []byte) string {
	dir := b.TempDir()
	f := filepath.Join(dir, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(f, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// BenchmarkPackTexture: `gcfs pack` of one texture edit (with its read-back
// check, and without) against `cp --sparse=always` of the image, all to the
// same output directory.
func BenchmarkPackTexture(b *testing.B) {
	d := getDisc(b, benchLayout())
	ov := textureEdit(b, d.path)
	out := outDir(b)
	ms := func(t0 time.Time) float64 { return float64(time.Since(t0).Microseconds()) / 1000 }
	res := map[string][]float64{}
	run := func(key string, args ...string) {
		dst := filepath.Join(out, "out.iso")
		t0 := time.Now()
		if key == "copy-ms" {
			if o, err := exec.Command("cp", "--sparse=always", d.path, dst).CombinedOutput(); err != nil {
				b.Fatalf("cp: %v: %s", err, o)
			}
		} else if _, err := gcfs(append(args, d.path, ov, dst)...); err != nil {
			b.Fatal(err)
		}
		res[key] = append(res[key], ms(t0))
		os.Remove(dst)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run("pack-ms", "pack", "-q")
		run("pack-nocheck-ms", "pack", "-q", "--no-check")
		run("copy-ms")
	}
	b.StopTimer()
	for k, v := range res {
		b.ReportMetric(median(v), k)
	}
}

// BenchmarkPackServe: from an edit in DIR to the first sector read from
// `gcfs pack --serve`'s image (the plan, the read-back check and the mount
// included), and the server's peak RSS once serving, for one texture edit
// and for one level's gameplay edit.
func BenchmarkPackServe(b *testing.B) {
	requireFUSE(b)
	d := getDisc(b, benchLayout())
	for _, c := range []struct {
		name string
		edit func(*testing.B, string) string
	}{{"texture", textureEdit}, {"gameplay", gameplayEdit}} {
		b.Run(c.name, func(b *testing.B) {
			ov := c.edit(b, d.path)
			var first, hwm []float64
			for i := 0; i < b.N; i++ {
				mnt, err := os.MkdirTemp(workDir, "serve-")
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				cmd := exec.Command(gcfsBin, "pack", "--serve", "-q", "--no-index-cache", mnt, d.path, ov)
				if err := cmd.Start(); err != nil {
					b.Fatal(err)
				}
				served := filepath.Join(mnt, filepath.Base(d.path))
				sector := make([]byte, 2048)
				for {
					if f, err := os.Open(served); err == nil {
						_, err = f.ReadAt(sector, 16*2048) // the volume descriptor
						f.Close()
						if err == nil {
							break
						}
					}
					if time.Since(t0) > 5*time.Minute {
						b.Fatal("the served image did not appear")
					}
					time.Sleep(2 * time.Millisecond)
				}
				first = append(first, float64(time.Since(t0).Microseconds())/1000)
				if kb, err := procStatusKB(cmd.Process.Pid, "VmHWM"); err == nil {
					hwm = append(hwm, float64(kb)/1024)
				}
				if _, err := gcfs("umount", mnt); err != nil {
					syscall.Unmount(mnt, syscall.MNT_DETACH)
					b.Fatal(err)
				}
				cmd.Wait()
			}
			b.ReportMetric(median(first), "edit-to-first-sector-ms")
			if len(hwm) > 0 {
				b.ReportMetric(median(hwm), "serve-peakRSS-MiB")
			}
		})
	}
}
