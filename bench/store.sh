#!/usr/bin/env bash
# bench/store.sh: how long `fsarena results list` takes over 10,000 stored runs and
# `fsarena report` over 1,000 (goals: under 1 s and under 2 s on a 2-core machine).
# usage: bash bench/store.sh [--runs N] [--report-runs M]
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=10000
REPORT_RUNS=1000
while [[ $# -gt 0 ]]; do
	case "$1" in
	--runs) RUNS=$2; shift 2 ;;
	--report-runs) REPORT_RUNS=$2; shift 2 ;;
	*) echo "usage: bash bench/store.sh [--runs N] [--report-runs M]" >&2; exit 2 ;;
	esac
done
FSARENA=${FSARENA:-target/release/fsarena}
[[ -x $FSARENA ]] || { echo "store.sh: $FSARENA is missing: run cargo build --release" >&2; exit 2; }
tmp=$(mktemp -d /tmp/fsarena-store-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cargo build --release -q -p fsarena-store --example seed
seed=target/release/examples/seed

echo "seeding $RUNS runs (2 targets × 3 repetitions each)..." >&2
"$seed" "$tmp/list.db" "$RUNS"
"$seed" "$tmp/report.db" "$REPORT_RUNS"
ids=$("$FSARENA" results list --db "$tmp/report.db" --output-format json |
	python3 -c 'import json,sys; print(" ".join(r["id"] for r in json.load(sys.stdin)["runs"]))')

time_of() { # prints the best wall time of 3 runs, in seconds
	local best=
	for _ in 1 2 3; do
		local t0 t1
		t0=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		t1=$(date +%s.%N)
		best=$(python3 -c "t=$t1-$t0; b='$best'; print(min(t, float(b)) if b else t)")
	done
	printf '%.3f' "$best"
}

list=$(time_of "$FSARENA" results list --db "$tmp/list.db")
list_json=$(time_of "$FSARENA" results list --db "$tmp/list.db" --output-format json)
# shellcheck disable=SC2086
report=$(time_of "$FSARENA" report $ids --db "$tmp/report.db" -o "$tmp/report.html")
size=$(du -h "$tmp/report.html" | cut -f1)
echo
echo "| command | runs | best of 3 (s) | goal (s) |"
echo "|---|---:|---:|---:|"
echo "| fsarena results list | $RUNS | $list | 1 |"
echo "| fsarena results list --output-format json | $RUNS | $list_json | 1 |"
echo "| fsarena report RUN... -o report.html ($size) | $REPORT_RUNS | $report | 2 |"
