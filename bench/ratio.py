#!/usr/bin/env python3
"""bench/ratio.py: the ratio of two sets of runs as crates/stats/src/ratio.rs `ratio()` reads
it, for the vs_* scripts: geometric means, their ratio B/A, and its 95% interval from Welch's
t-test on the logarithms (exp of the t interval of the difference of mean logs).

As a module: ratio(a, b) -> (value, lo, hi), lo and hi None with fewer than 3 runs a side.
As a script: reads lines "GROUP TOOL VALUE" on stdin, A and B named by --a and --b, and
prints one line per group: runs, medians, the median ratio, the ratio and its interval, and
whether the interval lies within 1 +- --tolerance.
"""
import argparse
import math
import statistics
import sys

# t(0.975, df) for whole df; between two it is interpolated on 1/df (nearly linear there),
# beyond 120 the normal 1.96. Welch's df is fractional.
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
         10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
         18: 2.101, 19: 2.093, 20: 2.086, 25: 2.060, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t975(df):
    if df >= 120:
        return 1.96 + (1.980 - 1.96) * 120 / df
    keys = sorted(_T975)
    df = max(df, 1.0)
    lo = max(k for k in keys if k <= df)
    hi = min(k for k in keys if k >= df)
    if lo == hi:
        return _T975[lo]
    w = (1 / df - 1 / hi) / (1 / lo - 1 / hi)
    return _T975[hi] + w * (_T975[lo] - _T975[hi])


def ratio(a, b):
    """B's geometric mean over A's, and its 95% interval (None, None with < 3 runs a side)."""
    la, lb = [math.log(x) for x in a], [math.log(x) for x in b]
    ma, mb = statistics.mean(la), statistics.mean(lb)
    value = math.exp(mb - ma)
    if len(la) < 3 or len(lb) < 3:
        return value, None, None
    va, vb = statistics.variance(la) / len(la), statistics.variance(lb) / len(lb)
    se = math.sqrt(va + vb)
    if se == 0:
        return value, value, value
    df = (va + vb) ** 2 / (va**2 / (len(la) - 1) + vb**2 / (len(lb) - 1))
    half = t975(df) * se
    return value, math.exp(mb - ma - half), math.exp(mb - ma + half)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--a", required=True, help="the reference tool (the denominator)")
    p.add_argument("--b", required=True, help="the tool compared (the numerator)")
    p.add_argument("--tolerance", type=float, default=0.10)
    args = p.parse_args()
    groups, order = {}, []
    for line in sys.stdin:
        parts = line.split()
        if len(parts) != 3:
            continue
        group, tool, value = parts
        if group not in groups:
            groups[group] = {args.a: [], args.b: []}
            order.append(group)
        if tool in groups[group] and float(value) > 0:
            groups[group][tool].append(float(value))
    lo_ok, hi_ok = 1 - args.tolerance, 1 + args.tolerance
    width = max([len(g) for g in order] + [5])
    print(f"{'case':<{width}} {'runs':>5} {args.a + ' median':>16} {args.b + ' median':>16} "
          f"{'median ratio':>12} {'geo ratio':>9}  95% interval      within 1±{args.tolerance:g}")
    outside = 0
    for g in order:
        a, b = groups[g][args.a], groups[g][args.b]
        if not a or not b:
            continue
        v, lo, hi = ratio(a, b)
        med = statistics.median(b) / statistics.median(a)
        if lo is None:
            ci, verdict = "(too few runs)", "?"
        else:
            ci = f"[{lo:.3f}, {hi:.3f}]"
            inside = lo <= hi_ok and hi >= lo_ok and lo_ok <= v <= hi_ok
            verdict = "yes" if inside else "NO"
            outside += not inside
        print(f"{g:<{width}} {len(a):>2}/{len(b):<2} {statistics.median(a):>16.1f} "
              f"{statistics.median(b):>16.1f} {med:>12.3f} {v:>9.3f}  {ci:<17} {verdict}")
    return 1 if outside else 0


if __name__ == "__main__":
    sys.exit(main())
