# Shared by the bench scripts, sourced right after `set -euo pipefail` with BENCH set to the
# script's short name (vs_fio, ...): its messages, and its scratch directories, which are
# removed however the script ends.

die() { echo "$BENCH.sh: $*" >&2; exit 2; }
log() { echo "[$BENCH] $*" >&2; }

# bench_scratch PARENT TEMPLATE: WORK, where the tools do their I/O, under PARENT (the
# filesystem measured), from mktemp's TEMPLATE; RES, where results go, under TMPDIR. Both
# go on exit, Ctrl-C or SIGTERM. Then enters RES, a neutral directory: fio uses a job's name
# as its file name when a non-regular file of that name is in the current directory.
bench_scratch() {
	WORK=$(mktemp -d "$1/$2")
	RES=$(mktemp -d "${TMPDIR:-/tmp}/fsarena-$BENCH-res.XXXXXX")
	trap bench_cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	cd "$RES"
}

# A script that starts background processes defines bench_cleanup_extra to end them (by
# their PIDs) before the directories go.
bench_cleanup() {
	if declare -F bench_cleanup_extra >/dev/null; then bench_cleanup_extra; fi
	[[ -n ${WORK:-} && -d $WORK ]] && rm -rf -- "$WORK"
	[[ -n ${RES:-} && -d $RES ]] && rm -rf -- "$RES"
	return 0
}
