"""Budget modes: ``wall`` caps a decision's wall time, model building included; ``deterministic``
caps work (annealing's fixed moves, CP-SAT's deterministic time) so that a decision does not depend
on how loaded the machine is. Long queues are capped (plan: ``max_queue``, conservative-bb:
``depth``) so that a decision stays within its budget at 20,000 waiting jobs."""

from __future__ import annotations

import json
import time
from dataclasses import replace

import pytest

from bbopt import ClusterState, Job, Platform, RunningJob, decide, make_policy
from bbopt.errors import InputError
from bbopt.solvers.base import SAFETY_FLOOR, Budget
from bbopt.workloads.synthetic import kth_like
from tests._slow_clock import SlowClock


def _state(n: int, seed: int = 5) -> ClusterState:
    """``n`` KTH-like jobs all waiting at the last submission; about half the machine busy."""
    jobs = kth_like(n + 600, seed=seed)
    p = Platform.kopanski()
    queue = jobs[:n]
    now = max(j.submit for j in queue)
    running, nodes, bb = [], 0, 0.0
    for j in jobs[n:]:
        if nodes + j.nodes > p.nodes // 2 or bb + j.bb > p.bb / 2:
            continue
        running.append(RunningJob(replace(j, submit=now), now))
        nodes += j.nodes
        bb += j.bb
    return ClusterState(now, p, tuple(running), tuple(queue))


# --- Budget -------------------------------------------------------------------------------------

def test_budget_of_wall_and_deterministic():
    assert Budget.of(2.0) == Budget(2.0, None, "wall")
    det = Budget.of(2.0, mode="deterministic")
    assert det.mode == "deterministic"
    assert det.deterministic == pytest.approx(1.0)  # CP-SAT work: half a second per second
    assert det.seconds >= SAFETY_FLOOR  # the wall clock is only a distant safety net
    assert Budget.of(2.0, 0.3, "deterministic").deterministic == 0.3  # explicit work limit kept
    with pytest.raises(InputError, match="budget mode"):
        Budget.of(2.0, mode="fast")
    with pytest.raises(InputError, match="positive"):
        Budget.of(float("nan"))


def test_building_time_is_taken_from_a_wall_budget_only():
    wall = Budget.of(1.0)
    assert wall.less(0.25).seconds == pytest.approx(0.75)
    assert wall.less(5.0).seconds > 0  # never zero: the backend still returns its fallback
    det = Budget.of(1.0, mode="deterministic")
    assert det.less(0.25) == det


def test_a_policy_keeps_a_tail_of_its_wall_budget_for_the_decision():
    from bbopt.solvers.base import MIN_SECONDS, TAIL_SHARE

    assert TAIL_SHARE == 0.1
    wall = Budget.of(2.0)
    # 2 s less 10 % (0.2 s) less 0.5 s of building: 1.3 s (not 1.5 s, nor 1.35 s)
    assert wall.less(0.5, TAIL_SHARE).seconds == pytest.approx(1.3)
    assert wall.less(1.8, TAIL_SHARE).seconds == MIN_SECONDS  # at the tail: the floor
    assert wall.less(1.79, TAIL_SHARE).seconds == pytest.approx(0.01)
    det = Budget.of(2.0, mode="deterministic")
    assert det.less(0.5, TAIL_SHARE) == det


def test_policies_take_and_check_the_mode():
    assert make_policy("plan-2", budget_mode="deterministic").budget.mode == "deterministic"
    assert make_policy("bbsched").budget.mode == "wall"  # bbopt.decide's default
    with pytest.raises(InputError, match="budget mode"):
        make_policy("bbsched", budget_mode="walltime")


def test_window_tiebreak_has_no_wall_cap_in_the_deterministic_mode():
    from bbopt.solvers.window.forms import Clock

    assert Clock(Budget.of(1.0)).small(0.04) == pytest.approx(0.04, abs=1e-3)
    assert Clock(Budget.of(1.0, mode="deterministic")).small(0.04) > 1.0


# --- deterministic mode: independent of the clock ----------------------------------------------



def _plan_decision(state, monkeypatch=None, **options):
    if monkeypatch is not None:
        import bbopt.policies.plan as plan_policy
        import bbopt.solvers.base as base
        import bbopt.solvers.plan.annealing as annealing

        for mod in (annealing, plan_policy, base):
            monkeypatch.setattr(mod, "_time", SlowClock(0.02))
    d = decide(state, "plan-2", seed=3, **options)
    return ([s.job_id for s in d.start], [(r.job_id, r.start) for r in d.reservations],
            d.stats.objective)


