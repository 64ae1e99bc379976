#!/usr/bin/env bash
# bench/vs_fsmark.sh: fsarena's tree workload beside fs_mark, same shape (one level of
# directories, files round robin in them), same file sizes and sync mode, same filesystem,
# interleaved over several rounds. See bench/README.md ("tree: fsarena vs fs_mark").
#
# usage: bash bench/vs_fsmark.sh [--rounds N] [--sizes LIST] [--dirs D] [--files-per-dir N]
#                                [--sync none|file] [--dir PATH] [--quick]
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_fsmark.sh [options]
  --rounds N         rounds, the two tools back to back in each (default 3)
  --sizes LIST       file sizes, comma-separated (default 4k,100k,400k,1600k)
  --dirs D           directories (fs_mark -D, fsarena dirs_per_level; default 20)
  --files-per-dir N  files per directory (fs_mark -N, fsarena files_per_dir; default 50)
  --sync MODE        file: fsync before close (fs_mark -S 1, its default; fsarena fsync=file)
                     none: no sync (fs_mark -S 0; fsarena fsync=none) (default file)
  --dir PATH         parent of the scratch directory (default /dev/shm, a tmpfs; a short
                     path: fs_mark takes directories under 40 bytes)
  --quick            --rounds 1 --sizes 4k,100k
environment:
  FSARENA       fsarena binary (default target/release/fsarena)
  FSARENA_ARGS  extra 'fsarena run' flags (default --repeat 1 --warmup 0 --no-store
                --no-drop-caches: the other tool does not drop caches either)
  FS_MARK       fs_mark binary (default fs_mark; installed with apt-get (package fsmark) when
                missing and running as root)
EOF
}

BENCH=vs_fsmark
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3
SIZES=4k,100k,400k,1600k
DIRS=20
PER_DIR=50
SYNC=file
PARENT=/dev/shm
while [[ $# -gt 0 ]]; do
	case "$1" in
	--rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--sizes) [[ $# -ge 2 ]] || die "--sizes needs a value"; SIZES=$2; shift 2 ;;
	--dirs) [[ $# -ge 2 ]] || die "--dirs needs a value"; DIRS=$2; shift 2 ;;
	--files-per-dir) [[ $# -ge 2 ]] || die "--files-per-dir needs a value"; PER_DIR=$2; shift 2 ;;
	--sync) [[ $# -ge 2 ]] || die "--sync needs a value"; SYNC=$2; shift 2 ;;
	--dir) [[ $# -ge 2 ]] || die "--dir needs a value"; PARENT=$2; shift 2 ;;
	--quick) ROUNDS=1; SIZES=4k,100k; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $DIRS =~ ^[1-9][0-9]*$ ]] || die "bad --dirs '$DIRS'"
[[ $PER_DIR =~ ^[1-9][0-9]*$ ]] || die "bad --files-per-dir '$PER_DIR'"
case "$SYNC" in file) FS_SYNC=1 ;; none) FS_SYNC=0 ;; *) die "bad --sync '$SYNC' (want file or none)" ;; esac

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -d $PARENT ]] || die "--dir '$PARENT' is not a directory"
PARENT=$(cd "$PARENT" && pwd)
cd "$REPO_ROOT"
FSARENA=${FSARENA:-target/release/fsarena}
[[ -x $FSARENA ]] || die "fsarena binary not found: '$FSARENA' (build it with 'cargo build --release' or set FSARENA=)"
FSARENA=$(cd "$(dirname "$FSARENA")" && pwd)/$(basename "$FSARENA")
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches}"
FS_MARK=${FS_MARK:-fs_mark}
if ! command -v "$FS_MARK" >/dev/null; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		log "fs_mark missing: apt-get install fsmark"
		apt-get install -y -qq fsmark >/dev/null 2>&1 || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq fsmark >/dev/null 2>&1; } ||
			die "could not install fsmark with apt-get"
	fi
	command -v "$FS_MARK" >/dev/null || die "fs_mark not found: install Debian's fsmark package or set FS_MARK="
fi
FS_MARK=$(command -v "$FS_MARK")
command -v python3 >/dev/null || die "python3 not found (it parses fsarena's JSON)"

