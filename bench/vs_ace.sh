#!/usr/bin/env bash
# fsarena's `crash:ops=b3-seq1` beside the workloads CrashMonkey's generator ACE writes: runs
# ACE (`ace.py -l 1` of a utsaslab/crashmonkey checkout, in a scratch copy, with Python's
# `progress` from PyPI in a scratch venv), takes each j-lang file's `# run` section as one line,
# lists fsarena's set the same way (`--dry-run`, `list=jlang`), and compares the two as sorted
# lists: the counts, and every line one has and the other lacks. ACE numbers its files in the
# order Python iterates a set of names (its hash seed), so lines are compared, not numbers.
# Usage: CRASHMONKEY=path/to/crashmonkey [FSARENA=...] bench/vs_ace.sh [LENGTH]
# LENGTH 1 (default) takes ACE about 90 s here; 2 writes 466,382 files and runs its C++
# adapter once for each (many hours).
set -euo pipefail
BENCH=vs_ace
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_fsarena
length=${1:-1}
[[ $length == 1 || $length == 2 ]] || die "LENGTH '$length': expected 1 or 2"
[[ -n ${CRASHMONKEY:-} && -f $CRASHMONKEY/ace/ace.py ]] || die "CRASHMONKEY='${CRASHMONKEY:-}': expected a crashmonkey checkout (ace/ace.py)"
command -v python3 >/dev/null || die "needs python3"
bench_scratch "${TMPDIR:-/tmp}" "fsarena-vs-ace.XXXXXX"
mkdir -p "$WORK/code/tests"
cp -r "$CRASHMONKEY/ace" "$WORK/ace"
cp -r "$CRASHMONKEY/code/tests/ace-base" "$WORK/code/tests/ace-base"
log "venv with progress (PyPI)"
python3 -m venv "$WORK/venv" >/dev/null
"$WORK/venv/bin/pip" install -q progress
log "ace.py -l $length"
(cd "$WORK/ace" && "$WORK/venv/bin/python" ace.py -l "$length" -n False -d False -t crashmonkey >/dev/null)
for f in "$WORK/code/tests/seq$length/j-lang-files"/j-lang*; do
	awk '/^# run/{r=1;next} r&&NF{printf "%s%s", sep, $0; sep="; "} END{print ""}' "$f"
done | sort >"$RES/ace.txt"
log "fsarena --dry-run crash:ops=b3-seq$length,list=jlang"
"$FSARENA" run --dry-run --target ext4 --workload "crash:ops=b3-seq$length,list=jlang" 2>&1 \
	| sed -nE 's/^ +[^ :]+: ((open|mkdir) .*)$/\1/p' | sort >"$RES/fsarena.txt"
ace=$(wc -l <"$RES/ace.txt")
ours=$(wc -l <"$RES/fsarena.txt")
only_ace=$(comm -23 "$RES/ace.txt" "$RES/fsarena.txt" | wc -l)
only_ours=$(comm -13 "$RES/ace.txt" "$RES/fsarena.txt" | wc -l)
printf 'ACE seq-%s: %s workloads; fsarena b3-seq%s: %s; only in ACE: %s; only in fsarena: %s\n' \
	"$length" "$ace" "$length" "$ours" "$only_ace" "$only_ours"
comm -3 "$RES/ace.txt" "$RES/fsarena.txt" | head -20
[[ $ace == "$ours" && $only_ace == 0 && $only_ours == 0 ]]
