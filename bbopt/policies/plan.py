"""Plan-based scheduling policies ``plan-1``, ``plan-2``, ``plan-3`` (Kopanski & Rzadca,
Euro-Par 2021, Section 3.3, Algorithm 2).

At every scheduling point the policy builds the :class:`~bbopt.models.plan.PlanModel` of the
state (waiting queue, running jobs until their expected ends, nodes and burst buffer), searches
for a permutation whose execution plan minimises ``sum(wait ** alpha)`` (alpha fixed by the name),
starts the jobs planned to start now and returns every other job's planned start as a
:class:`~bbopt.core.Reservation`. The plan is rebuilt from scratch at the next scheduling point
(reservations are informative, as in the paper: nothing is kept between decisions).

Options:

- ``backend``: the plan backend, ``"annealing"`` (default, the paper's), ``"exhaustive"``,
  ``"cpsat"`` (exact over all plans) or ``"greedy"`` (submission order, i.e. conservative
  backfilling rebuilt at every point); its former name ``solver`` is accepted with a warning;
- ``budget``: seconds per decision, model building included (the backend's cap; a decision is
  never late: annealing returns its best plan so far, a backend with nothing falls back to the
  greedy plan);
- ``budget_mode``: ``"wall"`` (default of :func:`bbopt.decide` and ``bbopt decide``) caps wall
  time; ``"deterministic"`` (default of ``bbopt simulate`` and ``bbopt compare``) caps work
  instead (annealing's fixed 180 moves, CP-SAT's deterministic time), so a run gives the same
  result on a loaded machine (see :class:`~bbopt.solvers.base.Budget`);
- ``max_queue``: plan only the first ``max_queue`` waiting jobs in queue order (default 500;
  ``None``: all). Later jobs are neither started nor reserved at this decision until they move
  up. This bounds a decision's work on very long queues (``benchmarks/speed/budget_20k.py``);
- ``seed``: the search's seed; each decision draws from ``(seed, time, queue length)``, so a run
  is reproducible and a decision is a pure function of its state;
- ``max_exact_jobs``: ``exhaustive`` and ``cpsat`` are used up to this queue length (default 8
  and 12), annealing above it;
- ``temperatures`` (default ``None``: the paper's 30 of 6 moves each): fewer temperatures, cooled
  faster so that the last is the paper's. ``temperatures=10`` halves plan-2's CPU time on the
  KTH trace; its mean wait and bounded slowdown, on the whole trace and its 16 three-week
  parts, move by about as much as another seed of the paper's search moves them
  (``benchmarks/speed/plan_warm_start.py``, table in the README);
- ``warm_start`` (default ``False``): the previous decision's plan order (carried in
  :attr:`~bbopt.core.Decision.memory`; its jobs still waiting in that order, the newcomers
  after them in queue order) is scored as a 10th candidate order, so the annealing may start
  from it. Measured with ``temperatures`` 10 and 15, it adds nothing beyond the luck of the
  search;
- ``audit``: an exact backend (``"exhaustive"`` or ``"cpsat"``) that solves every decision's
  model again, up to ``audit_max_jobs`` waiting jobs (default 10) within ``audit_budget``
  seconds (default 2), so that the decision's :class:`~bbopt.core.SolveStats` carries the exact
  optimum (``bound``) and the heuristic's relative gap to it (``gap``): how far the answer that
  was applied is from the best one. A run's metrics summarise these gaps. When the exact backend
  does not finish, ``bound`` is its proven lower bound if it has one (the gap is then an upper
  bound of the true gap), else nothing. Give ``deterministic`` (CP-SAT's deterministic time) for
  audits whose outcome does not depend on the machine's load.

When no waiting job fits in what is free now, no plan can start anything: the search is skipped
and the decision carries the submission-order plan's reservations (``backend="skip"``).

Differences from the paper and the authors' code (jankopanski/Burst-Buffer-Scheduling):

- compute nodes are a pool (a count); the authors place jobs on named Dragonfly nodes. The BB
  is a pool too unless the platform names its BB nodes (``Platform.kopanski(named_bb=True)``,
  the authors' 12 x 40 GB): the plan model then places each job's per-node pieces on the BB
  nodes by the engine's first-fit rule while it builds every plan (a profile column per BB
  node; see :mod:`bbopt.models.plan`), so the search scores the plan that will run and its
  starts and reservations are the decision's, and no start is refused. The authors split a
  job's BB over the BB nodes by proximity, not first fit: on a platform with that placement
  (``Platform.kopanski(named_bb=True, bb_placement="proximity")``) a job the plan starts now
  takes, in plan order, the compute nodes the authors' resource filter gives it (consecutive
  runs of the ids free now) and its pieces by proximity on them, as the engine places them,
  and the start names those nodes, so no start is refused; jobs planned later are placed first
  fit on the BB nodes' columns (their compute nodes are counted, not named). Before, the model
  placed the starts now first fit too and the engine refused a start the two placed
  differently (116 and 88 starts on the whole KTH trace, seeds 0 and 4; the job waited for
  the next event). Whole KTH trace, mean wait, seeds 0 and 4: 15,912 and 16,933 s before,
  13,430 and 12,822 s now, 10,703 and 11,623 s on first-fit named nodes
  (``benchmarks/kopanski_seeds.py`` has the breakdown). Only
  CP-SAT's plans (which model
  the pool) are built again on the BB nodes
  (:meth:`bbopt.planner.Planner.list_schedule`, first fit) in the order of their starts;
- the first ``max_queue`` (500) waiting jobs are planned at every scheduling point: the list-based
  evaluator and the exact early rejection of annealing moves keep plan-2 on the whole KTH trace
  within minutes (``benchmarks/kopanski_seeds.py``), where the authors' runs took days;
- scores are not rounded to integers (the authors round them; irrelevant at these magnitudes);
- the paper's skip rule (best == worst candidate) is followed; one intermediate version of the
  authors' code instead annealed from ``0.1 * best`` with 40 cooling steps;
- each decision draws its random numbers from ``(seed, time, queue length)`` instead of one
  global random stream, so a decision is reproducible on its own.
"""

