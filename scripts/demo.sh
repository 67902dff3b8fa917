#!/usr/bin/env bash
# make demo: TODO (owned by the FUSE helper) — mount a small synthetic disc and show it.
set -euo pipefail
bin=$1 dir=$2
mkdir -p "$dir"
"$bin" --version
