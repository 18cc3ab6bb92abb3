"""One way to run: a :class:`RunSpec` (workload, platform, policy and options, execution model,
seed, budget mode, measurement interval) and :func:`run`, which assembles it, replays it and
measures it into a :class:`RunRecord`.

``bbopt simulate``, ``bbopt compare`` (with ``--split``), sweeps (every executor) and the Python
API all build their runs here, so the same inputs give the same metrics under the same names
whatever path started them. The measurement follows the papers' evaluations: the job metrics of
Kopanski & Rzadca (Section 4.2), over the interval between the first submission plus a warm-up
and the last submission minus a cool-down as in BBSched's evaluation (Fan et al., Section 4),
the entitlement metrics of Zvi & Oren when the run has entitlements, and the metrics the
execution model adds (``model.metrics``: Herbein et al.'s I/O metrics, Jeannot et al.'s
``xio_*``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from bbopt.core import Job, Platform
from bbopt.errors import InputError

__all__ = ["RunRecord", "RunSpec", "load", "measure", "measurement_interval", "run",
           "with_budget_mode"]

#: Budget mode of a run unless it says otherwise: the same run gives the same jobs.csv on an
#: idle and on a loaded machine (:data:`bbopt.solvers.base.BUDGET_MODES`).
DEFAULT_BUDGET_MODE = "deterministic"


@dataclass(frozen=True)
class RunSpec:
    """What a run is made of (SI units: seconds, bytes).

    ``workload``: a trace file (SWF, Batsim JSON, a bare name looked up in ``$BBOPT_DATA``), a
    ``jeannot:...`` specification, the jobs themselves, or ``None`` for the embedded KTH-like
    workload; ``first`` keeps its first jobs; ``bb`` (``auto``, ``lognormal``, ``none``) and
    ``bb_rules`` say how BB requests are drawn when the trace has none (Kopanski's log-normal
    model with his generator's two rules on Kopanski's platforms); ``preemptable`` and
    ``checkpointable`` mark fractions of the jobs (seeded); ``reader``: options of the file's
    reader (a Kopanski I/O-aware Batsim part's ``io_aware`` and ``checkpoint_factor``,
    :func:`bbopt.workloads.batsim.read_batsim`).
    ``platform``: a name, a file or a :class:`Platform`; ``None`` takes the trace's own (an SWF
    ``BurstBuffer`` header, a Batsim ``nb_res`` with Kopanski's BB per node), else Kopanski's.
    ``policy`` and ``options``: a registered policy and its options, checked before the run;
    ``budget_mode`` reaches every policy that has solver budgets unless ``options`` sets it.
    ``execution`` and ``execution_options``: the execution model by name, or a model object.
    ``warmup`` and ``cooldown``: the measurement interval; ``shares``: the entitlements the run
    is measured against (default: the ``shares`` option, else the workload's own).
    """

    workload: str | Sequence[Job] | None = None
    platform: str | Platform | None = None
    policy: str = "fcfs-bb"
    options: Mapping[str, Any] = field(default_factory=dict)
    execution: Any = None
    execution_options: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    first: int | None = None
    bb: str = "auto"
    bb_rules: bool = True
    preemptable: float | None = None
    checkpointable: float | None = None
    tick: float | None = None
    budget_mode: str = DEFAULT_BUDGET_MODE
    warmup: float = 0.0
    cooldown: float = 0.0
    shares: Any = None
    name: str | None = None
    reader: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class RunRecord:
    """A run's outcome: the simulation record, the execution model that ran it and the metrics
    (job metrics, over the measurement interval when there is one; entitlement metrics; the
    model's own)."""

    spec: RunSpec
    result: Any
    model: Any
    metrics: dict[str, float]


def load(spec: RunSpec) -> tuple[RunSpec, Any]:
    """``spec`` with its workload read (the jobs), its platform built and its name set, and the
    :class:`~bbopt.loading.LoadedWorkload` read (``None`` when ``spec`` held jobs already)."""
    from bbopt.loading import load_platform, read_workload, read_workload_and_platform

    _check_numbers(spec)
    if spec.workload is not None and not isinstance(spec.workload, str):
        jobs = list(spec.workload)
        if spec.first is not None:  # its first jobs in submission order, as of a file
            from bbopt.limits import MAX_JOBS, check_count

            order = sorted(range(len(jobs)), key=lambda k: jobs[k].submit)[
                :check_count(spec.first, "jobs", high=MAX_JOBS)]
            jobs = [jobs[k] for k in sorted(order)]
        platform = spec.platform if isinstance(spec.platform, Platform) else \
            load_platform(spec.platform)
        return replace(spec, workload=_flagged(spec, jobs), platform=platform, first=None,
                       preemptable=None, checkpointable=None,
                       name=spec.name or "workload"), None
    if isinstance(spec.platform, Platform):
        w = read_workload(spec.workload, n_jobs=spec.first, seed=spec.seed, bb=spec.bb,
                          platform=spec.platform, bb_rules=spec.bb_rules, **spec.reader)
        platform = spec.platform
    else:  # the named one, else the one the trace declares (SWF header, Batsim nb_res)
        w, platform = read_workload_and_platform(spec.workload, spec.platform, n_jobs=spec.first,
                                                 seed=spec.seed, bb=spec.bb,
                                                 bb_rules=spec.bb_rules, **spec.reader)
    w.jobs = _flagged(spec, w.jobs)
    execution = spec.execution
    if execution is None and str(spec.workload).startswith("jeannot:"):
        execution = "exclusive-io"  # periodic applications (Jeannot et al.) share an I/O node
    return replace(spec, workload=w.jobs, platform=platform, first=None, execution=execution,
                   preemptable=None, checkpointable=None, name=spec.name or w.name), w


def _flagged(spec: RunSpec, jobs: list[Job]) -> list[Job]:
    """``jobs`` with the preemptable and checkpointable fractions of ``spec`` drawn (a
    checkpointable job is preemptable: at least that fraction is)."""
    if spec.preemptable is None and spec.checkpointable is None:
        return jobs
    from bbopt.workloads.generators.omfs import with_preemption_flags

    ckpt = spec.checkpointable or 0.0
    pre = max(spec.preemptable if spec.preemptable is not None else 0.0, ckpt)
    return with_preemption_flags(jobs, preemptable=pre, checkpointable=ckpt, seed=spec.seed)


def entitled(spec: RunSpec, policies: Sequence[str]) -> tuple[RunSpec, dict[str, float] | None]:
    """``spec`` (loaded) with the workload's own entitlements as the ``shares`` option when
    some of ``policies`` take shares and none are given, and those entitlements (``None`` when
    nothing was added); such a policy with neither is an error
    (:func:`~bbopt.analysis.entitlements.workload_entitlements`)."""
    from bbopt.analysis.entitlements import workload_entitlements

    own = workload_entitlements(policies, spec.options, spec.workload)
    if own is None:
        return spec, None
    return replace(spec, options={**spec.options, "shares": own}), own


def _check_numbers(spec: RunSpec) -> None:
    if isinstance(spec.seed, bool) or not isinstance(spec.seed, int) or spec.seed < 0:
        raise InputError(f"a seed must be an integer >= 0, got {spec.seed!r}", field="seed")
    for key in ("warmup", "cooldown"):
        value = getattr(spec, key)
        if not value >= 0:
            raise InputError(f"must be >= 0 seconds, got {value!r}", field=key)


def with_budget_mode(policy: str, options: Mapping[str, Any], mode: str) -> dict[str, Any]:
    """``options`` with ``budget_mode`` set to ``mode`` for a policy that has solver budgets
    (an explicit ``budget_mode`` option wins)."""
    from bbopt.policies import policy_options

    if isinstance(policy, str) and "budget_mode" in policy_options(policy) \
            and "budget_mode" not in options:
        return {**options, "budget_mode": mode}
    return dict(options)


def execution_model(spec: RunSpec) -> Any:
    """The execution model of ``spec``: a model object as it is, else built by name with its
    options (``rigid`` by default, ``checkpoint`` when only options are given; :func:`load`
    sets ``exclusive-io`` for ``jeannot:...`` workloads)."""
    from bbopt.simulation.execution import make_execution_model

    model = spec.execution
    if model is None and spec.execution_options:
        model = "checkpoint"
    return make_execution_model(model, **dict(spec.execution_options))


def measurement_interval(jobs: Sequence[Job], warmup: float, cooldown: float
                         ) -> tuple[float, float] | None:
    """``(first submission + warmup, last submission - cooldown)`` (the end open without a
    cool-down), or ``None`` when both are 0; an interval holding no submission is an error
    (its metrics would all be NaN: a sped-up replay spanning less than its warm-up)."""
    if warmup <= 0 and cooldown <= 0:
        return None
    submits = [j.submit for j in jobs]
    first, last = min(submits), max(submits)
    a, b = first + warmup, last - cooldown
    if cooldown <= 0:
        b = last + 1.0
    if not any(a <= s < b for s in submits):
        raise InputError(f"a warm-up of {warmup:g} s and a cool-down of {cooldown:g} s leave no "
                         f"submission to measure: the window [{a:g}, {b:g}) s is empty (the "
                         f"workload's submissions span {first:g} to {last:g} s)",
                         field="warmup")
    return a, b


def measure(result: Any, model: Any, spec: RunSpec) -> dict[str, float]:
    """The run's metrics: job metrics (over the measurement interval when there is one, with
    ``measured_from``/``measured_to``), entitlement metrics when the run has entitlements, and
    the execution model's own (``model.metrics``; a name the job metrics have is theirs)."""
    from bbopt.analysis.metrics import summarize
    from bbopt.analysis.table import fairshare_metrics
    from bbopt.units import parse_seconds
    from bbopt.workloads.shares import workload_shares

    metrics = summarize(result)
    for key, value in model.metrics(result).items():
        metrics.setdefault(key, value)
    interval = measurement_interval(result.jobs, spec.warmup, spec.cooldown)
    if interval is not None:
        metrics.update(summarize(result, interval=interval))
        metrics["measured_from"], metrics["measured_to"] = interval
    shares = spec.shares if spec.shares is not None else spec.options.get("shares")
    if shares is None:
        shares = workload_shares(result.jobs)
    if shares is not None:
        quantum = spec.options.get("quantum")  # (None, seconds, or text with a unit: "30min")
        metrics.update(fairshare_metrics(
            result, shares, 1800.0 if quantum is None else parse_seconds(quantum, "quantum")))
    return metrics


def run(spec: RunSpec, *, progress: bool = False,
        on_job_end: Callable[[Any, int], None] | None = None,
        on_decision: Callable[[Any, Any], None] | None = None) -> RunRecord:
    """Load, replay and measure ``spec`` (see :class:`RunSpec`); ``on_decision(state,
    decision)`` observes every decision (the sweep keeps a window policy's Pareto set).

    >>> r = run(RunSpec(first=50, policy="sjf-bb"))
    >>> r.metrics["finished"] + r.metrics["killed"] + r.metrics["rejected"]
    50.0
    """
    from bbopt.policies import make_policy
    from bbopt.simulation import simulate

    spec, _ = load(spec)
    if isinstance(spec.policy, str):
        spec, _ = entitled(spec, [spec.policy])
    options = with_budget_mode(spec.policy, spec.options, spec.budget_mode)
    if isinstance(spec.policy, str):
        make_policy(spec.policy, **options)  # a bad option fails before the run
    measurement_interval(spec.workload, spec.warmup, spec.cooldown)  # ... and an empty interval
    model = execution_model(spec)
    result = simulate(spec.workload, spec.platform, spec.policy, options=options,
                      tick=spec.tick, progress=progress, workload_name=spec.name or "workload",
                      execution=model, on_job_end=on_job_end, on_decision=on_decision)
    return RunRecord(spec, result, model, measure(result, model, spec))


#: A run reports its progress (:func:`run_detached`) this many times at most, plus its end.
REPORTS_PER_RUN = 200


def run_detached(spec: RunSpec, report: Callable[[Any], None] | None = None
                 ) -> tuple[Any, dict[str, float]]:
    """:func:`run` for a worker process: the result without its jobs (the caller has them;
    sending them back cost as much as sending them there) and the metrics. ``report``
    receives ``(policy, finished, total)`` as jobs' records become final: every
    ``total / REPORTS_PER_RUN`` jobs and at the last one (a worker's messages are few)."""
    on_job_end = None
    if report is not None:
        spec, _ = load(spec)  # (its jobs, to count them)
        total = len(spec.workload)
        step = max(1, total // REPORTS_PER_RUN)
        finished = 0

        def on_job_end(_result: Any, _k: int) -> None:
            nonlocal finished
            finished += 1
            if finished % step == 0 or finished == total:
                report((str(spec.policy), finished, total))

    record = run(spec, on_job_end=on_job_end)
    record.result.jobs = []
    return record.result, record.metrics


def for_policy(spec: RunSpec, policy: str) -> RunSpec:
    """``spec`` for ``policy``, with the options of ``spec`` that ``policy`` accepts (several
    policies compared on one set of options)."""
    from bbopt.policies import policy_options

    accepted = policy_options(policy)
    if "**" in accepted:
        return replace(spec, policy=policy)
    return replace(spec, policy=policy,
                   options={k: v for k, v in spec.options.items() if k in accepted})


def check_policies(spec: RunSpec, policies: Sequence[str]) -> None:
    """Refuse before any run what would fail later: an unknown policy, an option no policy of
    ``policies`` accepts (a typo is an error, not an ignored option) or one a policy refuses,
    a bad seed or measurement interval, an unknown execution model or option."""
    from bbopt.policies import make_policy, policy_options

    _check_numbers(spec)
    accepted: set[str] = set()
    for name in policies:
        accepted |= set(policy_options(name))
        one = for_policy(spec, name)
        make_policy(name, **with_budget_mode(name, one.options, spec.budget_mode))
    unknown = sorted(set(spec.options) - accepted)
    if unknown and "**" not in accepted:
        raise InputError(f"no policy among {', '.join(policies)} accepts {', '.join(unknown)}; "
                         f"their options: {', '.join(sorted(accepted)) or 'none'}",
                         field=f"-o {unknown[0]}")
    execution_model(spec)
