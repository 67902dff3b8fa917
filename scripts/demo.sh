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

cleanup() {
	if grep -qs " $mnt fuse.gcfs " /proc/mounts; then
		"$bin" umount "$mnt" 2>/dev/null || "$bin" umount -z "$mnt" || fusermount3 -uz "$mnt" || true
	fi
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
trap - EXIT
echo
echo "demo done: the disc image is $img"
