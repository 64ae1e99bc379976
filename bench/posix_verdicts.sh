#!/usr/bin/env bash
# bench/posix_verdicts.sh: do two fsarena builds give every `posix` case the same verdict?
# Runs the whole posix workload with each (or reads a run saved before) on each target
# (tmpfs, ext4, xfs, btrfs, fuse2fs by default) and compares case by case: the name, the
# outcome (pass, fail, unsupported) and, for a case that did not pass, what was expected and
# what happened. Prints per target how many cases are identical, how many differ in their
# verdict, how many only in their message, and how many are on one side only, then each
# difference. Exits 1 when any verdict differs, a case is on one side only, or the cases run
# in another order.
#
# Made for changes that must not change what the cases find (issue 32: the cases as a
# table): capture the base once with --save, then compare each step against it.
#
# usage: bash bench/posix_verdicts.sh BEFORE AFTER [--targets LIST] [--save DIR]
set -euo pipefail

BENCH=posix_verdicts
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

TARGETS=tmpfs:size=64m,ext4:size=256m,xfs:size=512m,btrfs:size=256m,fuse2fs:size=256m
SAVE=
PARENT=/var/tmp
SIDES=()
usage() {
	echo "usage: bash bench/posix_verdicts.sh BEFORE AFTER [--targets LIST] [--save DIR] [--dir PATH]"
	echo "  BEFORE, AFTER: an fsarena binary, or a directory of saved runs (tmpfs.json, ext4.json, ...)"
	echo "  --targets: comma-separated target specs (default $TARGETS)"
	echo "  --save: keep BEFORE's runs there; --dir: parent of the work directory (default $PARENT)"
	echo "  FSARENA_ARGS: extra 'fsarena run' flags (default --repeat 1 --warmup 0 --no-store)"
}
while [[ $# -gt 0 ]]; do
	case "$1" in
	--targets) [[ $# -ge 2 ]] || die "--targets needs a value"; TARGETS=$2; shift 2 ;;
	--save) [[ $# -ge 2 ]] || die "--save needs a value"; SAVE=$2; shift 2 ;;
	--dir) [[ $# -ge 2 ]] || die "--dir needs a value"; PARENT=$2; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	-*) usage >&2; die "unknown argument '$1'" ;;
	*) SIDES+=("$1"); shift ;;
	esac
done
[[ ${#SIDES[@]} -eq 2 ]] || { usage >&2; die "give BEFORE and AFTER"; }
for s in "${SIDES[@]}"; do
	[[ -d $s || -x $s ]] || die "'$s' is neither an executable nor a directory of saved runs"
done
[[ -z $SAVE ]] || mkdir -p "$SAVE"
[[ -d $PARENT ]] || die "--dir '$PARENT' is not a directory"
command -v python3 >/dev/null || die "python3 is needed to read fsarena's JSON"
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store}"

bench_scratch "$PARENT" "fsarena-$BENCH-work.XXXXXX"

# run SIDE SPEC OUT: OUT is SIDE's JSON for SPEC, run now or copied from the saved one.
run() {
	local side=$1 spec=$2 out=$3 name=${2%%:*}
	if [[ -d $side ]]; then
		[[ -f $side/$name.json ]] || die "no saved run $side/$name.json"
		cp "$side/$name.json" "$out"
		return
	fi
	[[ $(id -u) -eq 0 ]] || die "run as root: fsarena provisions the targets and the cases switch users"
	local rc=0
	"$side" run "${FSARENA_EXTRA[@]}" --workdir "$WORK/wd" --target "$spec" \
		--workload posix --output-format json >"$out" 2>"$out.err" || rc=$?
	[[ $rc -eq 0 ]] || log "$spec: $side exited $rc: $(tail -n 1 "$out.err")"
}

IFS=, read -r -a SPECS <<<"$TARGETS"
status=0
for spec in "${SPECS[@]}"; do
	name=${spec%%:*}
	run "${SIDES[0]}" "$spec" "$RES/before-$name.json"
	[[ -z $SAVE || -d ${SIDES[0]} ]] || cp "$RES/before-$name.json" "$SAVE/$name.json"
	run "${SIDES[1]}" "$spec" "$RES/after-$name.json"
	python3 - "$name" "$RES/before-$name.json" "$RES/after-$name.json" <<'EOF' || status=1
import json, sys

def verdicts(path):
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: no run ({e})")
    out = {}
    for r in doc["run"]["results"]:
        for v in r.get("verdicts", []):
            out[v["case"]] = (v["outcome"], v.get("expected", ""), v.get("actual", ""))
    return out

name, before, after = sys.argv[1], verdicts(sys.argv[2]), verdicts(sys.argv[3])
same = verdict = message = 0
lines = []
for case in sorted(before.keys() & after.keys()):
    b, a = before[case], after[case]
    if b == a:
        same += 1
    elif b[0] != a[0]:
        verdict += 1
        lines.append(f"  {case}: {b[0]} -> {a[0]} ({a[1]} / {a[2]})")
    else:
        message += 1
        lines.append(f"  {case}: {b[0]}, message {b[1]!r} / {b[2]!r} -> {a[1]!r} / {a[2]!r}")
for case in sorted(before.keys() - after.keys()):
    lines.append(f"  {case}: before only")
for case in sorted(after.keys() - before.keys()):
    lines.append(f"  {case}: after only")
alone = len(before.keys() ^ after.keys())
common = set(before) & set(after)
order = [c for c in before if c in common] == [c for c in after if c in common]
print(f"{name}: {same} identical, {verdict} verdicts differ, {message} messages differ, {alone} on one side only"
      + ("" if order else ", in another order"))
print("\n".join(lines)) if lines else None
sys.exit(1 if verdict or alone or not order else 0)
EOF
done
exit $status
