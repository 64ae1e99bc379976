#!/usr/bin/env bash
# bench/vs_postmark.sh: fsarena's postmark workload beside Debian's postmark 1.53 with the
# same commands (same seed), on a tmpfs and a loop-backed ext4 made here, rounds interleaved:
# transactions/s of each, their ratio, and whether the counts of PostMark's report ("Files:"
# and "Data:") agree. See docs/manual/postmark.md.
#
# PostMark times in whole seconds; here its transaction phase is timed from outside, to the
# millisecond, by when its progress output arrives: it flushes "Performing transactions" just
# after reading the clock at the phase's start, and "Deleting files..." just after reading it
# at the end.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: bash bench/vs_postmark.sh [options]
  --rounds N          rounds per filesystem, the two tools back to back, order alternating
                      (default 3)
  --number N          set number (default 1000)
  --transactions N    set transactions (default 50000)
  --size 'LOW HIGH'   set size (default '500 10000')
  --extra 'CMDS'      more PostMark commands, ';'-separated (e.g. 'set buffering false')
  --fs LIST           tmpfs,ext4 (default both)
  --img-dir PATH      parent of the scratch directory holding the tmpfs mount and the ext4
                      image (default /var/tmp)
  --quick             --rounds 1 --transactions 20000
environment: FSARENA (default target/release/fsarena), POSTMARK (default postmark),
  FSARENA_ARGS (default --repeat 1 --warmup 0 --no-store --no-drop-caches -q)
EOF
}

BENCH=vs_postmark
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

ROUNDS=3 NUMBER=1000 TRANSACTIONS=50000 SIZE='500 10000' EXTRA= FSLIST=tmpfs,ext4 IMGPARENT=/var/tmp
while [[ $# -gt 0 ]]; do
	case "$1" in
	--quick) ROUNDS=1 TRANSACTIONS=20000; shift; continue ;;
	-h | --help) usage; exit 0 ;;
	esac
	[[ $# -ge 2 ]] || { usage >&2; die "unknown argument or missing value: '$1'"; }
	case "$1" in
	--rounds) ROUNDS=$2 ;;
	--number) NUMBER=$2 ;;
	--transactions) TRANSACTIONS=$2 ;;
	--size) SIZE=$2 ;;
	--extra) EXTRA=$2 ;;
	--fs) FSLIST=$2 ;;
	--img-dir) IMGPARENT=$2 ;;
	*) usage >&2; die "unknown argument '$1'" ;;
	esac
	shift 2
done
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "bad --rounds '$ROUNDS'"
[[ $NUMBER =~ ^[1-9][0-9]*$ ]] || die "bad --number '$NUMBER'"
[[ $TRANSACTIONS =~ ^[1-9][0-9]*$ ]] || die "bad --transactions '$TRANSACTIONS'"
[[ $SIZE =~ ^[1-9][0-9]*( [1-9][0-9]*)?$ ]] || die "bad --size '$SIZE' (LOW HIGH)"
[[ $EXTRA != *"'"* ]] || die "--extra must not hold a single quote"
IFS=, read -r -a FS_LIST <<<"$FSLIST"
for f in "${FS_LIST[@]}"; do [[ $f =~ ^(tmpfs|ext4)$ ]] || die "bad --fs entry '$f'"; done
[[ -d $IMGPARENT ]] || die "--img-dir '$IMGPARENT' is not a directory"
[[ $(id -u) -eq 0 ]] || die "run as root: it mounts a tmpfs and a loop device"

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bench_fsarena
POSTMARK=$(command -v "${POSTMARK:-postmark}") || die "postmark not found: apt-get install postmark (or POSTMARK=)"
command -v python3 >/dev/null || die "python3 not found"
read -r -a FSARENA_EXTRA <<<"${FSARENA_ARGS:---repeat 1 --warmup 0 --no-store --no-drop-caches -q}"

COMMANDS="set number $NUMBER; set transactions $TRANSACTIONS; set size $SIZE${EXTRA:+; $EXTRA}"

# ---------------------------------------------------------------- scratch, loop, mounts
# Exactly the loop and mounts made here are recorded, and only they are undone at exit.
bench_imgdir "$IMGPARENT"
bench_scratch "$IMGDIR" "work.XXXXXX"

# make_fs FS: a tmpfs, or an ext4 on a loop device over an image of its own, mounted at
# IMGDIR/FS.mnt and left in MNT. Not in a subshell: LOOPS and MOUNTS must reach the trap.
make_fs() {
	local fs=$1 mnt=$IMGDIR/$1.mnt
	case $fs in
	tmpfs) bench_mount_tmpfs "$mnt" 2g ;;
	ext4) bench_mount_loop ext4 "$IMGDIR/ext4.img" 2G "$mnt" ;;
	esac
	log "$fs mounted at $mnt"
	MNT=$mnt
}

