#!/usr/bin/env bash
# What recording costs: the same io (sequential 64 KiB writes, fsync at the end) and meta
# (2000 files) runs on ext4 with and without the crash recorder below it (record=1), three
# repetitions each; the means side by side.
# Run as root: FSARENA=path/to/fsarena bench/record_overhead.sh
set -euo pipefail
BENCH=record_overhead
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_fsarena
[[ $(id -u) == 0 ]] || die "needs root (loop devices, mounts, FUSE)"
bench_scratch /var/tmp "fsarena-record-overhead.XXXXXX"
"$FSARENA" run --workdir "$WORK/work" --no-store --repeat 3 --warmup 1 \
	--target ext4:size=1g,label=plain --target ext4:size=1g,record=1,label=recorded \
	--workload io:rw=write,bs=64k,size=256m,end_fsync=1 --workload meta:items=2000 \
	| sed -n '/^every result/,$p'
