"""Window-based multi-resource policies: BBSched and the baselines it is compared with.

Fan et al., "Scheduling Beyond CPUs for HPC" (HPDC 2019): Section 3.1 (window, dependencies,
starvation bound), 3.2.4 (decision maker), 4.3 (baselines) and 5 (local SSDs). Every policy here
takes the first ``window`` eligible jobs of the queue (base-scheduler order: arrival, or
``Job.priority`` with ``order="priority"``, or Cobalt's WFP utility with ``order="wfp"``, the
base scheduler of the paper's Theta runs; a job whose ``extra["dependencies"]`` names a job
still waiting or running may not enter), selects some of them with the
:class:`~bbopt.models.window.WindowModel` through a solver backend, starts them, and then runs
EASY backfilling over all jobs not started, with the processors *and* burst buffer of the first
waiting job reserved (as ``fcfs-bb``; Section 4.3: "all the methods use EASY backfilling").

Policies (``bbopt.decide(state, policy=NAME, **options)``):

- ``bbsched``: the Pareto set of the window (default: the exact front by ``cpsat``; the paper's
  configuration is ``backend="nsga2"``, also registered as ``bbsched-nsga2``), then a decision
  rule picks one solution. The default rule is the paper's: take the max-node solution (ties:
  the one whose jobs are nearest the window front), switch to another Pareto solution if its BB
  gain exceeds 2x its node loss (utilisation fractions of the platform), the largest such gain;
  with the SSD extension the 4-objective rule of Section 5 (BB gain + SSD-use gain + reduction of
  wasted SSD, as fractions of the platform's SSD, > 4x node loss). ``decision_rule`` is a name
  from :data:`DECISION_RULES` or any callable ``rule(front, model) -> index`` a site supplies.
  The Decision carries every Pareto solution in ``alternatives`` (jobs, objective values,
  utilisations, which one was chosen) and the solver's :class:`~bbopt.core.SolveStats`.
- ``naive``: Slurm's method: window order until a job does not fit, then backfilling.
- ``weighted`` (50/50), ``weighted-cpu`` (80/20), ``weighted-bb`` (20/80): maximise the weighted
  sum of node and BB utilisation (exact, by ``backend``), ties to the window front.
- ``constrained-cpu`` / ``constrained-bb``: maximise node (BB) utilisation under the capacity
  constraints, ties to the window front.
- ``bin-packing``: repeatedly the fitting job with the largest alignment score (dot product of the
  free resources and the request).

Starvation bound (Section 3.1): the policy remembers in ``Decision.memory["rounds"]`` how many
scheduling rounds each job has spent in the window. A job that has spent ``starvation`` rounds
(default 50) must be selected: it is forced into the model when it fits the free resources; when it
does not, it becomes the job holding the EASY reservation, no optimisation happens this round and
only backfilling that does not delay it may start other jobs.

Local SSDs (Section 5): when the platform has ``node_ssd`` and every running job has an
allocation, the model gets the SSD placement rows (``objectives`` default to the four of Section 5)
and started jobs get explicit node sets (least-waste placement).
"""

from __future__ import annotations

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
    fits,
    slack,
)
from bbopt.errors import InputError, UnknownNameError
from bbopt.models.window import WindowModel
from bbopt.planner import Planner
from bbopt.policies.queue import backfill, head_reservation
from bbopt.policies.registry import register
from bbopt.policies.window_common import (  # noqa: F401  (rules and orders: re-exported)
    DECISION_RULES,
    ORDERS,
    DecisionRule,
    bbsched_rule,
    eligible,
    force_starving,
    max_objective_rule,
    pick,
    previous_rounds,
    report,
    rounds,
    rule_of,
    wfp_score,
)
from bbopt.solvers.base import TAIL_SHARE, Budget, Result, solve
from bbopt.solvers.scalarize import Candidates, Form
from bbopt.units import Seconds


@register("bbsched",
          about="BBSched: exact Pareto set of the window (CP-SAT), decision maker, then EASY",
          method="pareto")
