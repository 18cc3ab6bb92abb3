"""The 8-job example of Kopanski & Rzadca, Section 3.1 (4 nodes, 10 TB of burst buffer, walltime =
runtime, scheduler every minute)."""


from bbopt import simulate
from bbopt.analysis.metrics import summarize
from bbopt.core import MINUTE
from tests._paper_examples import KOPANSKI_PLATFORM as PLATFORM
from tests._paper_examples import kopanski_jobs

JOBS = kopanski_jobs()


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


def test_bb_reservation_shortens_the_schedule(kopanski_jobs, kopanski_platform):
    easy = summarize(simulate(kopanski_jobs, kopanski_platform, "fcfs-easy", tick=MINUTE))
    bb = summarize(simulate(kopanski_jobs, kopanski_platform, "fcfs-bb", tick=MINUTE))
    assert bb["mean_wait"] < easy["mean_wait"]
    assert bb["makespan"] < easy["makespan"]


def test_fcfs_start_times():
    """fcfs (no backfilling), by hand. t=0: jobs 1 and 2 start (2 CPUs, 4 TB left). t=1: job 3
    (3 CPUs) does not fit and blocks the queue; at 4 (job 2 ends) it has 3 CPUs but only 6 of its
    8 TB. t=10: job 1 ends, job 3 starts (until 11); job 4 needs 2 CPUs, 1 free: blocks.
    t=11: job 4 (until 14); job 5 needs 3 CPUs, 2 free. t=14: job 5 (until 15); job 6 needs 2
    CPUs, 1 free. t=15: jobs 6 and 7 (1 CPU left); job 8 needs 2. t=16: job 8."""
    assert starts("fcfs") == {"1": 0, "2": 0, "3": 10, "4": 11, "5": 14, "6": 15, "7": 15,
                              "8": 16}


def test_fcfs_easy_start_times():
    """fcfs-easy (processors reserved, burst buffer not), by hand. t=1: job 3's reservation counts
    CPUs only: 3 CPUs free when job 2 ends, shadow 4, no CPU left over there. t=2: job 4 (3 min)
    would run past 4: waits. t=3: job 5 ends at 4 but needs 3 CPUs (2 free); job 6 (2 CPUs, 1 min)
    ends at 4 = shadow: backfilled. t=4..9: job 3 has its CPUs but not its BB (6 of 8 TB free);
    its shadow is "now" with nothing left over, so nothing is backfilled: the barrier. t=10: job 1
    ends, job 3 starts (until 11); job 4 is the head, shadow 11 with 2 CPUs to spare: job 5
    (3 CPUs) cannot, job 7 (1 CPU, 2 TB, until 15) is backfilled. t=11: job 4 (until 14); job 5
    head (shadow 14, nothing to spare), job 8 cannot. t=14: job 5 (until 15). t=15: job 8."""
    assert starts("fcfs-easy") == {"1": 0, "2": 0, "3": 10, "4": 11, "5": 14, "6": 3, "7": 10,
                                   "8": 15}


def test_fcfs_bb_start_times():
    """fcfs-bb (processors and burst buffer reserved together), by hand. t=1: job 3 needs 3 CPUs
    and 8 TB: only when job 1 ends, shadow 10, leaving 1 CPU and 2 TB. t=2: job 4 (2 CPUs, 4 TB,
    until 5) ends before 10: starts; the machine is full. t=4: job 2 ends (1 CPU, 2 TB free):
    of 5, 6, 7, 8 only job 7 fits (until 9 < 10). t=5: job 4 ends (2 CPUs, 4 TB): job 5 needs 3
    CPUs, job 6 (until 6) fits. t=6: job 8 (2 CPUs, 4 TB, until 9). t=9: jobs 7, 8 end: 3 CPUs
    and 6 TB: job 3 still lacks BB, job 5 (3 CPUs, 4 TB) ends at 10 = shadow: starts.
    t=10: job 3."""
    assert starts("fcfs-bb") == {"1": 0, "2": 0, "3": 10, "4": 2, "5": 9, "6": 5, "7": 4,
                                 "8": 6}


def test_sjf_bb_start_times():
    """sjf-bb takes backfill candidates shortest walltime first. Here that gives fcfs-bb's
    schedule, and the order matters at t=5: with 2 CPUs and 4 TB free and job 3 reserved at 10,
    both job 6 (1 min) and job 8 (3 min) fit; shortest first starts job 6 (5..6) and job 8 at 6.
    Longest first would start job 8 at 5 and job 6 only at 8."""
    assert starts("sjf-bb") == {"1": 0, "2": 0, "3": 10, "4": 2, "5": 9, "6": 5, "7": 4,
                                "8": 6}


def test_filler_start_times():
    """filler: every job that fits now, in queue order, no reservation. t=2: job 4 fits (2 CPUs,
    4 TB). t=4: job 7 (1 CPU, 2 TB). t=5: job 6 (job 5 needs 3 CPUs). t=6: job 8. t=9: job 5
    (3 CPUs, 4 TB; job 3 still lacks 2 TB). t=10: job 3. On this example no job started by filler
    would have delayed job 3, so it matches fcfs-bb."""
    assert starts("filler") == {"1": 0, "2": 0, "3": 10, "4": 2, "5": 9, "6": 5, "7": 4,
                                "8": 6}


def test_conservative_bb_start_times():
    """conservative-bb: every job gets the earliest reservation that delays no earlier one.
    t=1: job 3 at 10 (as fcfs-bb). t=2: job 4 fits now (2..5). t=3: job 5 (3 CPUs): [3,5) has
    at most 1 CPU free; [5,6) has 3 CPUs, 6 TB: reserved at 5. Job 6 (2 CPUs): [3,5) lacks CPUs,
    [5,6) is taken by job 5: reserved at 6. t=4: job 7 (1 CPU, 5 min): [4,9) collides with job 5
    at 5; [6,11) leaves 1 CPU beside jobs 1, 6 and 3: reserved at 6. Job 8 (2 CPUs, 3 min):
    [6,7) is full (jobs 1, 6, 7); [7,10) holds jobs 1 and 7: reserved at 7. All reservations are
    kept; nothing ends early, so none moves."""
    assert starts("conservative-bb") == {"1": 0, "2": 0, "3": 10, "4": 2, "5": 5, "6": 6,
                                         "7": 6, "8": 7}


def test_fcfs_keeps_order():
    s = starts("fcfs")
    order = [s[str(j)] for j in range(1, 9)]
    assert order == sorted(order)
