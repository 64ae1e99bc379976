#!/usr/bin/env bash
# bench/vs_mdtest.sh: fsarena's meta workload beside mdtest (hpc/ior), the same mdtest flags on
# the same directory, fsarena with mdtest's path-based calls (calls=path, its default) and with
# its descriptor-relative calls (calls=fd), for several task counts, optionally all pinned to
# the same CPUs. See bench/README.md ("meta: fsarena vs mdtest").
#
# usage: MDTEST=/opt/ref/ior/src/mdtest bash bench/vs_mdtest.sh [options]
set -euo pipefail

usage() {
	cat <<'EOF'
usage: MDTEST=/path/to/mdtest bash bench/vs_mdtest.sh [options]
  --dir PATH      directory on the filesystem to test (default /dev/shm, a tmpfs); a fresh
                  fsarena-vs-mdtest.XXXXXX is made in it and removed at the end
  --items N       mdtest -n: items per task (default 10000)
  --flags 'F'     further mdtest flags, given to both tools (default '-u')
  --tasks LIST    task counts (mdtest's MPI ranks, fsarena's tasks), comma-separated
                  (default 1,4)
  --cpus LIST     pin both tools to these CPUs (taskset -c LIST; e.g. 0), so that tasks beyond
                  the CPUs cannot overlap (default: not pinned)
  --rounds N      rounds, the tools back to back in each, order rotating (default 3)
  --quick         --rounds 1 --items 2000
environment:
  MDTEST        mdtest binary, built from hpc/ior outside this repository (required):
                  git clone https://github.com/hpc/ior /opt/ref/ior && cd /opt/ref/ior &&
                  ./bootstrap && ./configure && make   (needs libopenmpi-dev, openmpi-bin)
  MPIRUN        mpirun (default mpirun; --allow-run-as-root is added when root)
  FSARENA       fsarena binary (default target/release/fsarena)
  FSARENA_ARGS  extra 'fsarena run' flags (default --repeat 1 --warmup 0 --no-store
                --no-drop-caches: mdtest does not drop caches either)
EOF
}

BENCH=vs_mdtest
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