@register("bbsched-nsga2",
          about="BBSched as published: NSGA-II Pareto set of the window, decision maker, then EASY",
          method="pareto", backend="nsga2")
@register("naive",
          about="Slurm-like baseline: window in order until a resource runs out, then EASY",
          method="in-order")
@register("weighted",
          about="window maximising 0.5 node + 0.5 BB utilisation, then EASY",
          method="weighted", weights=(0.5, 0.5))
@register("weighted-cpu",
          about="window maximising 0.8 node + 0.2 BB utilisation, then EASY",
          method="weighted", weights=(0.8, 0.2))
@register("weighted-bb",
          about="window maximising 0.2 node + 0.8 BB utilisation, then EASY",
          method="weighted", weights=(0.2, 0.8))
@register("constrained-cpu",
          about="window maximising node utilisation first, BB second, then EASY",
          method="lexicographic", priority=("nodes",))
@register("constrained-bb",
          about="window maximising BB utilisation first, nodes second, then EASY",
          method="lexicographic", priority=("bb",))
@register("bin-packing",
          about="window by alignment of request and free resources (bin packing), then EASY",
          method="bin-packing")
class WindowPolicy:
    """Window-based selection (BBSched and its baselines), then EASY backfilling with BB.

    Options: ``window`` (20), ``starvation`` (50 rounds), ``backend`` ("cpsat"; also "milp",
    "nsga2", "exhaustive", "greedy"), ``budget`` (seconds per decision, 2.0),
    ``deterministic`` (CP-SAT deterministic-time limit), ``seed``, ``objectives``,
    ``decision_rule`` (name or callable), ``backend_options`` (dict, e.g. ``{"generations":
    200}``), ``order`` (:data:`ORDERS`: "fcfs", "priority" by ``Job.priority`` or "wfp" by
    :func:`wfp_score`), ``reserve_bb`` (the EASY reservation holds the head's BB as well as
    its processors, default true; false: processors only, as simulators whose backfilling
    ignores BB), ``ssd`` (use the SSD extension when the platform
    has SSDs, default true).
    """

    io_aware = False

    def __init__(self, name: str = "bbsched", method: str = "pareto", window: int = 20,
                 starvation: int | None = 50, backend: str = "cpsat",
                 budget: Annotated[float, Seconds] = 2.0,
                 deterministic: float | None = None, seed: int = 0,
                 objectives: Sequence[str] | None = None,
                 decision_rule: str | DecisionRule = "bbsched",
                 weights: Sequence[float] | None = None, priority: Sequence[str] | None = None,
                 backend_options: dict[str, Any] | None = None, order: str = "fcfs",
                 ssd: bool = True, reserve_bb: bool = True, budget_mode: str = "wall") -> None:
        if method not in ("pareto", "in-order", "weighted", "lexicographic", "bin-packing"):
            raise InputError(f"unknown window method {method!r}", field="method")
        if window < 1:
            raise InputError("window must be >= 1", field="window")
        if order not in ORDERS:
            raise UnknownNameError("order", order, list(ORDERS))
        self.name = name
        self.method = method
        self.window = int(window)
        self.starvation = starvation
        self.backend = backend
        self.budget = Budget.of(budget, deterministic, budget_mode)
        self.budget_seconds = float(budget)
        self.seed = int(seed)
        self.objectives = tuple(objectives) if objectives else None
        self.decision_rule = rule_of(decision_rule)
        self.weights = tuple(weights) if weights else None
        self.priority = tuple(priority) if priority else None
        self.backend_options = dict(backend_options or {})
        self.order = order
        self.use_ssd = ssd
        self.reserve_bb = bool(reserve_bb)

    # --- the decision ----------------------------------------------------------------------

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter() - decision_elapsed()  # (bbopt.decide's check counts)
        platform = state.platform
        jobs = eligible(state, self.order)
        window = jobs[:self.window]
        prev = previous_rounds(state)
        free_n, free_b = state.free()
        free_nodes_ids, node_ssd = self._free_nodes(state)
        forced, blocker = force_starving(window, prev, self.starvation, lambda ids: _fits_together(
            [w for w in window if w.id in ids], free_n, free_b, node_ssd, platform.bb))

        result: Result | None = None
        model: WindowModel | None = None
        chosen_idx = 0
        if blocker is None:
            model = self._model(window, state, free_n, free_b, node_ssd, forced)
            result, x, chosen_idx = self._select(model, t0)
            selected = [window[i] for i in np.flatnonzero(x)]
        else:
            selected = [w for w in window if w.id in forced]
        # The window counts pooled BB; on named BB nodes a start must also be placeable where
        # the engine will place it, in the order of the starts.
        planner = Planner.of(state)
        selected = [j for j in selected if planner.take_bb(j)]

        started, nodes_of, explicit = self._place(selected, model, free_nodes_ids, node_ssd)
        free_n -= sum(j.nodes for j in started)
        free_b -= sum(j.bb for j in started)
        # EASY backfilling with the head's processors and BB reserved.
        started_ids = {j.id for j in started}
        rest = [j for j in jobs if j.id not in started_ids]
        reservations: list[Reservation] = []
        if rest:
            head = blocker or rest[0]
            shadow, extra_n, extra_b = head_reservation(state, started, head, free_n, free_b,
                                                        reserve_bb=self.reserve_bb)
            reservations.append(Reservation(head.id, shadow))
            remaining_ids = [i for i in free_nodes_ids if i not in nodes_of]
            remaining_ssd = [s for i, s in zip(free_nodes_ids, node_ssd or [], strict=False)
                             if i not in nodes_of] if node_ssd is not None else None

            def place_on_ssd(job: Job) -> bool:
                """Take the smallest admissible SSD nodes for ``job``, if there are enough."""
                if not planner.bb_fits(job):
                    return False
                got = _smallest_admissible(job, remaining_ids, remaining_ssd)
                if got is None:
                    return False
                for node in got:
                    k = remaining_ids.index(node)
                    del remaining_ids[k]
                    del remaining_ssd[k]
                nodes_of.update(dict.fromkeys(got, job.id))
                explicit[job.id] = got
                return planner.take_bb(job)

            started += backfill(state, [j for j in rest if j is not head], shadow,
                                (free_n, free_b), (extra_n, extra_b),
                                reserve_bb=self.reserve_bb,
                                accept=place_on_ssd if remaining_ssd is not None
                                else planner.take_bb)

        # Starvation counters: every job of the window not started spent one more round there.
        memory = {"rounds": rounds(window, prev, {j.id for j in started})}
        starts = tuple(Start(j.id, explicit.get(j.id)) for j in started)
        stats, alternatives = report(result, None if model is None else Candidates(model),
                                     chosen_idx, t0, self.budget_seconds,
                                     pareto=self.method == "pareto")
        return Decision(start=starts, reservations=tuple(reservations),
                        alternatives=alternatives, stats=stats, memory=memory)

    # --- pieces ------------------------------------------------------------------------------

    def _free_nodes(self, state: ClusterState):
        platform = state.platform
        if not self.use_ssd or platform.node_ssd is None:
            return [], None
        if any(r.allocation is None for r in state.running):
            return [], None
        busy = {n for r in state.running for n in r.allocation}
        ids = [i for i in range(platform.nodes) if i not in busy]
        return ids, [platform.node_ssd[i] for i in ids]

    def _model(self, window: list[Job], state: ClusterState, free_n: int, free_b: float,
               node_ssd, forced: set[str]) -> WindowModel:
        platform = state.platform
        objectives = self.objectives
        if objectives is None:
            objectives = ("nodes", "bb")
            if node_ssd is not None and self.method == "pareto":
                objectives = ("nodes", "bb", "ssd", "ssd_waste")
        return WindowModel.from_jobs(
            window, free_n, max(free_b, 0.0), total_nodes=platform.nodes,
            total_bb=platform.bb if platform.bb > 0 else max(free_b, 1.0),
            objectives=objectives, free_node_ssd=node_ssd,
            total_ssd=float(sum(platform.node_ssd)) if node_ssd is not None else None,
            forced=[j.id in forced for j in window])

    def _select(self, model: WindowModel, t0: float) -> tuple[Result, np.ndarray, int]:
        if model.size == 0:
            x = np.zeros(0, dtype=bool)
            return Result(Status.OPTIMAL, x, (), backend="none"), x, 0
        opts = dict(self.backend_options)
        budget = self.budget.less(_time.perf_counter() - t0, TAIL_SHARE)  # (building counts)
        if self.method in ("in-order", "bin-packing"):
            res = solve(model, "greedy", budget, self.seed, rule=self.method)
            return res, np.asarray(res.solution, dtype=bool), 0
        if self.method == "weighted":
            res = solve(model, self.backend, budget, self.seed, form="weighted",
                        weights=self.weights, **opts)
        elif self.method == "lexicographic":
            res = solve(model, self.backend, budget, self.seed, form="lexicographic",
                        priority=self.priority, **opts)
        else:
            res = solve(model, self.backend, budget, self.seed, form="pareto", **opts)
        if res.solution is None:  # infeasible (cannot happen: forced jobs fit together)
            x = model.fallback()
            return Result(Status.FALLBACK, x, model.evaluate(x), backend=res.backend), x, 0
        if self.method == "pareto" and res.pareto:
            k = pick(res.pareto, Candidates(model), self.decision_rule)
            return res, np.asarray(res.pareto[k].x, dtype=bool), k
        if self.method in ("weighted", "lexicographic") and res.pareto and \
                res.status is not Status.FALLBACK:
            # A multi-objective backend (nsga2) asked for a scalar form: best of its set.
            spec = Form.of(model.objectives, self.method, self.weights, self.priority)
            k = max(range(len(res.pareto)),
                    key=lambda i: spec.value(model, res.pareto[i].objectives))
            return res, np.asarray(res.pareto[k].x, dtype=bool), k
        return res, np.asarray(res.solution, dtype=bool), 0

    def _place(self, selected: list[Job], model: WindowModel | None, free_ids, node_ssd):
        explicit: dict[str, tuple[int, ...]] = {}
        nodes_of: dict[int, str] = {}
        if node_ssd is None or not selected:
            return list(selected), nodes_of, explicit
        placer = model if model is not None else WindowModel.from_jobs(
            selected, len(free_ids), 0.0, free_node_ssd=node_ssd)
        ids = placer.job_ids
        x = np.array([i in {j.id for j in selected} for i in ids], dtype=bool)
        placed = placer.placement(x, free_ids, node_ssd)
        for i, got in placed.items():
            explicit[ids[i]] = got
            nodes_of.update(dict.fromkeys(got, ids[i]))
        return list(selected), nodes_of, explicit

def _fits_together(jobs: list[Job], free_n: int, free_b: float, node_ssd,
                   bb_capacity: float) -> bool:
    """Whether ``jobs`` can start together on what is free (SSD placement included)."""
    if sum(j.nodes for j in jobs) > free_n or not fits(sum(j.bb for j in jobs), free_b,
                                                       bb_capacity):
        return False
    if node_ssd is None:
        return True
    m = WindowModel.from_jobs(jobs, len(node_ssd), max(free_b, 0.0) + slack(bb_capacity),
                              free_node_ssd=node_ssd)
    return m.feasible(np.ones(len(jobs), dtype=bool))


def _smallest_admissible(job: Job, ids: list[int], ssd: list[float]) -> tuple[int, ...] | None:
    pool = sorted((s, i) for s, i in zip(ssd, ids, strict=True) if s >= job.ssd)
    if len(pool) < job.nodes:
        return None
    return tuple(i for _, i in pool[:job.nodes])