from __future__ import annotations

import math
import time as _time
import warnings
from dataclasses import replace
from typing import Annotated

import numpy as np

from bbopt.core import (
    ClusterState,
    Decision,
    Platform,
    Reservation,
    SolveStats,
    Start,
    Status,
    decision_elapsed,
)
from bbopt.errors import InputError
from bbopt.models.plan import PlanModel
from bbopt.planner import Planner
from bbopt.policies.promises import Promise
from bbopt.policies.registry import register
from bbopt.solvers.base import TAIL_SHARE, Budget, backends_for, solve
from bbopt.units import Seconds

#: Default number of waiting jobs planned at a decision (the first ones in queue order). One plan
#: evaluation costs O(n x breakpoints); at 500 jobs the 189 evaluations of a decision take about
#: a second, so a 20,000-job queue stays within the 5 s budget even in the deterministic mode
#: (see benchmarks/speed/budget_20k.py). Production backfillers cap the same way (Slurm's
#: bf_max_job_test).
DEFAULT_MAX_QUEUE = 500
#: Default largest queue handed to an exact backend before switching to annealing.
DEFAULT_MAX_EXACT = {"exhaustive": 8, "cpsat": 12}
#: Where a decision leaves its plan order (job ids) for the next one (``warm_start``).
MEMORY_KEY = "plan_order"
#: The annealing's temperatures in the paper (6 moves each).
PAPER_TEMPERATURES = 30


@register("plan-1",
          about="plan-based: annealed job order minimising the sum of waits (Kopanski, alpha=1)",
          alpha=1)
@register("plan-2",
          about="plan-based: annealed job order minimising the sum of squared waits (Kopanski)",
          alpha=2)
@register("plan-3",
          about="plan-based: annealed job order minimising the sum of cubed waits (Kopanski)",
          alpha=3)
