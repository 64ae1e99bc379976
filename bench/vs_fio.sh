#!/usr/bin/env bash
# bench/vs_fio.sh: fio vs fsarena vs a bare pread/pwrite loop, same job, same files,
# interleaved over several rounds. See bench/README.md.
#
# usage: bash bench/vs_fio.sh [--rounds N] [--seconds S] [--dir PATH] [--cases a,b,...]
#                             [--size SIZE] [--direct] [--fio-align] [--layout-once] [--quick]
#                             [--skip-fsarena]
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_fio.sh [options]
  --rounds N       measured rounds per case, tools interleaved (default 3)
  --seconds S      run time of every single run, integer seconds (default 5)
  --quick          same as --rounds 1 --seconds 2
  --cases LIST     comma-separated subset of a,b,c,d,e,n (default all)
                     a  4 KiB randread, psync, 1 job     (headline)
                     b  1 MiB sequential read, 1 job
                     c  1 MiB sequential write, 1 job
                     d  4 KiB randwrite, 1 job
                     e  4 KiB randread, 4 jobs (group_reporting; bare: 4 processes summed)
                     n  4 KiB randread, ioengine=null, 1 job: no I/O at all, so the IOPS are
                        each tool's own cost per I/O (fio and fsarena only; no files)
                     u  4 KiB randread, ioengine=io_uring, iodepth=32, 1 job (fio and
                        fsarena only: the bare loop is psync)
                     l  4 KiB randread, ioengine=libaio, iodepth=32, 1 job (likewise; Linux
                        AIO is asynchronous only with --direct)
  --dir PATH       parent directory for the scratch directory (default /dev/shm);
                   a fresh subdirectory is created in it and removed at the end
  --size SIZE      file size per job, fio syntax (default 1g)
  --direct         O_DIRECT for all three tools (direct=1)
  --fio-align      give fio page-aligned buffers (--iomem_align=4k). Without O_DIRECT fio's
                   default buffer comes from malloc and is only 16-byte aligned, which on
                   some CPUs halves the memory-copy speed of 1 MiB reads/writes; fsarena and
                   the bare loop always use page-aligned buffers
  --layout-once    lay the files out once per case and reuse them for every fio and bare
                   run (default: fresh files before each run, as fsarena makes its own
                   files on every run; see docs/manual/targets.md, `dir`)
  --skip-fsarena   run only fio and the bare loop (for testing the harness)
environment:
  FSARENA          fsarena binary (default target/release/fsarena, relative to the repo root)
  FSARENA_ARGS     extra flags for 'fsarena run' (default: those of --repeat 1 --warmup 0
                   --no-store that 'fsarena run --help' lists)
  FIO              fio binary (default fio)
  CC               C compiler for the bare loop (default cc)
EOF
}

BENCH=vs_fio
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

# ---------------------------------------------------------------- options
ROUNDS=3
RUNTIME=5
PARENT=/dev/shm
CASES=a,b,c,d,e,n
SIZE=1g
DIRECT=0
SKIP_FSARENA=0
FIO_ALIGN=0
LAYOUT_ONCE=0

while [[ $# -gt 0 ]]; do
	case "$1" in
	--rounds) [[ $# -ge 2 ]] || die "--rounds needs a value"; ROUNDS=$2; shift 2 ;;
	--rounds=*) ROUNDS=${1#*=}; shift ;;
	--seconds) [[ $# -ge 2 ]] || die "--seconds needs a value"; RUNTIME=$2; shift 2 ;;
	--seconds=*) RUNTIME=${1#*=}; shift ;;
	--quick) ROUNDS=1; RUNTIME=2; shift ;;
	--cases) [[ $# -ge 2 ]] || die "--cases needs a value"; CASES=$2; shift 2 ;;
	--cases=*) CASES=${1#*=}; shift ;;
	--dir) [[ $# -ge 2 ]] || die "--dir needs a value"; PARENT=$2; shift 2 ;;
	--dir=*) PARENT=${1#*=}; shift ;;
	--size) [[ $# -ge 2 ]] || die "--size needs a value"; SIZE=$2; shift 2 ;;
	--size=*) SIZE=${1#*=}; shift ;;
	--direct) DIRECT=1; shift ;;
	--fio-align) FIO_ALIGN=1; shift ;;
	--layout-once) LAYOUT_ONCE=1; shift ;;
	--skip-fsarena) SKIP_FSARENA=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
done

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS' (want a positive integer)"
[[ $RUNTIME =~ ^[1-9][0-9]*$ ]] || die "bad --seconds '$RUNTIME' (want a positive integer)"
IFS=, read -r -a CASE_LIST <<<"$CASES"
[[ ${#CASE_LIST[@]} -gt 0 ]] || die "empty --cases"
for c in "${CASE_LIST[@]}"; do
	[[ $c =~ ^[a-enul]$ ]] || die "bad case '$c' in --cases '$CASES' (accepted: a,b,c,d,e,n,u,l)"
done

# fio size syntax (k/m/g/t, base 1024 like fio's default kb_base) -> bytes
to_bytes() {
	local s=${1,,}
	s=${s%b}
	s=${s%i}
	case "$s" in
	*k) echo $((${s%k} * 1024)) ;;
	*m) echo $((${s%m} * 1024 * 1024)) ;;
	*g) echo $((${s%g} * 1024 * 1024 * 1024)) ;;
	*t) echo $((${s%t} * 1024 * 1024 * 1024 * 1024)) ;;
	*) echo $((s)) ;;
	esac
}
[[ ${SIZE,,} =~ ^[0-9]+[kmgt]?(i?b)?$ ]] || die "bad --size '$SIZE' (e.g. 1g, 512m)"
SIZE_BYTES=$(to_bytes "$SIZE")

