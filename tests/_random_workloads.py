"""Small random workloads for replay properties (hypothesis): up to 30 jobs on an 8-node
platform whose BB is a 100-byte pool or four named 25-byte BB nodes; some jobs ask for more
nodes or BB than exist, some end before their walltime and some are killed at it."""

from __future__ import annotations

from hypothesis import strategies as st

from bbopt import Job, Platform

PLATFORMS = [Platform(nodes=8, bb=100.0), Platform(nodes=8, bb=100.0, bb_nodes=(25.0,) * 4)]


@st.composite
def workloads(draw):
    jobs = []
    for k in range(draw(st.integers(1, 30))):
        walltime = draw(st.integers(1, 20))
        jobs.append(Job(
            id=str(k), submit=float(draw(st.integers(0, 30))), walltime=float(walltime),
            runtime=float(draw(st.integers(0, walltime + 2))), nodes=draw(st.integers(1, 9)),
            bb=float(draw(st.integers(0, 105)))))
    return jobs
