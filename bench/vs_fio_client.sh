#!/usr/bin/env bash
# bench/vs_fio_client.sh: aggregate bandwidth and IOPS of several clients of one GlusterFS
# volume, fsarena beside fio's own client/server mode on the same client mounts (issue 14).
#
# `fsarena up --detach --target glusterfs:clients=C` makes the volume and its C FUSE client
# mounts once. Then, per case and client count N (rounds interleaved):
#   fio:     N `fio --server=sock:...` processes, one per client, each running the job in its
#            client's mount; `fio --client=... --client=...` collects them and prints the
#            "All clients" line (its bandwidth: every client's bytes over the longest client's
#            run time; the servers start when the client tells them, without a barrier).
#   fsarena: `fsarena run --target dir:path=M1:...:MN --workload io:...,clients=N`, the same
#            job on the same mounts, its aggregate over the common span of all clients.
# Prints per case the medians and the ratio fsarena / fio. See bench/README.md.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_fio_client.sh [options]
  --rounds N      measured rounds per case, tools alternating (default 3)
  --seconds S     run time of every run, integer seconds (default 5)
  --clients LIST  client counts (default 1,2,4)
  --numjobs N     processes per client (default 1)
  --size SIZE     file size per process, fio syntax (default 64m)
  --workdir DIR   fsarena's work directory for the volume (default: a fresh one in /var/tmp)
environment: FSARENA (default target/release/fsarena), FIO (default fio)
EOF
}

BENCH=vs_fio_client
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3 RUNTIME=5 CLIENTS=1,2,4 NUMJOBS=1 SIZE=64m UPDIR=
while [[ $# -gt 0 ]]; do
	[[ $1 == --*=* ]] && set -- "${1%%=*}" "${1#*=}" "${@:2}"
	case "$1" in -h | --help) usage; exit 0 ;; esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--seconds) RUNTIME=$2 ;;
	--clients) CLIENTS=$2 ;;
	--numjobs) NUMJOBS=$2 ;;
	--size) SIZE=$2 ;;
	--workdir) UPDIR=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "bad --seconds '$RUNTIME'"
[[ $NUMJOBS =~ ^[1-9][0-9]*$ ]] || die "bad --numjobs '$NUMJOBS'"
[[ $CLIENTS =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || die "bad --clients '$CLIENTS' (e.g. 1,2,4)"
[[ ${SIZE,,} =~ ^[0-9]+[kmg]?$ ]] || die "bad --size '$SIZE' (e.g. 64m)"
IFS=, read -r -a CLIENT_COUNTS <<<"$CLIENTS"
MAXC=0
for n in "${CLIENT_COUNTS[@]}"; do ((n > MAXC)) && MAXC=$n; done

bench_fsarena
FIO=$(command -v "${FIO:-fio}") || die "fio not found (FIO=)"
command -v python3 >/dev/null || die "python3 not found"

# The fio servers (by PID) and the held volume go however the script ends.
SERVERS=() HELD=0
bench_cleanup_extra() {
	local pid
	for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${SERVERS[@]}"; do wait "$pid" 2>/dev/null || true; done
	SERVERS=()
	((HELD)) && "$FSARENA" down --workdir "$UPDIR" >&2 || true
	return 0
}
[[ -n $UPDIR ]] || UPDIR=$(mktemp -d /var/tmp/fsarena-vsfc.XXXXXX)
bench_scratch /var/tmp "fsarena-vsfc-work.XXXXXX"

# Every client's files fit: fio's and fsarena's, per process, with room for xfs.
size_mib() { local s=${1,,}; case $s in *g) echo $((${s%g} * 1024)) ;; *m) echo "${s%m}" ;;
	*k) echo $((${s%k} / 1024 + 1)) ;; *) echo $((s / 1048576 + 1)) ;; esac; }
