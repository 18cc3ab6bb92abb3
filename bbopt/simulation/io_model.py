"""Execution models with I/O: the sorted max-min contention model over the bandwidth tree, and
phased jobs with stage-in, checkpoints, background drains and stage-out.

Length: one fluid simulation (FluidIO) with its contention solver; the two models only say which
flows a job opens.

**Contention** (Herbein et al., HPDC 2016, Section 4.4). At every vertex of the I/O tree
(:mod:`bbopt.topology`) the requests of its children are sorted ascending and child ``i`` of
``n`` gets ``min(req_i, (peak - sum of what children 0..i-1 got) / (n - i))``
(:func:`sorted_shares`). Reading chosen for deeper trees (:func:`contention`): vertices are
processed bottom-up, so a child's request at a vertex is what it actually got below (its flows'
current rates summed); when a child gets less than it asked, its share is divided among its own
flows by the same sorted rule. Flows that start or end at a vertex (a node's own link, a BB node)
are children of their own. A vertex's bandwidth is one pool shared by the flows crossing it in
either direction, as the paper's pools. A synchronous job's rate is the minimum over its nodes,
its interference factor ``I = actual / requested`` (1 without contention).

**Synchronous jobs** (``synchronous=True``, the default). Herbein's Figure 3 job runs "at its
slowest process's rate" (128 MB/s although one process could have 192 MB/s), so the bandwidth a
synchronous job cannot use is not its to hold: a flow's request at a vertex is capped by its
job's bottleneck found at the vertices below (processed first, bottom-up) and, in the end, every
flow of the job runs at the job's rate. Without the cap, the Figure 2-3 tree with a 384 MB/s
network switch gives Job1 I = 0.5 (its third process's unusable 192 MB/s is counted at the
switch, 256 + 192 > 384, and the switch cuts both subtrees to 192); with it, 128 x 3 = 384 fits
and I = 128/192 = 2/3, the paper's value. The job's rate is a single bottom-up pass: what a job
leaves unused at a vertex processed before its bottleneck was found is not handed to others
(exact when a job's bottleneck is at or below the vertices it shares, as in the paper's
examples). ``synchronous=False`` restores the per-flow reading. Rates are recomputed
whenever the set of active flows changes (a fluid model): over an interval ``dt`` a job computes
``I x dt`` and is blocked on I/O for ``(1 - I) x dt`` (the paper's Equation 1).

- :class:`IOContention` (``"io-contention"``): Herbein's model. Every job is one compute phase of
  ``runtime`` seconds (walltime when unknown) during which each of its nodes streams
  ``Job.bandwidth`` bytes/s to the PFS; it ends when its computation is done.
- :class:`PhasedIO` (``"phased-io"``): Kopanski & Rzadca's job model (Euro-Par 2021, Section
  4.1): stage-in of the BB request from the PFS, 1-10 compute phases separated by checkpoints
  written from the compute nodes to the job's BB (computation suspended meanwhile), each
  checkpoint drained from the BB to the PFS in the background while the next phase computes, and
  a stage-out at the end; the job ends when its stage-out and all its drains are done. Transfers
  want as much bandwidth as their path allows and share links by the same contention model. A
  node's share of a transfer goes to the BB node nearest to it in the tree (the node itself when
  the tree has no BB node; such local writes take ``volume / local_bb_bandwidth``, instantaneous by
  default). Compute phases also stream ``Job.bandwidth`` when it is set.

``Job.extra["phases"]`` (optional, SI units) describes a phased job::

    {"compute": [3600.0, 3600.0, 1200.0],   # seconds of computation at full speed, 1-10 phases
     "stage_in": 4.0e10,                      # bytes, PFS -> BB, before the first phase
     "checkpoint": 4.0e10,                    # bytes per checkpoint (or a list, one per gap)
     "stage_out": 4.0e10}                     # bytes, BB -> PFS, after the last phase

The layout written by the workloads generator (``{"model": "kopanski", "compute_phases",
"compute_seconds", "checkpoint_bytes", "stage_in_bytes", "stage_out_bytes"}``) is read too.
Missing keys default from the job: ``compute`` splits the runtime into
``clip(round(runtime / checkpoint_interval), 1, 10)`` equal phases (one an hour, as the workloads
generator does, within Kopanski's 1-10); stage-in, each checkpoint and stage-out move
``Job.bb`` bytes ("the size of the data transfers is equal to the requested burst buffer size").
The total volume of a transfer is split equally over the job's nodes.

``kill_at_walltime`` (default True, as a resource manager does): a job still running at
``start + walltime`` is killed. Herbein's model lets slowed jobs run to completion: pass False.

``stretch`` (default True): a compute phase slowed by contention takes longer (it ends when its
computation is done). ``stretch=False`` is the accounting of Herbein's emulator (Section 4.4:
jobs under contention "perform less computations [...] in the same period of time"; its jobs
replay the elapsed times of the Slurm traces): a compute phase lasts its runtime whatever its
``I``, and contention only shows as computation lost (``blocked``), so an I/O-ignorant schedule
pays for contention in efficiency, not in turnaround -- the reading under which the paper's
turnaround ratio (I/O-aware over I/O-ignorant, up to 1.52) is an "upper bound".

Both models keep per-job statistics (:meth:`FluidIO.job_stats`) read by
:func:`bbopt.simulation.io_metrics.io_summary`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import numpy as np

from bbopt.core import HOUR, Job, JobState, Platform
from bbopt.errors import InputError
from bbopt.simulation.execution import ExecutionModelBase
from bbopt.units import Bandwidth, Seconds

INF = math.inf
_REL = 1e-12

COMPUTE = "compute"
STAGE_IN = "stage_in"
CHECKPOINT = "checkpoint"
DRAIN = "drain"
STAGE_OUT = "stage_out"
#: Phase names in reporting order; ``drain_wait`` is the time between the end of the stage-out
#: and the end of the last drain.
PHASES = (STAGE_IN, COMPUTE, CHECKPOINT, STAGE_OUT, "drain_wait")


def sorted_shares(requests: Sequence[float], peak: float,
                  counts: Sequence[float] | None = None) -> list[float]:
    """Herbein's sorted max-min division of ``peak`` among children (Section 4.4).

    ``requests[i]`` is what child ``i`` asks for; ``counts[i]`` (default 1) says how many equal
    children it stands for, each getting the returned share. Children are served in ascending
    order of request; each gets ``min(request, remaining / children left)``.

    >>> sorted_shares([192e6, 192e6], 256e6)
    [128000000.0, 128000000.0]
    """
    n = len(requests)
    if counts is None:
        counts = [1.0] * n
    left = float(sum(counts))
    remaining = float(peak)
    out = [0.0] * n
    for i in sorted(range(n), key=lambda j: requests[j]):
        c = counts[i]
        share = remaining / left if left > 0 else 0.0
        r = requests[i]
        got = r if r <= share else share
        out[i] = got
        remaining = max(remaining - got * c, 0.0)
        left -= c
    return out


class Flow:
    """``count`` identical flows of ``demand`` bytes/s each over ``hops`` ((vertex, entry child)
    pairs, bottom-up; only vertices of finite bandwidth)."""

    __slots__ = ("demand", "count", "hops", "rate")

    def __init__(self, demand: float, count: float, hops: tuple[tuple[int, int], ...]) -> None:
        self.demand = demand
        self.count = count
        self.hops = hops
        self.rate = demand


def contention(tree: Any, flows: Sequence[Flow],
               jobs: Sequence[Any] | None = None) -> list[float]:
    """The rate of each flow (per unit of its count) under the sorted max-min model.

    ``jobs`` (optional, one key per flow) groups the flows of one synchronous activity: such a
    job advances at its slowest flow's rate, so none of its flows asks an upper vertex for more
    than the job's bottleneck found so far (see the module docstring); at the end every flow of
    the group runs at the group's rate.
    """
    for f in flows:
        f.rate = f.demand
    sync: dict[int, Any] = {}
    low: dict[Any, float] = {}
    if jobs is not None:
        for f, key in zip(flows, jobs, strict=True):
            sync[id(f)] = key
            low[key] = min(low.get(key, INF), f.demand)
    at: dict[int, list[tuple[Flow, int]]] = {}
    for f in flows:
        for v, entry in f.hops:
            lst = at.get(v)
            if lst is None:
                at[v] = [(f, entry)]
            else:
                lst.append((f, entry))
    cap = tree.capacity
    depth = tree.depth
    for v in sorted(at, key=lambda u: (-depth[u], u)):
        items = at[v]
        peak = cap[v]
        total = 0.0
        for f, _ in items:
            if sync:
                key = sync.get(id(f))
                if key is not None and f.rate > low[key]:
                    f.rate = low[key]
            total += f.rate * f.count
        if total <= peak * (1 + 1e-12):
            continue
        groups: dict[int, list[Flow]] = {}
        own: list[Flow] = []
        for f, entry in items:
            if entry < 0:
                own.append(f)
            else:
                groups.setdefault(entry, []).append(f)
        glist = list(groups.values())
        reqs = [sum(f.rate * f.count for f in g) for g in glist] + [f.rate for f in own]
        cnts = [1.0] * len(glist) + [f.count for f in own]
        shares = sorted_shares(reqs, peak, cnts)
        for g, req, got in zip(glist, reqs, shares, strict=False):
            if got >= req * (1 - 1e-12):
                continue
            sub = sorted_shares([f.rate for f in g], got, [f.count for f in g])
            for f, s in zip(g, sub, strict=True):
                f.rate = s
        for f, s in zip(own, shares[len(glist):], strict=True):
            f.rate = s
        if sync:
            for f, _ in items:
                key = sync.get(id(f))
                if key is not None and f.rate < low[key]:
                    low[key] = f.rate
    if sync:
        for f in flows:
            key = sync.get(id(f))
            if key is not None:
                f.rate = low[key]
    return [f.rate for f in flows]


class _Activity:
    """A compute phase (``remaining`` seconds of work, ``speed`` = I) or a transfer
    (``remaining`` bytes per flow, ``speed`` in bytes/s per flow)."""

    __slots__ = ("run", "kind", "remaining", "flows", "speed", "end", "demand")

    def __init__(self, run: _Run, kind: str, remaining: float, flows: list[Flow],
                 demand: float) -> None:
        self.run = run
        self.kind = kind
        self.remaining = remaining
        self.flows = flows
        self.demand = demand  # compute: the per-node stream; transfer: unused
        self.speed = 1.0
        self.end = INF


class _Run:
    __slots__ = ("k", "job", "nodes", "start", "steps", "step", "fg", "drains", "stats")

    def __init__(self, k: int, job: Job, nodes: np.ndarray, start: float,
                 steps: list[tuple[str, float]]) -> None:
        self.k = k
        self.job = job
        self.nodes = nodes
        self.start = start
        self.steps = steps
        self.step = 0
        self.fg: _Activity | None = None
        self.drains: list[_Activity] = []
        self.stats = dict.fromkeys(("computed", "blocked", "interfered", *PHASES, DRAIN), 0.0)


class FluidIO(ExecutionModelBase):
    """The fluid I/O execution model (see the module docstring); use :class:`IOContention` or
    :class:`PhasedIO`."""

    name = "fluid-io"
    phased = False
    #: The phases whose mean time per job the I/O metrics report.
    PHASE_NAMES = (*PHASES, DRAIN)

    def __init__(self, kill_at_walltime: bool = True,
                 checkpoint_interval: Annotated[float, Seconds] = HOUR,
                 max_phases: int = 10, local_bb_bandwidth: Annotated[float, Bandwidth] = INF,
                 synchronous: bool = True, stretch: bool = True) -> None:
        if not checkpoint_interval > 0:
            raise InputError("checkpoint_interval must be positive", field="checkpoint_interval")
        if max_phases < 1:
            raise InputError("max_phases must be >= 1", field="max_phases")
        self.kill_at_walltime = kill_at_walltime
        self.checkpoint_interval = checkpoint_interval
        self.max_phases = int(max_phases)
        self.local_bb_bandwidth = local_bb_bandwidth
        self.synchronous = synchronous
        self.stretch = stretch
        self.reset((), None)

    # ------------------------------------------------------------------ protocol
    def reset(self, jobs: Sequence[Job], platform: Platform | None) -> None:
        self._jobs = jobs
        self.tree = getattr(platform, "topology", None) if platform is not None else None
        if self.tree is not None and not hasattr(self.tree, "finite_path"):
            self.tree = None
        self._runs: dict[int, _Run] = {}
        self._acts: list[_Activity] = []
        self._t = 0.0
        self._dirty = False
        self._stats: dict[int, dict[str, float]] = {}
        self._contended_time = 0.0  # wall time during which some computing job had I < 1
        self._busy_time = 0.0  # wall time during which some job computed
        self._bb_target: dict[int, int | None] = {}
        self.recomputes = 0

    def start(self, k: int, t: float, allocation: tuple[int, ...]) -> None:
        self._advance(t)
        job = self._jobs[k]
        run = _Run(k, job, np.asarray(allocation, dtype=np.int64), t, self._steps(job))
        self._runs[k] = run
        self._next_step(run)
        self._dirty = True

    def next_time(self) -> float:
        if self._dirty:
            self._recompute()
        best = INF
        for a in self._acts:
            if a.end < best:
                best = a.end
        if self.kill_at_walltime:
            for run in self._runs.values():
                d = run.start + run.job.walltime
                if d < best:
                    best = d
        return best

    def finish(self, t: float) -> list[tuple[int, str]]:
        self._advance(t)
        done: list[tuple[int, str]] = []
        for _ in range(10_000):  # zero-length steps may chain at the same instant
            if self._dirty:
                self._recompute()
            ready = [a for a in self._acts if a.end <= t]
            if not ready:
                break
            for a in ready:
                self._complete(a, t)
            self._dirty = True
        for k in sorted(self._runs):
            run = self._runs[k]
            if run.fg is None and not run.drains and run.step >= len(run.steps):
                done.append((k, JobState.FINISHED))
            elif self.kill_at_walltime and run.start + run.job.walltime <= t:
                done.append((k, JobState.KILLED))
        for k, _ in done:
            run = self._runs.pop(k)
            self._acts = [a for a in self._acts if a.run is not run]
            self._stats[k] = dict(run.stats, elapsed=t - run.start)
            self._dirty = True
        if self._dirty:
            self._recompute()
        return done

    # ------------------------------------------------------------------ job structure
    def _steps(self, job: Job) -> list[tuple[str, float]]:
        runtime = job.runtime if job.runtime is not None else job.walltime
        if not self.phased:
            return [(COMPUTE, runtime)]
        spec: Mapping[str, Any] = job.extra.get("phases", {}) if job.extra else {}
        if not isinstance(spec, Mapping):
            raise InputError(f"job {job.id}: extra['phases'] must be a mapping", field="phases")
        if "compute_phases" in spec:  # the layout of bbopt.workloads.generators.kopanski
            spec = {"compute": [float(spec.get("compute_seconds", runtime
                                               / spec["compute_phases"]))]
                    * int(spec["compute_phases"]),
                    "checkpoint": spec.get("checkpoint_bytes", job.bb),
                    "stage_in": spec.get("stage_in_bytes", job.bb),
                    "stage_out": spec.get("stage_out_bytes", job.bb)}
        compute = spec.get("compute")
        if compute is None:
            n = int(min(max(round(runtime / self.checkpoint_interval), 1), self.max_phases))
            compute = [runtime / n] * n
        compute = [float(c) for c in compute]
        if not compute or any(c < 0 for c in compute):
            raise InputError(f"job {job.id}: phases.compute must be non-negative seconds",
                             field="phases")
        ckpt = spec.get("checkpoint", job.bb)
        ckpts = ([float(c) for c in ckpt] if isinstance(ckpt, Sequence)
                 else [float(ckpt)] * (len(compute) - 1))
        if len(ckpts) != len(compute) - 1:
            raise InputError(f"job {job.id}: {len(ckpts)} checkpoints for {len(compute)} "
                             "compute phases", field="phases")
        steps: list[tuple[str, float]] = []
        stage_in = float(spec.get("stage_in", job.bb))
        if stage_in > 0:
            steps.append((STAGE_IN, stage_in))
        for i, c in enumerate(compute):
            steps.append((COMPUTE, c))
            if i < len(ckpts) and ckpts[i] > 0:
                steps.append((CHECKPOINT, ckpts[i]))
        stage_out = float(spec.get("stage_out", job.bb))
        if stage_out > 0:
            steps.append((STAGE_OUT, stage_out))
        return steps

    def _next_step(self, run: _Run) -> None:
        if run.step >= len(run.steps):
            run.fg = None
            return
        kind, amount = run.steps[run.step]
        if kind == COMPUTE:
            act = _Activity(run, COMPUTE, amount, self._stream_flows(run), run.job.bandwidth)
        else:
            act = self._transfer(run, kind, amount)
        run.fg = act
        self._acts.append(act)

    def _stream_flows(self, run: _Run) -> list[Flow]:
        job = run.job
        if job.bandwidth <= 0 or self.tree is None:
            return []
        groups: dict[tuple, int] = {}
        tree = self.tree
        for v in tree.node_vertex[run.nodes]:
            hops = tree.finite_path(int(v))
            groups[hops] = groups.get(hops, 0) + 1
        return [Flow(job.bandwidth, c, hops) for hops, c in groups.items()]

    def _target(self, node_vertex: int) -> int | None:
        hit = self._bb_target.get(node_vertex, -2)
        if hit == -2:
            hit = self.tree.nearest_bb(node_vertex)
            self._bb_target[node_vertex] = hit
        return hit

    def _transfer(self, run: _Run, kind: str, volume: float) -> _Activity:
        per_flow = volume / run.job.nodes
        tree = self.tree
        groups: dict[tuple, int] = {}
        if tree is not None:
            for v in tree.node_vertex[run.nodes]:
                v = int(v)
                bb = self._target(v)
                if kind == CHECKPOINT:
                    hops = tree.finite_path(v, bb) if bb is not None else ()
                else:  # PFS <-> BB (or the node's own BB)
                    hops = tree.finite_path(bb if bb is not None else v)
                groups[hops] = groups.get(hops, 0) + 1
        else:
            groups[()] = run.job.nodes
        flows = []
        for hops, c in groups.items():
            demand = min((float(tree.capacity[h]) for h, _ in hops), default=INF)
            demand = min(demand, self.local_bb_bandwidth) if not hops else demand
            flows.append(Flow(demand, c, hops))
        return _Activity(run, kind, per_flow, flows, 0.0)

    def _complete(self, a: _Activity, t: float) -> None:
        run = a.run
        a.remaining = 0.0
        self._acts.remove(a)
        if a.kind == DRAIN:
            run.drains.remove(a)
            return
        run.fg = None
        run.step += 1
        if a.kind == CHECKPOINT:
            drain = self._transfer(run, DRAIN, run.steps[run.step - 1][1])
            run.drains.append(drain)
            self._acts.append(drain)
        self._next_step(run)

    # ------------------------------------------------------------------ fluid dynamics
    def _recompute(self) -> None:
        self._dirty = False
        self.recomputes += 1
        flows = [f for a in self._acts for f in a.flows]
        if flows and self.tree is not None:
            keys = [id(a) for a in self._acts for _ in a.flows] if self.synchronous else None
            contention(self.tree, flows, keys)
        t = self._t
        for a in self._acts:
            if a.kind == COMPUTE:
                if a.flows:
                    rate = min(f.rate for f in a.flows)
                    speed = min(rate / a.demand, 1.0)
                else:
                    speed = 1.0
            else:
                speed = min((f.rate for f in a.flows), default=INF)
            a.speed = speed
            if a.kind == COMPUTE and not self.stretch:
                speed = 1.0  # the phase lasts its runtime; contention costs computation only
            if a.remaining <= 0 or speed == INF:
                a.end = t
            elif speed <= 0:
                a.end = INF
            else:
                a.end = t + a.remaining / speed

    def _advance(self, t: float) -> None:
        dt = t - self._t
        if dt <= 0:
            return
        if self._dirty:
            self._recompute()
        any_compute = any_contended = False
        for a in self._acts:
            st = a.run.stats
            if a.kind == COMPUTE:
                s = a.speed
                a.remaining = max(a.remaining - (s if self.stretch else 1.0) * dt, 0.0)
                st["computed"] += s * dt
                st["blocked"] += (1.0 - s) * dt
                st[COMPUTE] += dt
                any_compute = True
                if s < 1.0 - 1e-9:
                    st["interfered"] += dt
                    any_contended = True
            else:
                if a.speed < INF:
                    a.remaining = max(a.remaining - a.speed * dt, 0.0)
                st[a.kind] += dt
        for run in self._runs.values():
            if run.fg is None and run.drains and run.step >= len(run.steps):
                run.stats["drain_wait"] += dt
        if any_compute:
            self._busy_time += dt
        if any_contended:
            self._contended_time += dt
        self._t = t

    # ------------------------------------------------------------------ results
    def metrics(self, result: Any) -> dict[str, float]:
        """Herbein et al.'s I/O metrics of the run
        (:func:`~bbopt.simulation.io_metrics.io_summary`)."""
        from bbopt.simulation.io_metrics import io_summary

        return io_summary(result, self)

    def job_stats(self) -> dict[int, dict[str, float]]:
        """Per job index: ``computed`` (s of computation done), ``blocked`` (s blocked on I/O
        during compute phases), ``interfered`` (s with I < 1), ``elapsed``, and the wall time
        spent in each phase (:data:`PHASES`; ``drain`` is background time, overlapping)."""
        return dict(self._stats)

    def contended_time(self) -> tuple[float, float]:
        """(wall time with some computing job at I < 1, wall time with some job computing)."""
        return self._contended_time, self._busy_time


class IOContention(FluidIO):
    """Herbein's model: rigid runtime, per-node PFS streams, sorted max-min contention."""

    name = "io-contention"
    phased = False


class PhasedIO(FluidIO):
    """Kopanski's phased jobs (stage-in, compute/checkpoint, drains, stage-out) with contention."""

    name = "phased-io"
    phased = True
