# Shared by the bench scripts, sourced right after `set -euo pipefail` with BENCH set to the
# script's short name (vs_fio, ...): its messages, and its scratch directories, which are
# removed however the script ends.

die() { echo "$BENCH.sh: $*" >&2; exit 2; }
log() { echo "[$BENCH] $*" >&2; }

# bench_fsarena [FEATURE_HINT]: FSARENA (default: the repository's target/release/fsarena) as
# an absolute path, checked to be executable; the hint names the cargo features it needs.
bench_fsarena() {
	local root
	root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
	FSARENA=${FSARENA:-$root/target/release/fsarena}
	[[ -x $FSARENA ]] || die "no fsarena binary at '$FSARENA' (cargo build --release -p fsarena-cli${1:+ $1}, or FSARENA=)"
	FSARENA=$(cd "$(dirname "$FSARENA")" && pwd)/$(basename "$FSARENA")
}

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

# The mounts and loop devices a script made with bench_mount_* (and only those), undone at
# exit newest first; IMGDIR, their scratch directory, goes after them.
MOUNTS=() LOOPS=() IMGDIR=

# bench_imgdir PARENT: IMGDIR, a scratch directory for images and mount points, made once
# under PARENT.
bench_imgdir() {
	[[ -n $IMGDIR ]] || IMGDIR=$(mktemp -d "$1/fsarena-$BENCH-img.XXXXXX")
}

# bench_mount_tmpfs MNT SIZE: a tmpfs of SIZE mounted at MNT (made if missing), recorded.
bench_mount_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2" fsarena-bench "$1"
	MOUNTS+=("$1")
}

# bench_mount_loop FS IMG SIZE MNT [MKFS_OPTION...]: a sparse image IMG of SIZE, a loop
# device on it, mkfs.FS (ext4 or xfs) with the options given, mounted at MNT; the loop and
# the mount recorded as they are made. Not in a subshell: MOUNTS and LOOPS must reach the trap.
bench_mount_loop() {
	local fs=$1 img=$2 size=$3 mnt=$4 loop
	shift 4
	truncate -s "$size" "$img"
	loop=$(losetup --find --show "$img") || die "losetup failed for $img"
	LOOPS+=("$loop")
	case $fs in
	ext4) mkfs.ext4 -q -F "$@" "$loop" >&2 ;;
	xfs) mkfs.xfs -q -f "$@" "$loop" >&2 ;;
	*) die "bench_mount_loop: no mkfs for '$fs'" ;;
	esac
	mkdir -p "$mnt"
	mount "$loop" "$mnt"
	MOUNTS+=("$mnt")
}

# Undoes what bench_mount_* recorded, newest first, then removes IMGDIR.
bench_unmount_all() {
	local i
	for ((i = ${#MOUNTS[@]} - 1; i >= 0; i--)); do
		umount "${MOUNTS[$i]}" || log "WARNING: could not unmount ${MOUNTS[$i]}"
	done
	for ((i = ${#LOOPS[@]} - 1; i >= 0; i--)); do
		losetup -d "${LOOPS[$i]}" || log "WARNING: could not detach ${LOOPS[$i]}"
	done
	MOUNTS=() LOOPS=()
	[[ -n $IMGDIR && -d $IMGDIR ]] && rm -rf -- "$IMGDIR"
	return 0
}

# A script that starts background processes defines bench_cleanup_extra to end them (by
# their PIDs) before the mounts and directories go.
bench_cleanup() {
	if declare -F bench_cleanup_extra >/dev/null; then bench_cleanup_extra; fi
	bench_unmount_all
	[[ -n ${WORK:-} && -d $WORK ]] && rm -rf -- "$WORK"
	[[ -n ${RES:-} && -d $RES ]] && rm -rf -- "$RES"
	return 0
}

# bench_server_mount FS IMGPARENT: the scratch directory under IMGPARENT (0711: a server
# running as its own account passes through it) and FS (tmpfs or ext4 on a loop image)
# mounted at $MNT (0755) in it.
bench_server_mount() {
	bench_imgdir "$2"
	chmod 0711 "$IMGDIR"
	bench_scratch "$IMGDIR" "work.XXXXXX"
	MNT=$IMGDIR/$1.mnt
	case $1 in
	tmpfs) bench_mount_tmpfs "$MNT" 2g ;;
	ext4) bench_mount_loop ext4 "$IMGDIR/ext4.img" 4G "$MNT" -E lazy_itable_init=0,lazy_journal_init=0 ;;
	*) die "bad file system '$1': tmpfs or ext4" ;;
	esac
	chmod 0755 "$MNT"
}

# bench_interleave ROUNDS WHAT UNIT C...: for each round and each client count C, the caller's
# `hand C` (sets H) and `tool C` (sets T), the order alternating per round; collects them in
# HAND[C] and TOOL[C].
declare -A HAND TOOL
bench_interleave() {
	local rounds=$1 what=$2 unit=$3 r c
	shift 3
	for ((r = 1; r <= rounds; r++)); do
		for c in "$@"; do
			if ((r % 2)); then
				hand "$c"; tool "$c"
			else
				tool "$c"; hand "$c"
			fi
			log "round $r, $what $c: by hand $H $unit, fsarena $T $unit"
			HAND[$c]+="$H " TOOL[$c]+="$T "
		done
	done
}

# bench_ratio_table FS WHAT UNIT C...: the means of HAND and TOOL per C and their ratio.
bench_ratio_table() {
	local fs=$1 what=$2 unit=$3 c
	shift 3
	printf '%-6s %-8s %14s %14s %8s\n' fs "$what" "by hand $unit" "fsarena $unit" ratio
	for c in "$@"; do
		python3 - "$fs" "$c" "${HAND[$c]}" "${TOOL[$c]}" <<'PY'
import statistics, sys
fs, c, h, t = sys.argv[1], sys.argv[2], [float(x) for x in sys.argv[3].split()], [float(x) for x in sys.argv[4].split()]
mh, mt = statistics.mean(h), statistics.mean(t)
print(f"{fs:<6} {c:<8} {mh:14.1f} {mt:14.1f} {mt / mh:8.3f}")
PY
	done
}
