"""The 8-job example of Kopanski & Rzadca, Section 3.1 (4 nodes, 10 TB of burst buffer, walltime =
runtime, scheduler every minute)."""

import pytest

from bbopt import Job, Platform, simulate
from bbopt.analysis.metrics import summarize
from bbopt.core import MINUTE, TB

# job, submit [min], runtime [min], CPUs, BB [TB]
TABLE = [(1, 0, 10, 1, 4), (2, 0, 4, 1, 2), (3, 1, 1, 3, 8), (4, 2, 3, 2, 4),
         (5, 3, 1, 3, 4), (6, 3, 1, 2, 2), (7, 4, 5, 1, 2), (8, 4, 3, 2, 4)]
JOBS = [Job(str(j), s * MINUTE, r * MINUTE, r * MINUTE, c, b * TB) for j, s, r, c, b in TABLE]
PLATFORM = Platform(4, 10 * TB)


def starts(policy):
    res = simulate(JOBS, PLATFORM, policy, tick=MINUTE)
    return {j.id: res.start[k] / MINUTE for k, j in enumerate(JOBS)}


def test_fcfs_easy_job3_is_a_barrier():
    s = starts("fcfs-easy")
    assert s["1"] == s["2"] == 0
    # Job 6 is backfilled at 3 (it ends before job 3's processor reservation at 4) ...
    assert s["6"] == 3
    # ... job 4 and job 5 would delay job 3's CPU-only reservation: they wait.
    assert s["4"] > 2 and s["5"] > 3
    # At 4 job 3 lacks burst buffer and blocks everything until job 1 ends at 10.
    assert s["3"] == 10
    assert all(s[j] >= 10 for j in ("4", "5", "7", "8"))
    # Right after job 1 completes, job 7 is backfilled ahead of jobs 4 and 5.
    assert s["7"] == 10 and s["4"] > 10 and s["5"] > 10


def test_fcfs_bb_starts_job4_when_submitted():
    s = starts("fcfs-bb")
    # Job 3 is recognised as needing job 1's burst buffer: reserved at 10, after job 1.
    assert s["3"] == 10
    assert s["4"] == 2
    # Jobs 5..8 are all backfilled ahead of job 3, none delays it.
    assert all(s[j] < 10 for j in ("5", "6", "7", "8"))


def test_bb_reservation_shortens_the_schedule():
    easy = summarize(simulate(JOBS, PLATFORM, "fcfs-easy", tick=MINUTE))
    bb = summarize(simulate(JOBS, PLATFORM, "fcfs-bb", tick=MINUTE))
    assert bb["mean_wait"] < easy["mean_wait"]
    assert bb["makespan"] < easy["makespan"]


@pytest.mark.parametrize("policy", ["fcfs", "filler", "sjf-bb", "conservative-bb"])
def test_every_policy_runs_the_example(policy):
    res = simulate(JOBS, PLATFORM, policy, tick=MINUTE)
    assert summarize(res)["finished"] == 8


def test_fcfs_keeps_order():
    s = starts("fcfs")
    order = [s[str(j)] for j in range(1, 9)]
    assert order == sorted(order)