# run_postmark DIR OUT: postmark in DIR with COMMANDS; its output in OUT, and on stdout the
# seconds of its transaction phase, timed by the arrival of its flushed progress output.
run_postmark() {
	python3 - "$POSTMARK" "$1" "$2" "$COMMANDS" <<'PY'
import os, subprocess, sys, time
tool, cwd, out, commands = sys.argv[1:]
cfg = os.path.join(cwd, "pm.cfg")
with open(cfg, "w") as f:
    f.write("\n".join(c.strip() for c in commands.split(";")) + "\nrun\nquit\n")
p = subprocess.Popen([tool, "pm.cfg"], cwd=cwd, stdout=subprocess.PIPE)
text, marks = b"", []
while True:
    chunk = os.read(p.stdout.fileno(), 65536)
    now = time.monotonic()
    if not chunk:
        break
    text += chunk
    marks.append((len(text), now))
if p.wait() != 0:
    sys.exit("postmark failed")
open(out, "wb").write(text)
os.remove(cfg)
def arrival(marker):
    at = text.find(marker)
    if at < 0:
        sys.exit(f"postmark printed no {marker!r}")
    return next(t for n, t in marks if n >= at + len(marker))
print(f"{arrival(b'Deleting files...') - arrival(b'Performing transactions'):.6f}")
PY
}

# Reads a PostMark-layout report (either tool's): transactions/s, and the counts as one line.
parse_report() {
	python3 - "$1" <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
tps = re.search(r"seconds of transactions \((\d+) per second\)", text)
block, on = [], False
for line in (l.strip() for l in text.splitlines()):
    if line == "Files:":
        on = True
    elif on and line and line != "Data:":
        block.append(line.split(" (")[0])
        if " written (" in line:
            on = False
print(tps.group(1) if tps else "?", "|".join(block), sep="\t")
PY
}

echo "## fsarena postmark vs Debian's postmark"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), fsarena: $(git -C "$REPO_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "- machine: nproc=$(nproc), CPU: $(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo), kernel: $(uname -r)"
echo "- postmark: $POSTMARK ($(dpkg-query -W -f '${Version}' postmark 2>/dev/null || echo '?'))"
echo "- commands: $COMMANDS; run"
echo "- $ROUNDS round(s) per filesystem, the two tools back to back in each, order alternating"
echo

TSV=$RES/results.tsv
: >"$TSV"
for fs in "${FS_LIST[@]}"; do
	make_fs "$fs"
	for ((r = 0; r < ROUNDS; r++)); do
		if ((r % 2 == 0)); then order=(postmark fsarena); else order=(fsarena postmark); fi
		for tool in "${order[@]}"; do
			dir=$MNT/$tool
			mkdir -p "$dir"
			if [[ $tool == postmark ]]; then
				secs=$(run_postmark "$dir" "$RES/pm.out") || die "postmark failed on $fs"
				IFS=$'\t' read -r own counts < <(parse_report "$RES/pm.out")
				tps=$(python3 -c "print($TRANSACTIONS / $secs)")
				extra="postmark's own figure (whole seconds): $own/s"
			else
				"$FSARENA" run --target "dir:path=$dir" --workload "postmark:postmark='$COMMANDS'" \
					--output-format human --workdir "$RES/wd" "${FSARENA_EXTRA[@]}" >"$RES/fa.out" 2>"$RES/fa.err" ||
					{ cat "$RES/fa.err" >&2; die "fsarena failed on $fs"; }
				IFS=$'\t' read -r tps counts < <(parse_report "$RES/fa.out")
				extra=
			fi
			rm -rf -- "$dir"
			log "$fs round $((r + 1))/$ROUNDS $tool: $(printf '%.0f' "$tps") transactions/s ${extra}"
			printf '%s\t%d\t%s\t%s\t%s\n' "$fs" "$r" "$tool" "$tps" "$counts" >>"$TSV"
		done
	done
done

python3 - "$TSV" <<'PY'
import sys
from statistics import median
from collections import OrderedDict, defaultdict
data = OrderedDict()
for line in open(sys.argv[1]):
    fs, r, tool, tps, counts = line.rstrip("\n").split("\t")
    data.setdefault(fs, defaultdict(dict))[int(r)][tool] = (float(tps), counts)
print("| filesystem | postmark transactions/s | fsarena transactions/s | fsarena/postmark | counts |")
print("|---|--:|--:|--:|---|")
for fs, rounds in data.items():
    p = median(t["postmark"][0] for t in rounds.values())
    a = median(t["fsarena"][0] for t in rounds.values())
    ratio = median(t["fsarena"][0] / t["postmark"][0] for t in rounds.values())
    same = all(t["postmark"][1] == t["fsarena"][1] for t in rounds.values())
    print(f"| {fs} | {p:,.0f} | {a:,.0f} | {ratio:.2f} | {'identical' if same else 'DIFFERENT'} |")
print()
print("Medians over rounds; a ratio is the median of the per-round ratios. postmark's rate is its")
print("transaction count over its transaction phase timed from its flushed output (ms resolution);")
print("fsarena's is its own figure. Counts: every line of the 'Files:' and 'Data:' blocks.")
print()
for fs, rounds in data.items():
    for r in sorted(rounds):
        t = rounds[r]
        print(f"    {fs} round {r + 1}: fsarena {t['fsarena'][0]:,.0f}/s, postmark {t['postmark'][0]:,.0f}/s")
    first = rounds[min(rounds)]
    if first["postmark"][1] != first["fsarena"][1]:
        print(f"    postmark: {first['postmark'][1]}")
        print(f"    fsarena:  {first['fsarena'][1]}")
    else:
        print(f"    counts: {first['fsarena'][1]}")
PY
