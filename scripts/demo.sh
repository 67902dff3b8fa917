#!/usr/bin/env bash
# make demo: make a small synthetic disc, mount it, look around, unmount.
# Usage: scripts/demo.sh GCFS_BINARY WORKDIR
set -euo pipefail
bin=$(realpath "$1") dir=$2
mkdir -p "$dir"
dir=$(realpath "$dir")
img=$dir/small.iso mnt=$dir/mnt

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
run() { say "$*"; "$@"; }

srv=$dir/served ov=$dir/overlay
cleanup() {
	for m in "$mnt" "$srv"; do
		if grep -qs " $m fuse.gcfs " /proc/mounts; then
			"$bin" umount "$m" 2>/dev/null || "$bin" umount -z "$m" || fusermount3 -uz "$m" || true
		fi
	done
}
trap cleanup EXIT
cleanup # a mount left by an interrupted earlier run
mkdir -p "$mnt"

"$bin" --version
if [[ ! -s $img || ! -s $img.manifest.tsv || $bin -nt $img ]]; then
	run "$bin" mkdisc --layout small --seed 1 "$img"
fi
run ls -l "$img"
run "$bin" identify "$img" || true
run "$bin" mount --log-file "$dir/mount.log" "$img" "$mnt"
run grep " $mnt " /proc/mounts
run ls -l "$mnt"
say "ls $mnt/G | column"
ls "$mnt/G" | column -c 100 2>/dev/null || ls "$mnt/G"
run ls -l "$mnt/G/LEVEL0.WAD"
decoded=$mnt/G/LEVEL0.WAD/gameplay
if [[ ! -f $decoded ]]; then
	# Any decoded file will do: one with a .wad sibling.
	wad=$(find "$mnt/G" -name '*.wad' -type f | head -1)
	decoded=${wad%.wad}
fi
say "head -c 256 $decoded | xxd"
head -c 256 "$decoded" | { command -v xxd >/dev/null && xxd || od -A x -t x1z; }
say "head -c 32 $decoded.wad | xxd   # the same file as stored on the disc"
head -c 32 "$decoded.wad" | { command -v xxd >/dev/null && xxd || od -A x -t x1z; }
run getfattr -d "$decoded"
run getfattr -d "$mnt/G/LEVEL0.WAD"
say "# the second edition: a level's data lump has parts, core_data decoded"
run ls -l "$mnt/G/LEVEL1.WAD/data.d"
run getfattr -d "$mnt/G/LEVEL1.WAD/data.d/core_data"
run ls -l "$mnt/G/LEVEL1.WAD/data.d/transition_textures.d"
say "head -c 16 $mnt/G/LEVEL1.WAD/data.d/transition_textures.d/00 | xxd   # a PIF texture inside a decoded stream"
head -c 16 "$mnt/G/LEVEL1.WAD/data.d/transition_textures.d/00" | { command -v xxd >/dev/null && xxd || od -A x -t x1z; }
run ls "$mnt/G/MISC.WAD/irx.d"
run getfattr -n user.gcfs.in_file "$mnt/G/MPEG.WAD/video20.pss"
run "$bin" info "$img" G/LEVEL1.WAD/data.d
say "# views: textures as PNG, sounds as WAV, subtitles as SRT, computed on read"
run ls -l "$mnt/G/ARMOR.WAD/armor0_textures.d"
command -v file >/dev/null && run file "$mnt/G/ARMOR.WAD/armor0_textures.d/00.png" "$mnt/G/AUDIO.WAD/vendor/000.wav" "$mnt/G/MPEG.WAD/video01.pss" "$mnt/G/MISC.WAD/irx.d/989snd.irx"
say "head -c 44 $mnt/G/AUDIO.WAD/vendor/000.wav | xxd   # the WAV header"
head -c 44 "$mnt/G/AUDIO.WAD/vendor/000.wav" | { command -v xxd >/dev/null && xxd || od -A x -t x1z; }
run getfattr -d "$mnt/G/ARMOR.WAD/armor0_textures.d/00.png"
run head -n 8 "$mnt/G/MPEG.WAD/subtitles01.d/english.srt"
run df -h "$mnt"
say "touch $mnt/new   # read-only"
touch "$mnt/new" 2>&1 || true
run "$bin" umount "$mnt"
run tail -n 3 "$dir/mount.log"

say "# editing: a writable mount whose edits go to an overlay directory"
rm -rf "$ov" "$dir/packed.iso" && mkdir -p "$ov" "$srv"
run "$bin" mount --overlay "$ov" --log-file "$dir/mount.log" "$img" "$mnt"
tex=$mnt/G/ARMOR.WAD/armor0_textures.d
run sha1sum "$tex/00" "$tex/00.png" "$tex/01.png"
say "cat $tex/01.png > $tex/00.png   # save another picture of the same size over a texture's PNG"
cat "$tex/01.png" >"$tex/00.png"
say "cat $mnt/G/AUDIO.WAD/vendor/000.vag > $mnt/G/AUDIO.WAD/vendor/001.vag   # a sound's VAG: its WAV follows at once"
cat "$mnt/G/AUDIO.WAD/vendor/000.vag" >"$mnt/G/AUDIO.WAD/vendor/001.vag"
run ls -l "$mnt/G/AUDIO.WAD/vendor/000.wav" "$mnt/G/AUDIO.WAD/vendor/001.wav"
say "echo x > $tex/00   # the same texture in its other form: refused"
{ echo x >"$tex/00"; } 2>&1 || true
run find "$ov" -type f
run "$bin" umount "$mnt"
run "$bin" pack --dry-run "$img" "$ov" "$dir/packed.iso"
run "$bin" pack "$img" "$ov" "$dir/packed.iso"
run "$bin" cat "$dir/packed.iso" G/ARMOR.WAD/armor0_textures.d/00.png | sha1sum
say "# the rebuilt image served without writing it: gcfs pack --serve"
"$bin" pack --serve "$srv" "$img" "$ov" &
for _ in $(seq 100); do [[ -e $srv/small.iso ]] && break; sleep 0.1; done
run ls -l "$srv"
run cmp "$srv/small.iso" "$dir/packed.iso"
run "$bin" umount "$srv"
wait
trap - EXIT
echo
echo "demo done: the disc image is $img"
