"""The checks every registered policy must pass, in the spirit of scikit-learn's
``parametrize_with_checks``: platform kinds, small seeded random workloads, and one check per
property of a replay (each takes the record of one run and asserts)."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from bbopt import Job, Platform, simulate
from bbopt.core import ClusterState, Decision, JobState
from bbopt.policies.promises import Promise, promise_of
from bbopt.topology.alloc import BandwidthLedger
from tests import _platforms

GB = 1e9

#: One small platform of each kind the engine knows (tests/_platforms.py).
PLATFORMS: dict[str, Platform] = _platforms.PLATFORMS

SEEDS = (0, 1)


def workload(kind: str, seed: int, n: int = 14) -> list[Job]:
    """``n`` jobs submitted within 30 s, walltimes 1-20 s, some ending early and some killed
    at their walltime, a few too large for the platform; periodic I/O (``extra["io"]``) on
    every job, so that I/O-aware list and pack policies can plan them too."""
    rng = random.Random(f"{kind}/{seed}")
    platform = PLATFORMS[kind]
    jobs = []
    for k in range(n):
        walltime = rng.randint(1, 20)
        nodes = rng.randint(1, platform.nodes + (1 if k == 0 else 0))
        bb = float(rng.randint(0, 100)) * GB if platform.bb > 0 else 0.0
        ssd = float(rng.choice([0, 0, 50, 100])) * GB if kind == "ssd" else 0.0
        bandwidth = float(rng.choice([0, 50e6, 100e6])) if kind == "io-tree" else 0.0
        io = {"iterations": rng.randint(1, 3), "compute_seconds": float(walltime) / 4,
              "io_bytes": float(rng.randint(1, 5)) * 1e8, "io_bandwidth": 1e9}
        jobs.append(Job(str(k), float(rng.randint(0, 30)), float(walltime),
                        float(rng.randint(0, walltime + 2)), nodes, bb, ssd=ssd,
                        bandwidth=bandwidth, extra={"io": io}))
    return jobs


@dataclass
class Run:
    """One replay and every decision taken in it."""

    platform: Platform
    jobs: list[Job]
    policy: object
    result: object = None
    decisions: list[tuple[ClusterState, Decision]] = field(default_factory=list)


def replay(policy, kind: str, seed: int) -> Run:
    run = Run(PLATFORMS[kind], workload(kind, seed), policy)
    run.result = simulate(run.jobs, run.platform, policy,
                          on_decision=lambda s, d: run.decisions.append((s, d)))
    return run


def check_no_start_refused(run: Run) -> None:
    """Every start the policy decided was admitted by the engine's ledger."""
    assert run.result.refused_starts == 0


def check_no_job_lost(run: Run) -> None:
    """Every job ends finished, killed at its walltime, or rejected because it can never fit;
    none starts before its submission, and each runs for min(runtime, walltime)."""
    res = run.result
    for k, job in enumerate(res.jobs):
        state = res.state[k]
        assert state in (JobState.FINISHED, JobState.KILLED, JobState.REJECTED), (job.id, state)
        if state == JobState.REJECTED:
            assert run.platform.why_never_fits(job) is not None or (
                run.platform.topology is not None
                and run.platform.topology.why_never_fits(job.nodes, job.bandwidth)), job.id
            continue
        assert res.start[k] >= job.submit, job.id
        assert res.end[k] - res.start[k] == min(job.runtime, job.walltime), job.id
        assert (state == JobState.KILLED) == (job.runtime > job.walltime), job.id


def check_capacities(run: Run) -> None:
    """At no instant do running jobs hold more nodes or BB than exist, share a node, or sit on
    a node with less local SSD than they ask; under an I/O-aware policy, none charges a link of
    the I/O tree beyond its bandwidth either (ends before starts at equal times: boundaries are
    exact)."""
    res, platform = run.result, run.platform
    io_aware = getattr(run.policy, "io_aware", False)
    events = []
    for k in range(len(res.jobs)):
        if res.state[k] in (JobState.FINISHED, JobState.KILLED) and res.end[k] > res.start[k]:
            events.append((res.start[k], 1, k))
            events.append((res.end[k], 0, k))
    events.sort()
    bandwidth = BandwidthLedger(platform.topology) if platform.topology and io_aware else None
    nodes, bb, busy = 0, 0.0, set()
    for _, starts, k in events:
        job, alloc = res.jobs[k], res.allocation[k]
        assert len(alloc) == job.nodes and len(set(alloc)) == job.nodes, job.id
        if starts:
            nodes += job.nodes
            bb += job.bb
            assert busy.isdisjoint(alloc), (job.id, alloc)
            busy.update(alloc)
            if job.ssd > 0:
                assert all(platform.node_ssd[x] >= job.ssd for x in alloc), job.id
            if bandwidth is not None:
                assert bandwidth.charge(job, alloc) is None, job.id
        else:
            nodes -= job.nodes
            bb -= job.bb
            busy.difference_update(alloc)
            if bandwidth is not None:
                bandwidth.release(job, alloc)
        assert nodes <= platform.nodes
        assert bb <= platform.bb * (1 + 1e-9)


def _reservations(run: Run) -> dict[str, list[tuple[float, float]]]:
    """Per job, the ``(decision time, planned start)`` of every reservation it was given."""
    out: dict[str, list[tuple[float, float]]] = {}
    for state, decision in run.decisions:
        for r in decision.reservations:
            out.setdefault(r.job_id, []).append((state.time, r.start))
    return out


def _starts(run: Run) -> dict[str, float]:
    return {job.id: run.result.start[k] for k, job in enumerate(run.result.jobs)
            if run.result.state[k] != JobState.REJECTED}


def check_never_delayed(run: Run) -> None:
    """Each new reservation of a job is no later than its previous one, and the job starts no
    later than its first."""
    starts = _starts(run)
    for job_id, log in _reservations(run).items():
        planned = [t for _, t in log]
        assert all(b <= a for a, b in zip(planned, planned[1:], strict=False)), (job_id, log)
        assert starts[job_id] <= planned[0], (job_id, log, starts[job_id])


def check_starts_as_planned(run: Run) -> None:
    """A job starts no later than the last reservation made for it before its start."""
    starts = _starts(run)
    for job_id, log in _reservations(run).items():
        before = [t for at, t in log if at < starts[job_id]]
        if before:
            assert starts[job_id] <= before[-1], (job_id, log, starts[job_id])


PROMISE_CHECKS = {
    Promise.NONE: (),
    Promise.HEAD_NEVER_DELAYED: (check_never_delayed,),
    Promise.RESERVATIONS_NEVER_DELAYED: (check_never_delayed,),
    Promise.STARTS_AS_PLANNED: (check_starts_as_planned,),
}
COMMON_CHECKS = (check_no_start_refused, check_no_job_lost, check_capacities)


def checks_of(policy) -> tuple:
    """The checks ``policy`` must pass: the common ones and those of its declared promise."""
    return COMMON_CHECKS + PROMISE_CHECKS[promise_of(policy)]
