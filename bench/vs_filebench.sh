#!/usr/bin/env bash
# bench/vs_filebench.sh: filebench and `fsarena filebench:file=...` on the very same .f file
# (filebench's own personality with a small fileset and a short `run`), on tmpfs and on a
# loop-backed ext4, rounds interleaved (the tools take turns, the first alternating); prints
# per file system and personality the ratio fsarena / filebench of IO Summary ops/s: the
# median ratio, the ratio of geometric means and its 95% interval (Welch's t on the logs, as
# crates/stats/src/ratio.rs), and whether that lies within 1 ± 10%.
set -euo pipefail

usage() {
	cat <<'EOF2'
usage: bash bench/vs_filebench.sh [options]
  --rounds N          measured rounds per case, tools alternating (default 5)
  --seconds S         each run's `run S` (default 10)
  --personalities L   webserver,fileserver,varmail (default all three)
  --fs LIST           tmpfs,ext4 (default both)
  --dir PATH          parent of the scratch directory (tmpfs mount, ext4 image; default /var/tmp)
environment: FSARENA (default target/release/fsarena), FILEBENCH (default filebench on PATH;
  its personalities are read from PREFIX/share/filebench/workloads next to it, or FB_WORKLOADS)
The filesets are small so that a case takes minutes: webserver nfiles=500, fileserver
nfiles=10000 (its default, mean 128 KiB: about 1 GiB laid out), varmail nfiles=10000 (mean
16 KiB), each personality's own threads. With fewer (fileserver 2000, varmail its default 1000)
both tools run out of missing entries to create within seconds on tmpfs or an idle machine (a
delete skips a file open elsewhere, a create always creates) and stop early. A run that stops
early is left out of the figures and counted at the end.
EOF2
}

BENCH=vs_filebench
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

ROUNDS=5 SECONDS_RUN=10 PERSONALITIES=webserver,fileserver,varmail FSLIST=tmpfs,ext4 PARENT=/var/tmp
while [[ $# -gt 0 ]]; do
	[[ $1 == --*=* ]] && set -- "${1%%=*}" "${1#*=}" "${@:2}"
	case "$1" in -h | --help) usage; exit 0 ;; esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--seconds) SECONDS_RUN=$2 ;;
	--personalities) PERSONALITIES=$2 ;;
	--fs) FSLIST=$2 ;;
	--dir) PARENT=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $SECONDS_RUN =~ ^[1-9][0-9]*$ ]] || die "bad --seconds '$SECONDS_RUN'"
IFS=, read -r -a PERS <<<"$PERSONALITIES"
for p in "${PERS[@]}"; do [[ $p =~ ^(webserver|fileserver|varmail)$ ]] || die "bad --personalities entry '$p'"; done
IFS=, read -r -a FS_LIST <<<"$FSLIST"
for f in "${FS_LIST[@]}"; do [[ $f =~ ^(tmpfs|ext4)$ ]] || die "bad --fs entry '$f'"; done
[[ -d $PARENT ]] || die "--dir '$PARENT' is not a directory"
[[ $(id -u) == 0 ]] || die "needs root (mounts a tmpfs and a loop device)"

bench_fsarena
FILEBENCH=$(command -v "${FILEBENCH:-filebench}") ||
	die "filebench not found: build it (see bench/README.md, 'filebench'), then FILEBENCH=/path/to/bin/filebench"
FB_WORKLOADS=${FB_WORKLOADS:-$(dirname "$(dirname "$FILEBENCH")")/share/filebench/workloads}
[[ -f $FB_WORKLOADS/varmail.f ]] || die "no filebench personalities in '$FB_WORKLOADS' (set FB_WORKLOADS=)"
command -v python3 >/dev/null || die "python3 not found"
command -v setarch >/dev/null || die "setarch not found (util-linux)"

# Exactly the mounts and loop made here are recorded, and only they are undone at exit.
bench_imgdir "$PARENT"
bench_scratch "$IMGDIR" "work.XXXXXX"
TSV=$RES/results.tsv
: >"$TSV"

# model P DIR: filebench's personality P with $dir, a small $nfiles and `run SECONDS`.
model() {
	local nfiles
	case $1 in webserver) nfiles=500 ;; fileserver) nfiles=10000 ;; varmail) nfiles=10000 ;; esac
	sed -e "s|^set \$dir=.*|set \$dir=$2|" -e "s|^set \$nfiles=.*|set \$nfiles=$nfiles|" \
		-e "s|^set \$runtime=.*|set \$runtime=$SECONDS_RUN|" -e "s|^run .*|run $SECONDS_RUN|" \
		"$FB_WORKLOADS/$1.f"
	# fileserver's file says `run $runtime`: both lines are set.
}