# fs_mark refuses directory names of 40 bytes or more: a short scratch name.
bench_scratch "$PARENT" "fsvm.XXXXXX"
((${#WORK} + 7 < 40)) || die "--dir '$PARENT' is too long a path for fs_mark (its directories must be under 40 bytes)"

FILES=$((DIRS * PER_DIR))
fsmark_cmd() { # size
	echo "$FS_MARK" -d "$WORK/fsm" -D "$DIRS" -N "$PER_DIR" -n "$FILES" -s "$(python3 -c "
import sys; s=sys.argv[1].lower(); m={'k':1<<10,'m':1<<20,'g':1<<30}
print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$1")" -S "$FS_SYNC" -w 16384 -t 1 -L 1
}
fsarena_cmd() { # size
	echo "$FSARENA" run --target "dir:path=$WORK/fsarena" \
		--workload "tree:levels=1,dirs_per_level=$DIRS,files_per_dir=$PER_DIR,file_size=$1,fsync=$SYNC,write_size=16k,threads=1" \
		--output-format json --workdir "$RES/wd" "${FSARENA_EXTRA[@]}"
}

echo "## fsarena tree vs fs_mark"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fsarena tree: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "- machine: nproc=$(nproc), CPU: $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo), kernel: $(uname -r)"
echo "- fs_mark: $FS_MARK ($(dpkg-query -W -f '${Version}' fsmark 2>/dev/null || echo '?'))"
echo "- directory: $WORK ($(stat -f -c %T "$WORK")); $DIRS directories × $PER_DIR files = $FILES files per run, 1 thread, sync=$SYNC"
echo "- $ROUNDS round(s) per size, the two tools back to back in each, order alternating"
echo
echo "Commands (SIZE in bytes for fs_mark):"
echo
echo "    $(fsmark_cmd 4k | sed "s/-s 4096/-s SIZE/")"
echo "    $(fsarena_cmd SIZE | sed "s#$REPO_ROOT/##")"
echo

TSV=$RES/results.tsv
: >"$TSV"
IFS=, read -r -a SIZE_LIST <<<"$SIZES"
for size in "${SIZE_LIST[@]}"; do
	for ((r = 0; r < ROUNDS; r++)); do
		if ((r % 2 == 0)); then order=(fs_mark fsarena); else order=(fsarena fs_mark); fi
		for tool in "${order[@]}"; do
			if [[ $tool == fs_mark ]]; then
				mkdir -p "$WORK/fsm"
				# shellcheck disable=SC2046
				$(fsmark_cmd "$size") >"$RES/fsmark.out" 2>&1 || { cat "$RES/fsmark.out" >&2; die "fs_mark failed ($size)"; }
				rate=$(awk 'f && NF == 5 { r = $4 } /Files\/sec/ { f = 1 } END { print r }' "$RES/fsmark.out")
				rm -rf -- "$WORK/fsm"
			else
				mkdir -p "$WORK/fsarena"
				# shellcheck disable=SC2046
				$(fsarena_cmd "$size") >"$RES/fsarena.json" 2>"$RES/fsarena.err" || { cat "$RES/fsarena.err" >&2; die "fsarena failed ($size)"; }
				rate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["run"]["results"][0]["metrics"]["files_created"]["values"][0])' "$RES/fsarena.json")
				rm -rf -- "$WORK/fsarena"
			fi
			[[ -n $rate ]] || die "no Files/sec from $tool ($size)"
			log "$size round $((r + 1))/$ROUNDS $tool: $(printf '%.0f' "$rate") files/s"
			printf '%s\t%d\t%s\t%s\n' "$size" "$r" "$tool" "$rate" >>"$TSV"
		done
	done
done

python3 - "$TSV" <<'PY'
import sys
from statistics import median
from collections import OrderedDict, defaultdict
data = OrderedDict()
for line in open(sys.argv[1]):
    size, r, tool, rate = line.rstrip("\n").split("\t")
    data.setdefault(size, defaultdict(dict))[int(r)][tool] = float(rate)
print("| file size | fs_mark files/s | fsarena files/s | fsarena/fs_mark |")
print("|---|--:|--:|--:|")
for size, rounds in data.items():
    f = median(t["fs_mark"] for t in rounds.values())
    a = median(t["fsarena"] for t in rounds.values())
    ratio = median(t["fsarena"] / t["fs_mark"] for t in rounds.values())
    print(f"| {size} | {f:,.0f} | {a:,.0f} | {ratio:.2f} |")
print()
print("Rates are medians over rounds; a ratio is the median of the per-round ratios.")
print("fsarena's files_created times its file loop alone (open, writes, fsync, close); it makes")
print("and times its directories before it (dirs_created). fs_mark's Files/sec is its own figure.")
print()
print("Per round (files/s, fsarena/fs_mark):")
print()
for size, rounds in data.items():
    for r in sorted(rounds):
        t = rounds[r]
        print(f"    {size} round {r + 1}: {t['fsarena']:,.0f}/{t['fs_mark']:,.0f}")
PY
