#!/usr/bin/env bash
# bench/vs_db_bench.sh: Debian's db_bench (rocksdb-tools) and `fsarena kv engine=rocksdb`, the
# same RocksDB library, the same options, on the same tmpfs and loop-backed ext4, rounds
# interleaved (the tools take turns round by round, the first alternating); prints per
# benchmark, value size and thread count the ops/sec ratio fsarena / db_bench: the median
# ratio, the ratio of geometric means and its 95% interval (Welch's t on the logs, as
# crates/stats/src/ratio.rs; bench/ratio.py), and checks that both count the same keys. Both
# time every operation (--histogram=1; fsarena's default, for its percentiles); --extra
# histogram=0 runs both without.
set -euo pipefail

usage() {
	cat <<'EOF2'
usage: bash bench/vs_db_bench.sh [options]
  --rounds N        measured rounds per case, tools alternating (default 5)
  --num N           db_bench's num: keys per benchmark and thread (default 200000)
  --values LIST     value sizes, comma-separated (default 16,256,4096,16384)
  --threads LIST    thread counts, comma-separated (default 1)
  --benchmarks LIST db_bench's benchmarks (default fillseq,readseq,readrandom)
  --fs LIST         tmpfs,ext4 (default both)
  --extra OPTS      more db_bench options given to both, as KEY=VALUE,... (e.g.
                    compression_type=none,use_direct_reads=1)
  --dir PATH        parent of the tmpfs scratch directory (default /dev/shm)
  --img-dir PATH    parent of the scratch directory holding the ext4 image (default /var/tmp)
environment: FSARENA (default target/release/fsarena, built with --features rocksdb),
  DB_BENCH (default db_bench)
EOF2
}

BENCH=vs_db_bench
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ROUNDS=5 NUM=200000 VALUES=16,256,4096,16384 THREADS=1 BENCHMARKS=fillseq,readseq,readrandom
FSLIST=tmpfs,ext4 EXTRA= PARENT=/dev/shm IMGPARENT=/var/tmp
while [[ $# -gt 0 ]]; do
	[[ $1 == --*=* ]] && set -- "${1%%=*}" "${1#*=}" "${@:2}"
	case "$1" in -h | --help) usage; exit 0 ;; esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--num) NUM=$2 ;;
	--values) VALUES=$2 ;;
	--threads) THREADS=$2 ;;
	--benchmarks) BENCHMARKS=$2 ;;
	--fs) FSLIST=$2 ;;
	--extra) EXTRA=$2 ;;
	--dir) PARENT=$2 ;;
	--img-dir) IMGPARENT=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $NUM =~ ^[1-9][0-9]*$ ]] || die "bad --num '$NUM'"
