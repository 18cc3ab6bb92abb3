"""``bbopt bench capture``: record the decision problems policies face in simulations of real
traces, as benchmark instances (:mod:`bbopt.bench.instances`).

Each *family* runs one policy on one workload and records every model the policy hands to a
solver, through a recording backend registered for the model type (:func:`bbopt.solvers.
register_backend`): the decision is still taken by a real backend (``exhaustive`` up to
:data:`EXHAUSTIVE_UP_TO` variables, else ``cpsat``) under a deterministic budget, so a capture
is reproducible. The families (papers' sections in brackets):

- ``window-kth``: BBSched's window (Fan et al., Section 3.2.1) on the KTH-SP2 trace with
  Kopanski's log-normal BB on 96 nodes / 480 GB, as a weighted 50/50 instance and as a Pareto
  instance (nodes, BB);
- ``window-theta``: the same on the Theta-like capability workload (Section 4.1) on Theta's
  4,392 nodes and 1.26 PB;
- ``pack-jeannot``: the optimal pack (Jeannot, Pallez & Vidal, Section 4) of a batch of
  Uniform-protocol applications with normal I/O on 2,048 nodes behind one exclusive I/O node;
- ``victims-omfs``: the victim choice of OMFS (Zvi & Oren, Algorithm 1) on KTH with four
  entities, every job checkpointable.

The tiers differ by the window / batch size (``small`` is solved exactly in seconds, ``large``
makes the exact solvers time out); the victim choice is tiered by its number of candidates.
Out of all recorded models a family keeps the non-trivial ones (not everything fits), spread
evenly over the run, and solves each with an exact backend under :data:`REFERENCE_SECONDS` to
record the proven optimum or front.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bbopt.bench.instances import PROBLEMS, Instance, tier_dir, write_instance
from bbopt.core import Platform, Status
from bbopt.errors import InputError, UnknownNameError
from bbopt.solvers.base import Budget, register_backend, solve

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


WINDOW = {"small": 16, "medium": 50, "large": 120}
APPS = {"small": 18, "medium": 60, "large": 200}
CANDIDATES = {"small": (3, 16), "medium": (17, 40), "large": (41, 10 ** 9)}


def _window_kth(tier: str, seed: int):
    platform = Platform.kopanski()
    jobs, prov = _kth(1500, seed, platform)
    options = {"window": WINDOW[tier], "budget": 1.0, "budget_mode": "deterministic"}
    return jobs, platform, {"policy": "bbsched", "options": options}, {
        **prov, "platform": "kopanski (96 nodes, 480 GB BB)"}


def _window_theta(tier: str, seed: int):
    from bbopt.workloads.generators.capability import theta_platform
    from bbopt.workloads.generators.catalog import apply

    jobs = apply("capability", None, seed, n_jobs=600)
    options = {"window": WINDOW[tier], "budget": 1.0, "budget_mode": "deterministic",
               "order": "wfp"}
    return jobs, theta_platform(), {"policy": "bbsched", "options": options}, {
        "trace": "capability (Theta-like, 600 jobs)", "platform": "theta (4392 nodes, 1.26 PB)"}


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
    from bbopt.workloads.generators.catalog import apply
    from bbopt.workloads.shares import workload_shares

    platform = Platform.kopanski()
    jobs, prov = _kth(2500, seed, platform)
    jobs = apply("omfs-entities", jobs, seed, by="user", n_entities=4, shares="usage")
    jobs = apply("omfs-preemption", jobs, seed, preemptable=1.0, checkpointable=1.0)
    from bbopt.policies.fairshare import MemorylessFairShare

    options = {"quantum": 1800, "shares": workload_shares(jobs), "audit": False}
    # the name omfs-opt fixes its backend; the class takes the recorder as any backend name
    return jobs, platform, {"policy": "omfs-opt", "options": options, "tick": 300.0,
                            "execution": "checkpoint", "make": lambda backend: (
                                MemorylessFairShare("omfs-opt", backend=backend, **options))}, {
        **prov, "entities": "4 by user, usage shares", "platform": "kopanski (96 nodes)"}


def _window_keep(model, tier: str) -> bool:
    """A full window where not everything fits and at least two jobs fit on their own."""
    if model.size != WINDOW[tier] or model.feasible(np.ones(model.size, dtype=bool)):
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
           WINDOW_FORMS, {"small": 6, "medium": 6, "large": 4}, _window_keep),
    Family("window-theta", "window", "BBSched's window on the Theta-like capability workload",
           _window_theta, WINDOW_FORMS, {"small": 6, "medium": 6, "large": 4}, _window_keep),
    Family("pack-jeannot", "pack", "optimal packs of Jeannot's Uniform/Normal applications",
           _pack_jeannot, ({"kind": "stages"},), {"small": 6, "medium": 4, "large": 3},
           _pack_keep),
    Family("victims-omfs", "victims", "OMFS victim choice on KTH-SP2 with four entities",
           _victims_omfs, ({"kind": "min-cost"},), {"small": 8, "medium": 6, "large": 4},
           _victims_keep),
)}


def _decision_backend(model: Any) -> str:
    return "exhaustive" if model.size <= EXHAUSTIVE_UP_TO else "cpsat"


def record_models(family: Family, tier: str, seed: int = 0
                  ) -> tuple[list[tuple[Any, float, int]], dict[str, Any]]:
    """Run the family's simulation and return every model its policy solved, with the
    simulated time and the decision's index, and the provenance."""
    from bbopt.simulation.engine import simulate

    jobs, platform, run, prov = family.setup(tier, seed)
    seen: list[tuple[Any, float, int]] = []
    pending: list[Any] = []
    decisions = [0]
    budget = Budget.of(DECISION_WORK, mode="deterministic")

    def recorder(model, _budget, rseed, **options):
        pending.append(model)
        return solve(model, _decision_backend(model), budget, rseed, **options)

    def on_decision(state, _decision):
        for m in pending:
            seen.append((m, float(state.time), decisions[0]))
        pending.clear()
        decisions[0] += 1

    register_backend(PROBLEMS[family.problem][0], CAPTURE)(recorder)
    if "make" in run:
        policy, options = run["make"](CAPTURE), None
    else:
        policy, options = run["policy"], {**run["options"], "backend": CAPTURE}
    simulate(jobs, platform, policy, options=options, on_decision=on_decision,
             tick=run.get("tick"), execution=run.get("execution"))
    shown = {k: v for k, v in run["options"].items() if k != "shares"}
    prov = {**prov, "policy": run["policy"], "options": shown, "seed": seed,
            "execution": run.get("execution", "rigid")}
    return seen, prov


