#!/usr/bin/env bash
# bench/vs_sqlite3.sh: fsarena's sqlite workload (Phoronix's test: N INSERTs, each its own
# transaction) beside Debian's sqlite3 shell running the same inserts from a generated SQL
# script, on a tmpfs and a loop-backed ext4 made here, rounds interleaved: inserts/s of each,
# their ratio, and the rows each left in its table. See docs/manual/sqlite.md.
#
# Both use one connection, the same pragmas, the same table and rows of the same size (one
# random payload per run). The two SQLite libraries differ: fsarena links the version rusqlite
# bundles, the shell is Debian's; both versions are printed. The shell's time covers its
# inserts only: it prints the clock (julianday('now'), to the millisecond) before and after
# them; fsarena's figure is its own (the inserts only, to the nanosecond).
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_sqlite3.sh [options]
  --rounds N        rounds per filesystem, the two tools back to back, order alternating
                    (default 3)
  --inserts N       rows, one INSERT (one transaction) each (default 12500, Phoronix's)
  --journal MODE    PRAGMA journal_mode: delete, truncate, persist, wal, memory, off
                    (default delete, SQLite's)
  --sync MODE       PRAGMA synchronous: off, normal, full, extra (default full, SQLite's)
  --row-size N      payload bytes per row (default 100)
  --fs LIST         tmpfs,ext4 (default both)
  --img-dir PATH    parent of the scratch directory holding the tmpfs mount and the ext4
                    image (default /var/tmp)
  --quick           --rounds 1 --inserts 2000
environment: FSARENA (default target/release/fsarena), SQLITE3 (default sqlite3),
  FSARENA_ARGS (default --repeat 1 --warmup 0 --no-store --no-drop-caches -q)
EOF
}

BENCH=vs_sqlite3
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3 INSERTS=12500 JOURNAL=delete SYNC=full ROWSIZE=100 FSLIST=tmpfs,ext4 IMGPARENT=/var/tmp
while [[ $# -gt 0 ]]; do
	case "$1" in
	--quick) ROUNDS=1 INSERTS=2000; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--inserts) INSERTS=$2 ;;
	--journal) JOURNAL=$2 ;;
	--sync) SYNC=$2 ;;
	--row-size) ROWSIZE=$2 ;;
	--fs) FSLIST=$2 ;;
	--img-dir) IMGPARENT=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $INSERTS =~ ^[1-9][0-9]*$ ]] || die "bad --inserts '$INSERTS'"
[[ $ROWSIZE =~ ^[1-9][0-9]*$ ]] || die "bad --row-size '$ROWSIZE'"
[[ $JOURNAL =~ ^(delete|truncate|persist|wal|memory|off)$ ]] || die "bad --journal '$JOURNAL'"
[[ $SYNC =~ ^(off|normal|full|extra)$ ]] || die "bad --sync '$SYNC'"
IFS=, read -r -a FS_LIST <<<"$FSLIST"
for f in "${FS_LIST[@]}"; do [[ $f =~ ^(tmpfs|ext4)$ ]] || die "bad --fs entry '$f'"; done
[[ -d $IMGPARENT ]] || die "--img-dir '$IMGPARENT' is not a directory"
[[ $(id -u) -eq 0 ]] || die "run as root: it mounts a tmpfs and a loop device"

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_fsarena
SQLITE3=$(command -v "${SQLITE3:-sqlite3}") || die "sqlite3 not found: apt-get install sqlite3 (or SQLITE3=)"
command -v python3 >/dev/null || die "python3 not found"
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches -q}"

WORKLOAD="sqlite:inserts=$INSERTS,journal_mode=$JOURNAL,synchronous=$SYNC,row_size=$ROWSIZE,page_size=4096,cache_size=2000k"

# ---------------------------------------------------------------- scratch, loop, mounts
# Exactly the loop and mounts made here are recorded, and only they are undone at exit.
bench_imgdir "$IMGPARENT"
bench_scratch "$IMGDIR" "work.XXXXXX"

# make_fs FS: a tmpfs, or an ext4 on a loop device over an image of its own, mounted at
# IMGDIR/FS.mnt and left in MNT. Not in a subshell: LOOPS and MOUNTS must reach the trap.
make_fs() {
	local fs=$1 mnt=$IMGDIR/$1.mnt
	case $fs in
	tmpfs) bench_mount_tmpfs "$mnt" 1g ;;
	# Inode tables and journal written now: ext4's lazy init would otherwise write in the
	# background during the first rounds and slow whichever tool runs then.
	ext4) bench_mount_loop ext4 "$IMGDIR/ext4.img" 1G "$mnt" -E lazy_itable_init=0,lazy_journal_init=0 ;;
	esac
	log "$fs mounted at $mnt"
	MNT=$mnt
}

# The shell's script: the pragmas fsarena sets, the table, the clock, the inserts (each its
# own transaction: no BEGIN), the clock, the row count. Made once, read from RES.
SQL=$RES/inserts.sql
python3 - "$SQL" "$INSERTS" "$JOURNAL" "$SYNC" "$ROWSIZE" <<'PY'
import os, sys
path, n, journal, sync, size = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
blob = os.urandom(size).hex()
clock = "SELECT printf('%.3f', (julianday('now') - 2440587.5) * 86400.0);\n"
with open(path, "w") as f:
    f.write(f"PRAGMA page_size=4096;\nPRAGMA journal_mode={journal};\nPRAGMA synchronous={sync};\n")
    f.write("PRAGMA cache_size=-2000;\n")
    f.write("CREATE TABLE t (id INTEGER PRIMARY KEY, k INTEGER NOT NULL, v BLOB NOT NULL);\n")
    f.write(clock)
    for i in range(n):
        f.write(f"INSERT INTO t (k, v) VALUES ({i}, x'{blob}');\n")
    f.write(clock)
    f.write("SELECT count(*) FROM t;\n")
