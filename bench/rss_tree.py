#!/usr/bin/env python3
"""bench/rss_tree.py: run a command and sample the memory of its whole process tree.

usage: rss_tree.py --interval SECONDS --out FILE [--series FILE] -- COMMAND [ARG...]

The command's stdout goes to --out, its stderr is passed through. Every --interval seconds
the script walks /proc for the command and all its descendants (forked job processes
included) and sums their VmRSS (resident set: shared pages are counted once per process,
as `ps` would) and their Pss (proportional set from smaps_rollup: shared pages divided
among the processes sharing them, so the sum is what the tree really holds). It prints one
JSON object on stdout: peak sums in KiB, the peak number of processes, and the number of
samples; with --series, every sample as a line "seconds rss_kib pss_kib processes".
The exit status is the command's.
"""

import json
import os
import subprocess
import sys
import time


def children_map():
    """ppid -> [pid] over every process visible in /proc."""
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # the process ended between listdir and open
        # the command name (field 2) is in parentheses and may hold spaces: split after it
        fields = stat[stat.rfind(")") + 2:].split()
        kids.setdefault(int(fields[1]), []).append(int(name))
    return kids


def tree(root):
    """root and all its descendants."""
    kids = children_map()
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(kids.get(p, []))
    return out


def kib(path, key):
    """The value in kB of the line starting with key in a /proc status-like file, or 0."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def main(argv):
    interval, out, series = 0.2, None, None
    i = 0
    while i < len(argv) and argv[i] != "--":
        if argv[i] == "--interval":
            interval = float(argv[i + 1])
        elif argv[i] == "--out":
            out = argv[i + 1]
        elif argv[i] == "--series":
            series = argv[i + 1]
        else:
            sys.exit(f"rss_tree.py: unknown argument {argv[i]!r}")
        i += 2
    cmd = argv[i + 1:]
    if not cmd or out is None:
        sys.exit("usage: rss_tree.py --interval S --out FILE [--series FILE] -- COMMAND...")
    t0 = time.monotonic()
    with open(out, "wb") as fout:
        proc = subprocess.Popen(cmd, stdout=fout)
        peak = {"peak_rss_kib": 0, "peak_pss_kib": 0, "peak_processes": 0, "samples": 0}
        rows = []
        while True:
            pids = tree(proc.pid)
            rss = sum(kib(f"/proc/{p}/status", "VmRSS:") for p in pids)
            pss = sum(kib(f"/proc/{p}/smaps_rollup", "Pss:") for p in pids)
            peak["peak_rss_kib"] = max(peak["peak_rss_kib"], rss)
            peak["peak_pss_kib"] = max(peak["peak_pss_kib"], pss)
            peak["peak_processes"] = max(peak["peak_processes"], len(pids))
            peak["samples"] += 1
            rows.append((time.monotonic() - t0, rss, pss, len(pids)))
            try:
                rc = proc.wait(timeout=interval)
                break
            except subprocess.TimeoutExpired:
                pass
    if series:
        with open(series, "w") as f:
            for t, rss, pss, n in rows:
                f.write(f"{t:.1f} {rss} {pss} {n}\n")
    print(json.dumps(peak))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
