#!/bin/bash
# bench-squashfs.sh GCFS [ROUNDS]: gcfs side by side with squashfs on the
# retail layout (issue 23), the way a user would pick an alternative: the
# tree is extracted once (gcfs extract), packed with mksquashfs -comp zstd,
# and mounted with squashfuse_ll (the FUSE peer) and the kernel's squashfs
# (no FUSE at all), and beside them the floor under any go-fuse server
# (scripts/fusefloor: the extracted tree served from memory with gcfs's
# mount options, built here with $GO or go), twice: as it is, where a
# read goes to the extracted file through FUSE passthrough when the kernel
# allows it (root, Linux 6.9 or later) and never reaches the server, and
# "served" (FUSEFLOOR_NO_PASSTHROUGH=1), where the server answers every
# read from its memory (pread, then writev to the kernel), as it must a
# decoded file's. Each figure is timed on a fresh mount (images in the
# page cache), ROUNDS rounds (default 3) in one run, and printed with its
# ratio to the kernel's: compare the ratios of one run, not figures of
# different runs (the machine may be busy).
#
# Needs mksquashfs, squashfuse_ll and fusermount3; the kernel's squashfs
# needs root (mount -o loop): without it its column is "-". Everything it
# mounts is unmounted as it exits, whatever happens.
set -u
G=$(realpath "${1:?usage: bench-squashfs.sh GCFS [ROUNDS]}")
ROUNDS=${2:-3}
for t in mksquashfs squashfuse_ll fusermount3; do
	command -v $t >/dev/null 2>&1 || { echo "bench-squashfs: no $t: squashfs anchors skipped (apt-get install squashfs-tools squashfuse fuse3)"; exit 0; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/gcfs-bench-sq.XXXXXX")
MNT=$W/mnt
mkdir -p "$MNT"

unmount() {
	if mountpoint -q "$MNT"; then
		fusermount3 -u "$MNT" 2>/dev/null || umount "$MNT" 2>/dev/null || umount -l "$MNT" 2>/dev/null || fusermount3 -uz "$MNT"
	fi
	# a FUSE server may take a moment to exit after the unmount
	for _ in 1 2 3 4 5 6 7 8 9 10; do mountpoint -q "$MNT" || break; sleep 0.1; done
}
cleanup() {
	unmount
	rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now() { date +%s%N; }
ms() { echo $((($2 - $1) / 1000000)); }

echo "bench-squashfs: making the retail layout, extracting it, packing it (once)"
"$G" mkdisc --layout retail --seed 1 "$W/retail.iso" >/dev/null || exit 1
"$G" extract -q --no-index-cache "$W/retail.iso" "$W/tree" || exit 1
mksquashfs "$W/tree" "$W/tree.sqfs" -comp zstd -quiet -no-progress >/dev/null || exit 1
# The decoded files in tree order (gcfs ls's order, the mount's).
"$G" ls -R --json --no-index-cache "$W/retail.iso" |
	awk '/"path":/ { p = $0; sub(/^[^:]*: "/, "", p); sub(/",$/, "", p) } /"type": "decoded"/ { print p }' >"$W/decoded"
nodes=$(find "$W/tree" | wc -l)
echo "bench-squashfs: $nodes nodes, $(wc -l <"$W/decoded") decoded files, squashfs $(($(stat -c %s "$W/tree.sqfs") >> 20)) MiB"
cat "$W/retail.iso" "$W/tree.sqfs" >/dev/null # into the page cache

kernel=0
if [ "$(id -u)" = 0 ] && mount -t squashfs -o loop,ro "$W/tree.sqfs" "$MNT" 2>/dev/null; then
	kernel=1
	unmount
fi

export XDG_CACHE_HOME=$W/cache
# mount_X: a fresh mount of each.
mount_gcfs() { "$G" mount --no-index-cache "$W/retail.iso" "$MNT"; }
mount_gcfs_side() { "$G" mount "$W/retail.iso" "$MNT"; }
mount_sqfuse() { squashfuse_ll "$W/tree.sqfs" "$MNT"; }
mount_kernel() { mount -t squashfs -o loop,ro "$W/tree.sqfs" "$MNT"; }
# The floor runs attached (it has no background mode): ready once mounted.
mount_floor() {
	"$W/fusefloor" "$W/tree" "$MNT" >/dev/null &
	for _ in $(seq 1 100); do mountpoint -q "$MNT" && return 0; sleep 0.05; done
	return 1
}
mount_served() { FUSEFLOOR_NO_PASSTHROUGH=1 mount_floor; }

floor=0
GO=${GO:-go}
if command -v "$GO" >/dev/null 2>&1 && (cd "$(dirname "$0")/.." && "$GO" build -o "$W/fusefloor" ./scripts/fusefloor); then
	floor=1
else
	echo "bench-squashfs: no go to build scripts/fusefloor: its column is -"
fi

# The sidecar: one mount that stats everything writes it as it ends.
mount_gcfs_side && find "$MNT" -printf '%s\n' >/dev/null
unmount

# timed FIGURE SYSTEM: one fresh mount, then the figure's command.
find_first() { find "$MNT" -printf '%s\n' >/dev/null; }
cat_all() { (cd "$MNT" && xargs -d '\n' cat <"$W/decoded" >/dev/null); }
timed() {
	local fig=$1 sys=$2 t0 t1 t2
	mount_$sys || { echo "bench-squashfs: mount ($sys) failed" >&2; return 1; }
	case $fig in
	first) t0=$(now); find_first; t1=$(now) ;;
	warm) find_first; t0=$(now); find_first; t1=$(now) ;;
	cat) t0=$(now); cat_all; t1=$(now) ;;
	catwarm) cat_all; t0=$(now); cat_all; t1=$(now) ;;
	esac
	unmount
	ms "$t0" "$t1"
}

