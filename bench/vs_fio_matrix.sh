#!/usr/bin/env bash
# bench/vs_fio_matrix.sh: the io matrix of issue 10, fio and fsarena side by side with the
# same fio job file, rounds interleaved; tmpfs, O_DIRECT on loop-backed ext4 and xfs, numjobs
# scaling, RSS at 64 jobs and over a long run. See bench/README.md, "The io matrix".
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_fio_matrix.sh [options]
  --rounds N        measured rounds per case, tools alternating (default 3)
  --seconds S       run time of every single run, integer seconds (default 5)
  --quick           --rounds 1 --seconds 2 --size 256m (the RSS long run keeps --rss-minutes)
  --only REGEX      run only the cases whose name matches (bash regex), e.g. 'qd32|rss/64'
  --fs LIST         filesystems of the I/O cases: tmpfs,ext4,xfs (default all three)
  --size SIZE       file size per job, fio syntax (default 1g)
  --dir PATH        parent of the tmpfs scratch directory (default /dev/shm)
  --img-dir PATH    parent of the scratch directory holding the ext4/xfs images
                    (default /var/tmp)
  --rss-jobs N      numjobs of the RSS peak cases (default 64)
  --rss-minutes M   length of the RSS long run in minutes, 0 to skip (default 1; the
                    issue's figure wants 10)
environment: FSARENA (default target/release/fsarena), FIO (default fio),
  FSARENA_ARGS (default --repeat 1 --warmup 0 --no-store --no-drop-caches -q)
EOF
}

BENCH=vs_fio_matrix
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3 RUNTIME=5 SIZE=1g ONLY= FSLIST=tmpfs,ext4,xfs PARENT=/dev/shm IMGPARENT=/var/tmp
RSS_JOBS=64 RSS_MINUTES=1
while [[ $# -gt 0 ]]; do
	[[ $1 == --*=* ]] && set -- "${1%%=*}" "${1#*=}" "${@:2}"
	case "$1" in
	--quick) ROUNDS=1 RUNTIME=2 SIZE=256m; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--seconds) RUNTIME=$2 ;;
	--only) ONLY=$2 ;;
	--fs) FSLIST=$2 ;;
	--size) SIZE=$2 ;;
	--dir) PARENT=$2 ;;
	--img-dir) IMGPARENT=$2 ;;
	--rss-jobs) RSS_JOBS=$2 ;;
	--rss-minutes) RSS_MINUTES=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "bad --seconds '$RUNTIME'"
[[ $RSS_JOBS =~ ^[1-9][0-9]*$ ]] || die "bad --rss-jobs '$RSS_JOBS'"
[[ $RSS_MINUTES =~ ^[0-9]+$ ]] || die "bad --rss-minutes '$RSS_MINUTES' (whole minutes)"
[[ ${SIZE,,} =~ ^[0-9]+[kmg]?$ ]] || die "bad --size '$SIZE' (e.g. 1g, 256m)"
IFS=, read -r -a FS_LIST <<<"$FSLIST"
for f in "${FS_LIST[@]}"; do [[ $f =~ ^(tmpfs|ext4|xfs)$ ]] || die "bad --fs entry '$f'"; done
[[ -d $PARENT && -d $IMGPARENT ]] || die "--dir '$PARENT' or --img-dir '$IMGPARENT' is not a directory"

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_fsarena
FIO=$(command -v "${FIO:-fio}") || die "fio not found (FIO=)"
command -v python3 >/dev/null || die "python3 not found"
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches -q}"
RSS_TREE=$REPO_ROOT/bench/rss_tree.py
wanted() { [[ -z $ONLY || $1 =~ $ONLY ]]; }
has_fs() { [[ ",$FSLIST," == *",$1,"* ]]; }

# size in MiB (for the images)
size_mib() { local s=${1,,}; case $s in *g) echo $((${s%g} * 1024)) ;; *m) echo "${s%m}" ;;
	*k) echo $((${s%k} / 1024 + 1)) ;; *) echo $((s / 1048576 + 1)) ;; esac; }

# ---------------------------------------------------------------- scratch, loops, mounts
# Exactly the loops and mounts made here are recorded, and only they are undone at exit.
BG_PIDS=()
bench_cleanup_extra() {
	local i
	for i in "${BG_PIDS[@]}"; do kill "$i" 2>/dev/null || true; done
	return 0
}
bench_scratch "$PARENT" "fsarena-matrix.XXXXXX"
TSV=$RES/results.tsv
: >"$TSV"