[[ $VALUES =~ ^[0-9]+(,[0-9]+)*$ ]] || die "bad --values '$VALUES' (bytes, comma-separated)"
[[ $THREADS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad --threads '$THREADS'"
[[ $BENCHMARKS =~ ^[a-z]+(,[a-z]+)*$ ]] || die "bad --benchmarks '$BENCHMARKS'"
[[ -z $EXTRA || $EXTRA =~ ^[a-z_]+=[a-z0-9]+(,[a-z_]+=[a-z0-9]+)*$ ]] || die "bad --extra '$EXTRA'"
IFS=, read -r -a FS_LIST <<<"$FSLIST"
for f in "${FS_LIST[@]}"; do [[ $f =~ ^(tmpfs|ext4)$ ]] || die "bad --fs entry '$f'"; done
[[ -d $PARENT && -d $IMGPARENT ]] || die "--dir '$PARENT' or --img-dir '$IMGPARENT' is not a directory"

bench_fsarena "--features rocksdb"
DB_BENCH=$(command -v "${DB_BENCH:-db_bench}") || die "db_bench not found (apt-get install rocksdb-tools, or DB_BENCH=)"
command -v python3 >/dev/null || die "python3 not found"

# ---------------------------------------------------------------- scratch, loop, mount
# Exactly the loop and mount made here are recorded, and only they are undone at exit.
bench_scratch "$PARENT" "fsarena-kv.XXXXXX"
TSV=$RES/results.tsv
: >"$TSV"

# make_ext4: an image of its own, a loop on it, mkfs.ext4, mounted; left in MNT. Not in a
# subshell: LOOPS and MOUNTS must reach the exit trap.
make_ext4() {
	local img mnt mib
	bench_imgdir "$IMGPARENT"
	img=$IMGDIR/ext4.img mnt=$IMGDIR/ext4.mnt
	# the largest database: num × threads × (16 + value) twice (log and tables), plus slack
	local biggest=0 v t
	for v in ${VALUES//,/ }; do for t in ${THREADS//,/ }; do
		((v * t > biggest)) && biggest=$((v * t))
	done; done
	mib=$(((NUM * (biggest + 16 * 8) * 3) / 1048576 + 1024))
	bench_mount_loop ext4 "$img" "${mib}M" "$mnt"
	log "ext4: $img (${mib} MiB) on ${LOOPS[-1]} mounted at $mnt"
	MNT=$mnt
}

# parse FILE: "name ops_per_sec operations found" per db_bench summary line in FILE.
parse() {
	python3 - "$1" <<'PY'
import re, sys
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"^(\w+)\s+:\s+[\d.]+ micros/op (\d+) ops/sec [\d.]+ seconds (\d+) operations;.*?(?:\((\d+) of \d+ found\))?\s*$", line)
    if m:
        print(m.group(1), m.group(2), m.group(3), m.group(4) or "-")
PY
}

# run_tool TOOL DIR VALUE THREADS OUT
run_tool() {
	local tool=$1 dir=$2 value=$3 threads=$4 out=$5 extra_db=() extra_kv=
	rm -rf -- "$dir/db"
	if [[ -n $EXTRA ]]; then
		IFS=, read -r -a extra_db <<<"$EXTRA"
		extra_db=("${extra_db[@]/#/--}")
		extra_kv=",$EXTRA"
	fi
	if [[ $tool == db_bench ]]; then
		"$DB_BENCH" --db="$dir/db" --benchmarks="$BENCHMARKS" --num="$NUM" --value_size="$value" \
			--threads="$threads" --seed=1 --histogram=1 "${extra_db[@]}" >"$out" 2>"$out.err" ||
			{ cat "$out.err" >&2; die "db_bench failed"; }
	else
		"$FSARENA" run --repeat 1 --warmup 0 --no-store --no-drop-caches --target "dir:path=$dir" \
			--workload "kv:engine=rocksdb,benchmarks='$BENCHMARKS',num=$NUM,value_size=$value,threads=$threads,seed=1,histogram=1$extra_kv" \
			>"$out" 2>"$out.err" || { cat "$out.err" >&2; die "fsarena failed"; }
	fi
	rm -rf -- "$dir/db"
	parse "$out" | while read -r name ops n found; do
		# db_bench's "(F of N found)" is its first thread's (merged stats keep one message);
		# fsarena's counts every thread: scale db_bench's to compare (exact when all are found).
		[[ $tool == db_bench && $found != - ]] && found=$((found * threads))
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$FS" "$value" "$threads" "$name" "$tool" "$ops" "$n" "$found"
	done >>"$TSV"
}

echo "# kv: db_bench vs fsarena (engine=rocksdb), $($DB_BENCH --version 2>&1 | head -1)"
echo "- db_bench --db=DIR/db --benchmarks=$BENCHMARKS --num=$NUM --value_size=V --threads=T --seed=1 --histogram=1${EXTRA:+ --${EXTRA//,/ --}}"
echo "- fsarena run --target dir:path=DIR --workload kv:engine=rocksdb,benchmarks='$BENCHMARKS',num=$NUM,value_size=V,threads=T,seed=1,histogram=1${EXTRA:+,$EXTRA}"
for FS in "${FS_LIST[@]}"; do
	if [[ $FS == tmpfs ]]; then DIR=$WORK; else make_ext4; DIR=$MNT; fi
	for value in ${VALUES//,/ }; do
		for threads in ${THREADS//,/ }; do
			for ((r = 1; r <= ROUNDS; r++)); do
				# tools alternate which goes first, round by round
				if ((r % 2)); then order=(db_bench fsarena); else order=(fsarena db_bench); fi
				for tool in "${order[@]}"; do
					log "$FS value_size=$value threads=$threads round $r: $tool"
					run_tool "$tool" "$DIR" "$value" "$threads" "$RES/out.$tool"
				done
			done
		done
	done
done

python3 - "$TSV" <<'PY'
import statistics, sys
from collections import defaultdict
rows = defaultdict(lambda: defaultdict(list))
counts = defaultdict(lambda: defaultdict(set))
order = []
for line in open(sys.argv[1]):
    fs, value, threads, name, tool, ops, n, found = line.rstrip("\n").split("\t")
    key = (fs, int(value), int(threads), name)
    if key not in order:
        order.append(key)
    rows[key][tool].append(int(ops))
    counts[key][tool].add((n, found))
print()
print(f"{'fs':6} {'value':>6} {'thr':>3} {'benchmark':12} {'db_bench ops/s':>15} {'fsarena ops/s':>14} {'ratio':>6}  counts")
worst = 0.0
for key in order:
    fs, value, threads, name = key
    d, f = rows[key].get("db_bench", []), rows[key].get("fsarena", [])
    if not d or not f:
        continue
    dm, fm = statistics.median(d), statistics.median(f)
    ratio = fm / dm if dm else float("nan")
    worst = max(worst, abs(ratio - 1))
    same = "same" if counts[key]["db_bench"] == counts[key]["fsarena"] else f"DIFFER {counts[key]['db_bench']} vs {counts[key]['fsarena']}"
    print(f"{fs:6} {value:>6} {threads:>3} {name:12} {dm:>15.0f} {fm:>14.0f} {ratio:>6.3f}  {same}")
print(f"\nlargest deviation of a median ratio from 1: {worst:.3f} (goal: within 0.10)")
PY
echo
awk -F'\t' '{ print $1 "/" $2 "B/" $3 "t/" $4, $5, $6 }' "$TSV" |
	python3 "$HERE/ratio.py" --a db_bench --b fsarena --tolerance 0.10 || true