# ---------------------------------------------------------------- tools
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[[ -d $PARENT ]] || die "--dir '$PARENT' is not a directory"
PARENT=$(cd "$PARENT" && pwd)
cd "$REPO_ROOT"

FIO=${FIO:-fio}
CC=${CC:-cc}
FSARENA=${FSARENA:-target/release/fsarena}

FIO_PATH=$(command -v "$FIO") || die "fio not found ('$FIO'); install fio or set FIO=/path/to/fio"
FIO=$FIO_PATH
command -v python3 >/dev/null || die "python3 not found (needed to parse JSON and compute medians)"
command -v "$CC" >/dev/null || die "C compiler '$CC' not found; set CC="
if [[ $SKIP_FSARENA -eq 0 ]]; then
	if [[ ! -x $FSARENA ]]; then
		die "fsarena binary not found or not executable: '$FSARENA' (from $REPO_ROOT).
  Build it with 'cargo build --release', point FSARENA=/path/to/fsarena at it,
  or pass --skip-fsarena to compare only fio and the bare loop."
	fi
	FSARENA=$(cd "$(dirname "$FSARENA")" && pwd)/$(basename "$FSARENA")
	# One fsarena invocation = one timed run, like one fio invocation: ask for no warm-up,
	# one repetition and no storing, with whichever of these flags this binary knows.
	if [[ -z ${FSARENA_ARGS+x} ]]; then
		run_help=$("$FSARENA" run --help 2>&1 || true)
		FSARENA_ARGS=""
		for flag in "--repeat 1" "--warmup 0" "--no-store"; do
			if [[ $run_help == *"${flag%% *}"* ]]; then
				FSARENA_ARGS+="${FSARENA_ARGS:+ }$flag"
			fi
		done
	fi
fi
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:-}"

BUILD=$REPO_ROOT/bench/.build
mkdir -p "$BUILD"
BARE=$BUILD/pread_loop
log "compiling bench/pread_loop.c -> $BARE"
"$CC" -O2 -o "$BARE" bench/pread_loop.c

# ---------------------------------------------------------------- scratch + cleanup
BG_PIDS=()
# The background load jobs, by the PIDs this script started.
bench_cleanup_extra() {
	local p
	for p in "${BG_PIDS[@]}"; do
		kill "$p" 2>/dev/null || true
	done
}
bench_scratch "$PARENT" "fsarena-vs-fio.XXXXXX"

# ---------------------------------------------------------------- cases
# case -> "rw bs numjobs description"
case_def() {
	case "$1" in
	a) echo "randread 4k 1 4KiB-randread-psync-1job" ;;
	b) echo "read 1m 1 1MiB-seqread-1job" ;;
	c) echo "write 1m 1 1MiB-seqwrite-1job" ;;
	d) echo "randwrite 4k 1 4KiB-randwrite-1job" ;;
	e) echo "randread 4k 4 4KiB-randread-4jobs" ;;
	n) echo "randread 4k 1 4KiB-randread-null-engine" ;;
	u) echo "randread 4k 1 4KiB-randread-io_uring-QD32" ;;
	l) echo "randread 4k 1 4KiB-randread-libaio-QD32" ;;
	esac
}
# case -> ioengine of fio and fsarena; the null case has no bare loop and no files
engine_of() {
	case "$1" in
	n) echo null ;;
	u) echo io_uring ;;
	l) echo libaio ;;
	*) echo psync ;;
	esac
}
ENGINE=psync
# the queue depth of an engine's cases: the asynchronous ones run at 32
depth_of() { case "$1" in io_uring | libaio) echo 32 ;; *) echo 1 ;; esac; }
# engines the bare pread/pwrite loop stands for
has_bare() { [[ $1 == psync ]]; }