# make_fs FS: an image of its own in IMGDIR, a loop on it, mkfs, mounted at IMGDIR/FS.mnt,
# left in MNT. Not to be called in a subshell: LOOPS and MOUNTS must reach the exit trap.
make_fs() {
	local fs=$1 img mnt mib
	bench_imgdir "$IMGPARENT"
	img=$IMGDIR/$fs.img mnt=$IMGDIR/$fs.mnt
	# fio's files and fsarena's (it lays out its own in a private subdirectory) plus slack
	mib=$((2 * $(size_mib "$SIZE") + 512))
	((mib >= 1024)) || mib=1024
	bench_mount_loop "$fs" "$img" "${mib}M" "$mnt"
	log "$fs: $img (${mib} MiB) on ${LOOPS[-1]} mounted at $mnt"
	MNT=$mnt
}

# ---------------------------------------------------------------- job files and runs
# write_job FILE DIR RW BS ENGINE DEPTH NUMJOBS DIRECT [THREAD] [RUNTIME] [SIZE]
write_job() {
	cat >"$1" <<EOF
[global]
directory=$2
size=${11:-$SIZE}
time_based=1
runtime=${10:-$RUNTIME}
group_reporting=1
direct=$8
thread=${9:-0}

[bench]
rw=$3
bs=$4
ioengine=$5
iodepth=$6
numjobs=$7
EOF
}

# run_tool TOOL JOBFILE DIR OUT: one run; fio gets fresh files (fsarena lays out its own
# files on every run, in a private subdirectory of DIR).
run_tool() {
	if [[ $1 == fio ]]; then
		rm -f -- "$3"/bench.*.0
		(cd "$RES" && "$FIO" "$2" --output-format=json) >"$4" 2>"$4.err" ||
			{ cat "$4.err" >&2; die "fio failed: $2"; }
	else
		(cd "$RES" && "$FSARENA" run --fio "$2" --target "dir:path=$3" --output-format fio-json \
			"${FSARENA_EXTRA[@]}") >"$4" 2>"$4.err" ||
			{ cat "$4.err" >&2; head -c 2000 "$4" >&2; die "fsarena failed: $2"; }
	fi
}

# fio-shaped JSON -> "iops MiB/s cpu_seconds total_ios" of the read direction. fio sums
# job_runtime over the jobs under group_reporting (usr_cpu is of that sum); if a tool reports
# the longest job's instead (well below numjobs x runtime), the sum is taken as numjobs times it.
parse() { # FILE NUMJOBS
	python3 - "$1" "$2" "$RUNTIME" <<'PY'
import json, sys
txt = open(sys.argv[1]).read()
d = json.JSONDecoder().raw_decode(txt[txt.find("{"):])[0]
j, n, rt = d["jobs"][0], int(sys.argv[2]), float(sys.argv[3])
r = j["read"]
runt = j["job_runtime"] / 1000.0
if n > 1 and runt < 0.75 * n * rt:
    runt *= n
cpu = (j["usr_cpu"] + j["sys_cpu"]) / 100.0 * runt
print(r["iops"], r["bw_bytes"] / 1048576.0, cpu, r["total_ios"])
PY
}

# run_case NAME DIR RW BS ENGINE DEPTH NUMJOBS DIRECT
run_case() {
	local name=$1 job r k tool out vals
	wanted "$name" || return 0
	job=$RES/$(echo "$name" | tr '/' '_').fio
	write_job "$job" "$2" "$3" "$4" "$5" "$6" "$7" "$8"
	local tools=(fio fsarena)
	for ((r = 0; r < ROUNDS; r++)); do
		for ((k = 0; k < 2; k++)); do
			tool=${tools[$(((k + r) % 2))]}
			out=$RES/$tool.$r.$(basename "$job" .fio).json
			run_tool "$tool" "$job" "$2" "$out"
			vals=$(parse "$out" "$7") || die "could not parse $out"
			log "$name round $((r + 1))/$ROUNDS $tool: $vals"
			printf '%s\t%s\t%d\t%s\t%s\n' "$name" "$3" "$r" "$tool" "${vals// /$'\t'}" >>"$TSV"
		done
	done
	rm -rf -- "$2"/bench.*.0
}

# ---------------------------------------------------------------- header
echo "## fsarena vs fio: the io matrix"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), tree: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "- machine: nproc=$(nproc), $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo), kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- $("$FIO" --version), $("$FSARENA" --version 2>/dev/null | head -1)"
echo "- $ROUNDS round(s) x ${RUNTIME}s, size $SIZE per job, tools alternate (order rotates per round)"
echo "- fio:     fio JOB --output-format=json (fresh files before every run)"
echo "- fsarena: fsarena run --fio JOB --target dir:path=DIR --output-format fio-json ${FSARENA_EXTRA[*]}"
echo

