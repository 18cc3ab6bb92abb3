"""The job counts of a run's summary (finished, killed, rejected; counted on the record's list)
are those of the jobs submitted in the measurement interval when one is given, and of every
job otherwise."""

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.analysis.metrics import summarize

jobs_of = st.lists(st.tuples(st.integers(0, 50), st.integers(1, 20), st.integers(1, 30),
                             st.integers(1, 5)), min_size=1, max_size=25)


@settings(max_examples=60, deadline=None)
@given(jobs_of, st.integers(0, 40), st.integers(1, 30))
def test_counts_follow_the_interval(rows, t0, width):
    jobs = [Job(str(k), s, walltime=w, runtime=r, nodes=n)
            for k, (s, w, r, n) in enumerate(rows)]
    res = simulate(jobs, Platform(nodes=4), "fcfs-bb")  # (5 nodes: rejected)
    for interval in (None, (float(t0), float(t0 + width))):
        got = summarize(res, interval=interval)
        kept = [k for k, j in enumerate(jobs)
                if interval is None or interval[0] <= j.submit < interval[1]]
        assert got["jobs"] == len(kept)
        for state in ("finished", "killed", "rejected"):
            assert got[state] == sum(1 for k in kept if res.state[k] == state)