class PlanBased:
    """Plan-based scheduling: the best permutation's execution plan, by sum of wait**alpha."""

    io_aware = False
    promise = Promise.STARTS_AS_PLANNED

    @staticmethod
    def unsuited(platform: Platform) -> str | None:
        """The plan holds nodes and BB only: node-local SSDs are not planned."""
        return None if platform.node_ssd is None else "plans nodes and BB, not local SSDs"

    def __init__(self, name: str = "plan-2", alpha: float = 2, backend: str = "annealing",
                 budget: Annotated[float, Seconds] = 5.0, seed: int = 0,
                 max_exact_jobs: int | None = None,
                 deterministic: float | None = None, audit: str | None = None,
                 audit_budget: Annotated[float, Seconds] = 2.0, audit_max_jobs: int = 10,
                 solver: str | None = None, max_queue: int | None = DEFAULT_MAX_QUEUE,
                 budget_mode: str = "wall", warm_start: bool = False,
                 temperatures: int | None = None) -> None:
        self.name = name
        self.alpha = alpha
        if solver is not None:  # the option's former name
            warnings.warn("plan policies: option 'solver' is now 'backend', as in every other "
                          "policy", FutureWarning, stacklevel=2)
            backend = solver
        known = backends_for(PlanModel(0.0, (1, 0.0), (), (), alpha))
        if backend not in known:
            raise InputError(f"unknown plan backend {backend!r}; known: {', '.join(known)}",
                             field="backend")
        self.backend = backend
        self.budget = Budget.of(budget, deterministic, budget_mode)
        self.budget_seconds = float(budget)
        if max_queue is not None and max_queue < 1:
            raise InputError(f"max_queue must be >= 1 or None, got {max_queue!r}",
                             field="max_queue")
        self.max_queue = max_queue
        self.seed = int(seed)
        self.max_exact_jobs = (max_exact_jobs if max_exact_jobs is not None
                               else DEFAULT_MAX_EXACT.get(backend))
        if audit is not None and audit not in ("exhaustive", "cpsat"):
            raise InputError(f"audit takes an exact plan backend (exhaustive or cpsat), got "
                             f"{audit!r}", field="audit")
        self.audit = audit
        self.audit_budget = Budget.of(audit_budget, deterministic, budget_mode)
        self.audit_max_jobs = int(audit_max_jobs)
        self.warm_start = bool(warm_start)
        if temperatures is not None and (isinstance(temperatures, bool)
                                         or not isinstance(temperatures, int)
                                         or temperatures < 1):
            raise InputError(f"temperatures must be a positive integer or None, got "
                             f"{temperatures!r}", field="temperatures")
        self.temperatures = temperatures

    def _seed(self, state: ClusterState) -> int:
        ss = np.random.SeedSequence([self.seed, int(state.time * 1000) & (2**63 - 1),
                                     len(state.queue)])
        return int(ss.generate_state(1)[0])

    def decide(self, state: ClusterState) -> Decision:
        t0 = _time.perf_counter() - decision_elapsed()  # (bbopt.decide's check counts)
        if self.max_queue is not None and len(state.queue) > self.max_queue:
            state = replace(state, queue=state.queue[:self.max_queue])
        model = PlanModel.from_state(state, self.alpha)
        if model.n == 0:
            return Decision(stats=SolveStats(backend="skip", status=Status.OPTIMAL,
                                             wall_time=_time.perf_counter() - t0,
                                             budget=self.budget_seconds))
        if not model.startable_now():
            plan = model.fallback()
            return self._decision(state, model, plan, SolveStats(
                backend="skip", status=Status.OPTIMAL, objective=model.evaluate(plan),
                wall_time=_time.perf_counter() - t0, budget=self.budget_seconds))
        backend = self.backend
        if self.max_exact_jobs is not None and model.n > self.max_exact_jobs:
            backend = "annealing"
        budget = self.budget.less(_time.perf_counter() - t0, TAIL_SHARE)  # (building counts)
        result = solve(model, backend, budget, seed=self._seed(state),
                       **self._annealing_options(model, state) if backend == "annealing" else {})
        bound, gap = result.bound, result.gap
        wall = _time.perf_counter() - t0
        audited = False
        if self.audit is not None and model.n <= self.audit_max_jobs:
            bound, gap = self._audit(model, result.objective, state)
            audited = gap is not None
        stats = SolveStats(backend=backend, status=result.status, objective=result.objective,
                           bound=bound, gap=gap, wall_time=wall, budget=self.budget_seconds,
                           audited=audited)
        return self._decision(state, model, result.solution, stats, self._memory(model, result))

    def _annealing_options(self, model: PlanModel, state: ClusterState) -> dict:
        """The annealing's options beyond the paper's: the previous decision's plan order as
        one more candidate (``warm_start``) and the number of temperatures."""
        options: dict = {}
        if self.temperatures is not None:
            # Cooled so that the last temperature is the paper's (30 temperatures at 0.9).
            options.update(cooling_steps=self.temperatures,
                           cooling=0.9 ** (PAPER_TEMPERATURES / self.temperatures))
        previous = state.memory.get(MEMORY_KEY) if self.warm_start and state.memory else None
        if previous:
            index = {job.id: p for p, job in enumerate(model.jobs)}
            order = [index[i] for i in previous if i in index]
            kept = set(order)
            order += [p for p in range(model.n) if p not in kept]  # newcomers, in queue order
            options["initial"] = tuple(order)
        return options

    def _memory(self, model: PlanModel, result) -> dict | None:
        """With ``warm_start``: the chosen plan's order as job ids, for the next decision."""
        if not self.warm_start or result.solution is None or result.solution.order is None:
            return None
        return {MEMORY_KEY: tuple(model.jobs[p].id for p in result.solution.order)}

    def _audit(self, model: PlanModel, objective: float, state: ClusterState):
        """The exact optimum (or a proven lower bound) of ``model`` and the relative gap of
        ``objective`` to it; the audit's time is not counted in the decision's wall time."""
        exact = solve(model, self.audit, self.audit_budget, seed=self._seed(state))
        if exact.status is Status.OPTIMAL:
            bound = exact.objective
        elif isinstance(exact.bound, int | float):
            bound = exact.bound
        else:
            return None, None
        bound = min(bound, objective)
        return bound, (objective - bound) / max(abs(bound), 1.0)

    @staticmethod
    def _named_decision(state: ClusterState, model: PlanModel, plan, stats: SolveStats
                        ) -> Decision:
        """On named BB nodes: the chosen permutation's plan built again with each job's
        per-node pieces placed first fit on the BB nodes (:meth:`Planner.list_schedule`): the
        jobs it starts now are placeable, in the order given, and the others hold reservations
        on the BB nodes as the authors' plan does."""
        order = plan.order if plan.order is not None else sorted(
            range(model.n), key=lambda p: (plan.starts[p], p))
        placed = Planner.of(state, first_fit=True).list_schedule(
            [model.jobs[p] for p in order])
        now = model.now
        return Decision(
            start=tuple(Start(job.id) for job, s in placed if s <= now),
            reservations=tuple(Reservation(job.id, s) for job, s in
                               sorted(((j, s) for j, s in placed if s > now),
                                      key=lambda x: x[1])),
            stats=stats,
        )

    @staticmethod
    def _decision(state: ClusterState, model: PlanModel, plan, stats: SolveStats,
                  memory: dict | None = None) -> Decision:
        now = model.now
        if model.named is not None and plan.order is None:
            # A plan that no permutation produced (CP-SAT's, on the pool): rebuilt on the nodes.
            return PlanBased._named_decision(state, model, plan, stats)
        # On named BB nodes the plan is the model's own (each job's pieces placed on the BB
        # nodes by the engine's first-fit rule while the plan was built), the one the search
        # scored; the jobs it starts now are placeable in plan order.
        started = plan.started_now(now)
        later = sorted((s, p) for p, s in enumerate(plan.starts) if now < s < math.inf)
        return Decision(
            start=_starts(model, started),
            reservations=tuple(Reservation(model.jobs[p].id, s) for s, p in later),
            stats=stats,
            memory=memory,
        )


def _starts(model: PlanModel, started: list[int]) -> tuple[Start, ...]:
    """The starts of the jobs ``started`` (plan order). On a proximity platform each names the
    compute nodes the model gave it (the resource filter on the ids free now, in plan order),
    so the engine places the pieces the model placed."""
    if model.proximity is None:
        return tuple(Start(model.jobs[p].id) for p in started)
    free = list(model._NOW)
    out = []
    for p in started:
        job = model.jobs[p]
        nodes = model.placement.choose_nodes(free, job.nodes)
        taken = set(nodes)
        free = [x for x in free if x not in taken]
        out.append(Start(job.id, nodes))
    return tuple(out)
