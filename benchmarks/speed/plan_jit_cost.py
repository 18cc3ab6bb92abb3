"""What the compiled plan loops (``bbopt/planner/jit/pool.py``, numba) cost a process before they
pay: numba's import, loading (or, with an empty cache, compiling) the pool score and the swap
walk of plan-1/2/3 (Kopanski & Rzadca, Euro-Par 2021, Section 3.3).

    python benchmarks/speed/plan_jit_cost.py [--repeat 3]

Each line is a fresh child process timed with ``time.process_time`` around each step: first
with an empty numba cache (``NUMBA_CACHE_DIR`` a new directory: the kernels are compiled and
written there), then ``--repeat`` times with that cache filled (the usual case: the kernels are
loaded). Processes that never score a plan model import no numba
(``tests/planner/jit/test_pool.py``).

One run, load average about 7 (CPU s; filled: the least and largest of 3):

| cache | numba import | first score | first walk | total |
|---|---:|---:|---:|---:|
| empty (compiles) | 0.275 | 0.849 | 1.330 | 2.521 |
| filled (loads) | 0.258-0.263 | 0.337-0.383 | 0.005-0.007 | 0.658-0.731 |

(The first score, compiled or loaded, starts numba's code generator: most of its 0.35 s.)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = """
import sys, time
sys.path.insert(0, sys.argv[1])
t0 = time.process_time()
import numba  # noqa: F401
t1 = time.process_time()
from bbopt import Job
from bbopt.models.plan import PlanModel
from bbopt.models.plan_walk import CompiledWalk, swap_walk
jobs = [Job(str(i), 0, walltime=10 * (i + 1), nodes=1 + i % 2) for i in range(8)]
model = PlanModel(0.0, (2, 0.0), [], jobs, alpha=2)
t2 = time.process_time()
model.score(list(range(8)))
t3 = time.process_time()
walk = swap_walk(model, list(range(8)))
walk.try_swap(1, 3)
t4 = time.process_time()
assert isinstance(walk, CompiledWalk)
print(t1 - t0, t3 - t2, t4 - t3, t4 - t0)
"""


def child(cache: str) -> list[float]:
    """CPU seconds of one fresh process: numba import, first score, first walk, total."""
    out = subprocess.run([sys.executable, "-c", CHILD, str(ROOT)], check=True,
                         capture_output=True, text=True,
                         env={**os.environ, "NUMBA_CACHE_DIR": cache, "BBOPT_NO_JIT": "0"})
    return [float(x) for x in out.stdout.split()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs with the filled cache")
    args = ap.parse_args()
    print(f"{'cache':8s} {'numba import':>13s} {'first score':>12s} {'first walk':>11s} "
          f"{'total':>7s}  (CPU s)")
    with tempfile.TemporaryDirectory() as cache:
        for k in range(1 + args.repeat):
            cells = " ".join(f"{x:>{w}.3f}" for x, w in zip(child(cache), (13, 12, 11, 7),
                                                           strict=True))
            print(f"{'empty' if k == 0 else 'filled':8s} {cells}")


if __name__ == "__main__":
    main()
