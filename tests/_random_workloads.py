"""Small random workloads for replay properties (hypothesis): up to 30 jobs on an 8-node
platform whose BB is a 100-byte pool or four named 25-byte BB nodes; some jobs ask for more
nodes or BB than exist, some end before their walltime and some are killed at it."""

from __future__ import annotations

from hypothesis import strategies as st

from bbopt import Job, Platform

PLATFORMS = [Platform(nodes=8, bb=100.0), Platform(nodes=8, bb=100.0, bb_nodes=(25.0,) * 4)]


@st.composite
def workloads(draw, min_jobs: int = 1, overrun: int = 2, max_nodes: int = 9,
              max_bb: int = 105):
    """Up to 30 jobs; runtimes up to ``overrun`` s past the walltime, sizes up to
    ``max_nodes`` nodes and ``max_bb`` bytes (the defaults reach past the platforms)."""
    jobs = []
    for k in range(draw(st.integers(min_jobs, 30))):
        walltime = draw(st.integers(1, 20))
        jobs.append(Job(
            id=str(k), submit=float(draw(st.integers(0, 30))), walltime=float(walltime),
            runtime=float(draw(st.integers(0, walltime + overrun))),
            nodes=draw(st.integers(1, max_nodes)), bb=float(draw(st.integers(0, max_bb)))))
    return jobs


@st.composite
def crowded_workloads(draw, nodes: int = 8, bb: float = 100.0):
    """Up to 20 jobs built to meet the rare events of a replay: sizes that fill the platform
    exactly (nodes and BB that divide its capacity), submissions and walltimes on a coarse grid
    so that ends and arrivals coincide, zero-length runs, and runtimes at, just under and just
    over the walltime (the kill threshold)."""
    jobs = []
    for k in range(draw(st.integers(1, 20))):
        walltime = float(draw(st.sampled_from([1, 2, 4])))
        runtime = draw(st.sampled_from([0.0, walltime - 1e-6, walltime, walltime + 1e-6,
                                        walltime / 2]))
        jobs.append(Job(
            id=str(k), submit=float(draw(st.sampled_from([0, 1, 2, 4]))), walltime=walltime,
            runtime=runtime, nodes=draw(st.sampled_from([1, 2, 4, nodes])),
            bb=draw(st.sampled_from([0.0, bb / 4, bb / 2, bb]))))
    return jobs
