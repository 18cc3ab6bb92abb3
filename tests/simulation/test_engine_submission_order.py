"""The engine queues jobs by submission time, jobs submitted at the same instant in the order of
the list given (the replay sorts by submission with a stable sort): FCFS on one node starts them
in that order."""

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate


def test_ties_keep_the_order_of_the_list():
    jobs = [Job("c", 5, walltime=10, runtime=10), Job("a", 0, walltime=10, runtime=10),
            Job("b", 5, walltime=10, runtime=10), Job("d", 5.0, walltime=10, runtime=10)]
    res = simulate(jobs, Platform(nodes=1), "fcfs")
    assert dict(zip([j.id for j in res.jobs], res.start, strict=True)) == {
        "a": 0, "c": 10, "b": 20, "d": 30}


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=12))
def test_fcfs_starts_in_submission_then_list_order(submits):
    jobs = [Job(f"j{k}", s, walltime=1, runtime=1) for k, s in enumerate(submits)]
    res = simulate(jobs, Platform(nodes=1), "fcfs")
    by_start = sorted(range(len(jobs)), key=lambda k: res.start[k])
    assert by_start == sorted(range(len(jobs)), key=lambda k: (submits[k], k))
