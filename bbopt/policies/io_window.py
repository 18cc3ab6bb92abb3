"""``io-window``: BBSched's window selection with joint placement under link bandwidth.

Beyond the papers: Fan et al.'s window selection (BBSched, HPDC 2019, Sections 3.1-3.2.4) on
Herbein et al.'s I/O tree (HPDC 2016, Section 3.4). At each scheduling point the first
``window`` eligible waiting jobs are selected **and placed** together
(:class:`~bbopt.models.io_window.IOWindowModel`: groups of free nodes under the same lowest
switch, bandwidth rows on every vertex with the capacity left by running jobs). The Pareto set
of the window (default: the exact front by ``cpsat``) goes to BBSched's decision maker
(:func:`bbopt.policies.window.bbsched_rule` or any rule of
:data:`bbopt.policies.window.DECISION_RULES`); the chosen placement's group counts become
concrete node ids. Then EASY backfilling over the jobs not started, with nodes, bandwidth on
every vertex and burst buffer reserved for the first of them (io-easy's pass, asked of a planner
that plans link bandwidth: :class:`bbopt.planner.Planner` with ``links=True``). Every start names
its nodes and ``io_aware`` is set, so the engine checks the bandwidth charged on every link.

Where Herbein's greedy places jobs one by one on the lowest-index nodes that fit, a joint
placement can leave room under the right switches for a later job of the window.

Starvation bound (BBSched, Section 3.1): a job that has spent ``starvation`` rounds in the
window is forced into the selection when Herbein's greedy can place it beside the other forced
jobs; otherwise it holds the EASY reservation, no optimisation happens this round and only
backfilling that does not delay it may start jobs (as ``bbsched``).

Options: ``window`` (20), ``starvation`` (50 rounds, ``None``: off), ``backend`` ("cpsat";
"exhaustive" for tiny windows, "greedy": Herbein's rule over the window), ``budget`` (seconds per
decision, 2.0), ``deterministic`` (CP-SAT deterministic-time limit), ``seed``, ``objectives``
(default nodes, bb), ``decision_rule``, ``backend_options``.
"""

from __future__ import annotations

import math
import time as _time
from collections.abc import Sequence
from typing import Annotated, Any

import numpy as np

from bbopt.core import (
    ClusterState,
    Decision,
    Job,
    Reservation,
    Start,
    Status,
    decision_elapsed,
)
from bbopt.errors import InputError
from bbopt.models.io_window import IOWindowModel
from bbopt.planner import Planner
from bbopt.planner.links import Instant
from bbopt.policies.registry import register
from bbopt.policies.window_common import (
    DecisionRule,
    eligible,
    force_starving,
    pick,
    previous_rounds,
    report,
    rounds,
    rule_of,
    tree_of,
    without_tree,
)
from bbopt.solvers.base import TAIL_SHARE, Budget, Result, Solution, solve
from bbopt.solvers.io_window.forms import candidates
from bbopt.units import Seconds