PARENT=/dev/shm
ITEMS=10000
FLAGS=-u
TASKS=1,4
CPUS=
ROUNDS=3
while [[ $# -gt 0 ]]; do
	case "$1" in
	--dir) [[ $# -ge 2 ]] || die "--dir needs a value"; PARENT=$2; shift 2 ;;
	--items) [[ $# -ge 2 ]] || die "--items needs a value"; ITEMS=$2; shift 2 ;;
	--flags) [[ $# -ge 2 ]] || die "--flags needs a value"; FLAGS=$2; shift 2 ;;
	--tasks) [[ $# -ge 2 ]] || die "--tasks needs a value"; TASKS=$2; shift 2 ;;
	--cpus) [[ $# -ge 2 ]] || die "--cpus needs a value"; CPUS=$2; shift 2 ;;
	--rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--quick) ROUNDS=1; ITEMS=2000; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS' (want a positive integer)"
[[ $ITEMS =~ ^[1-9][0-9]*$ ]] || die "bad --items '$ITEMS' (want a positive integer)"
[[ $TASKS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad --tasks '$TASKS' (want counts such as 1,4)"
[[ -z $CPUS || $CPUS =~ ^[0-9,-]+$ ]] || die "bad --cpus '$CPUS' (want a taskset list such as 0 or 0-1)"
[[ $FLAGS =~ ^[-\ a-zA-Z0-9=]*$ ]] || die "bad --flags '$FLAGS' (mdtest flags and numbers only)"

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

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -d $PARENT ]] || die "--dir '$PARENT' is not a directory"
PARENT=$(cd "$PARENT" && pwd)
cd "$REPO_ROOT"
FSARENA=${FSARENA:-target/release/fsarena}
[[ -x $FSARENA ]] || die "fsarena binary not found: '$FSARENA' (build it with 'cargo build --release' or set FSARENA=)"
FSARENA=$(cd "$(dirname "$FSARENA")" && pwd)/$(basename "$FSARENA")
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches}"

bench_scratch "$PARENT" "fsarena-vs-mdtest.XXXXXX"

read -r -a FLAG_WORDS <<<"$FLAGS"
# The commands as arrays (the fsarena spec holds spaces), and printed for the record.
mdtest_cmd() { # tasks
	CMD=("${PIN[@]}" "$MPIRUN" "${MPI_FLAGS[@]}" -np "$1" "$MDTEST" -d "$WORK/mdtest" -n "$ITEMS" "${FLAG_WORDS[@]}")
}
fsarena_cmd() { # tasks calls
	CMD=("${PIN[@]}" "$FSARENA" run --target "dir:path=$WORK/fsarena"
		--workload "meta:mdtest='-n $ITEMS $FLAGS',tasks=$1,calls=$2" --output-format json --workdir "$RES/wd"
		"${FSARENA_EXTRA[@]}")
}

echo "## fsarena meta vs mdtest"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fsarena tree: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "- machine: nproc=$(nproc), CPU: $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo), kernel: $(uname -r)"
echo "- mdtest: $MDTEST ($("$MPIRUN" --version 2>/dev/null | head -1))"
echo "- directory: $WORK ($(stat -f -c %T "$WORK")); -n $ITEMS $FLAGS; tasks $TASKS; CPUs: ${CPUS:-not pinned}"
echo "- $ROUNDS round(s), the three runs back to back in each, order rotating"
echo
echo "Commands (T tasks):"
echo
mdtest_cmd T
echo "    ${CMD[*]}"
fsarena_cmd T 'path|fd'
echo "    ${CMD[*]#$REPO_ROOT/}"
echo

TSV=$RES/results.tsv
: >"$TSV"
run_mdtest() { # tasks round
	mkdir -p "$WORK/mdtest"
	mdtest_cmd "$1"
	"${CMD[@]}" >"$RES/mdtest.out" 2>&1 || { cat "$RES/mdtest.out" >&2; die "mdtest failed ($1 tasks)"; }
	awk -v t="$1" -v r="$2" '
		/^SUMMARY rate/ { on = 1; next }
		on && /^   [A-Z]/ && $NF ~ /^[0-9.]+$/ { n = NF; label = $1; for (i = 2; i <= n - 4; i++) label = label " " $i; print t "\t" r "\tmdtest\t" label "\t" $(n - 1) }
		/^-- finished/ { on = 0 }' "$RES/mdtest.out" >>"$TSV"
	rm -rf -- "$WORK/mdtest"
}
run_fsarena() { # tasks round calls
	mkdir -p "$WORK/fsarena"
	fsarena_cmd "$1" "$3"
	"${CMD[@]}" >"$RES/fsarena.json" 2>"$RES/fsarena.err" || { cat "$RES/fsarena.err" >&2; die "fsarena failed ($1 tasks, calls=$3)"; }
	python3 - "$RES/fsarena.json" "$1" "$2" "fsarena-$3" >>"$TSV" <<'PY'
import json, sys
labels = {"dir_creation": "Directory creation", "dir_stat": "Directory stat", "dir_rename": "Directory rename",
          "dir_removal": "Directory removal", "file_creation": "File creation", "file_stat": "File stat",
          "file_read": "File read", "file_removal": "File removal", "tree_creation": "Tree creation",
          "tree_removal": "Tree removal"}
m = json.load(open(sys.argv[1]))["run"]["results"][0]["metrics"]
for key, label in labels.items():
    if key in m:
        print(f"{sys.argv[2]}\t{sys.argv[3]}\t{sys.argv[4]}\t{label}\t{m[key]['values'][0]}")
PY
	rm -rf -- "$WORK/fsarena"
}

IFS=, read -r -a TASK_LIST <<<"$TASKS"
for t in "${TASK_LIST[@]}"; do
	for ((r = 0; r < ROUNDS; r++)); do
		case $((r % 3)) in
		0) order=(mdtest path fd) ;; 1) order=(path fd mdtest) ;; *) order=(fd mdtest path) ;;
		esac
		for tool in "${order[@]}"; do
			if [[ $tool == mdtest ]]; then run_mdtest "$t" "$r"; else run_fsarena "$t" "$r" "$tool"; fi
		done
		log "$t task(s), round $((r + 1))/$ROUNDS done"
	done
done

python3 - "$TSV" "$TASKS" <<'PY'
import sys
from statistics import median
from collections import defaultdict
rates = defaultdict(list)  # (tasks, tool, label) -> [rate per round]
order = []
for line in open(sys.argv[1]):
    t, r, tool, label, rate = line.rstrip("\n").split("\t")
    rates[(int(t), tool, label)].append(float(rate))
    if label not in order:
        order.append(label)
tasks = [int(x) for x in sys.argv[2].split(",")]
tools = ("mdtest", "fsarena-path", "fsarena-fd")
med = lambda t, tool, label: median(rates[(t, tool, label)]) if rates.get((t, tool, label)) else None
fmt = lambda v: "-" if v is None else f"{v:,.0f}"
ratio = lambda a, b: "-" if a is None or b is None or b == 0 else f"{a / b:.2f}"
for t in tasks:
    print(f"### {t} task(s)")
    print()
    print("| phase | mdtest ops/s | fsarena calls=path | fsarena calls=fd | path/mdtest | fd/mdtest |")
    print("|---|--:|--:|--:|--:|--:|")
    for label in order:
        m, p, f = (med(t, tool, label) for tool in tools)
        print(f"| {label} | {fmt(m)} | {fmt(p)} | {fmt(f)} | {ratio(p, m)} | {ratio(f, m)} |")
    print()
if len(tasks) > 1:
    base = tasks[0]
    print(f"### Scaling: the rate with T tasks over the rate with {base}")
    print()
    print("| phase | " + " | ".join(f"{tool} {t}/{base}" for t in tasks[1:] for tool in tools) + " |")
    print("|---|" + "--:|" * (len(tasks[1:]) * len(tools)))
    for label in order:
        cells = [ratio(med(t, tool, label), med(base, tool, label)) for t in tasks[1:] for tool in tools]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print()
print("Rates are medians over rounds. mdtest's figure is its SUMMARY's Mean (one iteration per run).")
PY
