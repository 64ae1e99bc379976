#!/usr/bin/env bash
# bench/vs_dbench.sh: Debian's dbench and fsarena's dbench workload side by side, same load
# file, clients and time, on tmpfs and on a loop-backed ext4 of the script's own, rounds
# interleaved (the tools alternate which goes first). Prints each tool's MB/s, the ratio
# fsarena/dbench, and how well the operation mixes agree (each operation's share of all
# operations, per tool). See docs/manual/dbench.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_dbench.sh [options]
  --rounds N      measured rounds per filesystem and tool, alternating (default 3)
  --seconds S     dbench -t / fsarena runtime, whole seconds; both warm up S/5 more (default 10)
  --clients N     clients (dbench's NPROCS) (default 2)
  --quick         --rounds 1 --seconds 5
  --fs LIST       tmpfs,ext4 (default both)
  --loadfile F    load file (default /usr/share/dbench/client.txt)
  --dir PATH      parent of the tmpfs scratch directory (default /dev/shm)
  --img-dir PATH  parent of the scratch directory holding the ext4 image (default /var/tmp)
environment: FSARENA (default target/release/fsarena), DBENCH (default dbench),
  FSARENA_ARGS (default --repeat 1 --warmup 0 --no-store --no-drop-caches -q)
EOF
}

BENCH=vs_dbench
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3 SECONDS_=10 CLIENTS=2 FSLIST=tmpfs,ext4 LOADFILE=/usr/share/dbench/client.txt
PARENT=/dev/shm IMGPARENT=/var/tmp
while [[ $# -gt 0 ]]; do
	[[ $1 == --*=* ]] && set -- "${1%%=*}" "${1#*=}" "${@:2}"
	case "$1" in
	--quick) ROUNDS=1 SECONDS_=5; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--seconds) SECONDS_=$2 ;;
	--clients) CLIENTS=$2 ;;
	--fs) FSLIST=$2 ;;
	--loadfile) LOADFILE=$2 ;;
	--dir) PARENT=$2 ;;
	--img-dir) IMGPARENT=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $SECONDS_ =~ ^[1-9][0-9]*$ ]] || die "bad --seconds '$SECONDS_' (whole seconds, as dbench -t)"
[[ $CLIENTS =~ ^[1-9][0-9]*$ ]] || die "bad --clients '$CLIENTS'"
IFS=, read -r -a FS_LIST <<<"$FSLIST"
for f in "${FS_LIST[@]}"; do [[ $f =~ ^(tmpfs|ext4)$ ]] || die "bad --fs entry '$f'"; done
[[ -r $LOADFILE ]] || die "cannot read the load file '$LOADFILE' (apt-get install dbench)"
LOADFILE=$(cd "$(dirname "$LOADFILE")" && pwd)/$(basename "$LOADFILE")
[[ -d $PARENT && -d $IMGPARENT ]] || die "--dir '$PARENT' or --img-dir '$IMGPARENT' is not a directory"

bench_fsarena
DBENCH=$(command -v "${DBENCH:-dbench}") || die "dbench not found (apt-get install dbench, or DBENCH=)"
command -v python3 >/dev/null || die "python3 not found"
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches -q}"

# ---------------------------------------------------------------- scratch, loop, mount
# Exactly the loop and mount made here are recorded, and only they are undone at exit.
bench_scratch "$PARENT" "fsarena-dbench.XXXXXX"

# make_ext4: a 2 GiB image of its own, a loop on it, mkfs.ext4, mounted; left in MNT. Not in
# a subshell: LOOPS and MOUNTS must reach the exit trap.
make_ext4() {
	bench_imgdir "$IMGPARENT"
	MNT=$IMGDIR/ext4.mnt
	bench_mount_loop ext4 "$IMGDIR/ext4.img" 2G "$MNT"
	log "ext4: $IMGDIR/ext4.img on ${LOOPS[-1]} mounted at $MNT"
}