# shell-quote a command for display and eval; plain words stay unquoted
quote_cmd() {
	local a out=() sq="'" esc="'\\''"
	for a in "$@"; do
		if [[ $a =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then
			out+=("$a")
		else
			out+=("'${a//$sq/$esc}'")
		fi
	done
	echo "${out[*]}"
}

fio_cmd() { # dir rw bs jobs
	local cmd=("$FIO" --name=bench --directory="$1" --rw="$2" --bs="$3" --size="$SIZE"
		--ioengine="$ENGINE" --iodepth="$(depth_of "$ENGINE")" --time_based=1 --runtime="$RUNTIME" --numjobs="$4"
		--group_reporting --output-format=json)
	[[ $DIRECT -eq 1 ]] && cmd+=(--direct=1)
	[[ $FIO_ALIGN -eq 1 ]] && cmd+=(--iomem_align=4k)
	quote_cmd "${cmd[@]}"
}
fsarena_cmd() { # dir rw bs jobs
	local wl="io:name=bench,rw=$2,bs=$3,size=$SIZE,ioengine=$ENGINE,iodepth=$(depth_of "$ENGINE"),time_based=1,runtime=$RUNTIME,numjobs=$4,group_reporting=1"
	[[ $DIRECT -eq 1 ]] && wl+=",direct=1"
	local cmd=("$FSARENA" run --target "dir:path=$1" --workload "$wl" --output-format fio-json
		"${FSARENA_EXTRA[@]}")
	quote_cmd "${cmd[@]}"
}
bare_cmd() { # dir rw bs jobs
	local desc
	desc="$(quote_cmd "$BARE" "$1/bench.J.0" "$SIZE_BYTES" "$(to_bytes "$3")" "$2" "$RUNTIME" "$DIRECT")"
	if [[ $4 -gt 1 ]]; then
		echo "${desc}  # J=0..$(($4 - 1)) in parallel, IOPS summed"
	else
		echo "${desc/bench.J.0/bench.0.0}"
	fi
}

# JSON (fio shape) on stdin -> IOPS of direction $1 (read|write) of jobs[0]
parse_fio_json() {
	python3 -c '
import json, sys
ddir = sys.argv[1]
txt = sys.stdin.read()
i = txt.find("{")
if i < 0:
    sys.exit("no JSON object in output")
d = json.JSONDecoder().raw_decode(txt[i:])[0]
print(d["jobs"][0][ddir]["iops"])
' "$1"
}

ddir_of() { case "$1" in *write) echo write ;; *) echo read ;; esac; }

run_fio() { # case dir rw bs jobs round
	local out=$RES/fio.$1.$6.json err=$RES/fio.$1.$6.err
	if ! eval "$(fio_cmd "$2" "$3" "$4" "$5")" >"$out" 2>"$err"; then
		cat "$err" >&2
		die "fio failed in case $1 round $(($6 + 1))"
	fi
	parse_fio_json "$(ddir_of "$3")" <"$out" || die "could not parse fio JSON (case $1, $out)"
}

run_fsarena() { # case dir rw bs jobs round
	local out=$RES/fsarena.$1.$6.json err=$RES/fsarena.$1.$6.err
	if ! eval "$(fsarena_cmd "$2" "$3" "$4" "$5")" >"$out" 2>"$err"; then
		cat "$err" >&2
		head -c 2000 "$out" >&2
		die "fsarena failed in case $1 round $(($6 + 1)) (its stderr is above)"
	fi
	parse_fio_json "$(ddir_of "$3")" <"$out" || {
		head -c 2000 "$out" >&2
		die "could not parse fsarena's fio-json output (case $1)"
	}
}

run_bare() { # case dir rw bs jobs round
	local j bsb pids=() outs=()
	bsb=$(to_bytes "$4")
	BG_PIDS=()
	for ((j = 0; j < $5; j++)); do
		"$BARE" "$2/bench.$j.0" "$SIZE_BYTES" "$bsb" "$3" "$RUNTIME" "$DIRECT" \
			>"$RES/bare.$1.$6.$j" 2>"$RES/bare.$1.$6.$j.err" &
		pids+=($!)
		BG_PIDS+=($!)
		outs+=("$RES/bare.$1.$6.$j")
	done
	for ((j = 0; j < $5; j++)); do
		if ! wait "${pids[$j]}"; then
			cat "$RES/bare.$1.$6.$j.err" >&2
			die "bare loop failed in case $1 round $(($6 + 1)) (process $j)"
		fi
	done
	BG_PIDS=()
	python3 -c '
import sys
tot = 0.0
for p in sys.argv[1:]:
    kv = dict(f.split("=", 1) for f in open(p).read().split())
    tot += float(kv["iops"])
print(tot)
' "${outs[@]}" || die "could not parse the bare loop's output (case $1)"
}

