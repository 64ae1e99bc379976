#!/usr/bin/env bash
# bench/vs_mdtest.sh: fsarena's meta workload beside mdtest (hpc/ior), the same mdtest flags on
# the same filesystems, interleaved round by round, on a fresh tmpfs and a fresh ext4 loop image
# (or a directory given), for several task counts; each phase's ratio fsarena / mdtest with its
# 95% interval by the project's one comparison (crates/stats/src/ratio.rs, through its `ratio`
# example). See bench/README.md ("meta: fsarena vs mdtest").
#
# usage: MDTEST=/path/to/mdtest bash bench/vs_mdtest.sh [options]
set -euo pipefail

usage() {
	cat <<'EOF'
usage: MDTEST=/path/to/mdtest bash bench/vs_mdtest.sh [options]
  --fs LIST       file systems to make and measure, each fresh: tmpfs (2 GiB), ext4 (a 4 GiB
                  sparse loop image) (default tmpfs,ext4); unmounted and removed at the end
  --dir PATH      measure this existing directory instead (a fresh fsarena-vs-mdtest.XXXXXX
                  is made in it and removed at the end)
  --items N       mdtest -n: items per task (default 10000)
  --flags 'F'     further mdtest flags, given to both tools (default '-u')
  --tasks LIST    task counts (mdtest's MPI ranks, fsarena's tasks), comma-separated
                  (default 1,4)
  --launch HOW    how fsarena runs T tasks: threads (tasks=T, default) or mpi (mpirun -np T
                  fsarena run --mpi, one task per rank, as mdtest runs)
  --cpus LIST     pin both tools to these CPUs (taskset -c LIST; e.g. 0), so that tasks beyond
                  the CPUs cannot overlap (default: not pinned)
  --rounds N      rounds, the two tools back to back in each, order alternating (default 10)
  --settle S      before every run of either tool: sync, then S seconds of rest (default 2;
                  0: sync only). A run that follows another at once meets the file system
                  still writing back what the last one removed: on ext4 a 4-task tree made
                  right after a -n 10000 run went at about half the rate it had 2 s later,
                  and the tools leave unequal gaps (mpirun+mdtest ends in about 1.4 s,
                  fsarena in 0.2-0.75 s), so without it the tool that follows is favoured
  --quick         --rounds 3 --items 2000
  --tsv FILE      also write every run's rates to FILE (fs, tasks, round, tool, phase, ops/s)
  --self          mdtest beside mdtest: the second run of each round is mdtest again, in the
                  fsarena column, so each row's ratio and interval show what the row can tell
                  apart on this machine (an A/A comparison; --launch is then moot)
environment:
  MDTEST        mdtest binary, built from hpc/ior outside this repository (required):
                  git clone https://github.com/hpc/ior /opt/ref/ior && cd /opt/ref/ior &&
                  ./bootstrap && ./configure && make   (needs libopenmpi-dev, openmpi-bin)
  MPIRUN        mpirun (default mpirun; --allow-run-as-root is added when root)
  FSARENA       fsarena binary (default target/release/fsarena; --launch mpi needs the mpi
                  feature)
  RATIO         the ratio helper (default: examples/ratio beside FSARENA; build it with
                  cargo build --release -p fsarena-stats --example ratio)
  IMG_PARENT    where the ext4 image goes (default /var/tmp)
  FSARENA_ARGS  extra 'fsarena run' flags (default --repeat 1 --warmup 0 --no-store
                --no-drop-caches: mdtest does not drop caches either)
EOF
}

BENCH=vs_mdtest
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

