"""Would time buckets speed up conservative-bb's earlier-start scans? An upper bound, measured.

    python benchmarks/speed/scan_buckets.py [--ks 1,2] [--every 100] [--widths 900,1800,3600]

The idea (Fluxion's min-capacity tree, flattened onto time instead of onto breakpoints): keep,
per fixed-width bucket of time, the least free nodes and BB over the profile segments that
overlap it. Splitting a segment changes no bucket, a reserve or release changes the buckets
inside it by the segments' own subtraction (exact: rounding is monotone), and a window check
"is the demand free over [t, t + w)" walks only the edge segments and skips every bucket whose
minimum admits the demand.

This replays KTH x k on k x 96 nodes (Kopanski's log-normal BB, seed 0) under conservative-bb,
records every ``--every``-th earlier-start scan of the compression (profile rows, demand, hold,
bounds, answer), and then, on the recorded profiles:

- counts the segments the scan visits (first segment with room, then the window check) and
  what a bucketed walk would visit instead (edge segments + whole buckets), per width;
- times the scan as it is (:func:`bbopt.planner.scans.earlier_fit2`) against the same scan
  whose window checks walk the buckets, the buckets built beforehand and not timed (the
  upkeep on every reserve, release and move is left out: an upper bound on the gain), after
  checking that both give the recorded answer.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from bisect import bisect_left
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import bbopt.policies.conservative as conservative  # noqa: E402
from bbopt.planner.scans import earlier_fit2  # noqa: E402


def record(k: int, every: int) -> list[tuple]:
    """Every ``every``-th scan of a KTH x ``k`` replay: its arguments (rows copied) and answer."""
    import scaling

    calls: list[tuple] = []
    count = [0]

    def spy(times, free, tol, now, duration, demand, held_from, limit, i, own_fits=False):
        out = earlier_fit2(times, free, tol, now, duration, demand, held_from, limit, i, own_fits)
        count[0] += 1
        if count[0] % every == 0:
            calls.append((list(times), [list(r) for r in free], tuple(tol), now, duration,
                          tuple(demand), held_from, limit, i, own_fits, out))
        return out

    conservative.earlier_fit2 = spy
    try:
        scaling.one("conservative-bb", k)
    finally:
        conservative.earlier_fit2 = earlier_fit2
    return calls


def buckets(times: list[float], free: list[list[float]], width: float):
    """The least free nodes and BB over the segments overlapping each bucket of ``width``
    seconds, from the bucket of ``times[0]`` to that of the last breakpoint."""
    b0 = int(times[0] // width)
    nb = int(times[-1] // width) - b0 + 1
    m0, m1 = [math.inf] * nb, [math.inf] * nb
    for j, (r0, r1) in enumerate(free):
        lo = int(times[j] // width) - b0
        if j + 1 < len(times):
            hi = int(times[j + 1] // width) - b0
            if times[j + 1] == (hi + b0) * width:  # ends where bucket hi begins
                hi -= 1
        else:
            hi = nb - 1
        for b in range(lo, hi + 1):
            if r0 < m0[b]:
                m0[b] = r0
            if r1 < m1[b]:
                m1[b] = r1
    return b0, m0, m1


def walk(times, free, a, e, n0, n1, width, b0, m0, m1) -> int:
    """The first segment in ``[a, e)`` without ``n0`` nodes and ``n1`` BB free, else -1:
    whole buckets whose minima admit the demand are skipped, the others walked."""
    j = a
    last = int(times[e - 1] // width) - b0
    while j < e:
        b = int(times[j] // width) - b0
        if b < last and m0[b] >= n0 and m1[b] >= n1:
            b += 1
            while b < last and m0[b] >= n0 and m1[b] >= n1:
                b += 1
            j = bisect_left(times, (b + b0) * width, j, e)
            continue
        m = bisect_left(times, (b + 1 + b0) * width, j, e) if b < last else e
        for jj, row in enumerate(free[j:m], j):
            if row[0] < n0 or row[1] < n1:
                return jj
        j = m
    return -1


def bucketed_scan(times, free, tol, now, duration, demand, held_from, limit, i, own_fits,
                  width, b0, m0, m1) -> float:
    """:func:`earlier_fit2` (with ``own_fits``) whose window checks walk the buckets."""
    d0, d1 = demand
    need0, need1 = d0 - tol[0], d1 - tol[1]
    stop = bisect_left(times, limit, i)
    h = bisect_left(times, held_from, stop)
    oh = bisect_left(times, held_from + duration, h)
    while i < stop:
        for j, row in enumerate(free[i:stop], i):  # noqa: B007 (the first with room)
            if row[0] >= need0 and row[1] >= need1:
                break
        else:
            return held_from
        i = j
        start = times[i] if times[i] > now else now
        e = bisect_left(times, start + duration, i + 1)
        end = e if e <= h else h
        f = walk(times, free, i + 1, end, need0, need1, width, b0, m0, m1) if end > i + 1 else -1
        if f >= 0:
            i = f + 1
            continue
        if e <= h or own_fits:
            return start
        for j, row in enumerate(free[h:min(e, oh)], h):
            if row[0] + d0 < need0 or row[1] + d1 < need1:
                i = j + 1
                break
        else:
            return start
    return held_from


def visits(call, width: float) -> tuple[int, int]:
    """Segments the scan visits, and elements (segments or whole buckets) a bucketed walk of
    the window checks would visit, for one recorded call."""
    times, free, tol, now, duration, demand, held_from, limit, i, own_fits, _ = call
    d0, d1 = demand
    n0, n1 = d0 - tol[0], d1 - tol[1]
    stop = bisect_left(times, limit, i)
    h = bisect_left(times, held_from, stop)
    seg = buck = 0
    while i < stop:
        j = i
        while j < stop and not (free[j][0] >= n0 and free[j][1] >= n1):
            j += 1
        seg += j - i + (j < stop)
        buck += j - i + (j < stop)
        if j >= stop:
            break
        i = j
        start = max(times[i], now)
        e = bisect_left(times, start + duration, i + 1)
        end = e if e <= h else h
        fail = next((m for m in range(i + 1, end) if free[m][0] < n0 or free[m][1] < n1), None)
        last = fail if fail is not None else end - 1
        seg += last - i
        if last > i:
            ba, bl = int(times[i + 1] // width), int(times[last] // width)
            if bl - ba <= 1:
                buck += last - i
            else:
                buck += (bisect_left(times, (ba + 1) * width, i + 1, last + 1) - i - 1
                         + last + 1 - bisect_left(times, bl * width, i + 1, last + 1)
                         + bl - ba - 1)
        if fail is None:
            break
        i = fail + 1
    return seg, buck


def per_call_us(fn, calls, extra, reps: int = 5) -> float:
    best = math.inf
    for _ in range(reps):
        t = time.process_time()
        for call, x in zip(calls, extra, strict=True):
            fn(*call[:-1], *x)
        best = min(best, time.process_time() - t)
    return best / len(calls) * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ks", default="1,2")
    ap.add_argument("--every", type=int, default=100)
    ap.add_argument("--widths", default="900,1800,3600")
    args = ap.parse_args()
    widths = [float(w) for w in args.widths.split(",")]
    print(f"{'k':>2s} {'calls':>6s} {'segs':>6s} {'scan us':>8s}  "
          + "  ".join(f"{f'W={w:g}s visits':>15s} {'us':>6s} {'ratio':>6s}" for w in widths))
    for k in (int(x) for x in args.ks.split(",")):
        calls = record(k, args.every)
        plain = [()] * len(calls)
        base = per_call_us(earlier_fit2, calls, plain)
        segs = sum(visits(c, widths[0])[0] for c in calls) / len(calls)
        cells = []
        for w in widths:
            extra = [(w, *buckets(c[0], c[1], w)) for c in calls]
            for c, x in zip(calls, extra, strict=True):
                assert bucketed_scan(*c[:-1], *x) == c[-1]
            us = per_call_us(bucketed_scan, calls, extra)
            walked = sum(visits(c, w)[1] for c in calls) / len(calls)
            cells.append(f"{walked:15.1f} {us:6.2f} {us / base:6.2f}")
        again = per_call_us(earlier_fit2, calls, plain)
        print(f"{k:2d} {len(calls):6d} {segs:6.1f} {base:8.2f}  " + "  ".join(cells)
              + f"   (scan again: {again:.2f} us)", flush=True)
    print("segs: segments a scan visits; visits: segments and whole buckets a bucketed walk of "
          "the window checks visits; us: CPU microseconds per scan (best of 5, buckets built "
          "beforehand); ratio: bucketed over the scan as it is")


if __name__ == "__main__":
    main()