@register("io-window")
class IOWindowPolicy:
    """Window selection and placement on the I/O tree, then I/O-aware EASY backfilling."""

    #: The engine checks the bandwidth this policy allocates on every link.
    io_aware = True
    unsuited = staticmethod(without_tree)

    def __init__(self, name: str = "io-window", window: int = 20, starvation: int | None = 50,
                 backend: str = "cpsat", budget: Annotated[float, Seconds] = 2.0,
                 deterministic: float | None = None, seed: int = 0,
                 objectives: Sequence[str] | None = None,
                 decision_rule: str | DecisionRule = "bbsched",
                 backend_options: dict[str, Any] | None = None,
                 budget_mode: str = "wall") -> None:
        if window < 1:
            raise InputError("window must be >= 1", field="window")
        self.name = name
        self.window = int(window)
        self.starvation = starvation
        self.backend = backend
        self.budget = Budget.of(budget, deterministic, budget_mode)
        self.budget_seconds = float(budget)
        self.seed = int(seed)
        self.objectives = tuple(objectives) if objectives else ("nodes", "bb")
        self.decision_rule = rule_of(decision_rule)
        self.backend_options = dict(backend_options or {})

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter() - decision_elapsed()  # (bbopt.decide's check counts)
        tree_of(state, self.name)
        planner = Planner.of(state, links=True)
        now = planner.links.state  # (free nodes, bandwidth and BB now, as starts leave them)
        jobs = eligible(state)
        window = jobs[:self.window]
        prev = previous_rounds(state)

        def can_start(ids: set[str]) -> bool:
            """Herbein's greedy places the jobs ``ids`` (forced first) beside each other."""
            trial = self._model(window, state, now, ids)
            y = trial.greedy("first-fit")
            return bool(np.all(trial.selection(y)[trial.window.forced]))

        forced, blocker = force_starving(window, prev, self.starvation, can_start)

        started: list[Start] = []
        result: Result | None = None
        model: IOWindowModel | None = None
        chosen = 0
        y = None
        if blocker is None and window:
            model = self._model(window, state, now, forced)
            result, y, chosen = self._select(model, t0)
        elif forced:
            # The forced jobs that fit start (Herbein's greedy places them first); the blocker
            # then holds the reservation.
            fmodel = self._model(window, state, now, forced)
            y = fmodel.greedy("first-fit")
            y[~fmodel.window.forced] = 0
            placement = fmodel.placement(y)
        if y is not None:
            if model is not None:
                placement = model.placement(y)
            for i, nodes in sorted(placement.items()):
                started.append(planner.start_on(window[i], nodes))

        started_ids = {s.job_id for s in started}
        rest = [j for j in jobs if j.id not in started_ids]
        reservations: list[Reservation] = []
        if rest:
            head = blocker or rest[0]
            shadow = planner.earliest(head)
            if shadow < math.inf:
                planner.reserve(head, shadow)
                reservations.append(Reservation(head.id, shadow))
            more = planner.start_each([j for j in rest if j is not head])
            started.extend(Start(j.id, planner.chosen[j.id]) for j in more)
        memory = {"rounds": rounds(window, prev, {s.job_id for s in started})}
        stats, alternatives = report(result, None if model is None else candidates(model), chosen,
                                     t0, self.budget_seconds,
                                     idle="starvation" if blocker is not None else "none")
        return Decision(start=tuple(started), reservations=tuple(reservations),
                        alternatives=alternatives, stats=stats, memory=memory)

    # --- pieces ------------------------------------------------------------------------------

    def _model(self, window: list[Job], state: ClusterState, now: Instant,
               forced: set[str]) -> IOWindowModel:
        platform = state.platform
        alloc, free_b = now.alloc, now.bb
        return IOWindowModel.from_tree(
            window, alloc.tree, alloc.avail, alloc.free, max(free_b, 0.0),
            total_nodes=platform.nodes,
            total_bb=platform.bb if platform.bb > 0 else max(free_b, 1.0),
            objectives=self.objectives, forced=[j.id in forced for j in window])

    def _select(self, model: IOWindowModel, t0: float) -> tuple[Result, np.ndarray, int]:
        budget = self.budget.less(_time.perf_counter() - t0, TAIL_SHARE)  # (building counts)
        res = solve(model, self.backend, budget, self.seed, form="pareto",
                    **self.backend_options)
        if res.solution is None:  # infeasible: cannot happen (forced jobs fit together)
            y = model.fallback()
            return Result(Status.FALLBACK, y, model.evaluate(y), backend=res.backend), y, 0
        front = res.pareto or (Solution(res.solution, tuple(model.evaluate(res.solution))),)
        res = Result(res.status, res.solution, res.objective, pareto=tuple(front),
                     bound=res.bound, wall_time=res.wall_time, backend=res.backend,
                     info=res.info)
        k = pick(front, candidates(model), self.decision_rule)
        return res, np.asarray(front[k].x), k
