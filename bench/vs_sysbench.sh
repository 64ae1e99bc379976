#!/usr/bin/env bash
# bench/vs_sysbench.sh: fsarena's sysbench workload beside the same run made by hand — the
# same MariaDB binaries, the same sysbench and Lua script, the same settings, on the same
# mount (a tmpfs or a loop-backed ext4 made here) — at each thread count, rounds interleaved
# with the order alternating: transactions/s of each and their ratio. The harness must not be
# the difference (the issue asks for ±5%).
#
# By hand, as a user would, once per measurement (each fsarena invocation makes a fresh
# server too): mariadb-install-db --no-defaults as mysql into the mount, `mariadbd
# --no-defaults --datadir=... --socket=... --skip-networking` started with runuser, CREATE
# DATABASE sbtest, sysbench prepare, restart, sync and drop caches, sysbench run, stop
# (SIGTERM). fsarena: `fsarena run --target dir:path=MNT --workload sysbench:...`.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_sysbench.sh [options]
  --rounds N      rounds, the two harnesses back to back, order alternating (default 3)
  --test NAME     sysbench test (default oltp_read_write)
  --table-size N  rows per table (default 10000)
  --time S        sysbench --time, seconds (default 10)
  --clients LIST  thread counts, comma-separated (default 1,8)
  --fs FS         tmpfs or ext4 (default ext4)
  --img-dir PATH  parent of the scratch directory holding the mount (default /var/tmp)
  --quick         --rounds 1 --time 3
environment: FSARENA (default target/release/fsarena)
EOF
}

BENCH=vs_sysbench
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3 TEST=oltp_read_write TSIZE=10000 TIME=10 CLIENTS=1,8 FS=ext4 IMGPARENT=/var/tmp
while [[ $# -gt 0 ]]; do
	case "$1" in
	--quick) ROUNDS=1 TIME=3; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--test) TEST=$2 ;;
	--table-size) TSIZE=$2 ;;
	--time) TIME=$2 ;;
	--clients) CLIENTS=$2 ;;
	--fs) FS=$2 ;;
	--img-dir) IMGPARENT=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $TSIZE =~ ^[1-9][0-9]*$ ]] || die "bad --table-size '$TSIZE'"
[[ -f /usr/share/sysbench/$TEST.lua ]] || die "bad --test '$TEST': no /usr/share/sysbench/$TEST.lua"
[[ $TIME =~ ^[1-9][0-9]*$ ]] || die "bad --time '$TIME'"
[[ $CLIENTS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad --clients '$CLIENTS'"
[[ $FS =~ ^(tmpfs|ext4)$ ]] || die "bad --fs '$FS'"
[[ -d $IMGPARENT ]] || die "--img-dir '$IMGPARENT' is not a directory"
[[ $(id -u) -eq 0 ]] || die "run as root: it mounts a filesystem and runs MariaDB as mysql"
IFS=, read -r -a CLIENT_LIST <<<"$CLIENTS"

bench_fsarena
MARIADBD=$(command -v mariadbd) || die "no mariadbd: apt-get install mariadb-server"
SYSBENCH=$(command -v sysbench) || die "no sysbench: apt-get install sysbench"
id mysql >/dev/null 2>&1 || die "no mysql account: apt-get install mariadb-server"
command -v python3 >/dev/null || die "python3 not found"

bench_server_mount "$FS" "$IMGPARENT"
SOCK=$(mktemp -d "/tmp/fsarena-$BENCH-sock.XXXXXX")
chown mysql: "$SOCK"
DATA=$MNT/mariadb-hand
mkdir -m 0700 "$DATA"
chown mysql: "$DATA"
FSWORK=$RES/fsarena-work
SERVER_PID=

# Ends the hand-started server (by its PID) before the mount goes.
bench_cleanup_extra() {
	stop_server
	[[ -d $SOCK ]] && rm -rf -- "$SOCK"
	return 0
}

start_server() {
	runuser -u mysql -- "$MARIADBD" --no-defaults --datadir="$DATA" --socket="$SOCK/mysqld.sock" \
		--pid-file="$SOCK/mysqld.pid" --log-error="$RES/mariadb.log" --skip-networking \
		--innodb-flush-log-at-trx-commit=1 --innodb-flush-method=fsync --innodb-buffer-pool-size=134217728 \
		--max-connections=151 >>"$RES/mariadb.out" 2>&1 &
	SERVER_PID=$!
	local i
	for ((i = 0; i < 600; i++)); do
		[[ -S $SOCK/mysqld.sock ]] && return 0
		sleep 0.1
	done
	die "MariaDB did not start; see $RES/mariadb.log"
}

# SIGTERM (a clean shutdown) to mariadbd itself, from its PID file: SERVER_PID is runuser's.
stop_server() {
	if [[ -n $SERVER_PID ]]; then
		local pid
		pid=$(cat "$SOCK/mysqld.pid" 2>/dev/null || true)
		[[ $pid =~ ^[0-9]+$ ]] && kill -TERM "$pid" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
		SERVER_PID=
	fi
}

SB_ARGS=(--db-driver=mysql "--mysql-socket=$SOCK/mysqld.sock" --mysql-user=root --mysql-db=sbtest --tables=1
	"--table-size=$TSIZE")

# hand C: H, the transactions/s of one measurement by hand with C threads (a fresh server,
# cold caches).
hand() {
	find "$DATA" -mindepth 1 -delete
	runuser -u mysql -- mariadb-install-db --no-defaults "--datadir=$DATA" --auth-root-authentication-method=socket \
		--skip-test-db --skip-name-resolve >>"$RES/install.log" 2>&1 || die "mariadb-install-db failed"
	start_server
	mariadb --no-defaults "--socket=$SOCK/mysqld.sock" --user=root --execute="CREATE DATABASE sbtest" ||
		die "CREATE DATABASE failed"
	(cd /usr/share/sysbench && "$SYSBENCH" "$TEST" "${SB_ARGS[@]}" --threads=1 prepare >/dev/null) || die "prepare failed"
	stop_server
	start_server
	sync
	echo 3 >/proc/sys/vm/drop_caches
	local out
	out=$(cd /usr/share/sysbench && "$SYSBENCH" "$TEST" "${SB_ARGS[@]}" "--threads=$1" "--time=$TIME" --events=0 \
		--percentile=95 run) || die "sysbench run failed"
	stop_server
	H=$(sed -n 's/^ *transactions: *[0-9]* *(\([0-9.]*\) per sec.)$/\1/p' <<<"$out")
	[[ -n $H ]] || die "no transactions/s in sysbench's output: $out"
}

# tool C: T, the transactions/s of fsarena's measurement with C threads.
tool() {
	T=$("$FSARENA" run --workdir "$FSWORK" --target "dir:path=$MNT" \
		--workload "sysbench:test=$TEST,tables=1,table_size=$TSIZE,threads=$1,time=${TIME}s" \
		--repeat 1 --warmup 0 --no-store --output-format json 2>>"$RES/fsarena.log" |
		python3 -c 'import json,sys; print(json.load(sys.stdin)["run"]["results"][0]["metrics"]["transactions_per_s"]["mean"])' ||
		die "fsarena failed; see $RES/fsarena.log")
}

log "$("$MARIADBD" --version | awk '{print $3}'), sysbench $TEST, $FS at $MNT, table_size $TSIZE, ${TIME}s, $ROUNDS round(s)"
bench_interleave "$ROUNDS" threads 'tx/s' "${CLIENT_LIST[@]}"
bench_ratio_table "$FS" threads 'tx/s' "${CLIENT_LIST[@]}"
