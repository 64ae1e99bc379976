#!/usr/bin/env bash
# fio and fsarena's io on the same verify job, interleaved: numjobs random writers with
# verify=crc32c and verify_backlog (every written block read back and checked, during the job
# and after it), on tmpfs. Prints each round's write IOPS and read-back bytes of both and the
# median ratio fsarena/fio. verify:mode=concurrent's write pass is this job.
# Run: FSARENA=path/to/fsarena bench/vs_fio_verify.sh [ROUNDS]
set -euo pipefail
BENCH=vs_fio_verify
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
bench_fsarena
command -v fio >/dev/null || die "needs fio"
rounds=${1:-3}
bench_scratch /dev/shm "fsarena-vs-fio-verify.XXXXXX"
job=(rw=randwrite bs=4k size=64m numjobs=4 ioengine=psync verify=crc32c verify_backlog=1024 group_reporting=1)
fio_args=()
for kv in "${job[@]}"; do fio_args+=("--$kv"); done
spec=$(IFS=,; echo "${job[*]}")
ratios=()
for r in $(seq 1 "$rounds"); do
	fio --name=v --directory="$WORK" "${fio_args[@]}" --output-format=json >fio.json
	rm -f "$WORK"/v.*
	"$FSARENA" run --no-store --repeat 1 --warmup 0 --no-drop-caches --workdir "$RES/work" \
		--target "dir:path=$WORK" --workload "io:name=v,$spec" --output-format fio-json >ours.json
	line=$(python3 - <<'PY'
import json
f = json.load(open("fio.json"))["jobs"][0]
o = json.load(open("ours.json"))["jobs"][0]
print(f"{f['write']['iops']:.0f} {f['read']['io_bytes']} {o['write']['iops']:.0f} {o['read']['io_bytes']} {o['write']['iops'] / f['write']['iops']:.2f}")
PY
	)
	read -r fi fb oi ob ratio <<<"$line"
	echo "round $r: fio $fi write IOPS, $fb bytes read back; fsarena $oi, $ob; fsarena/fio $ratio"
	ratios+=("$ratio")
done
printf '%s\n' "${ratios[@]}" | sort -n | awk '{a[NR]=$1} END {print "median fsarena/fio: " a[int((NR+1)/2)]}'