declare -A R
systems="gcfs sqfuse"
[ $kernel = 1 ] && systems="$systems kernel"
[ $floor = 1 ] && systems="$systems floor"
for r in $(seq 1 "$ROUNDS"); do
	for fig in first warm cat catwarm; do
		for sys in $systems; do
			R[$fig,$sys]="${R[$fig,$sys]:-} $(timed $fig $sys)"
		done
		# The served floor differs from the floor only in its reads.
		case $fig in cat | catwarm) [ $floor = 1 ] && R[$fig,served]="${R[$fig,served]:-} $(timed $fig served)" ;; esac
	done
	R[first,gcfs_side]="${R[first,gcfs_side]:-} $(timed first gcfs_side)"
done

# min–max of a list of numbers; ratio of the medians
range() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR == 1) print v[1]; else print v[1] "-" v[NR] }'; }
median() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

echo "== squashfs anchors: retail layout, $nodes nodes, $ROUNDS rounds, ms (min-max); ratios of the medians"
printf '%-34s %14s %14s %14s %14s %14s %10s %10s %10s %10s\n' figure gcfs squashfuse_ll kernel go-fuse-floor served-floor gcfs/sqfuse gcfs/kernel gcfs/floor gcfs/served
for fig in first first_side warm cat catwarm; do
	case $fig in
	first) label="find -printf %s, first"; g=${R[first,gcfs]} ;;
	first_side) label="  the same, with the sidecar"; g=${R[first,gcfs_side]} ;;
	warm) label="find -printf %s, warm"; g=${R[warm,gcfs]} ;;
	cat) label="cat of the decoded files"; g=${R[cat,gcfs]} ;;
	catwarm) label="  the same again, warm"; g=${R[catwarm,gcfs]} ;;
	esac
	f=first
	[ $fig = warm ] && f=warm
	[ $fig = cat ] && f=cat
	[ $fig = catwarm ] && f=catwarm
	s=${R[$f,sqfuse]}
	k=${R[$f,kernel]:-}
	kr=-
	kk=-
	if [ -n "$k" ]; then kr=$(range $k); kk=$(ratio "$(median $g)" "$(median $k)"); fi
	fl=${R[$f,floor]:-}
	fr=-
	ff=-
	if [ -n "$fl" ]; then fr=$(range $fl); ff=$(ratio "$(median $g)" "$(median $fl)"); fi
	sv=${R[$f,served]:-}
	sr=-
	ss=-
	if [ -n "$sv" ]; then sr=$(range $sv); ss=$(ratio "$(median $g)" "$(median $sv)"); fi
	printf '%-34s %14s %14s %14s %14s %14s %10s %10s %10s %10s\n' "$label" "$(range $g)" "$(range $s)" "$kr" "$fr" "$sr" "$(ratio "$(median $g)" "$(median $s)")" "$kk" "$ff" "$ss"
done
echo "(served-floor: the floor with every read served by the server, no FUSE passthrough; \"warm\": the figure's command run once more on the same mount)"