# Fresh files for fio and the bare loop: delete the case's files, let fio lay them out
# again (untimed), check the names. fsarena lays out (and deletes) its own files on every
# run, so by default fio and the bare loop get fresh files before every run as well.
layout_case() { # case dir rw bs jobs
	local j f
	rm -f -- "$2"/bench.*.0
	"$FIO" --name=bench --directory="$2" --rw="$3" --bs="$4" --size="$SIZE" \
		--ioengine=psync --numjobs="$5" --create_only=1 >"$RES/layout.$1.out" 2>&1 || {
		cat "$RES/layout.$1.out" >&2
		die "fio layout failed for case $1"
	}
	for ((j = 0; j < $5; j++)); do
		f=$2/bench.$j.0
		[[ -f $f && $(stat -c %s "$f") -ge $SIZE_BYTES ]] ||
			die "after layout, $f is missing or shorter than $SIZE_BYTES bytes (fio file naming changed?)"
	done
}

# ---------------------------------------------------------------- header
cpu_model=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
[[ -n $cpu_model ]] || cpu_model=$(uname -m)
mem_total=$(awk '/^MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo 2>/dev/null || echo "?")
fio_version=$("$FIO" --version 2>/dev/null || echo "?")
if [[ $SKIP_FSARENA -eq 0 ]]; then
	fsarena_version=$("$FSARENA" --version 2>/dev/null | head -1 || true)
	[[ -n $fsarena_version ]] || fsarena_version="(--version gave nothing)"
else
	fsarena_version="(skipped: --skip-fsarena)"
fi
fstype=$(stat -f -c %T "$WORK" 2>/dev/null || echo "?")
git_rev=$(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo "no commit")

echo "## fsarena vs fio vs bare syscall loop"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fsarena tree: $git_rev"
echo "- machine: nproc=$(nproc), CPU: $cpu_model, memory: $mem_total, kernel: $(uname -r)"
echo "- tools: $fio_version; fsarena: $fsarena_version; bare loop: $("$CC" --version 2>/dev/null | head -1) -O2"
echo "- directory: $WORK ($fstype), file size per job: $SIZE ($SIZE_BYTES bytes), direct=$DIRECT, fio page-aligned buffers (--fio-align): $([[ $FIO_ALIGN -eq 1 ]] && echo yes || echo "no (fio default)")"
echo "- $ROUNDS round(s) x ${RUNTIME}s per run; within a round the three tools run back to back,"
if [[ $LAYOUT_ONCE -eq 1 ]]; then
	echo "  order rotated every round; files laid out once per case before round 1 (untimed);"
else
	echo "  order rotated every round; fresh files laid out (untimed) before every fio and bare run,"
	echo "  fsarena lays out its own on every run;"
fi
echo "  all tools run from an empty scratch working directory"
echo
echo "Commands (DIR = $WORK/<case>):"
echo
for c in "${CASE_LIST[@]}"; do
	read -r rw bs jobs desc <<<"$(case_def "$c")"
	ENGINE=$(engine_of "$c")
	d=DIR_PLACEHOLDER
	echo "    # ($c) $desc"
	echo "    $(fio_cmd "$d" "$rw" "$bs" "$jobs")"
	if [[ $SKIP_FSARENA -eq 0 ]]; then
		echo "    $(fsarena_cmd "$d" "$rw" "$bs" "$jobs")"
	fi
	if has_bare "$ENGINE"; then echo "    $(bare_cmd "$d" "$rw" "$bs" "$jobs")"; fi
done | sed "s#DIR_PLACEHOLDER#\$DIR#g; s#$REPO_ROOT/##g"
echo

# ---------------------------------------------------------------- run
TSV=$RES/results.tsv
: >"$TSV"
if [[ $SKIP_FSARENA -eq 0 ]]; then TOOLS=(fio fsarena bare); else TOOLS=(fio bare); fi
NT=${#TOOLS[@]}

for c in "${CASE_LIST[@]}"; do
	read -r rw bs jobs desc <<<"$(case_def "$c")"
	ENGINE=$(engine_of "$c")
	dir=$WORK/$c
	mkdir -p "$dir"
	# The bare loop is psync: only psync cases have one. The null engine lays out no files.
	CASE_TOOLS=()
	for tool in "${TOOLS[@]}"; do
		if [[ $tool != bare ]] || has_bare "$ENGINE"; then CASE_TOOLS+=("$tool"); fi
	done
	NT=${#CASE_TOOLS[@]}

	need=$((SIZE_BYTES * jobs * (SKIP_FSARENA ? 1 : 2)))
	avail=$(($(df -P -k "$WORK" | awk 'NR==2 {print $4}') * 1024))
	if ((avail < need)); then
		log "WARNING: case $c may need up to $((need >> 20)) MiB in $WORK, only $((avail >> 20)) MiB free"
	fi

	if [[ $LAYOUT_ONCE -eq 1 && $ENGINE != null ]]; then
		log "case $c ($desc): laying out ${jobs} x $SIZE with fio --create_only=1 (once)"
		layout_case "$c" "$dir" "$rw" "$bs" "$jobs"
	fi

	for ((r = 0; r < ROUNDS; r++)); do
		for ((k = 0; k < NT; k++)); do
			tool=${CASE_TOOLS[$(((k + r) % NT))]}
			if [[ $LAYOUT_ONCE -eq 0 && $tool != fsarena && $ENGINE != null ]]; then
				layout_case "$c" "$dir" "$rw" "$bs" "$jobs"
			fi
			iops=$("run_$tool" "$c" "$dir" "$rw" "$bs" "$jobs" "$r")
			log "case $c round $((r + 1))/$ROUNDS $tool: $(printf '%.0f' "$iops") IOPS"
			printf '%s\t%s\t%d\t%s\t%s\n' "$c" "$desc" "$r" "$tool" "$iops" >>"$TSV"
		done
	done
	rm -rf -- "$dir"
done

# ---------------------------------------------------------------- table
python3 - "$TSV" "$SKIP_FSARENA" <<'PY'
import sys
from statistics import median
from collections import OrderedDict, defaultdict

path, skip = sys.argv[1], sys.argv[2] == "1"
data = OrderedDict()   # case -> {"desc":..., "rounds": {r: {tool: iops}}}
for line in open(path):
    c, desc, r, tool, iops = line.rstrip("\n").split("\t")
    e = data.setdefault(c, {"desc": desc, "rounds": defaultdict(dict)})
    e["rounds"][int(r)][tool] = float(iops)

def med(case, tool):
    v = [t[tool] for t in case["rounds"].values() if tool in t]
    return median(v) if v else None

def ratio(case, num, den):
    # median of the per-round ratios: each round's runs are back to back,
    # so pairing them cancels slow drift of the machine.
    v = [t[num] / t[den] for t in case["rounds"].values()
         if num in t and den in t and t[den] > 0]
    return median(v) if v else None

fi = lambda x: "-" if x is None else f"{x:,.0f}"
fr = lambda x: "-" if x is None else f"{x:.2f}"

hdr = ["case", "fio IOPS", "fsarena IOPS", "bare IOPS", "fsarena/fio", "fsarena/bare", "fio/bare"]
rows = []
for c, e in data.items():
    rows.append([f"{c} {e['desc']}", fi(med(e, "fio")), fi(med(e, "fsarena")), fi(med(e, "bare")),
                 fr(ratio(e, "fsarena", "fio")), fr(ratio(e, "fsarena", "bare")),
                 fr(ratio(e, "fio", "bare"))])
w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(hdr)]
def line(cells):
    return "| " + " | ".join(s.ljust(w[0]) if i == 0 else s.rjust(w[i])
                             for i, s in enumerate(cells)) + " |"
print(line(hdr))
print("|" + "|".join(("-" * (w[i] + 1) + ("-" if i == 0 else ":")) for i in range(len(hdr))) + "|")
for r in rows:
    print(line(r))
print()
print("IOPS are medians over rounds; ratios are medians of the per-round ratios.")
if "a" in data and not skip:
    e = data["a"]
    a, b = ratio(e, "fsarena", "fio"), ratio(e, "fsarena", "bare")
    ok = lambda x, t: "-" if x is None else ("met" if x >= t else "NOT met")
    print(f"Headline (a): fsarena/fio = {fr(a)} (target >= 1.40: {ok(a, 1.40)}), "
          f"fsarena/bare = {fr(b)} (target >= 0.90: {ok(b, 0.90)})")
print()
print("Per-round IOPS:")
print()
for c, e in data.items():
    for r in sorted(e["rounds"]):
        t = e["rounds"][r]
        print(f"    {c} round {r + 1}: " + ", ".join(f"{k}={v:,.0f}" for k, v in t.items()))
PY
