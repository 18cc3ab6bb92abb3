"""The replay's shortcuts leave every schedule as it was.

- A policy that declares ``idle_unless_fits`` (the queue rules) is not asked when no waiting job
  fits the free nodes and BB: the schedule equals the one where it is asked at every event
  (random workloads, pooled and named BB nodes, with and without ticks).
- The rigid execution model is asked for finishes only at its next end.
- The log-normal BB draw applies Kopanski's rules on whole columns and copies jobs field by
  field: the same jobs as the per-job rule and ``dataclasses.replace``.
- The SWF reader's integer fast path reads what ``float()`` reads, ``-0`` included.
"""

from __future__ import annotations

import dataclasses

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, make_policy, simulate
from bbopt.core import GB, slack
from bbopt.workloads.bb import KOPANSKI_RULES, KopanskiRules, with_lognormal_bb
from bbopt.workloads.columns import with_bbs
from bbopt.workloads.swf import read_swf
from tests._random_workloads import PLATFORMS, workloads

GATED = ["fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb"]


def _asked_always(name: str):
    policy = make_policy(name)
    policy.idle_unless_fits = False  # this instance is asked at every event
    return policy


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(workloads(), st.sampled_from(GATED), st.sampled_from(PLATFORMS),
       st.sampled_from([None, 3.0]))
def test_skipped_decisions_change_no_schedule(jobs, policy, platform, tick):
    assert make_policy(policy).idle_unless_fits
    seen = []

    def observe(state, decision):
        free_n, free_b = state.free()
        tol = slack(state.platform.bb)
        seen.append(any(j.nodes <= free_n and j.bb <= free_b + tol for j in state.queue))

    gated = simulate(jobs, platform, policy, tick=tick, on_decision=observe)
    every = simulate(jobs, platform, _asked_always(policy), tick=tick)
    assert all(seen)  # the policy was asked only when some waiting job fitted
    assert len(gated.decision_times) <= len(every.decision_times)
    assert gated.start == every.start
    assert gated.end == every.end
    assert gated.state == every.state
    assert gated.allocation == every.allocation


def test_no_decision_while_nothing_fits():
    """r holds the whole machine from 0 to 300; w arrives at 10 and waits. fcfs is asked at 0
    and at 300 only, even with a tick every 60 s; asked at every event it sees 10 and the ticks
    too, and the schedule is the same."""
    jobs = [Job("r", 0, 300, 300, 2), Job("w", 10, 100, 100, 2)]
    for tick in (None, 60.0):
        seen: list[float] = []
        res = simulate(jobs, Platform(2, 0.0), "fcfs", tick=tick,
                       on_decision=lambda s, d, seen=seen: seen.append(s.time))
        assert seen == [0, 300]
        assert res.start == [0, 300]
    times = []
    simulate(jobs, Platform(2, 0.0), _asked_always("fcfs"), tick=60.0,
             on_decision=lambda s, d: times.append(s.time))
    assert times == [0, 10, 60, 120, 180, 240, 300]


def test_columnwise_rules_equal_the_per_job_rule():
    jobs = [Job(str(k), float(k), walltime=float(w), runtime=1.0, nodes=n)
            for k, (w, n) in enumerate((w, n) for w in (60, 120, 121, 3600, 86400)
                                       for n in (1, 5, 12, 13, 24, 25, 96))] * 20
    jobs = [dataclasses.replace(j, id=f"{j.id}.{k}") for k, j in enumerate(jobs)]
    rng_draw = with_lognormal_bb(jobs, seed=3)  # the draws alone
    for rules in (KOPANSKI_RULES, KopanskiRules(bb_nodes=5, bb_node_capacity=7 * GB)):
        got = with_lognormal_bb(jobs, seed=3, rules=rules)
        want = [rules.per_node(j, d.bb / j.nodes) * j.nodes for j, d in zip(jobs, rng_draw,
                                                                           strict=True)]
        assert [j.bb for j in got] == want
    assert any(j.bb != r.bb for j, r in zip(got, rng_draw, strict=True))


def test_fieldwise_copy_equals_replace():
    job = Job("a", 5.0, walltime=60.0, runtime=30.0, nodes=3, bb=7.0, ssd=2.0, bandwidth=4.0,
              user="u", priority=1.5, preemptable=True, checkpointable=True,
              extra={"memory_per_node": 8.0})
    (copy,) = with_bbs([job], [9.0])
    want = dataclasses.replace(job, bb=9.0)
    assert copy == want
    assert copy.extra is job.extra
    for f in dataclasses.fields(Job):
        assert getattr(copy, f.name) == getattr(want, f.name), f.name


def test_integer_fast_path_reads_what_float_reads(tmp_path):
    rows = ["1 0 -1 100 4 -1 -1 4 200 -1 1 3 1 -1 -1 -1 -1 -1",
            "2 -0 -1 100 4 -1 -1 4 200 -1 1 3 1 -1 -1 -1 -1 -1",
            "3 1_0 -1 +100 4 -1 -1 4 200 -1 1 3 1 -1 -1 -1 -1 -1"]
    fast = tmp_path / "fast.swf"
    fast.write_text("\n".join(rows[:1] + rows[2:]) + "\n")
    strict = tmp_path / "strict.swf"  # one token is not an integer: every field via float()
    strict.write_text("\n".join(rows[:1] + [rows[2].replace("200", "200.0")]) + "\n")
    a, b = read_swf(fast).jobs, read_swf(strict).jobs
    assert [(j.submit, j.runtime, j.walltime, j.nodes) for j in a] == \
        [(j.submit, j.runtime, j.walltime, j.nodes) for j in b] == \
        [(0.0, 100.0, 200.0, 4), (10.0, 100.0, 200.0, 4)]
    neg = tmp_path / "neg.swf"
    neg.write_text("\n".join(rows[:2]) + "\n")
    submit = read_swf(neg).jobs[1].submit
    assert submit == 0.0 and str(submit) == "-0.0"  # as float("-0") reads it