FS_LIST=tmpfs,ext4
DIR=
ITEMS=10000
FLAGS=-u
TASKS=1,4
LAUNCH=threads
CPUS=
ROUNDS=10
SETTLE=2
SELF=0
KEEP_TSV=
while [[ $# -gt 0 ]]; do
	case "$1" in
	--fs) [[ $# -ge 2 ]] || die "--fs needs a value"; FS_LIST=$2; shift 2 ;;
	--dir) [[ $# -ge 2 ]] || die "--dir needs a value"; DIR=$2; shift 2 ;;
	--items) [[ $# -ge 2 ]] || die "--items needs a value"; ITEMS=$2; shift 2 ;;
	--flags) [[ $# -ge 2 ]] || die "--flags needs a value"; FLAGS=$2; shift 2 ;;
	--tasks) [[ $# -ge 2 ]] || die "--tasks needs a value"; TASKS=$2; shift 2 ;;
	--launch) [[ $# -ge 2 ]] || die "--launch needs a value"; LAUNCH=$2; shift 2 ;;
	--cpus) [[ $# -ge 2 ]] || die "--cpus needs a value"; CPUS=$2; shift 2 ;;
	--rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--settle) [[ $# -ge 2 ]] || die "--settle needs a value"; SETTLE=$2; shift 2 ;;
	--quick) ROUNDS=3; ITEMS=2000; shift ;;
	--tsv) [[ $# -ge 2 ]] || die "--tsv needs a value"; KEEP_TSV=$2; shift 2 ;;
	--self) SELF=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS' (want a positive integer)"
[[ $SETTLE =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "bad --settle '$SETTLE' (want seconds, such as 2 or 0.5)"
[[ $ITEMS =~ ^[1-9][0-9]*$ ]] || die "bad --items '$ITEMS' (want a positive integer)"
[[ $TASKS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad --tasks '$TASKS' (want counts such as 1,4)"
[[ $FS_LIST =~ ^(tmpfs|ext4)(,(tmpfs|ext4))*$ ]] || die "bad --fs '$FS_LIST' (want tmpfs, ext4 or tmpfs,ext4)"
[[ $LAUNCH == threads || $LAUNCH == mpi ]] || die "bad --launch '$LAUNCH' (want threads or mpi)"
[[ -z $CPUS || $CPUS =~ ^[0-9,-]+$ ]] || die "bad --cpus '$CPUS' (want a taskset list such as 0 or 0-1)"
[[ $FLAGS =~ ^[-\ a-zA-Z0-9=]*$ ]] || die "bad --flags '$FLAGS' (mdtest flags and numbers only)"
[[ -z $DIR || -d $DIR ]] || die "--dir '$DIR' is not a directory"

if [[ -z ${MDTEST:-} ]]; then
	echo "vs_mdtest.sh: MDTEST is not set, so there is nothing to compare with: mdtest is not packaged" >&2
	echo "  by Debian; build it from hpc/ior outside this repository and set MDTEST=/path/to/mdtest" >&2
	echo "  (see 'bash bench/vs_mdtest.sh --help')." >&2
	exit 2
fi
[[ -x $MDTEST ]] || die "MDTEST='$MDTEST' is not an executable file"
MPIRUN=${MPIRUN:-mpirun}
command -v "$MPIRUN" >/dev/null || die "mpirun not found: install openmpi-bin or set MPIRUN="
MPI_FLAGS=(--oversubscribe --bind-to none)
[[ $(id -u) -eq 0 ]] && MPI_FLAGS+=(--allow-run-as-root)
PIN=()
[[ -n $CPUS ]] && PIN=(taskset -c "$CPUS")
command -v python3 >/dev/null || die "python3 not found (it parses fsarena's JSON)"
[[ -n $DIR || $(id -u) -eq 0 ]] || die "making tmpfs and ext4 mounts needs root (or give --dir)"

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$REPO_ROOT"
bench_fsarena "--features mpi"
RATIO=${RATIO:-$(dirname "$FSARENA")/examples/ratio}
[[ -x $RATIO ]] || die "no ratio helper at '$RATIO' (cargo build --release -p fsarena-stats --example ratio, or RATIO=)"
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches}"
read -r -a FLAG_WORDS <<<"$FLAGS"

# Results go under TMPDIR; WORK, where the tools do their I/O, is set per file system.
RES=$(mktemp -d "${TMPDIR:-/tmp}/fsarena-$BENCH-res.XXXXXX")
WORK=
trap bench_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The commands as arrays (the fsarena spec holds spaces), and printed for the record. Both
# tools' paths are as deep: mdtest's DIR/md/mdtest/test-dir.0-0, fsarena's
# DIR/wd/ID-mnt-0-dir/test-dir.0-0 (its work directory on the same file system, where the dir
# target's bind mount goes): with mdtest's calls every path walks every component.
mdtest_cmd() { # tasks
	CMD=("${PIN[@]}" "$MPIRUN" "${MPI_FLAGS[@]}" -np "$1" "$MDTEST" -d "$WORK/md/mdtest" -n "$ITEMS" "${FLAG_WORDS[@]}")
}
fsarena_cmd() { # tasks
	local spec="meta:mdtest='-n $ITEMS $FLAGS'"
	if [[ $LAUNCH == mpi ]]; then
		CMD=("${PIN[@]}" "$MPIRUN" "${MPI_FLAGS[@]}" -np "$1" "$FSARENA" run --mpi)
	else
		CMD=("${PIN[@]}" "$FSARENA" run)
		spec+=",tasks=$1"
	fi
	CMD+=(--target "dir:path=$WORK/fsarena" --workload "$spec" --output-format json --workdir "$WORK/wd" "${FSARENA_EXTRA[@]}")
}

echo "## fsarena meta vs mdtest"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fsarena tree: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "- machine: nproc=$(nproc), CPU: $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo), kernel: $(uname -r), load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- mdtest: $MDTEST ($("$MPIRUN" --version 2>/dev/null | head -1))"
echo "- -n $ITEMS $FLAGS; tasks $TASKS (fsarena as $LAUNCH); CPUs: ${CPUS:-not pinned}; $ROUNDS rounds, the tools back to back in each, order alternating, each run after sync and ${SETTLE} s of rest"
((SELF)) && echo "- --self: the fsarena column is a second mdtest run in each round (mdtest beside mdtest)"
echo
echo "Commands (T tasks, on DIR):"
echo
WORK=DIR
mdtest_cmd T
echo "    ${CMD[*]}"
fsarena_cmd T
echo "    ${CMD[*]}"
echo
WORK=

TSV=$RES/results.tsv
: >"$TSV"
# Before every run: what the last run left to write back goes first (see --settle).
settle() {
	sync
	sleep "$SETTLE"
}
run_mdtest() { # fs tasks round [column]
	mkdir -p "$WORK/md/mdtest"
	settle
	mdtest_cmd "$2"
	"${CMD[@]}" >"$RES/mdtest.out" 2>&1 || { cat "$RES/mdtest.out" >&2; die "mdtest failed ($2 tasks)"; }
	awk -v f="$1" -v t="$2" -v r="$3" -v col="${4:-mdtest}" '
		/^SUMMARY rate/ { on = 1; next }
		on && /^   [A-Z]/ && $NF ~ /^[0-9.]+$/ { n = NF; label = $1; for (i = 2; i <= n - 4; i++) label = label " " $i; print f "\t" t "\t" r "\t" col "\t" label "\t" $(n - 1) }
		/^-- finished/ { on = 0 }' "$RES/mdtest.out" >>"$TSV"
	rm -rf -- "$WORK/md"
}
run_fsarena() { # fs tasks round
	if ((SELF)); then
		run_mdtest "$1" "$2" "$3" fsarena
		return
	fi
	mkdir -p "$WORK/fsarena"
	fsarena_cmd "$2"
	settle
	"${CMD[@]}" >"$RES/fsarena.json" 2>"$RES/fsarena.err" || { cat "$RES/fsarena.err" >&2; die "fsarena failed ($2 tasks)"; }
	python3 - "$RES/fsarena.json" "$1" "$2" "$3" >>"$TSV" <<'PY'
import json, sys
labels = {"dir_creation": "Directory creation", "dir_stat": "Directory stat", "dir_rename": "Directory rename",
          "dir_removal": "Directory removal", "file_creation": "File creation", "file_stat": "File stat",
          "file_read": "File read", "file_removal": "File removal", "tree_creation": "Tree creation",
          "tree_removal": "Tree removal"}
m = json.load(open(sys.argv[1]))["run"]["results"][0]["metrics"]
for key, label in labels.items():
    if key in m:
        print(f"{sys.argv[2]}\t{sys.argv[3]}\t{sys.argv[4]}\tfsarena\t{label}\t{m[key]['values'][0]}")
PY
	rm -rf -- "$WORK/fsarena"
}

# Every task count on file system $1 (WORK set), ROUNDS rounds, the tools' order alternating.
measure() { # fs
	local t r
	IFS=, read -r -a TASK_LIST <<<"$TASKS"
	for t in "${TASK_LIST[@]}"; do
		for ((r = 0; r < ROUNDS; r++)); do
			if ((r % 2)); then
				run_fsarena "$1" "$t" "$r"
				run_mdtest "$1" "$t" "$r"
			else
				run_mdtest "$1" "$t" "$r"
				run_fsarena "$1" "$t" "$r"
			fi
			log "$1, $t task(s), round $((r + 1))/$ROUNDS done"
		done
	done
}

if [[ -n $DIR ]]; then
	WORK=$(mktemp -d "$(cd "$DIR" && pwd)/fsarena-vs-mdtest.XXXXXX")
	measure "$(stat -f -c %T "$WORK")"
	rm -rf -- "$WORK"
else
	IFS=, read -r -a FS <<<"$FS_LIST"
	bench_imgdir "${IMG_PARENT:-/var/tmp}"
	for fs in "${FS[@]}"; do
		mnt=$IMGDIR/$fs.mnt
		case $fs in
		tmpfs) bench_mount_tmpfs "$mnt" 2g ;;
		ext4) bench_mount_loop ext4 "$IMGDIR/ext4.img" 4G "$mnt" -E lazy_itable_init=0,lazy_journal_init=0 ;;
		esac
		WORK=$mnt/work
		mkdir -p "$WORK"
		measure "$fs"
		rm -rf -- "$WORK"
	done
	WORK=
	bench_unmount_all
fi

[[ -z $KEEP_TSV ]] || cp -- "$TSV" "$KEEP_TSV"
python3 - "$TSV" "$RATIO" <<'PY'
import math, subprocess, sys
from collections import defaultdict
rates = defaultdict(list)  # (fs, tasks, tool, label) -> [rate per round]
order, configs = [], []
for line in open(sys.argv[1]):
    fs, t, r, tool, label, rate = line.rstrip("\n").split("\t")
    rates[(fs, int(t), tool, label)].append(float(rate))
    if label not in order:
        order.append(label)
    if (fs, int(t)) not in configs:
        configs.append((fs, int(t)))

def ratio(a, b):
    """fsarena (b) over mdtest (a) by crates/stats' ratio(), through its example: value, lo, hi."""
    out = subprocess.run([sys.argv[2], ",".join(map(repr, a)), ",".join(map(repr, b))], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    value, lo, hi = out.stdout.split()
    return float(value), (None if lo == "-" else float(lo)), (None if hi == "-" else float(hi))

def geomean(v):
    return math.exp(sum(map(math.log, v)) / len(v)) if all(x > 0 for x in v) else sum(v) / len(v)

outside = []
for fs, t in configs:
    print(f"### {fs}, {t} task(s)")
    print()
    print("| phase | mdtest ops/s | fsarena ops/s | fsarena / mdtest | 95% interval | within 1.0 ± 10% |")
    print("|---|--:|--:|--:|--:|:-:|")
    for label in order:
        m, f = rates.get((fs, t, "mdtest", label)), rates.get((fs, t, "fsarena", label))
        r = ratio(m, f) if m and f else None
        if r is None:
            continue
        value, lo, hi = r
        if lo is None:
            ci, ok = "-", "?"
        else:
            ci = f"{lo:.2f}–{hi:.2f}"
            ok = "yes" if lo <= 1.1 and hi >= 0.9 else "no"
        if ok != "yes":
            outside.append(f"{fs}, {t} task(s): {label} {value:.2f} ({ci})")
        print(f"| {label} | {geomean(m):,.0f} | {geomean(f):,.0f} | {value:.2f} | {ci} | {ok} |")
    print()
print("Rates are geometric means over the rounds; the ratio is theirs, its 95% interval Welch's on the")
print("logarithms (crates/stats/src/ratio.rs). mdtest's figure is its SUMMARY's Mean (one iteration a run).")
print("'within' says whether the interval reaches into 0.9-1.1.")
if outside:
    print()
    print("Outside 1.0 ± 10%:")
    for o in outside:
        print(f"- {o}")
PY
