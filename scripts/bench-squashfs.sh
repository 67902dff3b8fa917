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
# A second table gives the CPU the whole machine spent in each figure
# (/proc/stat: user, nice, system, irq and softirq time of every core,
# client and server and kernel threads alike, so the kernel's loop device
# is counted with its squashfs), and the steal: time the hypervisor gave
# this machine's cores to others while they had work. The CPU is the work
# a figure costs, steadier than its wall time on a shared machine; the
# steal says how much of a wall time's spread is the machine's.
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
# cpu: the whole machine's busy and steal time so far, in ms (USER_HZ ticks:
# /proc/stat's first line is user nice system idle iowait irq softirq steal).
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu() { awk -v hz="$hz" '/^cpu / { printf "%d %d\n", ($2 + $3 + $4 + $7 + $8) * 1000 / hz, $9 * 1000 / hz; exit }' /proc/stat; }

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

# timed FIGURE SYSTEM: one fresh mount, then the figure's command; prints
# its wall time, the machine's CPU time and its steal time during it (ms).
find_first() { find "$MNT" -printf '%s\n' >/dev/null; }
cat_all() { (cd "$MNT" && xargs -d '\n' cat <"$W/decoded" >/dev/null); }
run_fig() {
	case $1 in
	first | cat) ;;
	warm) find_first ;;
	catwarm) cat_all ;;
	esac
	local c0 s0 c1 s1 t0 t1
	read -r c0 s0 < <(cpu)
	t0=$(now)
	case $1 in
	first | warm) find_first ;;
	cat | catwarm) cat_all ;;
	esac
	t1=$(now)
	read -r c1 s1 < <(cpu)
	echo "$(ms "$t0" "$t1") $((c1 - c0)) $((s1 - s0))"
}
timed() {
	local fig=$1 sys=$2 out
	mount_$sys || { echo "bench-squashfs: mount ($sys) failed" >&2; return 1; }
	out=$(run_fig "$fig")
	unmount
	echo "$out"
}
# record FIGURE SYSTEM: one timed round into R (wall), C (CPU), S (steal).
declare -A R C S
record() {
	local w c s
	read -r w c s < <(timed "$1" "$2") || return 1
	R[$1,$2]="${R[$1,$2]:-} $w"
	C[$1,$2]="${C[$1,$2]:-} $c"
	S[$1,$2]="${S[$1,$2]:-} $s"
}

systems="gcfs sqfuse"
[ $kernel = 1 ] && systems="$systems kernel"
[ $floor = 1 ] && systems="$systems floor"
for r in $(seq 1 "$ROUNDS"); do
	for fig in first warm cat catwarm; do
		for sys in $systems; do
			record $fig $sys
		done
		# The served floor differs from the floor only in its reads.
		case $fig in cat | catwarm) [ $floor = 1 ] && record $fig served ;; esac
	done
	record first gcfs_side
done

# min–max of a list of numbers; ratio of the medians
range() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { if (NR == 1) print v[1]; else print v[1] "-" v[NR] }'; }
median() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }

# table ARRAY [plain]: one row a figure, one column a system, from R, C or
# S; plain leaves out the ratios.
table() {
	local -n T=$1
	local plain=${2:-}
	local fig label g f s k kr kk fl fr ff sv sr ss
	if [ -n "$plain" ]; then
		printf '%-34s %14s %14s %14s %14s %14s\n' figure gcfs squashfuse_ll kernel go-fuse-floor served-floor
	else
		printf '%-34s %14s %14s %14s %14s %14s %10s %10s %10s %10s\n' figure gcfs squashfuse_ll kernel go-fuse-floor served-floor gcfs/sqfuse gcfs/kernel gcfs/floor gcfs/served
	fi
	for fig in first first_side warm cat catwarm; do
		case $fig in
		first) label="find -printf %s, first"; g=${T[first,gcfs]} ;;
		first_side) label="  the same, with the sidecar"; g=${T[first,gcfs_side]} ;;
		warm) label="find -printf %s, warm"; g=${T[warm,gcfs]} ;;
		cat) label="cat of the decoded files"; g=${T[cat,gcfs]} ;;
		catwarm) label="  the same again, warm"; g=${T[catwarm,gcfs]} ;;
		esac
		f=$fig
		[ $fig = first_side ] && f=first
		s=${T[$f,sqfuse]}
		k=${T[$f,kernel]:-}
		kr=-
		kk=-
		if [ -n "$k" ]; then kr=$(range $k); kk=$(ratio "$(median $g)" "$(median $k)"); fi
		fl=${T[$f,floor]:-}
		fr=-
		ff=-
		if [ -n "$fl" ]; then fr=$(range $fl); ff=$(ratio "$(median $g)" "$(median $fl)"); fi
		sv=${T[$f,served]:-}
		sr=-
		ss=-
		if [ -n "$sv" ]; then sr=$(range $sv); ss=$(ratio "$(median $g)" "$(median $sv)"); fi
		if [ -n "$plain" ]; then
			printf '%-34s %14s %14s %14s %14s %14s\n' "$label" "$(range $g)" "$(range $s)" "$kr" "$fr" "$sr"
		else
			printf '%-34s %14s %14s %14s %14s %14s %10s %10s %10s %10s\n' "$label" "$(range $g)" "$(range $s)" "$kr" "$fr" "$sr" "$(ratio "$(median $g)" "$(median $s)")" "$kk" "$ff" "$ss"
		fi
	done
}

echo "== squashfs anchors: retail layout, $nodes nodes, $ROUNDS rounds, wall ms (min-max); ratios of the medians"
table R
echo "(served-floor: the floor with every read served by the server, no FUSE passthrough; \"warm\": the figure's command run once more on the same mount)"
echo "== the same figures' CPU: the whole machine's busy time during each, ms (min-max, $((1000 / hz)) ms ticks); ratios of the medians"
table C
all=""
for v in "${S[@]}"; do all="$all $v"; done
if [ "$(echo $all | tr ' ' '\n' | sort -n | tail -1)" = 0 ]; then
	echo "== steal during the figures: none reported in any round"
else
	echo "== steal during the same figures: ms the hypervisor ran others on this machine's cores (min-max)"
	table S plain
fi
