"""The exact pack builders (``pack-opt``, ``pack-opt-char``) under the solver contract's budget:
a wall-clock budget per decision (model building included), a ``deterministic`` mode whose packs
do not depend on the clock, and the contract's FALLBACK to the greedy builder when the backend
has no answer in time."""

from __future__ import annotations

import pytest

from bbopt import ClusterState, Platform, make_policy, simulate
from bbopt.core import Status
from bbopt.errors import InputError
from bbopt.simulation.exclusive_io import ExclusiveIO
from bbopt.workloads.generators.jeannot import generate
from tests._slow_clock import SlowClock


def _run(wl, policy, **options):
    stats = []
    res = simulate(wl.jobs, Platform(nodes=wl.nodes), policy, options=options or None,
                   execution=ExclusiveIO(),
                   on_decision=lambda s, d: stats.append(d.stats) if d.stats else None)
    builds = [s for s in stats if s.backend not in ("backfill", "list")]
    return res, builds


def test_policies_take_and_check_the_budget_mode():
    assert make_policy("pack-opt").budget.mode == "wall"
    p = make_policy("pack-opt", budget=0.5, budget_mode="deterministic")
    assert p.budget.mode == "deterministic"
    assert p.budget.seconds >= 5.0  # the wall clock only as a distant safety net
    assert make_policy("pack-opt-char", budget_mode="deterministic").budget.mode == \
        "deterministic"
    with pytest.raises(InputError, match="budget mode"):
        make_policy("pack-opt", budget_mode="fast")


@pytest.mark.parametrize("backend", ["cpsat", "milp"])
def test_out_of_time_every_pack_is_the_greedy_fallback(backend, monkeypatch):
    """A budget no backend can meet (every look at the clock finds 0.6 s gone, the budget is
    0.5 s): every pack decision is FALLBACK, and the schedule is pack-max's (first fit in Max
    order, the fallback and the backfilling order alike)."""
    wl = generate(30, alpha=0.5, protocol="mira", io_profile="binormal", seed=4)
    ref, _ = _run(wl, "pack-max")
    with monkeypatch.context() as m:
        _slow_clock(m)
        res, builds = _run(wl, "pack-opt", backend=backend, budget=0.5)
    assert builds and all(s.status is Status.FALLBACK for s in builds)
    assert res.start == ref.start and res.end == ref.end
    # with a budget it can meet, the exact builder proves its packs optimal (solver work limits,
    # so that a loaded machine cannot turn the proof into a timeout)
    _, builds = _run(wl, "pack-opt", backend=backend, budget=20.0, budget_mode="deterministic")
    assert all(s.status is Status.OPTIMAL for s in builds)




def _slow_clock(monkeypatch) -> None:
    """The pack policy, the budget and the stage loop all see a clock that jumps 0.6 s."""
    import bbopt.policies.packs as policy
    import bbopt.solvers.base as base
    import bbopt.solvers.packs._stages as stages

    for mod in (policy, base, stages):
        monkeypatch.setattr(mod, "_time", SlowClock(0.6))


def _first_pack(monkeypatch=None, **options):
    wl = generate(40, alpha=0.5, protocol="mira", io_profile="binormal", seed=1)
    if monkeypatch is not None:
        _slow_clock(monkeypatch)
    d = make_policy("pack-opt", budget=1.0, **options).decide(
        ClusterState(0.0, Platform(nodes=wl.nodes), queue=tuple(wl.jobs)))
    return sorted(s.job_id for s in d.start), d.stats.status


def test_deterministic_packs_do_not_depend_on_the_clock(monkeypatch):
    """On a clock where model building already eats the 1 s budget, the wall mode has no time
    left and falls back to greedy; the deterministic mode solves as on an idle machine."""
    idle_wall = _first_pack()
    idle_det = _first_pack(budget_mode="deterministic")
    assert idle_wall == idle_det and idle_det[1] is Status.OPTIMAL
    with monkeypatch.context() as m:
        slow_det = _first_pack(m, budget_mode="deterministic")
    with monkeypatch.context() as m:
        slow_wall = _first_pack(m)
    assert slow_det == idle_det
    assert slow_wall[1] is Status.FALLBACK and slow_wall[0] != idle_wall[0]


def _queue(n: int) -> tuple:
    from bbopt import Job

    return tuple(Job(f"j{k}", 0.0, 100.0 + k, nodes=1 + k % 3, bandwidth=1e6)
                 for k in range(n))


def test_the_wall_budget_runs_from_bbopt_decide_s_call(monkeypatch):
    """The caller asked 0.95 s ago for a 1 s decision (bbopt.decide's check of the state counts):
    no time is left for the solver, the decision is the greedy fallback, at once."""
    import time

    import bbopt.policies.packs as packs
    from bbopt.core import decision_asked

    def no_solver(*_, **__):
        raise AssertionError("the solver was asked with no time left")

    state = ClusterState(0.0, Platform(nodes=8), queue=_queue(40))
    policy = make_policy("pack-opt", budget=1.0, bandwidth=1e9)
    idle = policy.decide(state)
    assert idle.stats.status is Status.OPTIMAL
    monkeypatch.setattr(packs, "solve", no_solver)
    with decision_asked(time.perf_counter() - 0.95):
        late = policy.decide(state)
    assert late.stats.status is Status.FALLBACK and late.stats.backend == "cpsat"
    greedy = make_policy("pack-max", bandwidth=1e9).decide(state)
    assert [s.job_id for s in late.start] == [s.job_id for s in greedy.start]


