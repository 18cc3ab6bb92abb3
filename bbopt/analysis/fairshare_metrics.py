"""Fair-share metrics of a simulation record (Zvi & Oren, OMFS: "each entity gets at least its
entitlement of CPUs when it has the suitable workload for it").

Read from :class:`~bbopt.simulation.result.SimulationResult` only (its run segments and
preemption accounting), so every policy -- preemptive or not -- is measured the same way:

- utilisation: useful node-time (work that counted) over ``nodes x (last end - first submit)``;
  the node-time spent checkpointing and restarting and the lost work are reported apart;
- per entity: mean wait (first start - submit), mean bounded slowdown (first start to final end,
  bound 10 min), share of the useful node-time received against the entitlement;
- entitlement satisfaction: an entity is *deprived* while one of its jobs waits that fits within
  its entitlement next to what it holds (``job.nodes <= entitled - held``); each maximal deprived
  interval is one episode, its length the time from when the demand within the entitlement
  appeared to when the entity held it. Reported: p50 / p95 / max over all episodes, and the
  fraction of episodes served within one quantum;
- checkpoints, restarts, kills, jobs dropped, C/R node-time, lost node-time, and thrashing (jobs
  evicted more than 3 times).
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Mapping
from typing import Any

import numpy as np

from bbopt.workloads.shares import entitled_nodes

THRASHING_EVICTIONS = 3


def _entity(job) -> str:
    return job.user if job.user is not None else "unknown"


def _time_of(event: tuple) -> float:
    return event[0]


def satisfaction_episodes(result, entitled: Mapping[str, int]) -> list[tuple[str, float, float]]:
    """Deprived intervals ``(entity, start, end)`` (see the module docstring)."""
    segs: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for jid, t0, t1, _ in result.segments:
        segs[jid].append((t0, t1))
    # events: (time, entity, d_held, waiting change (size, +1/-1)); every event of an instant
    # is applied before the entities it touched are looked at, so their order does not matter
    events: list[tuple[float, str, int, int, int]] = []
    for job in result.jobs:
        e = _entity(job)
        if e not in entitled or job.id not in segs:
            continue
        wait_from = job.submit
        for t0, t1 in segs[job.id]:
            if t0 > wait_from:
                events.append((wait_from, e, 0, job.nodes, +1))
                events.append((t0, e, 0, job.nodes, -1))
            events.append((t0, e, job.nodes, 0, 0))
            events.append((t1, e, -job.nodes, 0, 0))
            wait_from = t1
    events.sort(key=_time_of)
    held: Counter = Counter()
    waiting: dict[str, Counter] = defaultdict(Counter)
    since: dict[str, float] = {}
    out: list[tuple[str, float, float]] = []
    i = 0
    while i < len(events):
        t = events[i][0]
        touched = set()
        while i < len(events) and events[i][0] == t:
            _, e, dh, size, dw = events[i]
            held[e] += dh
            if dw:
                waiting[e][size] += dw
                if waiting[e][size] == 0:
                    del waiting[e][size]
            touched.add(e)
            i += 1
        for e in touched:
            room = entitled[e] - held[e]
            deprived = bool(waiting[e]) and min(waiting[e]) <= room
            if deprived:
                since.setdefault(e, t)
            elif e in since:
                out.append((e, since.pop(e), t))
    return out


def fairshare_summary(result, shares: Mapping[str, float], quantum: float | None = None
                      ) -> dict[str, Any]:
    """Utilisation, per-entity service and entitlement satisfaction of one run."""
    nodes = result.platform.nodes
    entitled = entitled_nodes(shares, nodes)
    by_id = {j.id: j for j in result.jobs}
    seg_len: dict[str, float] = defaultdict(float)
    for jid, t0, t1, _ in result.segments:
        seg_len[jid] += t1 - t0
    pre = result.preemption
    useful: dict[str, float] = defaultdict(float)  # node-seconds per entity
    cr = lost = 0.0
    checkpoints = restarts = kills = thrashing = 0
    for jid, length in seg_len.items():
        job = by_id[jid]
        p = pre.get(jid)
        work = p["work_done"] if p is not None else length
        useful[_entity(job)] += job.nodes * work
        if p is not None:
            cr += job.nodes * (p["checkpoint_time"] + p["restart_time"])
            lost += job.nodes * p["lost_work"]
            checkpoints += int(p["checkpoints"])
            restarts += int(p["restarts"])
            kills += int(p["kills"])
            thrashing += int(p["evictions"] > THRASHING_EVICTIONS)
    submits = [j.submit for j in result.jobs]
    ends = [x for x in result.end if not math.isnan(x)]
    span = (max(ends) - min(submits)) if ends else 0.0
    capacity = nodes * span if span > 0 else math.nan
    total_useful = sum(useful.values())
    states = Counter(result.state)
    per_entity: dict[str, dict[str, float]] = {}
    waits: dict[str, list[float]] = defaultdict(list)
    bslds: dict[str, list[float]] = defaultdict(list)
    for k, job in enumerate(result.jobs):
        if result.state[k] == "rejected" or math.isnan(result.start[k]):
            continue
        e = _entity(job)
        wait = result.start[k] - job.submit
        run = max(result.end[k] - result.start[k], 0.0)
        waits[e].append(wait)
        bslds[e].append(max((wait + run) / max(run, 600.0), 1.0))
    for e in sorted(set(waits) | set(shares)):
        per_entity[e] = {
            "entitlement": float(shares.get(e, 0.0)),
            "node_time_share": useful.get(e, 0.0) / total_useful if total_useful else 0.0,
            "mean_wait": float(np.mean(waits[e])) if waits[e] else 0.0,
            "mean_bounded_slowdown": float(np.mean(bslds[e])) if bslds[e] else 0.0,
            "jobs": float(len(waits[e])),
        }
    episodes = satisfaction_episodes(result, entitled)
    lengths = np.array([t1 - t0 for _, t0, t1 in episodes], dtype=float)
    sat = {
        "episodes": float(len(lengths)),
        "p50": float(np.percentile(lengths, 50)) if len(lengths) else 0.0,
        "p95": float(np.percentile(lengths, 95)) if len(lengths) else 0.0,
        "max": float(lengths.max()) if len(lengths) else 0.0,
    }
    if quantum is not None:
        sat["within_quantum"] = (float(np.mean(lengths <= quantum + 1e-9)) if len(lengths)
                                 else 1.0)
    all_waits = [w for ws in waits.values() for w in ws]
    all_bsld = [b for bs in bslds.values() for b in bs]
    return {
        "utilisation": total_useful / capacity if capacity == capacity else 0.0,
        "cr_overhead": cr / capacity if capacity == capacity else 0.0,
        "cr_node_hours": cr / 3600.0,
        "lost_node_hours": lost / 3600.0,
        "checkpoints": checkpoints, "restarts": restarts, "kills": kills,
        "dropped": states.get("dropped", 0), "thrashing_jobs": thrashing,
        "mean_wait": float(np.mean(all_waits)) if all_waits else 0.0,
        "mean_bounded_slowdown": float(np.mean(all_bsld)) if all_bsld else 0.0,
        "satisfaction": sat,
        "share_shortfall_max": max((max(v["entitlement"] - v["node_time_share"], 0.0)
                                    for v in per_entity.values()), default=0.0),
        "entities": per_entity,
    }
