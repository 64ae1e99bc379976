#!/usr/bin/env bash
# bench/vs_pgbench.sh: fsarena's pgbench workload beside the same run made by hand — the same
# PostgreSQL binaries (the newest /usr/lib/postgresql/*/bin), the same pgbench, the same
# settings, on the same mount (a tmpfs or a loop-backed ext4 made here) — at each client
# count, rounds interleaved with the order alternating: tps of each and their ratio. The
# harness must not be the difference (the issue asks for ±5%).
#
# By hand, as a user would: initdb as postgres into the mount, `postgres -D ... -k SOCKDIR -c
# listen_addresses=''` started with runuser, pgbench -i, then per measurement: start the
# server, sync and drop caches, pgbench -c C -j 1 -T T -b tpcb-like, stop it (SIGINT, fast
# shutdown). fsarena: `fsarena run --target dir:path=MNT --workload pgbench:...` (its own
# data directory next to the hand's, loaded by fsarena).
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_pgbench.sh [options]
  --rounds N      rounds, the two harnesses back to back, order alternating (default 3)
  --scale N       pgbench -s (default 1)
  --time S        pgbench -T, seconds (default 10)
  --clients LIST  client counts, comma-separated (default 1,8)
  --fs FS         tmpfs or ext4 (default ext4)
  --img-dir PATH  parent of the scratch directory holding the mount (default /var/tmp)
  --quick         --rounds 1 --time 3
environment: FSARENA (default target/release/fsarena)
EOF
}

BENCH=vs_pgbench
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3 SCALE=1 TIME=10 CLIENTS=1,8 FS=ext4 IMGPARENT=/var/tmp
while [[ $# -gt 0 ]]; do
	case "$1" in
	--quick) ROUNDS=1 TIME=3; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--scale) SCALE=$2 ;;
	--time) TIME=$2 ;;
	--clients) CLIENTS=$2 ;;
	--fs) FS=$2 ;;
	--img-dir) IMGPARENT=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $SCALE =~ ^[1-9][0-9]*$ ]] || die "bad --scale '$SCALE'"
[[ $TIME =~ ^[1-9][0-9]*$ ]] || die "bad --time '$TIME'"
[[ $CLIENTS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad --clients '$CLIENTS'"
[[ $FS =~ ^(tmpfs|ext4)$ ]] || die "bad --fs '$FS'"
[[ -d $IMGPARENT ]] || die "--img-dir '$IMGPARENT' is not a directory"
[[ $(id -u) -eq 0 ]] || die "run as root: it mounts a filesystem and runs PostgreSQL as postgres"
IFS=, read -r -a CLIENT_LIST <<<"$CLIENTS"

bench_fsarena
BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[[ -x $BIN/postgres && -x $BIN/pgbench ]] || die "no PostgreSQL in /usr/lib/postgresql: apt-get install postgresql"
id postgres >/dev/null 2>&1 || die "no postgres account: apt-get install postgresql"
command -v python3 >/dev/null || die "python3 not found"

bench_server_mount "$FS" "$IMGPARENT"
SOCK=$(mktemp -d "/tmp/fsarena-$BENCH-sock.XXXXXX")
chown postgres: "$SOCK"
DATA=$MNT/pg-hand
mkdir -m 0700 "$DATA"
chown postgres: "$DATA"
FSWORK=$RES/fsarena-work
SERVER_PID=

# Ends the hand-started server (by its PID) before the mount goes.
bench_cleanup_extra() {
	stop_server
	[[ -d $SOCK ]] && rm -rf -- "$SOCK"
	return 0
}

start_server() {
	runuser -u postgres -- "$BIN/postgres" -D "$DATA" -k "$SOCK" -c listen_addresses= \
		-c shared_buffers=128MB -c fsync=on -c synchronous_commit=on -c wal_sync_method=fdatasync \
		-c max_connections=100 >>"$RES/postgres.log" 2>&1 &
	SERVER_PID=$!
	local i
	for ((i = 0; i < 600; i++)); do
		"$BIN/pg_isready" -q -h "$SOCK" && return 0
		sleep 0.1
	done
	die "PostgreSQL did not start; see $RES/postgres.log"
}

# SIGINT (fast shutdown) to the postmaster itself, whose PID is the first line of its PID
# file: runuser, SERVER_PID, does not pass SIGINT on.
stop_server() {
	if [[ -n $SERVER_PID ]]; then
		local pm
		pm=$(head -1 "$DATA/postmaster.pid" 2>/dev/null || true)
		[[ $pm =~ ^[0-9]+$ ]] && kill -INT "$pm" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}

# hand C: H, the tps of one measurement by hand with C clients (a fresh cluster and tables,
# cold caches).
# Not in a subshell: the server's PID must reach the trap.
hand() {
	# A fresh cluster each time, as each fsarena invocation makes one: a cluster's first
	# minutes differ (its WAL segments are created, not yet recycled).
	find "$DATA" -mindepth 1 -delete
	runuser -u postgres -- "$BIN/initdb" -D "$DATA" --auth=trust --username=postgres --encoding=UTF8 --locale=C \
		--no-instructions >>"$RES/postgres.log" 2>&1 || die "initdb failed"
	start_server
	"$BIN/pgbench" -h "$SOCK" -U postgres -i -q -s "$SCALE" postgres >/dev/null 2>&1 || die "pgbench -i failed"
	stop_server
	start_server
	sync
	echo 3 >/proc/sys/vm/drop_caches
	local out
	out=$("$BIN/pgbench" -h "$SOCK" -U postgres -c "$1" -j 1 -T "$TIME" -b tpcb-like postgres 2>/dev/null) ||
		die "pgbench failed"
	stop_server
	H=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)$/\1/p' <<<"$out")
	[[ -n $H ]] || die "no tps in pgbench's output: $out"
}

# tool C: T, the tps of fsarena's measurement with C clients.
tool() {
	T=$("$FSARENA" run --workdir "$FSWORK" --target "dir:path=$MNT" \
		--workload "pgbench:scale=$SCALE,client=$1,jobs=1,time=${TIME}s,builtin=tpcb-like" \
		--repeat 1 --warmup 0 --no-store --output-format json 2>>"$RES/fsarena.log" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["results"][0]["metrics"]["tps"]["mean"])' ||
		die "fsarena failed; see $RES/fsarena.log")
}

log "PostgreSQL $("$BIN/postgres" --version | awk '{print $3}') from $BIN, $FS at $MNT, scale $SCALE, ${TIME}s, $ROUNDS round(s)"
bench_interleave "$ROUNDS" clients 'tps' "${CLIENT_LIST[@]}"
bench_ratio_table "$FS" clients 'tps' "${CLIENT_LIST[@]}"