PY

# run_sqlite3 DIR: the script in a new database in DIR; prints "inserts/s rows".
run_sqlite3() {
	local out
	out=$("$SQLITE3" -batch -noheader "$1/bench.db" <"$SQL") || die "sqlite3 failed in $1"
	python3 - "$INSERTS" "$out" <<'PY' || die "cannot read sqlite3's output: $out"
import sys
lines = [l.strip() for l in sys.argv[2].split("\n") if l.strip()]
# journal_mode's answer, then the two clocks, then the count.
t0, t1, rows = float(lines[-3]), float(lines[-2]), int(lines[-1])
print(f"{int(sys.argv[1]) / (t1 - t0):.3f} {rows}")
PY
}

# run_fsarena DIR: the workload on DIR; prints "inserts/s rows version" from its report.
run_fsarena() {
	"$FSARENA" run --target "dir:path=$1" --workload "$WORKLOAD" --output-format human \
		--workdir "$RES/wd" "${FSARENA_EXTRA[@]}" >"$RES/fa.out" 2>"$RES/fa.err" ||
		{ cat "$RES/fa.err" >&2; die "fsarena failed in $1"; }
	python3 - "$RES/fa.out" <<'PY' || die "cannot read fsarena's report"
import re, sys
text = open(sys.argv[1]).read()
head = re.search(r"^SQLite (\S+) \(bundled\): (\d+) rows in the table", text, re.M)
op = re.search(r"^  insert\s+(\d+)\s+([\d.]+)", text, re.M)
print(op.group(2), head.group(2), head.group(1))
PY
}

echo "## fsarena sqlite vs Debian's sqlite3 shell"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fsarena: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "- machine: nproc=$(nproc), CPU: $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo), kernel: $(uname -r)"
echo "- sqlite3: $SQLITE3, SQLite $("$SQLITE3" -version | cut -d' ' -f1) (Debian package $(dpkg-query -W -f '${Version}' sqlite3 2>/dev/null || echo '?'))"
echo "- fsarena: $WORKLOAD (SQLite bundled by rusqlite; version below)"
echo "- $INSERTS INSERTs of $ROWSIZE-byte rows, each its own transaction; journal_mode=$JOURNAL, synchronous=$SYNC"
echo "- $ROUNDS round(s) per filesystem after one untimed warm-up, the two tools back to back in each, order alternating"
echo

TSV=$RES/results.tsv
: >"$TSV"
BUNDLED=?
for fs in "${FS_LIST[@]}"; do
	make_fs "$fs"
	# One untimed run first: the first writes to a fresh loop image are much slower (its
	# sparse backing file is allocated as it goes), and would fall on round 1's first tool.
	mkdir -p "$MNT/warmup"
	read -r ips rows < <(run_sqlite3 "$MNT/warmup")
	rm -rf -- "$MNT/warmup"
	log "$fs warm-up (sqlite3, not counted): $(printf '%.0f' "$ips") inserts/s"
	for ((r = 0; r < ROUNDS; r++)); do
		if ((r % 2 == 0)); then order=(sqlite3 fsarena); else order=(fsarena sqlite3); fi
		for tool in "${order[@]}"; do
			dir=$MNT/$tool
			mkdir -p "$dir"
			if [[ $tool == sqlite3 ]]; then
				read -r ips rows < <(run_sqlite3 "$dir")
			else
				read -r ips rows BUNDLED < <(run_fsarena "$dir")
			fi
			rm -rf -- "$dir"
			sync
			log "$fs round $((r + 1))/$ROUNDS $tool: $(printf '%.0f' "$ips") inserts/s, $rows rows"
			printf '%s\t%d\t%s\t%s\t%s\n' "$fs" "$r" "$tool" "$ips" "$rows" >>"$TSV"
		done
	done
done
echo "- SQLite versions: sqlite3 shell $("$SQLITE3" -version | cut -d' ' -f1), fsarena (bundled) $BUNDLED"
echo

python3 - "$TSV" "$INSERTS" <<'PY'
import sys
from statistics import median
from collections import OrderedDict, defaultdict
data = OrderedDict()
for line in open(sys.argv[1]):
    fs, r, tool, ips, rows = line.rstrip("\n").split("\t")
    data.setdefault(fs, defaultdict(dict))[int(r)][tool] = (float(ips), int(rows))
want = int(sys.argv[2])
print("| filesystem | sqlite3 inserts/s | fsarena inserts/s | fsarena/sqlite3 | rows (each) |")
print("|---|--:|--:|--:|---|")
for fs, rounds in data.items():
    s = median(t["sqlite3"][0] for t in rounds.values())
    a = median(t["fsarena"][0] for t in rounds.values())
    ratio = median(t["fsarena"][0] / t["sqlite3"][0] for t in rounds.values())
    rows = all(t[k][1] == want for t in rounds.values() for k in t)
    print(f"| {fs} | {s:,.0f} | {a:,.0f} | {ratio:.2f} | {want if rows else 'DIFFERENT'} |")
print()
print("Medians over rounds; a ratio is the median of the per-round ratios. sqlite3's rate is the")
print("insert count over the time between the clock readings around its inserts (ms resolution);")
print("fsarena's is its own figure.")
print()
for fs, rounds in data.items():
    for r in sorted(rounds):
        t = rounds[r]
        print(f"    {fs} round {r + 1}: fsarena {t['fsarena'][0]:,.0f}/s, sqlite3 {t['sqlite3'][0]:,.0f}/s")
PY
