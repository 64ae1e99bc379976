#!/usr/bin/env bash
# bench/vs_bare_meta.sh: fsarena's meta workload vs a bare create/stat/unlink loop, same
# files in the same directory on the same filesystem, interleaved over several rounds.
# See bench/README.md ("meta: fsarena vs a bare loop").
#
# usage: bash bench/vs_bare_meta.sh [--rounds N] [--files N] [--dir PATH] [--quick]
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_bare_meta.sh [options]
  --rounds N   measured rounds, the two tools back to back in each (default 5)
  --files N    empty files in one directory (default 100000)
  --dir PATH   parent of the scratch directory (default /dev/shm, a tmpfs); a fresh
               fsarena-vs-bare-meta.XXXXXX is made in it and removed at the end
  --quick      --rounds 1 --files 20000, to check the setup
environment:
  FSARENA       fsarena binary (default target/release/fsarena)
  FSARENA_ARGS  extra 'fsarena run' flags (default --repeat 1 --warmup 0 --no-store
                --no-drop-caches: the other tool does not drop caches either)
  CC            C compiler for the bare loop (default cc)
EOF
}

BENCH=vs_bare_meta
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=5
FILES=100000
PARENT=/dev/shm
while [[ $# -gt 0 ]]; do
	case "$1" in
	--rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--files) [[ $# -ge 2 ]] || die "--files needs a value"; FILES=$2; shift 2 ;;
	--dir) [[ $# -ge 2 ]] || die "--dir needs a value"; PARENT=$2; shift 2 ;;
	--quick) ROUNDS=1; FILES=20000; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS' (want a positive integer)"
[[ $FILES =~ ^[1-9][0-9]*$ ]] || die "bad --files '$FILES' (want a positive integer)"

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -d $PARENT ]] || die "--dir '$PARENT' is not a directory"
PARENT=$(cd "$PARENT" && pwd)
cd "$REPO_ROOT"
CC=${CC:-cc}
FSARENA=${FSARENA:-target/release/fsarena}
[[ -x $FSARENA ]] || die "fsarena binary not found: '$FSARENA' (build it with 'cargo build --release' or set FSARENA=)"
FSARENA=$(cd "$(dirname "$FSARENA")" && pwd)/$(basename "$FSARENA")
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches}"
command -v python3 >/dev/null || die "python3 not found (it parses fsarena's JSON)"
command -v "$CC" >/dev/null || die "C compiler '$CC' not found; set CC="

BUILD=$REPO_ROOT/bench/.build
mkdir -p "$BUILD"
BARE=$BUILD/meta_loop
log "compiling bench/meta_loop.c -> $BARE"
"$CC" -O2 -o "$BARE" bench/meta_loop.c

bench_scratch "$PARENT" "fsarena-vs-bare-meta.XXXXXX"

# calls=fd: the bare loop works relative to a directory descriptor too (fsarena's default,
# calls=path, resolves each item's path as mdtest does; bench/vs_mdtest.sh compares that).
WORKLOAD="meta:items=$FILES,files_only=1,tasks=1,calls=fd"
FSARENA_CMD=("$FSARENA" run --target "dir:path=$WORK/fsarena" --workload "$WORKLOAD" --output-format json
	--workdir "$RES/wd" "${FSARENA_EXTRA[@]}")
BARE_CMD=("$BARE" "$WORK/bare" "$FILES")

echo "## fsarena meta vs a bare create/stat/unlink loop"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fsarena tree: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "- machine: nproc=$(nproc), CPU: $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo), kernel: $(uname -r)"
echo "- directory: $WORK ($(stat -f -c %T "$WORK")), $FILES empty files in one directory, 1 task"
echo "- $ROUNDS round(s), the two tools back to back in each, order alternating"
echo
echo "Commands:"
echo
echo "    ${FSARENA_CMD[*]#$REPO_ROOT/}"
echo "    ${BARE_CMD[*]#$REPO_ROOT/}"
echo

TSV=$RES/results.tsv
: >"$TSV"
run_fsarena() { # round
	mkdir -p "$WORK/fsarena"
	"${FSARENA_CMD[@]}" >"$RES/fsarena.$1.json" 2>"$RES/fsarena.$1.err" || {
		cat "$RES/fsarena.$1.err" >&2
		die "fsarena failed in round $(($1 + 1))"
	}
	python3 - "$RES/fsarena.$1.json" "$1" >>"$TSV" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))["run"]["results"][0]["metrics"]
for op, key in (("create", "file_creation"), ("stat", "file_stat"), ("remove", "file_removal")):
    print(f"{sys.argv[2]}\tfsarena\t{op}\t{m[key]['values'][0]}")
PY
	rm -rf -- "$WORK/fsarena"
}
run_bare() { # round
	mkdir -p "$WORK/bare"
	"${BARE_CMD[@]}" >"$RES/bare.$1.out" 2>"$RES/bare.$1.err" || {
		cat "$RES/bare.$1.err" >&2
		die "the bare loop failed in round $(($1 + 1))"
	}
	awk -v r="$1" '{ split($4, a, "="); print r "\tbare\t" $1 "\t" a[2] }' "$RES/bare.$1.out" >>"$TSV"
	rm -rf -- "$WORK/bare"
}

for ((r = 0; r < ROUNDS; r++)); do
	if ((r % 2 == 0)); then order=(fsarena bare); else order=(bare fsarena); fi
	for tool in "${order[@]}"; do
		"run_$tool" "$r"
		log "round $((r + 1))/$ROUNDS $tool: $(awk -F'\t' -v r="$r" -v t="$tool" '$1 == r && $2 == t { printf "%s=%.0f ", $3, $4 }' "$TSV")"
	done
done

python3 - "$TSV" <<'PY'
import sys
from statistics import median
from collections import defaultdict
rounds = defaultdict(dict)  # round -> {(tool, op): rate}
for line in open(sys.argv[1]):
    r, tool, op, rate = line.split("\t")
    rounds[int(r)][(tool, op)] = float(rate)
print("| operation | fsarena ops/s | bare ops/s | fsarena/bare | target |")
print("|---|--:|--:|--:|---|")
verdicts = []
for op in ("create", "stat", "remove"):
    f = [t[("fsarena", op)] for t in rounds.values()]
    b = [t[("bare", op)] for t in rounds.values()]
    ratio = median(t[("fsarena", op)] / t[("bare", op)] for t in rounds.values())
    ok = "met" if ratio >= 0.90 else "NOT met"
    verdicts.append(ok)
    print(f"| {op} | {median(f):,.0f} | {median(b):,.0f} | {ratio:.2f} | >= 0.90: {ok} |")
print()
print("Rates are medians over rounds; a ratio is the median of the per-round ratios")
print("(each round runs the two tools back to back, which cancels slow drift of the machine).")
print()
print("Per round (ops/s):")
print()
for r in sorted(rounds):
    t = rounds[r]
    print(f"    round {r + 1}: " + ", ".join(
        f"{op} {t[('fsarena', op)]:,.0f}/{t[('bare', op)]:,.0f}" for op in ("create", "stat", "remove")) + "  (fsarena/bare)")
PY