BRICK_MIB=$((2 * MAXC * NUMJOBS * $(size_mib "$SIZE") + 1024))
log "volume: glusterfs:clients=$MAXC,size=${BRICK_MIB}m in $UPDIR"
HELD=1
"$FSARENA" up --detach --workdir "$UPDIR" --target "glusterfs:clients=$MAXC,size=${BRICK_MIB}m" >"$RES/up.tsv"
read -r -a MOUNTS_OF <<<"$(cut -f2- "$RES/up.tsv" | tr '\t' ' ')"
((${#MOUNTS_OF[@]} == MAXC)) || die "fsarena up printed ${#MOUNTS_OF[@]} client mounts, expected $MAXC"
log "client mounts: ${MOUNTS_OF[*]}"

# start_servers N: one fio server per client, on a unix socket of its own.
start_servers() {
	local k
	for ((k = 1; k <= $1; k++)); do
		rm -f "$RES/fio$k.sock"
		"$FIO" --server="sock:$RES/fio$k.sock" >"$RES/server$k.log" 2>&1 &
		SERVERS+=($!)
	done
	for ((k = 1; k <= $1; k++)); do
		for _ in $(seq 50); do [[ -S $RES/fio$k.sock ]] && break; sleep 0.1; done
		[[ -S $RES/fio$k.sock ]] || die "fio server $k did not start: $(cat "$RES/server$k.log")"
	done
}
stop_servers() {
	local pid
	for pid in "${SERVERS[@]}"; do kill "$pid" 2>/dev/null || true; done
	for pid in "${SERVERS[@]}"; do wait "$pid" 2>/dev/null || true; done
	SERVERS=()
}

# run_fio RW BS N OUT: the job on the first N client mounts through N servers.
run_fio() {
	local rw=$1 bs=$2 n=$3 out=$4 k args=()
	for ((k = 1; k <= n; k++)); do
		# Fresh files every run, as fsarena lays out its own every run: GlusterFS's client
		# caches (io-cache, read-ahead: performance.strict-o-direct is off by default, so
		# they serve O_DIRECT reads too) must not favour files one tool read before.
		rm -rf -- "${MOUNTS_OF[$((k - 1))]}/fio$k"
		mkdir -p "${MOUNTS_OF[$((k - 1))]}/fio$k"
		cat >"$RES/job$k.fio" <<EOF
[global]
directory=${MOUNTS_OF[$((k - 1))]}/fio$k
ioengine=psync
direct=1
size=$SIZE
time_based=1
runtime=$RUNTIME
group_reporting=1

[client$k]
rw=$rw
bs=$bs
numjobs=$NUMJOBS
EOF
		args+=(--client="sock:$RES/fio$k.sock" "$RES/job$k.fio")
	done
	"$FIO" --output-format=json "${args[@]}" >"$out" 2>"$out.err" || { cat "$out.err" >&2; die "fio --client failed"; }
}

# run_fsarena RW BS N OUT: the same job on the same N mounts.
run_fsarena() {
	local rw=$1 bs=$2 n=$3 out=$4 paths
	paths=$(IFS=:; echo "${MOUNTS_OF[*]:0:$n}")
	"$FSARENA" run --repeat 1 --warmup 0 --no-store --no-drop-caches -q --output-format json \
		--workdir "$RES/fsarena-work" --target "dir:path=$paths" \
		--workload "io:ioengine=psync,direct=1,rw=$rw,bs=$bs,size=$SIZE,numjobs=$NUMJOBS,clients=$n,time_based=1,runtime=${RUNTIME}s" \
		>"$out" 2>"$out.err" || { cat "$out.err" >&2; die "fsarena failed"; }
}

# figures TOOL FILE: "bw_bytes iops" of the aggregate.
figures() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
tool, path = sys.argv[1], sys.argv[2]
text = open(path).read()
doc = json.loads(text[text.index("{"):])
if tool == "fio":
    stats = doc["client_stats"]
    agg = [s for s in stats if s.get("jobname") == "All clients"] or stats
    s = agg[0]
    d = "read" if s["read"]["io_bytes"] > 0 else "write"
    print(s[d]["bw_bytes"], s[d]["iops"])
else:
    r = doc["run"]["results"][0]["metrics"]
    d = "read" if "read_bw" in r else "write"
    print(r[d + "_bw"]["mean"], r[d + "_iops"]["mean"])
EOF
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf '%-22s %8s %14s %14s %7s %10s %10s %7s\n' case clients "fio MiB/s" "fsarena MiB/s" ratio "fio IOPS" "fsa IOPS" ratio
for kase in "randread 4k" "read 128k"; do
	read -r rw bs <<<"$kase"
	for n in "${CLIENT_COUNTS[@]}"; do
		: >"$RES/fio.bw" ; : >"$RES/fsa.bw"; : >"$RES/fio.iops"; : >"$RES/fsa.iops"
		start_servers "$n"
		for ((r = 1; r <= ROUNDS; r++)); do
			run_fio "$rw" "$bs" "$n" "$RES/fio.json"
			read -r bw iops < <(figures fio "$RES/fio.json")
			echo "$bw" >>"$RES/fio.bw"; echo "$iops" >>"$RES/fio.iops"
			run_fsarena "$rw" "$bs" "$n" "$RES/fsa.json"
			read -r bw iops < <(figures fsarena "$RES/fsa.json")
			echo "$bw" >>"$RES/fsa.bw"; echo "$iops" >>"$RES/fsa.iops"
		done
		stop_servers
		fb=$(median <"$RES/fio.bw") sb=$(median <"$RES/fsa.bw") fi=$(median <"$RES/fio.iops") si=$(median <"$RES/fsa.iops")
		awk -v c="$rw bs=$bs nj=$NUMJOBS" -v n="$n" -v fb="$fb" -v sb="$sb" -v fi="$fi" -v si="$si" 'BEGIN {
			printf "%-22s %8d %14.1f %14.1f %7.3f %10.0f %10.0f %7.3f\n", c, n, fb / 1048576, sb / 1048576, sb / fb, fi, si, si / fi }'
	done
done
