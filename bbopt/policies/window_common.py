"""What the window policies share: eligibility, base order, starvation forcing, decision rules
and the report.

Fan et al., "Scheduling Beyond CPUs for HPC" (BBSched, HPDC 2019): Section 3.1 (window,
dependencies, starvation bound), 3.2.4 and 5 (the decision maker), 4.3 (base orders: FCFS on
Cori, Cobalt's WFP on Theta). :class:`~bbopt.policies.window.WindowPolicy` (``bbsched`` and its
baselines) and :class:`~bbopt.policies.io_window.IOWindowPolicy` (``io-window``) differ only in
their model and how they place the chosen jobs; both

- take the first ``window`` :func:`eligible` jobs of the queue in base order (a job whose
  ``extra["dependencies"]`` names a job still waiting or running may not enter: :func:`blocked`);
- force a job that has spent ``starvation`` rounds in the window into the selection when it can
  start beside the other forced jobs, and otherwise make it the job holding the EASY reservation
  (:func:`force_starving`; the rounds travel in ``Decision.memory["rounds"]``, :func:`rounds`);
- pick one solution of the window's Pareto set with a decision rule (:data:`DECISION_RULES`,
  :func:`rule_of`, :func:`pick`) and report the set and the solver's statistics (:func:`report`).
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from bbopt.core import ClusterState, Job, Platform, SolveStats, Status
from bbopt.errors import InputError, UnknownNameError
from bbopt.models.window import OBJECTIVES, WindowModel
from bbopt.solvers.base import Result, Solution
from bbopt.solvers.scalarize import Candidates
from bbopt.topology import IOTree

_EPS = 1e-9

DecisionRule = Callable[[Sequence[Solution], WindowModel], int]

#: Base-scheduler orders of the queue (Section 4.3: FCFS on Cori, WFP on Theta).
ORDERS = ("fcfs", "priority", "wfp")


# --- the window ---------------------------------------------------------------------------------

def wfp_score(job: Job, now: float) -> float:
    """Cobalt's WFP utility at ALCF (the base scheduler of the paper's Theta runs): the job's
    nodes times the cube of its queued time over its requested walltime. It grows with waiting,
    fastest for short jobs, and favours large ones."""
    return job.nodes * (max(now - job.submit, 0.0) / max(job.walltime, 1.0)) ** 3


def blocked(job: Job, waiting: set[str], running: set[str]) -> bool:
    """Whether ``job`` depends on a job still waiting or running (``extra["dependencies"]``)."""
    deps = job.extra.get("dependencies", ()) if job.extra else ()
    if isinstance(deps, str):
        deps = (deps,)
    return any(str(d) in waiting or str(d) in running for d in deps)


def eligible(state: ClusterState, order: str = "fcfs") -> list[Job]:
    """The waiting jobs in base order (:data:`ORDERS`) whose dependencies are done."""
    if order not in ORDERS:
        raise UnknownNameError("order", order, list(ORDERS))
    queue = list(state.queue)
    if order == "priority":
        queue.sort(key=lambda j: -j.priority)  # stable: arrival order among equals
    elif order == "wfp":
        queue.sort(key=lambda j: -wfp_score(j, state.time))
    waiting = {j.id for j in queue}
    running_ids = {r.job.id for r in state.running}
    return [j for j in queue if not j.extra or not blocked(j, waiting, running_ids)]


def previous_rounds(state: ClusterState) -> dict[str, int]:
    """Rounds each job has spent in the window so far (the policy's memory)."""
    return dict(state.memory.get("rounds", {})) if state.memory else {}


def force_starving(window: Sequence[Job], prev: dict[str, int], starvation: int | None,
                   can_start: Callable[[set[str]], bool]) -> tuple[set[str], Job | None]:
    """The starvation bound (Section 3.1): in window order, each job that has spent
    ``starvation`` rounds is forced when ``can_start(ids)`` says the jobs ``ids`` (the forced
    ones and it) can start together; the first that cannot is the blocker (it holds the
    reservation and no optimisation happens). Returns (forced ids, blocker or None)."""
    forced: set[str] = set()
    if starvation is None:
        return forced, None
    for j in window:
        if prev.get(j.id, 0) < starvation:
            continue
        if not can_start(forced | {j.id}):
            return forced, j
        forced.add(j.id)
    return forced, None


def rounds(window: Iterable[Job], prev: dict[str, int], started: set[str]) -> dict[str, int]:
    """The memory after this decision: every job of the window not started spent one more
    round there."""
    return {j.id: prev.get(j.id, 0) + 1 for j in window if j.id not in started}


def without_tree(platform: Platform) -> str | None:
    """Why an I/O-aware policy does not apply to ``platform`` (it has no I/O tree), or
    ``None``: the ``unsuited`` of those policies (:mod:`bbopt.policies.promises`)."""
    if isinstance(platform.topology, IOTree):
        return None
    return "needs a platform with an I/O topology (e.g. bbopt.topology.cts1())"


def tree_of(state: ClusterState, policy: str) -> IOTree:
    """The platform's I/O tree, or a clear error naming ``policy`` when it has none."""
    tree = state.platform.topology
    why = without_tree(state.platform)
    if why is not None:
        raise InputError(f"policy {policy!r} {why}", field="topology")
    if tree.nodes != state.platform.nodes:
        raise InputError(f"the I/O topology has {tree.nodes} compute nodes, the platform "
                         f"{state.platform.nodes}", field="topology")
    return tree


# --- decision rules -----------------------------------------------------------------------------

def frac(model: WindowModel, sol: Solution) -> dict[str, float]:
    """A solution's objective values as fractions of their scales (utilisations)."""
    return {n: float(v / s) for n, v, s in zip(model.objectives, sol.objectives, model.scales(),
                                                strict=True)}


def _max_nodes_index(front: Sequence[Solution], model: WindowModel) -> int:
    """The max-node solution; ties: the one nearest the window front, then the most BB."""
    def key(k: int):
        f = frac(model, front[k])
        order_w = float(np.asarray(front[k].x, dtype=bool) @ model.order)
        return (f.get("nodes", 0.0), order_w, f.get("bb", 0.0))

    return max(range(len(front)), key=key)


def _base_and_gains(front: Sequence[Solution], model: WindowModel) -> tuple[int, list[str]]:
    """The max-node solution of a non-empty front and the objectives that count as gains."""
    if not front:
        raise InputError("empty Pareto set")
    gains = [n for n, obj in OBJECTIVES.items() if obj.gain and n in model.objectives]
    return _max_nodes_index(front, model), gains


def bbsched_rule(front: Sequence[Solution], model: WindowModel, factor: float | None = None
                 ) -> int:
    """The paper's decision maker (Sections 3.2.4 and 5): take the max-node solution (ties: the
    one whose jobs are nearest the window front), switch to another Pareto solution if its gain
    exceeds ``factor`` times its node loss (utilisation fractions), the largest such gain. The
    gain sums the objectives the objectives table marks ``gain`` (BB; with SSDs also SSD use and
    the reduction of wasted SSD); ``factor`` is 2 with one gain, 4 with more."""
    base, gains = _base_and_gains(front, model)
    if not gains:
        return base
    if factor is None:
        factor = 2.0 if len(gains) == 1 else 4.0
    fb = frac(model, front[base])
    best, best_gain = base, 0.0
    for k, sol in enumerate(front):
        if k == base:
            continue
        f = frac(model, sol)
        gain = sum(f[n] - fb[n] for n in gains)
        loss = fb.get("nodes", 0.0) - f.get("nodes", 0.0)
        if gain > factor * loss + _EPS and gain > best_gain + _EPS:
            best, best_gain = k, gain
    return best


#: The authors' simulator (CQSim, branch BBSched, ``Cqsim_sim.best_from_ga``): switch when the
#: other objectives' sum is more than CQSIM_GAIN x the max-node solution's and the node
#: utilisation is less than CQSIM_NODE_LOSS below it.
CQSIM_GAIN = 0.3
CQSIM_NODE_LOSS = 0.1


def cqsim_rule(front: Sequence[Solution], model: WindowModel) -> int:
    """The decision maker of the authors' simulator (CQSim's BBSched branch): take the max-node
    solution; switch to another Pareto solution whose sum of the other objectives, as system
    utilisations (what runs plus what the solution starts, over the platform), exceeds the
    max-node solution's by more than 30 % of it while its node utilisation is less than 0.1
    below; of those, the one with the largest sum. Unlike :func:`bbsched_rule` (the paper's
    text: gain > 2 x node loss) the threshold is relative to the BB already in use, so on a
    busy BB a switch needs a large gain, and a node loss up to 0.1 is accepted whatever the
    gain."""
    base, gains = _base_and_gains(front, model)
    if not gains:
        return base
    # The BB in use now, as a fraction of the BB objective's scale (0 for a model without one).
    total, free = getattr(model, "total_bb", None), getattr(model, "free_bb", None)
    used = {"bb": max(float(total) - float(free), 0.0) / model.scales()[
        model.objectives.index("bb")]} if "bb" in gains and total is not None \
        and free is not None else {}

    def system(sol: Solution) -> tuple[float, float]:
        f = frac(model, sol)
        return f.get("nodes", 0.0), sum(f[n] + used.get(n, 0.0) for n in gains)

    nodes_b, sum_b = system(front[base])
    best, best_sum = base, -1.0
    for k, sol in enumerate(front):
        if k == base:
            continue
        nodes_k, sum_k = system(sol)
        if sum_k - sum_b > CQSIM_GAIN * abs(sum_b) + _EPS and \
                nodes_b - nodes_k < CQSIM_NODE_LOSS and sum_k > best_sum + _EPS:
            best, best_sum = k, sum_k
    return best


def max_objective_rule(name: str) -> DecisionRule:
    """A rule taking the solution with the largest ``name`` (ties: nearest the window front)."""
    def rule(front: Sequence[Solution], model: WindowModel) -> int:
        j = model.objectives.index(name)
        return max(range(len(front)), key=lambda k: (
            front[k].objectives[j], float(np.asarray(front[k].x, dtype=bool) @ model.order)))

    return rule


DECISION_RULES: dict[str, DecisionRule] = {
    "bbsched": bbsched_rule,
    "cqsim": cqsim_rule,
    "max-nodes": max_objective_rule("nodes"),
    "max-bb": max_objective_rule("bb"),
}


def rule_of(rule: str | DecisionRule) -> DecisionRule:
    """A rule of :data:`DECISION_RULES` by name, or a site's own callable."""
    if not isinstance(rule, str):
        return rule
    if rule not in DECISION_RULES:
        raise UnknownNameError("decision rule", rule, list(DECISION_RULES))
    return DECISION_RULES[rule]


def pick(front: Sequence[Solution], cands: Candidates, rule: DecisionRule) -> int:
    """The index of the solution ``rule`` chooses in ``front`` (the rule sees selections)."""
    selections = [Solution(cands.selection(s.x), s.objectives) for s in front]
    return int(rule(selections, cands.window))


# --- the report ---------------------------------------------------------------------------------

def report(result: Result | None, cands: Candidates | None, chosen: int, t0: float,
           budget: float, pareto: bool = True, idle: str = "starvation"
           ) -> tuple[SolveStats, tuple[dict[str, Any], ...]]:
    """The decision's :class:`~bbopt.core.SolveStats` and, for a Pareto form, every solution of
    the set (jobs, objective values, utilisations, which one was chosen). ``idle``: the backend
    named when no model was solved."""
    wall = _time.perf_counter() - t0
    if result is None or cands is None:
        return SolveStats(backend=idle, status=Status.FEASIBLE, wall_time=wall,
                          budget=budget), ()
    model = cands.window
    alternatives = []
    if pareto:
        for k, sol in enumerate(result.pareto):
            alternatives.append({
                "jobs": [model.job_ids[i] for i in model.selected(cands.selection(sol.x))],
                "objectives": dict(zip(model.objectives, sol.objectives, strict=True)),
                "utilization": frac(model, sol),
                "chosen": k == chosen,
            })
    objective = result.objective
    if pareto and result.pareto:
        objective = result.pareto[chosen].objectives
    stats = SolveStats(backend=result.backend, status=result.status, objective=objective,
                       bound=result.bound, gap=result.gap, wall_time=wall, budget=budget)
    return stats, tuple(alternatives)