# ---------------------------------------------------------------- I/O cases
if has_fs tmpfs; then
	D=$WORK/tmpfs
	mkdir -p "$D"
	for nj in 1 2 4; do
		run_case "tmpfs/4k-randread-qd1-psync-j$nj" "$D" randread 4k psync 1 "$nj" 0
	done
	run_case tmpfs/4k-randread-qd32-io_uring "$D" randread 4k io_uring 32 1 0
	run_case tmpfs/4k-randread-qd32-libaio "$D" randread 4k libaio 32 1 0
	run_case tmpfs/128k-seqread-psync "$D" read 128k psync 1 1 0
	run_case tmpfs/1m-seqread-psync "$D" read 1m psync 1 1 0
fi
for fs in ext4 xfs; do
	has_fs "$fs" || continue
	any=0
	for c in 4k-randread-qd1-psync 4k-randread-qd32-io_uring 4k-randread-qd32-libaio 1m-seqread-psync; do
		wanted "$fs/$c-direct" && any=1
	done
	[[ $any -eq 1 ]] || continue
	make_fs "$fs"
	M=$MNT
	run_case "$fs/4k-randread-qd1-psync-direct" "$M" randread 4k psync 1 1 1
	run_case "$fs/4k-randread-qd32-io_uring-direct" "$M" randread 4k io_uring 32 1 1
	run_case "$fs/4k-randread-qd32-libaio-direct" "$M" randread 4k libaio 32 1 1
	run_case "$fs/1m-seqread-psync-direct" "$M" read 1m psync 1 1 1
done

# ---------------------------------------------------------------- RSS
RSS_TSV=$RES/rss.tsv
: >"$RSS_TSV"
# rss_run NAME TOOL THREAD NUMJOBS SECONDS INTERVAL SIZE: one run under rss_tree.py
rss_run() {
	local name=$1 tool=$2 job out peak dir=$WORK/rss
	mkdir -p "$dir"
	job=$RES/rss.$tool.$3.$4.fio
	write_job "$job" "$dir" randread 4k psync 1 "$4" 0 "$3" "$5" "$7"
	out=$RES/rss.$tool.$3.$4.json
	rm -f -- "$dir"/bench.*.0
	local cmd=("$FIO" "$job" --output-format=json)
	[[ $tool == fsarena ]] && cmd=("$FSARENA" run --fio "$job" --target "dir:path=$dir" \
		--output-format fio-json "${FSARENA_EXTRA[@]}")
	peak=$(cd "$RES" && python3 "$RSS_TREE" --interval "$6" --out "$out" \
		--series "$RES/rss.$tool.$3.$4.series" -- "${cmd[@]}") ||
		die "$tool failed in $name (see $out)"
	log "$name $tool: $peak"
	printf '%s\t%s\t%s\t%s\n' "$name" "$tool" "$peak" "$RES/rss.$tool.$3.$4.series" >>"$RSS_TSV"
	rm -rf -- "$dir"
}
for th in 0 1; do
	name="rss/$RSS_JOBS-$([[ $th -eq 0 ]] && echo processes || echo threads)"
	wanted "$name" || continue
	for tool in fio fsarena; do rss_run "$name" "$tool" "$th" "$RSS_JOBS" "$RUNTIME" 0.2 16m; done
done
if ((RSS_MINUTES > 0)) && wanted "rss/long-${RSS_MINUTES}min"; then
	log "rss/long-${RSS_MINUTES}min: fsarena, 4 jobs (processes), 4k randread psync, RSS every 10 s"
	rss_run "rss/long-${RSS_MINUTES}min" fsarena 0 4 $((RSS_MINUTES * 60)) 10 "$SIZE"
fi

# ---------------------------------------------------------------- tables
python3 - "$TSV" "$RSS_TSV" <<'PY'
import json, sys
from statistics import median
from collections import OrderedDict, defaultdict

cases = OrderedDict()
for line in open(sys.argv[1]):
    name, rw, r, tool, iops, mibs, cpu, ios = line.rstrip("\n").split("\t")
    e = cases.setdefault(name, {"seq": rw == "read", "rounds": defaultdict(dict)})
    e["rounds"][int(r)][tool] = (float(iops), float(mibs), float(cpu), float(ios))

def goal(name):
    if name.startswith("tmpfs/"):
        return ">=1.20"
    return "+-3%"

def met(name, x):
    if name.startswith("tmpfs/"):
        return x >= 1.20
    return abs(x - 1.0) <= 0.03