# run_tool TOOL DIR OUT: one run in DIR (emptied first), its report in OUT.
run_tool() {
	local tool=$1 dir=$2 out=$3
	rm -rf -- "$dir" && mkdir -p "$dir"
	if [[ $tool == dbench ]]; then
		"$DBENCH" -t "$SECONDS_" -c "$LOADFILE" -D "$dir" "$CLIENTS" >"$out" 2>&1 ||
			{ tail -20 "$out" >&2; die "dbench failed"; }
	else
		"$FSARENA" run --target "dir:path=$dir" "${FSARENA_EXTRA[@]}" \
			--workload "dbench:clients=$CLIENTS,runtime=$SECONDS_,loadfile=$LOADFILE" >"$out" 2>"$out.err" ||
			{ cat "$out.err" >&2; die "fsarena failed"; }
	fi
	rm -rf -- "$dir"
	# The next run must not pay for this one's writeback (ext4 on a loop: the dirty pages of
	# hundreds of MB written and deleted).
	sync
}

for fs in "${FS_LIST[@]}"; do
	case $fs in
	tmpfs) base=$WORK ;;
	ext4) make_ext4; base=$MNT ;;
	esac
	for ((r = 1; r <= ROUNDS; r++)); do
		if ((r % 2)); then order=(dbench fsarena); else order=(fsarena dbench); fi
		for tool in "${order[@]}"; do
			log "$fs round $r: $tool ($CLIENTS clients, ${SECONDS_}s + warm-up)"
			run_tool "$tool" "$base/run" "$RES/$fs.$tool.$r.txt"
		done
	done
done

# ---------------------------------------------------------------- the table
python3 - "$RES" "$CLIENTS" "$SECONDS_" "${FS_LIST[@]}" <<'EOF'
import glob, re, statistics, sys
res, clients, seconds, fss = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]

def parse(path):
    text = open(path).read()
    mbs = float(re.search(r"^Throughput (\S+) MB/sec", text, re.M).group(1))
    ops, on = {}, False
    for line in text.splitlines():
        if line.startswith(" Operation "):
            on = True
            continue
        w = line.split()
        if on and len(w) == 4 and w[1].isdigit():
            ops[w[0]] = ops.get(w[0], 0) + int(w[1])
        elif on and w and not w[0].startswith("-"):
            on = False
    return mbs, ops

print(f"dbench vs fsarena dbench: {clients} clients, -t {seconds} (warm-up {int(seconds)//5}s)")
print(f"{'fs':6} {'dbench MB/s':>12} {'fsarena MB/s':>13} {'ratio':>7}  {'op-mix max diff':>16}  worst op  (medians of the rounds)")
for fs in fss:
    runs = {}
    for tool in ("dbench", "fsarena"):
        runs[tool] = [parse(p) for p in sorted(glob.glob(f"{res}/{fs}.{tool}.*.txt"))]
    mb = {t: statistics.median(m for m, _ in v) for t, v in runs.items()}
    share = {}
    for t, v in runs.items():
        total = {}
        for _, ops in v:
            for k, n in ops.items():
                total[k] = total.get(k, 0) + n
        s = sum(total.values()) or 1
        share[t] = {k: n / s for k, n in total.items()}
    names = sorted(set(share["dbench"]) | set(share["fsarena"]))
    diffs = {k: abs(share["dbench"].get(k, 0) - share["fsarena"].get(k, 0)) * 100 for k in names}
    worst = max(diffs, key=diffs.get)
    ratio = mb["fsarena"] / mb["dbench"] if mb["dbench"] else float("nan")
    print(f"{fs:6} {mb['dbench']:12.2f} {mb['fsarena']:13.2f} {ratio:7.3f}  {diffs[worst]:13.2f} pp  {worst}")
    for t in ("dbench", "fsarena"):
        print(f"    {t} MB/s by round: " + ", ".join(f"{m:.1f}" for m, _ in runs[t]))
    for k in names:
        print(f"    {k:10} dbench {share['dbench'].get(k, 0) * 100:6.2f}%  fsarena {share['fsarena'].get(k, 0) * 100:6.2f}%")
EOF