def test_deterministic_mode_does_not_depend_on_the_clock(monkeypatch):
    """On a slow clock the wall mode stops annealing early (a different, worse plan); the
    deterministic mode runs its fixed number of moves and gives the plan of an idle machine."""
    state = _state(40)
    # (an ample wall budget stands for an idle machine, whatever the load of the one running
    # the test: both modes then finish the 180 moves)
    idle_wall = _plan_decision(state, budget=3600.0)
    idle_det = _plan_decision(state, budget=1.0, budget_mode="deterministic")
    assert idle_wall == idle_det
    with monkeypatch.context() as m:
        slow_det = _plan_decision(state, m, budget=1.0, budget_mode="deterministic")
    with monkeypatch.context() as m:
        slow_wall = _plan_decision(state, m, budget=1.0)
    assert slow_det == idle_det
    assert slow_wall != idle_wall
    assert slow_wall[2] >= idle_wall[2]  # cut short: no better than the full search


# --- long queues ------------------------------------------------------------------------------

def test_plan_considers_only_the_first_max_queue_jobs():
    state = _state(60)
    head = {j.id for j in state.queue[:25]}
    d = decide(state, "plan-2", max_queue=25, budget=1.0)
    planned = {s.job_id for s in d.start} | {r.job_id for r in d.reservations}
    assert planned and planned <= head
    whole = decide(state, "plan-2", max_queue=None, budget=1.0)
    assert {r.job_id for r in whole.reservations} - head  # without the cap, later jobs too
    with pytest.raises(InputError, match="max_queue"):
        make_policy("plan-2", max_queue=0)


def test_conservative_reserves_only_depth_jobs_by_default():
    from bbopt.policies.conservative import DEFAULT_DEPTH

    p = Platform(nodes=4, bb=0.0)
    run = (RunningJob(Job("r", 0, 1000, nodes=4), 0.0),)
    queue = tuple(Job(f"q{k}", 0, 100, nodes=4) for k in range(DEFAULT_DEPTH + 50))
    d = decide(ClusterState(10.0, p, run, queue), "conservative-bb")
    assert len(d.reservations) == DEFAULT_DEPTH
    assert {r.job_id for r in d.reservations} == {j.id for j in queue[:DEFAULT_DEPTH]}
    d = decide(ClusterState(10.0, p, run, queue), "conservative-bb", depth=None)
    assert len(d.reservations) == len(queue)


@pytest.mark.slow
def test_twenty_thousand_waiting_jobs_within_budget():
    """A loose check of benchmarks/speed/budget_20k.py: p100 of a few decisions within the
    budget plus a generous margin (the benchmark holds the tight figures)."""
    state = _state(20000)
    decide(replace(state, queue=state.queue[:20]), "bbsched")  # imports OR-Tools once
    for name, budget in (("plan-2", 1.0), ("bbsched", 1.0), ("plan-2", 0.2)):
        worst = 0.0
        for k in range(2):
            t0 = time.perf_counter()
            decide(replace(state, time=state.time + k), name, budget=budget)
            worst = max(worst, time.perf_counter() - t0)
        assert worst <= 2 * budget + 0.3, (name, budget, worst)
    t0 = time.perf_counter()
    decide(state, "conservative-bb")
    assert time.perf_counter() - t0 < 5.0


# --- the CLI -------------------------------------------------------------------------------------

def test_cli_records_the_budget_mode(tmp_path, capsys):
    from bbopt.cli import main

    args = ["simulate", "--policy", "plan-2", "--jobs", "30", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "a")]) == 0
    prov = json.loads((tmp_path / "a" / "summary.json").read_text())["provenance"]
    assert prov["budget_mode"] == "deterministic"  # the default of simulate and compare
    assert main([*args, "--budget-mode", "wall", "--out", str(tmp_path / "b")]) == 0
    prov = json.loads((tmp_path / "b" / "summary.json").read_text())["provenance"]
    assert prov["budget_mode"] == "wall"
    assert main([*args, "-o", "budget_mode=wall", "--out", str(tmp_path / "c")]) == 0
    prov = json.loads((tmp_path / "c" / "summary.json").read_text())["provenance"]
    assert prov["budget_mode"] == "wall"  # an explicit policy option wins
    with pytest.raises(SystemExit) as exc:
        main([*args, "--budget-mode", "fast"])
    assert exc.value.code == 2


def test_cli_passes_the_mode_to_the_policy(monkeypatch):
    from bbopt import cli
    from bbopt.simulation import engine

    seen = []
    real = engine.make_policy

    def spy(name, **options):
        seen.append((name, options.get("budget_mode")))
        return real(name, **options)

    monkeypatch.setattr(engine, "make_policy", spy)
    base = ["--jobs", "20", "--no-progress"]
    assert cli.main(["compare", *base, "--workers", "1",  # in this process, seen by the spy
                     "--policies", "plan-2,bbsched,fcfs-bb"]) == 0
    assert seen == [("plan-2", "deterministic"), ("bbsched", "deterministic"), ("fcfs-bb", None)]
    seen.clear()
    assert cli.main(["simulate", *base, "--policy", "bbsched", "--budget-mode", "wall"]) == 0
    assert seen == [("bbsched", "wall")]
