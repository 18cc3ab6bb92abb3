"""``bbopt bench capture``: record the decision problems policies face in simulations of real
traces, as benchmark instances (:mod:`bbopt.bench.instances`).

Each *family* runs one policy on one workload and records every model the policy hands to a
solver, through a recording backend registered for the model type
(:func:`bbopt.solvers.register_backend`): the decision is still taken by a real backend
(``exhaustive`` up to :data:`EXHAUSTIVE_UP_TO` variables, else ``cpsat``) under a deterministic
budget, so a capture is reproducible. The families (papers' sections in brackets):

- ``window-kth``: BBSched's window (Fan et al., Section 3.2.1) on the first 3,000 jobs of the
  KTH-SP2 trace with Kopanski's log-normal BB on 96 nodes / 480 GB, as a weighted 50/50
  instance and as a Pareto instance (nodes, BB; the front by the solvers' epsilon-constraint);
- ``window-theta``: the same on 2,000 jobs of the Theta-like capability workload (Section 4.1)
  on Theta's 4,392 nodes and 1.26 PB, in WFP order;
- ``io-window-cts1``: the select-and-place window on the I/O tree (Herbein et al., HPDC 2016,
  Section 5; bbopt's exact form) on CTS-1 with 20 % PFS underprovisioning, KTH-like jobs
  scaled to its nodes drawing 18 MB/s per node, weighted 50/50;
- ``pack-jeannot``: the optimal pack (Jeannot, Pallez & Vidal, Section 4) of a batch of
  Uniform-protocol applications with normal I/O (alpha 0.4) on 2,048 nodes behind one
  exclusive I/O node;
- ``plan-kth`` and ``plan-kth-named``: the plan order of Kopanski & Rzadca (Euro-Par 2021,
  Section 3.3; plan-2, sum of squared waits) on the first 1,500 jobs of KTH-SP2 with their
  log-normal BB on 96 nodes, the BB one pool of 480 GB or the authors' 12 named BB nodes of
  40 GB (Section 4.1); the decisions are taken by the paper's annealing;
- ``victims-omfs``: the victim choice of OMFS (Zvi & Oren, Algorithm 1), every job
  checkpointable: KTH-SP2 with four entities for the small tier (a 96-node machine never offers
  more than about 18 candidates), KTH-like jobs on 1,024 nodes with eight entities beyond.

Tiers (:data:`WINDOW`, :data:`IO_WINDOW`, :data:`APPS`, :data:`CANDIDATES`, :data:`QUEUE`):
windows of 20 / 50 / 120 jobs (the medium and large ones under twice the trace's load, submit
times halved: KTH's queue on 96 nodes never holds 50 jobs at its own; I/O windows of 20 / 30 /
50 on 400 / 1,200 / 1,200 jobs), batches of 20 / 60 / 200 applications,
3-16 / 17-40 / 41+ victim candidates, plan queues of 6-10 / 11-16 / 24-60 jobs (exhaustive
search over permutations stops at 16). The window policy runs without its starvation bound (a
window whose forced jobs do not fit together is decided without a model). Of all recorded
models a family keeps the non-trivial ones (not everything fits; at least two window jobs fit
on their own; a plan queue with a job that can start now and candidate orders of different
scores), spread evenly over the run, and solves each with CP-SAT under
:data:`REFERENCE_SECONDS` to record the proven optimum or front (none when it is not proven in
time); a plan on named BB nodes, which CP-SAT's plan model does not place, by the exhaustive
search over permutations.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.bench.instances import PROBLEMS, Instance, tier_dir, write_instance
from bbopt.core import GB, Platform, Status
from bbopt.errors import InputError, UnknownNameError
from bbopt.solvers.base import Budget, register_backend, solve, unregister_backend

#: The name the recording backend is registered under.
CAPTURE = "bench-capture"
#: The real backend behind the recorder: enumeration up to this many variables, else CP-SAT.
EXHAUSTIVE_UP_TO = 12
#: CP-SAT deterministic seconds of a captured decision (the run stays reproducible).
DECISION_WORK = 1.0
#: Wall seconds of the exact solve that records an instance's optimum or front.
REFERENCE_SECONDS = 60.0
KTH = "KTH-SP2-1996-2.1-cln.swf"


@dataclass(frozen=True)
class Family:
    """One source of instances: a policy on a workload, and what to keep of its models."""

    name: str
    problem: str
    about: str
    #: tier -> (jobs, platform, simulate() keyword arguments, provenance)
    setup: Callable[[str, int], tuple[list, Platform, dict[str, Any], dict[str, Any]]]
    forms: tuple[dict[str, Any], ...]
    #: how many instances per tier
    count: dict[str, int]
    #: whether a recorded model is worth keeping for ``tier``
    keep: Callable[[Any, str], bool]


def _kth(n_jobs: int, seed: int, platform: Platform) -> tuple[list, dict[str, Any]]:
    from bbopt.loading import read_workload

    loaded = read_workload(KTH, n_jobs=n_jobs, seed=seed, bb="auto", platform=platform)
    return loaded.jobs, {"trace": KTH, "trace_sha256": loaded.sha256, "jobs": n_jobs,
                         "bb": "Kopanski log-normal"}


#: Window size per tier, and the load factor (submit times divided by it) that gives queues
#: that long: KTH's queue on 96 nodes never holds 50 jobs at its own load.
WINDOW = {"small": 20, "medium": 50, "large": 120}
LOAD = {"small": 1.0, "medium": 2.0, "large": 2.0}
APPS = {"small": 20, "medium": 60, "large": 200}
CANDIDATES = {"small": (3, 16), "medium": (17, 40), "large": (41, 10 ** 9)}
QUEUE = {"small": (6, 10), "medium": (11, 16), "large": (24, 60)}
#: The I/O window's sizes and jobs per tier: CTS-1's queue under twice the load holds about 50
#: jobs of 1,200, never 120 (the placement counts make each job several variables).
IO_WINDOW = {"small": 20, "medium": 30, "large": 50}
IO_JOBS = {"small": 400, "medium": 1200, "large": 1200}


def _loaded(jobs: list, tier: str) -> list:
    from dataclasses import replace

    return jobs if LOAD[tier] == 1.0 else [replace(j, submit=j.submit / LOAD[tier])
                                           for j in jobs]


def _window_options(tier: str, **extra: Any) -> dict[str, Any]:
    # no starvation bound: a window with forced jobs that do not fit together is decided
    # without a model, and under load most windows would be
    return {"window": WINDOW[tier], "budget": 1.0, "budget_mode": "deterministic",
            "starvation": None, **extra}


def _window_kth(tier: str, seed: int):
    platform = Platform.kopanski()
    jobs, prov = _kth(3000, seed, platform)
    return _loaded(jobs, tier), platform, {"policy": "bbsched",
                                           "options": _window_options(tier)}, {
        **prov, "load_factor": LOAD[tier], "platform": "kopanski (96 nodes, 480 GB BB)"}


def _window_theta(tier: str, seed: int):
    from bbopt.workloads.generators.capability import theta_platform
    from bbopt.workloads.generators.catalog import apply

    jobs = apply("capability", None, seed, n_jobs=2000)
    return _loaded(jobs, tier), theta_platform(), {
        "policy": "bbsched", "options": _window_options(tier, order="wfp")}, {
        "trace": "capability (Theta-like, 2000 jobs)", "load_factor": LOAD[tier],
        "platform": "theta (4392 nodes, 1.26 PB)"}


def _pack_jeannot(tier: str, seed: int):
    from bbopt.workloads.generators.catalog import apply

    jobs = apply("jeannot", None, seed, n_apps=APPS[tier], protocol="uniform",
                 io_profile="normal", alpha=0.4)
    options = {"budget": 1.0, "budget_mode": "deterministic"}
    return jobs, Platform(nodes=2048), {"policy": "pack-opt", "options": options,
                                        "execution": "exclusive-io"}, {
        "trace": f"jeannot (uniform, normal I/O, alpha 0.4, {APPS[tier]} applications)",
        "platform": "uniform (2048 nodes, one exclusive I/O node)"}


def _victims_omfs(tier: str, seed: int):
    from bbopt.policies.fairshare import MemorylessFairShare
    from bbopt.workloads.generators.catalog import apply
    from bbopt.workloads.shares import workload_shares

    if tier == "small":  # KTH-SP2 on its 96 nodes: at most 18 candidates
        platform = Platform.kopanski()
        jobs, prov = _kth(2500, seed, platform)
        jobs = apply("omfs-entities", jobs, seed, by="user", n_entities=4, shares="usage")
        prov = {**prov, "entities": "4 by user, usage shares", "platform": "kopanski (96 nodes)"}
    else:  # KTH-like jobs on 1,024 nodes: states with up to ~50 candidates
        platform = Platform(nodes=1024, bb=1024 * 5 * GB)
        jobs = apply("kth-like", None, seed, n_jobs=3000, nodes=1024, load=1.0)
        jobs = apply("omfs-entities", jobs, seed, by="random", n_entities=8, shares="equal")
        prov = {"trace": "kth-like (3000 jobs on 1024 nodes, load 1.0)",
                "entities": "8 random, equal shares", "platform": "1024 nodes, 5 TB BB"}
    jobs = apply("omfs-preemption", jobs, seed, preemptable=1.0, checkpointable=1.0)
    options = {"quantum": 1800, "shares": workload_shares(jobs), "audit": False}
    # the name omfs-opt fixes its backend; the class takes the recorder as any backend name
    return jobs, platform, {"policy": "omfs-opt", "options": options, "tick": 300.0,
                            "execution": "checkpoint", "make": lambda backend: (
                                MemorylessFairShare("omfs-opt", backend=backend, **options))}, prov


def _io_window_cts1(tier: str, seed: int):
    from bbopt.loading import load_platform
    from bbopt.workloads.generators.catalog import apply

    n = IO_JOBS[tier]
    jobs = apply("kth-like", None, seed, n_jobs=n, nodes=121, load=0.95, bb=False)
    jobs = apply("io-rate", apply("scale-nodes", jobs, seed, factor=32), seed, per_node=18e6)
    options = {**_window_options(tier), "window": IO_WINDOW[tier]}
    return _loaded(jobs, tier), load_platform("cts1:0.2"), {
        "policy": "io-window", "options": options, "execution": "io-contention"}, {
        "trace": f"kth-like ({n} jobs, 121 nodes x 32, 18 MB/s per node)",
        "load_factor": LOAD[tier], "platform": "cts1:0.2 (20 % PFS underprovisioning)"}


def _plan(named: bool):
    def setup(tier: str, seed: int):
        platform = Platform.kopanski(named_bb=named)
        jobs, prov = _kth(1500, seed, platform)
        options = {"budget": 1.0, "budget_mode": "deterministic", "seed": seed}
        return _loaded(jobs, tier), platform, {"policy": "plan-2", "options": options}, {
            **prov, "load_factor": LOAD[tier], "platform": "kopanski (96 nodes, 480 GB BB"
            + (" on 12 named BB nodes of 40 GB)" if named else ")")}
    return setup


def _plan_keep(model, tier: str) -> bool:
    """A queue of the tier's length with a job that can start now, whose candidate orders
    do not all score alike (the annealing would not search)."""
    lo, hi = QUEUE[tier]
    if not lo <= model.n <= hi or not model.startable_now():
        return False
    scores = {model.score(order) for _, order in model.candidates()}
    return len(scores) > 1


def _io_window_keep(model, tier: str) -> bool:
    return _window_keep(model.window, tier, IO_WINDOW[tier])


def _window_keep(model, tier: str, size: int | None = None) -> bool:
    """A full window (``size``, default the tier's) where not everything fits and at least two
    jobs fit on their own."""
    if model.size != (size or WINDOW[tier]) or model.feasible(np.ones(model.size, dtype=bool)):
        return False
    return int(np.sum(model.feasible_many(np.eye(model.size, dtype=bool), False))) >= 2


def _pack_keep(model, tier: str) -> bool:
    return model.size >= 0.6 * APPS[tier] and not model.feasible(np.ones(model.size, bool))


def _victims_keep(model, tier: str) -> bool:
    lo, hi = CANDIDATES[tier]
    return lo <= model.size <= hi and model.fallback() is not None  # some victims suffice


#: The front by the solvers' epsilon-constraint steps (not listed by enumeration first).
WINDOW_FORMS = ({"kind": "weighted", "weights": [0.5, 0.5]},
                {"kind": "pareto", "method": "sequential", "two_list": False})

FAMILIES: dict[str, Family] = {f.name: f for f in (
    Family("window-kth", "window", "BBSched's window on KTH-SP2 (Kopanski BB)", _window_kth,
           WINDOW_FORMS, {"small": 10, "medium": 8, "large": 5}, _window_keep),
    Family("window-theta", "window", "BBSched's window on the Theta-like capability workload",
           _window_theta, WINDOW_FORMS, {"small": 10, "medium": 8, "large": 5}, _window_keep),
    Family("io-window-cts1", "io-window", "Herbein's select-and-place window on CTS-1",
           _io_window_cts1, ({"kind": "weighted", "weights": [0.5, 0.5]},),
           {"small": 6, "medium": 4, "large": 3}, _io_window_keep),
    Family("pack-jeannot", "pack", "optimal packs of Jeannot's Uniform/Normal applications",
           _pack_jeannot, ({"kind": "stages"},), {"small": 8, "medium": 5, "large": 3},
           _pack_keep),
    Family("plan-kth", "plan", "Kopanski's plan order (plan-2) on KTH-SP2, pooled BB",
           _plan(False), ({"kind": "min-score"},), {"small": 8, "medium": 6, "large": 4},
           _plan_keep),
    Family("plan-kth-named", "plan", "Kopanski's plan order (plan-2) on KTH-SP2, 12 named "
           "BB nodes", _plan(True), ({"kind": "min-score"},),
           {"small": 6, "medium": 4, "large": 3}, _plan_keep),
    Family("victims-omfs", "victims", "OMFS victim choice (KTH-SP2; KTH-like on 1,024 nodes "
           "beyond the small tier)", _victims_omfs, ({"kind": "min-cost"},),
           {"small": 10, "medium": 8, "large": 6}, _victims_keep),
)}


def _decision_backend(model: Any) -> str:
    from bbopt.models.io_window import IOWindowModel
    from bbopt.models.plan import PlanModel

    if isinstance(model, PlanModel):  # the paper's search, as the policy takes it
        return "annealing"
    if isinstance(model, IOWindowModel):  # enumerating placements costs far more
        return "cpsat"
    return "exhaustive" if model.size <= EXHAUSTIVE_UP_TO else "cpsat"


def record_models(family: Family, tier: str, seed: int = 0
                  ) -> tuple[list[tuple[Any, float, int, int, dict | None]], dict[str, Any]]:
    """Run the family's simulation and return every model its policy solved, with the
    simulated time, the decision's index, the model's index within the decision and the
    model's JSON when the model does not keep all of it (a plan on named BB nodes: the running
    jobs' pieces), and the provenance."""
    from bbopt.simulation.engine import simulate

    jobs, platform, run, prov = family.setup(tier, seed)
    seen: list[tuple[Any, float, int, int, dict | None]] = []
    pending: list[Any] = []
    decisions = [0]
    budget = Budget.of(DECISION_WORK, mode="deterministic")

    def recorder(model, _budget, rseed, **options):
        pending.append(model)
        return solve(model, _decision_backend(model), budget, rseed, **options)

    def on_decision(state, _decision):
        for k, m in enumerate(pending):  # a decision may solve several models (one per job)
            seen.append((m, float(state.time), decisions[0], k, model_source(m, state)))
        pending.clear()
        decisions[0] += 1

    model_type = PROBLEMS[family.problem][0]
    register_backend(model_type, CAPTURE)(recorder)
    try:
        if "make" in run:
            policy, options = run["make"](CAPTURE), None
        else:
            policy, options = run["policy"], {**run["options"], "backend": CAPTURE}
        simulate(jobs, platform, policy, options=options, on_decision=on_decision,
                 tick=run.get("tick"), execution=run.get("execution"))
    finally:  # the recorder serves this capture only
        unregister_backend(model_type, CAPTURE)
    shown = {k: v for k, v in run["options"].items() if k != "shares"}
    prov = {**prov, "policy": run["policy"], "options": shown, "seed": seed,
            "execution": run.get("execution", "rigid")}
    return seen, prov


def model_source(model: Any, state: Any) -> dict[str, Any] | None:
    """The JSON of a plan model on named BB nodes (its running jobs' pieces come from the
    state, as :meth:`PlanModel.from_state` takes them); ``None`` for the others."""
    from bbopt.bench.instances import plan_to_json
    from bbopt.models.plan import PlanModel
    from bbopt.planner.pieces import running_pieces

    if not isinstance(model, PlanModel) or model.named is None:
        return None
    held = running_pieces(state)
    return plan_to_json(model, [(r.start + r.job.walltime, r.job.nodes, r.job.bb,
                                 held.get(r.job.id, ())) for r in state.running])


def reference(instance: Instance, seconds: float = REFERENCE_SECONDS) -> dict[str, Any]:
    """The proven optimum (scalar forms) or exact front (Pareto form) of ``instance``, by
    CP-SAT under ``seconds`` (a plan on named BB nodes by the exhaustive search over
    permutations); empty when it is not proven in time."""
    budget = Budget(seconds)
    exact = "exhaustive" if getattr(instance.model, "named", None) is not None else "cpsat"
    t0 = _time.perf_counter()
    try:
        res = solve(instance.model, exact, budget, 0, **instance.solve_options())
    except Exception:  # noqa: BLE001 - beyond the exact backend's reach: no proven optimum
        return {}
    took = _time.perf_counter() - t0
    if res.status is not Status.OPTIMAL:
        return {}
    known: dict[str, Any] = {"status": "optimal", "by": exact, "seconds": round(took, 3)}
    if instance.kind == "pareto":
        known["front"] = [list(s.objectives) for s in res.pareto]
        return known
    known["objective"] = instance.score(res.solution)
    if instance.problem == "plan":  # the plan's starts, and its order when it has one
        known["starts"] = list(res.solution.starts)
        if res.solution.order is not None:
            known["x"] = list(res.solution.order)
        return known
    x = np.asarray(res.solution)  # a selection, or the I/O window's count matrix
    known["x"] = (x.astype(int) if x.dtype == bool else x).tolist()
    return known


def capture(family_names: list[str] | None = None, tiers: tuple[str, ...] = ("small",),
            out: str | Path | None = None, seed: int = 0, solve_known: bool = True,
            log: Callable[[str], None] = lambda s: None) -> list[Path]:
    """Capture the instances of ``family_names`` (default: all) for ``tiers`` into
    ``out/<tier>/`` (default: the library folder); returns the files written."""
    names = list(family_names or FAMILIES)
    for n in names:
        if n not in FAMILIES:
            raise UnknownNameError("instance family", n, list(FAMILIES))
    written: list[Path] = []
    for tier in tiers:
        directory = tier_dir(tier, out)
        for name in names:
            fam = FAMILIES[name]
            t0 = _time.perf_counter()
            seen, prov = record_models(fam, tier, seed)
            kept = [s for s in seen if fam.keep(s[0], tier)]
            if not kept:
                raise InputError(f"family {name} recorded no instance for tier {tier}")
            picks = np.unique(np.linspace(0, len(kept) - 1, fam.count[tier]).round().astype(int))
            log(f"{name} [{tier}]: {len(seen)} models, {len(kept)} kept, {len(picks)} picked "
                f"({_time.perf_counter() - t0:.1f} s)")
            for k in picks:
                model, when, decision, nth, source = kept[k]
                for form in fam.forms:
                    iid = f"{name}-{tier}-d{decision:05d}-{nth}-{form['kind']}"
                    inst = Instance(iid, fam.problem, model, dict(form), tier,
                                    {**prov, "time": when, "decision": decision,
                                     "model_of_decision": nth}, source=source)
                    if solve_known:
                        inst.known = reference(inst)
                    written.append(write_instance(inst, directory))
                    log(f"  {iid}: size {inst.size}, "
                        f"{'optimum ' + inst.kind if inst.known else 'no proven optimum'}")
    return written