def test_a_queue_too_long_to_read_in_the_budget_packs_from_its_head(monkeypatch):
    """The model is read up to the budget less its tail: past it, the pack is first fit over
    the jobs read so far (the head of the queue), a FALLBACK, and no solver runs."""
    import bbopt.models.packs as model
    import bbopt.policies.packs as packs

    monkeypatch.setattr(model, "_clock", lambda: float("inf"))  # past any deadline
    monkeypatch.setattr(packs, "solve", lambda *_, **__: pytest.fail("no time for a solver"))
    queue = _queue(3 * model.BLOCK)
    d = make_policy("pack-opt", budget=1.0, bandwidth=1e9).decide(
        ClusterState(0.0, Platform(nodes=8), queue=queue))
    assert d.stats.status is Status.FALLBACK
    head = {j.id for j in queue[:model.BLOCK]}
    assert d.start and {s.job_id for s in d.start} <= head
    # Max order over the head: the longest jobs of the first block that fit 8 nodes
    picked = sorted((j for j in queue[:model.BLOCK]), key=lambda j: -j.walltime)
    used, want = 0, []
    for j in picked:
        if used + j.nodes <= 8:
            want.append(j.id)
            used += j.nodes
    assert sorted(s.job_id for s in d.start) == sorted(want)


@pytest.mark.parametrize(("spent", "solved"), [(1.5, True), (1.6, False), (1.7, False)])
def test_the_exact_builder_is_asked_until_four_fifths_of_the_wall_budget(monkeypatch, spent,
                                                                          solved):
    """A 2 s budget, the caller having spent ``spent`` s before the policy was asked, on a
    clock that then stands still. Below 2 (1 - 2 x 0.1) = 1.6 s the backend is asked, with the
    budget less what was spent and less its tail, 2 x 0.9 - 1.5 = 0.3 s, and the policy's seed.
    From 1.6 s on there is no solver: the pack is the fallback's, first fit in the policy's
    order (Char: B and A, 20 node-seconds, where the optimum and Max take A and C, 40), a
    FALLBACK that reports its stage values and the budget."""
    import bbopt.policies.packs as packs
    from bbopt import Job
    from bbopt.solvers.base import Budget
    from bbopt.solvers.base import solve as real_solve

    asked = []

    def recorded(model, backend, budget, seed=None):
        asked.append((backend, budget, seed))
        return real_solve(model, "exhaustive", Budget(10.0), seed=0)

    monkeypatch.setattr(packs, "_time", SlowClock(0.0))  # (a clock that stands still)
    monkeypatch.setattr(packs, "decision_elapsed", lambda: spent)
    monkeypatch.setattr(packs, "solve", recorded)
    queue = (Job("A", 0.0, 8.0, nodes=2), Job("B", 0.0, 4.0, nodes=1),
             Job("C", 0.0, 12.0, nodes=2))
    d = make_policy("pack-opt", budget=2.0, order="char", seed=5, bandwidth=1e9).decide(
        ClusterState(0.0, Platform(nodes=4), queue=queue))
    s = d.stats
    assert (s.backend, s.budget, s.wall_time) == ("cpsat", 2.0, spent)
    if solved:
        assert sorted(x.job_id for x in d.start) == ["A", "C"]
        assert [(b, budget.seconds, seed) for b, budget, seed in asked] == [
            ("cpsat", pytest.approx(0.3, rel=1e-12), 5)]
        assert (s.status, s.objective) == (Status.OPTIMAL, 40.0)
    else:
        assert sorted(x.job_id for x in d.start) == ["A", "B"]
        assert asked == []
        assert (s.status, s.objective) == (Status.FALLBACK, (20.0,))


def test_the_greedy_builder_and_the_deterministic_mode_read_the_whole_queue(monkeypatch):
    """Past any deadline, only the exact builder under a wall budget cuts its model to the head
    of the queue: pack-max, and pack-opt with a deterministic budget, read all 768 jobs and
    take the longest, which come last (j767, j766, j765 and j763 on 8 nodes)."""
    import bbopt.models.packs as model
    import bbopt.policies.packs as packs
    from bbopt.solvers.base import solve as real_solve

    monkeypatch.setattr(model, "_clock", lambda: float("inf"))  # past any deadline
    seen = []

    def recorded(m, backend, budget, seed=None):
        seen.append(m.size)
        return real_solve(m, "greedy", budget, seed=0)

    monkeypatch.setattr(packs, "solve", recorded)
    queue = _queue(3 * model.BLOCK)
    state = ClusterState(0.0, Platform(nodes=8), queue=queue)
    longest = ["j763", "j765", "j766", "j767"]
    d = make_policy("pack-max", bandwidth=1e9).decide(state)
    assert sorted(s.job_id for s in d.start) == longest
    d = make_policy("pack-opt", bandwidth=1e9, budget_mode="deterministic").decide(state)
    assert seen == [768] and d.stats.status is Status.FEASIBLE
    assert sorted(s.job_id for s in d.start) == longest
