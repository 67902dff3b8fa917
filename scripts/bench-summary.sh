#!/bin/sh
# bench-summary.sh [BENCH.OUT]: the speed figures of issue 11 from one
# `make bench` run, side by side (every figure of a line comes from the
# same run, so their ratios compare like with like).
out=${1:-bench.out}
[ -r "$out" ] || { echo "bench-summary: no $out (run make bench)" >&2; exit 1; }
awk '
/^Benchmark(Decode|AppendDecode|Scan|SmallStreams|NewIndex|NewIndexDecode|NewIndexParallel|DecodeParallel|ScanParallel|WadDecompressProcess|DecodedSequential|FindStat|MountReady|LevelTextures|LevelCoreEditions|LevelCoreListRSS|GLB|ClassGLB|ClassGLBCold|GameplayJSON|LevelGLB|SizeAllRetail|PackTexture|PackServe)[-\/]/ {
	name = $1; sub(/-[0-9]+$/, "", name)
	line = sprintf("%-44s", name)
	for (i = 3; i + 1 <= NF; i += 2) {
		if ($(i+1) == "ns/op" || $(i+1) ~ /B\/op|allocs\/op/) continue
		line = line sprintf("  %s %s", $i, $(i+1))
	}
	print line
}' "$out"