rows = []
for name, e in cases.items():
    rs = [t for t in e["rounds"].values() if "fio" in t and "fsarena" in t]
    if not rs:
        continue
    k = 1 if e["seq"] else 0
    unit = "MiB/s" if e["seq"] else "IOPS"
    f = median(t["fio"][k] for t in rs)
    a = median(t["fsarena"][k] for t in rs)
    ratios = [t["fsarena"][k] / t["fio"][k] for t in rs if t["fio"][k] > 0]
    ratio = median(ratios)
    cpu = lambda tool: median(t[tool][2] / t[tool][3] * 1e6 for t in rs if t[tool][3] > 0)
    cf, ca = cpu("fio"), cpu("fsarena")
    rows.append([name, unit, f"{f:,.0f}", f"{a:,.0f}", f"{ratio:.2f}",
                 f"{min(ratios):.2f}-{max(ratios):.2f}",
                 f"{goal(name)} {'met' if met(name, ratio) else 'NOT met'}",
                 f"{cf:.2f}", f"{ca:.2f}", f"{ca / cf:.2f}" if cf > 0 else "-"])

def table(hdr, rows):
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(hdr)]
    fmt = lambda c: "| " + " | ".join(s.ljust(w[i]) if i == 0 else s.rjust(w[i])
                                      for i, s in enumerate(c)) + " |"
    print(fmt(hdr))
    print("|" + "|".join("-" * (w[i] + 1) + ("-" if i == 0 else ":") for i in range(len(hdr))) + "|")
    for r in rows:
        print(fmt(r))
    print()

if rows:
    table(["case", "unit", "fio", "fsarena", "fsarena/fio", "range", "goal",
           "fio CPU us/IO", "fsarena CPU us/IO", "CPU fsarena/fio"], rows)
    print("fio, fsarena: medians over rounds; fsarena/fio: median of the per-round ratios, range:")
    print("their min-max. CPU us/IO: (usr_cpu+sys_cpu) x runtime summed over jobs / total_ios,")
    print("median over rounds (lower is better).")
    print()

# numjobs scaling: IOPS with N jobs over IOPS with 1 job, per tool, median over rounds
sc = []
base = cases.get("tmpfs/4k-randread-qd1-psync-j1")
for n in (2, 4):
    e = cases.get(f"tmpfs/4k-randread-qd1-psync-j{n}")
    if not base or not e:
        continue
    s = {}
    for tool in ("fio", "fsarena"):
        s[tool] = median(e["rounds"][r][tool][0] / base["rounds"][r][tool][0]
                         for r in e["rounds"] if r in base["rounds"])
    sc.append([f"numjobs {n} / numjobs 1", f"{s['fio']:.2f}", f"{s['fsarena']:.2f}",
               "met" if s["fsarena"] >= s["fio"] else "NOT met"])
if sc:
    print("Scaling, tmpfs 4k randread psync (per-round ratio jN/j1, median):")
    print()
    table(["", "fio", "fsarena", "goal fsarena >= fio"], sc)

rss = []
longrun = []
for line in open(sys.argv[2]):
    name, tool, peak, series = line.rstrip("\n").split("\t")
    p = json.loads(peak)
    if name.startswith("rss/long"):
        longrun.append((name, tool, series))
        continue
    rss.append([name, tool, str(p["peak_processes"]), f"{p['peak_rss_kib'] / 1024:.1f}",
                f"{p['peak_pss_kib'] / 1024:.1f}",
                "-" if tool != "fsarena" else
                " / ".join(f"{k} {'met' if p[f'peak_{k.lower()}_kib'] < 64 * 1024 else 'NOT met'}"
                           for k in ("RSS", "PSS"))])
if rss:
    print("RSS peaks (4k randread psync, 16 MiB per job, sampled every 0.2 s over the process tree):")
    print()
    table(["case", "tool", "processes", "sum RSS MiB", "sum PSS MiB", "goal < 64 MiB"], rss)
    print("Sum RSS counts shared pages (binary, libraries) once per process; sum PSS divides them")
    print("among the processes sharing them. With threads the two differ only by shared libraries.")
    print()
for name, tool, series in longrun:
    pts = [l.split() for l in open(series)]
    rs = [int(p[1]) / 1024 for p in pts]
    print(f"{name} ({tool}, 4 jobs as processes): sum RSS MiB every 10 s: "
          + " ".join(f"{x:.1f}" for x in rs))
    if len(rs) > 2:
        steady = rs[1:-1]  # the first sample precedes the layout, the last may be the exit
        print(f"  steady part: min {min(steady):.1f}, max {max(steady):.1f}, "
              f"growth first->last {steady[-1] - steady[0]:+.1f} MiB")
    print()
PY