# run_tool TOOL P DIR: one run on an empty DIR; appends "FS/P TOOL OPS_PER_S" to TSV.
run_tool() {
	local tool=$1 p=$2 dir=$3 f=$RES/$2.f out=$RES/out.$1 ops
	find "$dir" -mindepth 1 -delete
	model "$p" "$dir" >"$f"
	if [[ $tool == filebench ]]; then
		# setarch -R: filebench hangs at "Starting ... instances" with ASLR on (see
		# ../shared/reference/filebench.md, 4.3).
		# Its worker process outlives a failed master for a moment: wait before the unmount.
		setarch "$(uname -m)" -R "$FILEBENCH" -f "$f" >"$out" 2>&1 || { cat "$out" >&2; sleep 3; die "filebench failed"; }
		ops=$(sed -n 's/.*IO Summary: *[0-9]* ops \([0-9.]*\) ops\/s.*/\1/p' "$out" | tail -1)
		if [[ -z $ops ]] && grep -q 'Run stopped early' "$out"; then
			# Out of entries to create: filebench prints no IO Summary then. Left out, and
			# said, as fsarena's early stops are.
			log "$FS $p filebench: stopped early, not counted"
			echo "$FS/$p filebench stopped-early" >>"$RES/early.txt"
			find "$dir" -mindepth 1 -delete
			return 0
		fi
	else
		if ! "$FSARENA" run --repeat 1 --warmup 0 --no-store --no-drop-caches --output-format json \
			--target "dir:path=$dir" --workload "filebench:file=$f" >"$out" 2>"$out.err"; then
			# A run that stopped early (out of entries to create, as filebench's "Run stopped
			# early") is left out of the figures, and said.
			grep -q 'found no missing entry' "$out.err" || { cat "$out.err" >&2; die "fsarena failed"; }
			log "$FS $p fsarena: stopped early, not counted: $(grep -o 'flowop [^:]*found no missing entry' "$out.err" | head -1)"
			echo "$FS/$p fsarena stopped-early" >>"$RES/early.txt"
			find "$dir" -mindepth 1 -delete
			return 0
		fi
		ops=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["run"]["results"][0]; print(r["metrics"]["ops_per_s"]["values"][0])' "$out")
	fi
	[[ -n $ops ]] || { cat "$out" >&2; sleep 3; die "$tool printed no ops/s"; }
	find "$dir" -mindepth 1 -delete
	log "$FS $p $tool: $ops ops/s"
	printf '%s/%s %s %s\n' "$FS" "$p" "$tool" "$ops" >>"$TSV"
}

echo "# filebench vs fsarena, $(uname -r), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- filebench: setarch \$(uname -m) -R $FILEBENCH -f P.f"
echo "- fsarena:   fsarena run --repeat 1 --warmup 0 --no-store --no-drop-caches --target dir:path=DIR --workload filebench:file=P.f"
echo "- P.f: $FB_WORKLOADS/P.f with \$dir=DIR, \$nfiles 500 (webserver), 10000 (fileserver) or 10000 (varmail), run $SECONDS_RUN"
for FS in "${FS_LIST[@]}"; do
	MNT=$IMGDIR/$FS.mnt
	if [[ $FS == tmpfs ]]; then
		bench_mount_tmpfs "$MNT" 2g
	else
		bench_mount_loop ext4 "$IMGDIR/ext4.img" 4G "$MNT" -E lazy_itable_init=0,lazy_journal_init=0
	fi
	for p in "${PERS[@]}"; do
		for ((r = 1; r <= ROUNDS; r++)); do
			if ((r % 2)); then order=(filebench fsarena); else order=(fsarena filebench); fi
			for tool in "${order[@]}"; do run_tool "$tool" "$p" "$MNT"; done
		done
	done
done
bench_unmount_all

echo
python3 "$HERE/ratio.py" --a filebench --b fsarena --tolerance 0.10 <"$TSV" || true
[[ -s $RES/early.txt ]] && { echo; echo "runs that stopped early (left out):"; sort "$RES/early.txt" | uniq -c; }
true