def reference(instance: Instance, seconds: float = REFERENCE_SECONDS) -> dict[str, Any]:
    """The proven optimum (scalar forms) or exact front (Pareto form) of ``instance``, by
    CP-SAT under ``seconds``; empty when it is not proven in time."""
    budget = Budget(seconds)
    t0 = _time.perf_counter()
    res = solve(instance.model, "cpsat", budget, 0, **instance.solve_options())
    took = _time.perf_counter() - t0
    if res.status is not Status.OPTIMAL:
        return {}
    known: dict[str, Any] = {"status": "optimal", "by": "cpsat", "seconds": round(took, 3)}
    if instance.kind == "pareto":
        known["front"] = [list(s.objectives) for s in res.pareto]
        return known
    known["objective"] = instance.score(res.solution)
    known["x"] = np.asarray(res.solution, dtype=bool).astype(int).tolist()
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
                model, when, decision = kept[k]
                for form in fam.forms:
                    iid = f"{name}-{tier}-d{decision:05d}-{form['kind']}"
                    inst = Instance(iid, fam.problem, model, dict(form), tier,
                                    {**prov, "time": when, "decision": decision})
                    if solve_known:
                        inst.known = reference(inst)
                    written.append(write_instance(inst, directory))
                    log(f"  {iid}: size {model.size}, "
                        f"{'optimum ' + inst.kind if inst.known else 'no proven optimum'}")
    return written
