#!/usr/bin/env bash
# A whole generated set of the crash workload (OPS=b3-seq1 by default: CrashMonkey's 435;
# OPS=seq1: fsarena's 80), every crash state, on ext4, xfs and btrfs, each on its own
# recorded image: seconds, states checked and states/s per filesystem, and every violation.
# The issues ask for at most 5 minutes per filesystem.
# Run as root: [OPS=seq1] FSARENA=path/to/fsarena bench/crash_seq1.sh [TARGET...]
set -euo pipefail
BENCH=crash_seq1
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_fsarena
[[ $(id -u) == 0 ]] || die "needs root (loop devices, mounts, FUSE)"
bench_scratch /var/tmp "fsarena-crash-seq1.XXXXXX"
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=(ext4:size=256m xfs:size=512m btrfs:size=256m)
args=()
for t in "${targets[@]}"; do args+=(--target "$t"); done
OPS=${OPS:-b3-seq1}
log "crash:ops=$OPS on ${targets[*]}"
"$FSARENA" run --workdir "$WORK/work" --no-store "${args[@]}" --workload "crash:ops=$OPS" \
	| sed -n '/· crash/,$p'
