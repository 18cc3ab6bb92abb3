"""Memoryless fair share with checkpoint/restart preemption (Zvi & Oren, OMFS) against the
schemes it replaces, on the KTH-SP2 trace: does OMFS keep every entity's entitlement while using
the machine like EASY, and what does it cost?

    python benchmarks/omfs_study.py [--jobs 4000] [--out DIR] [--full]

Workloads: the KTH trace (Kopanski's 96-node platform with log-normal BB requests, jobs over 96
nodes dropped) with its user ids folded into 4 entities with usage-proportional shares
(``assign_entities(by="user", n_entities=4, shares="usage")``), the same jobs given 4 random
entities with equal shares (the generator's synthetic entities), and the first workload without
BB requests (entitlements are in nodes: how much of the entitlement wait is the BB's?). Every
job is preemptable (a trace has no such flag; a non-preemptable job larger than its entity's
entitlement could never run under Algorithm 1); ``checkpointable`` is the swept share. Killed
jobs are dropped (Algorithm 1).

Sweep for ``omfs``: quantum (0, 5 min, 30 min, 2 h) x checkpoint cost (memory per node /
PFS bandwidth per node: 8 GB / 1 GB/s = 8 s, 64 GB / 1 GB/s = 64 s, 256 GB / 0.5 GB/s = 512 s)
x checkpointable share (0, 50 %, 100 %). ``omfs-opt`` (exact victims) at the 30 min
quantum, every cost and share, with the cost saved against Algorithm 1's greedy victims on the
same states; ``omfs-over`` = ``omfs`` with ``protect="over"`` (victims' entities need only be over
their entitlement before each eviction) at 30 min and the mid cost. Baselines once per
workload: ``partition``, ``capping``, ``fair-share`` and ``sjf-bb`` (no preemption).
Preemptive runs schedule every ``--tick`` seconds (default 300) as well, so that an entity whose
victims are still within their quantum is served when it ends.

For the reference setting (30 min quantum, mid cost, every job checkpointable) the study also
records why entities wait below their entitlement (:class:`DeprivationCauses`).

Output: a table (stdout and ``omfs_study.csv``), a closing note per workload (the verdict read
off the runs), ``omfs_util_vs_satisfaction.png`` (one point
per policy and setting) and ``omfs_cr_vs_quantum.png``. ``--full`` runs the whole trace
(28k jobs; about an hour on a shared 2-core machine); the default is the first ``--jobs``.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _data import data_path  # noqa: E402

from bbopt import Platform, runs  # noqa: E402
from bbopt.analysis.fairshare_metrics import (  # noqa: E402
    fairshare_summary,
    satisfaction_episodes,
)
from bbopt.core import GB, HOUR, MINUTE  # noqa: E402
from bbopt.policies import make_policy  # noqa: E402
from bbopt.policies.fairshare import entity_of  # noqa: E402
from bbopt.simulation.checkpoint import CheckpointRestart  # noqa: E402
from bbopt.workloads.bb import with_lognormal_bb  # noqa: E402
from bbopt.workloads.generators.omfs import assign_entities, with_preemption_flags  # noqa: E402
from bbopt.workloads.shares import entitled_nodes  # noqa: E402
from bbopt.workloads.swf import read_swf  # noqa: E402

QUANTA = (0.0, 5 * MINUTE, 30 * MINUTE, 2 * HOUR)
COSTS = {"low": (8 * GB, 1 * GB), "mid": (64 * GB, 1 * GB), "high": (256 * GB, 0.5 * GB)}
SHARES = (0.0, 0.5, 1.0)
BASELINES = ("partition", "capping", "fair-share", "sjf-bb")
#: The tick of the preemptive runs, also the baselines' bound of "served in time".
REF_TICK = 300.0


def workloads(n_jobs: int | None, seed: int):
    trace = read_swf(data_path("KTH-SP2-1996-2.1-cln.swf"), max_nodes=96, oversize="drop")
    jobs = with_lognormal_bb(trace.jobs if n_jobs is None else trace.jobs[:n_jobs], seed=seed)
    users, user_shares = assign_entities(jobs, by="user", n_entities=4, shares="usage",
                                         seed=seed)
    rand, rand_shares = assign_entities(jobs, by="random", n_entities=4, shares="equal",
                                        seed=seed)
    # the same users without BB requests: how much of the entitlement wait is the BB's?
    nobb = [replace(j, bb=0.0) for j in users]
    return {"kth-users": (users, user_shares), "kth-random": (rand, rand_shares),
            "kth-users-nobb": (nobb, user_shares)}


#: Why an entity waits below its entitlement under ``omfs`` (:class:`DeprivationCauses`).
CAUSES = ("quantum", "protection", "bb", "no_victims", "next")


class DeprivationCauses:
    """Time-weighted causes of deprivation under ``omfs``: after each decision, every entity
    with a waiting job within its entitlement (``nodes <= entitled - held``) that the decision
    neither started nor claimed is deprived, until the next decision, because of the first that
    applies to its first such job: ``next`` (victims exist now: another job of the decision took
    them), ``quantum`` (victims would exist without the quantum), ``protection`` (they would
    also exist if victim entities could end below their entitlement, ``protect="over"``), ``bb``
    (nodes could be freed but not the job's BB: entitlements are in nodes), ``no_victims``."""

    def __init__(self, shares, quantum: float) -> None:
        self.shares = shares
        self.policy = make_policy("omfs", shares=shares, quantum=quantum)
        self.free_q = make_policy("omfs", shares=shares, quantum=0.0)
        self.over = make_policy("omfs", shares=shares, quantum=0.0, protect="over")
        self.time = {c: 0.0 for c in CAUSES}
        self.last: tuple[float, list[str]] = (0.0, [])

    def __call__(self, state, decision) -> None:
        t0, causes = self.last
        for c in causes:
            self.time[c] += state.time - t0
        entitled = entitled_nodes(self.shares, state.platform.nodes)
        held: dict[str, int] = {}
        for r in state.running:
            if not r.job.extra.get("evicting"):
                held[entity_of(r.job)] = held.get(entity_of(r.job), 0) + r.job.nodes
        free_n, free_b = state.free()
        free = SimpleNamespace(nodes=free_n, bb=free_b)
        taken = set(decision.started_ids) | set(decision.memory.get("claims", {}))
        seen: set[str] = set()
        now: list[str] = []
        for job in state.queue:
            u = entity_of(job)
            if u in seen or job.id in taken or job.nodes > entitled.get(u, 0) - held.get(u, 0):
                continue
            seen.add(u)
            args = (state, job, free, entitled, held)
            if self.policy.model_for(*args)[0].greedy() is not None:
                now.append("next")
            elif self.free_q.model_for(*args)[0].greedy() is not None:
                now.append("quantum")
            else:
                over = self.over.model_for(*args)[0]
                if over.greedy() is not None:
                    now.append("protection")
                elif replace(over, need_bb=0.0).greedy() is not None:
                    now.append("bb")
                else:
                    now.append("no_victims")
        self.last = (state.time, now)

    def shares_of_time(self) -> dict[str, float]:
        total = sum(self.time.values())
        return {c: (v / total if total else 0.0) for c, v in self.time.items()}


def run(jobs, shares, policy, *, quantum=None, cost="mid", tick=None, protect="strict",
        causes=False):
    mem, bw = COSTS[cost]
    options = {} if policy == "sjf-bb" else {"shares": shares}
    if policy.startswith("omfs"):
        options.update(quantum=quantum, memory_per_node=mem, checkpoint_bandwidth=bw)
        if protect != "strict":
            options["protect"] = protect
    audit = {"solve": [], "cost": 0.0, "greedy": 0.0, "evictions": 0, "better": 0,
             "greedy_none": 0}

    def watch(state, decision):
        for alt in decision.alternatives:
            audit["solve"].append(alt["solve_time"])
            audit["evictions"] += 1
            g = alt.get("greedy_cost", alt["cost"])
            if not np.isfinite(g):  # Algorithm 1's rule finds no cover, the exact one does
                audit["greedy_none"] += 1
                continue
            audit["cost"] += alt["cost"]
            audit["greedy"] += g
            audit["better"] += int(alt["cost"] < g - 1e-9)

    model = CheckpointRestart(memory_per_node=mem, pfs_bandwidth=bw)
    t0 = time.perf_counter()
    why = DeprivationCauses(shares, quantum) if causes else None
    spec = runs.RunSpec(workload=jobs, platform=Platform.kopanski(), policy=policy,
                        options=options, execution=model, budget_mode="wall",
                        tick=tick if policy.startswith("omfs") else None, shares=shares)
    res = runs.run(spec, on_decision=watch if policy == "omfs-opt" else why).result
    wall = time.perf_counter() - t0
    q = quantum if quantum is not None else 30 * MINUTE
    m = fairshare_summary(res, shares, quantum=q)
    # What OMFS can promise: a victim must have run a quantum, then writes its checkpoint, and
    # the policy looks again at the next event or tick. Baselines: the reference setting's bound.
    bound = q + mem / bw + (tick if tick is not None else REF_TICK)
    entitled = {e: int(np.floor(s_ * res.platform.nodes + 1e-9)) for e, s_ in shares.items()}
    lengths = np.array([t1 - t0 for _, t0, t1 in satisfaction_episodes(res, entitled)])
    within_bound = float(np.mean(lengths <= bound + 1e-9)) if len(lengths) else 1.0
    row = {
        "policy": policy, "quantum_min": (quantum / 60 if quantum is not None else ""),
        "cost": cost if policy.startswith("omfs") else "",
        "utilisation": m["utilisation"], "cr_overhead": m["cr_overhead"],
        "sat_p50_min": m["satisfaction"]["p50"] / 60, "sat_p95_min": m["satisfaction"]["p95"] / 60,
        "sat_max_h": m["satisfaction"]["max"] / 3600,
        "sat_within_quantum": m["satisfaction"].get("within_quantum", ""),
        "sat_within_bound": within_bound, "bound_min": bound / 60,
        "episodes": m["satisfaction"]["episodes"], "mean_wait_h": m["mean_wait"] / 3600,
        "mean_bsld": m["mean_bounded_slowdown"], "checkpoints": m["checkpoints"],
        "kills": m["kills"], "dropped": m["dropped"], "thrashing": m["thrashing_jobs"],
        "lost_node_h": m["lost_node_hours"], "cr_node_h": m["cr_node_hours"],
        "share_shortfall": m["share_shortfall_max"], "seconds": wall,
    }
    if why is not None:
        row.update({f"deprived_{c}": v for c, v in why.shares_of_time().items()})
    if policy == "omfs-opt":
        solve = np.array(audit["solve"]) if audit["solve"] else np.zeros(1)
        row.update(victim_p95_ms=1000 * float(np.percentile(solve, 95)),
                   cost_saved_node_h=(audit["greedy"] - audit["cost"]) / 3600,
                   victim_choices=audit["evictions"], better_than_greedy=audit["better"],
                   greedy_found_none=audit["greedy_none"])
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=4000, help="first N jobs of the trace")
    ap.add_argument("--full", action="store_true", help="the whole trace")
    ap.add_argument("--tick", type=float, default=REF_TICK)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workloads", default="kth-users,kth-random,kth-users-nobb")
    ap.add_argument("--out", default="omfs_study")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    loads = workloads(None if args.full else args.jobs, args.seed)
    rows = []
    for name in args.workloads.split(","):
        jobs, shares = loads[name]
        print(f"# {name}: {len(jobs)} jobs, shares "
              + ", ".join(f"{e}={s:.2f}" for e, s in sorted(shares.items())), flush=True)
        for policy in BASELINES:
            rows.append({"workload": name, "ckpt_share": "", **run(jobs, shares, policy)})
            _show(rows[-1])
        for share in SHARES:
            flagged = with_preemption_flags(jobs, preemptable=1.0, checkpointable=share,
                                            seed=args.seed)
            for cost in COSTS:
                for quantum in QUANTA:
                    ref = quantum == 30 * MINUTE and cost == "mid" and share == 1.0
                    rows.append({"workload": name, "ckpt_share": share,
                                 **run(flagged, shares, "omfs", quantum=quantum, cost=cost,
                                       tick=args.tick, causes=ref)})
                    _show(rows[-1])
                rows.append({"workload": name, "ckpt_share": share,
                             **run(flagged, shares, "omfs-opt", quantum=30 * MINUTE, cost=cost,
                                   tick=args.tick)})
                _show(rows[-1])
            # Algorithm 1's looser reading of "over-entitled" victims (protect="over")
            row = run(flagged, shares, "omfs", quantum=30 * MINUTE, cost="mid", tick=args.tick,
                      protect="over")
            rows.append({"workload": name, "ckpt_share": share, **row, "policy": "omfs-over"})
            _show(rows[-1])
    keys = list(dict.fromkeys(k for r in rows for k in r))
    with (out / "omfs_study.csv").open("w", newline="") as fh:
        w = csv.DictWriter(fh, keys, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    _plots(rows, out)
    print(f"wrote {out / 'omfs_study.csv'} and two plots to {out}")
    _table(rows)
    for name in args.workloads.split(","):
        print(closing_note(rows, name))


#: Columns of the printed table.
TABLE = (("workload", "{}"), ("policy", "{}"), ("quantum_min", "{}"), ("cost", "{}"),
         ("ckpt_share", "{}"), ("utilisation", "{:.3f}"), ("sat_p50_min", "{:.1f}"),
         ("sat_p95_min", "{:.0f}"), ("sat_within_quantum", "{:.2f}"),
         ("sat_within_bound", "{:.2f}"), ("share_shortfall", "{:.3f}"),
         ("cr_overhead", "{:.4f}"), ("lost_node_h", "{:.0f}"), ("checkpoints", "{}"),
         ("kills", "{}"), ("thrashing", "{}"), ("mean_wait_h", "{:.2f}"))


def _table(rows) -> None:
    """The whole sweep as a Markdown table."""
    print("| " + " | ".join(k for k, _ in TABLE) + " |")
    print("|" + "---|" * len(TABLE))
    for r in rows:
        cells = []
        for k, fmt in TABLE:
            v = r.get(k, "")
            cells.append(fmt.format(v) if v != "" else "")
        print("| " + " | ".join(cells) + " |")


def closing_note(rows, workload: str) -> str:
    """Does OMFS reach EASY-like utilisation while serving entitlements within about one
    quantum, and what does it cost? Read from the rows of ``workload``: ``omfs`` at the paper's
    30 min quantum, mid checkpoint cost, against ``sjf-bb`` (EASY with BB) and the baselines."""
    def pick(policy, **kw):
        for r in rows:
            if r["workload"] == workload and r["policy"] == policy and all(
                    r.get(k) == v for k, v in kw.items()):
                return r
        return None

    easy = pick("sjf-bb")
    if easy is None:
        return f"{workload}: no sjf-bb run, no verdict"
    lines = [f"## {workload}: closing note"]
    for share in SHARES:
        o = pick("omfs", quantum_min=30.0, cost="mid", ckpt_share=share)
        if o is None:
            continue
        ratio = o["utilisation"] / easy["utilisation"] if easy["utilisation"] else float("nan")
        lines.append(
            f"- omfs, 30 min quantum, {int(100 * share)} % checkpointable: utilisation "
            f"{100 * o['utilisation']:.1f} % ({ratio:.2f}x sjf-bb's {100 * easy['utilisation']:.1f}"
            f" %); entitlement served within one quantum in {100 * o['sat_within_quantum']:.0f} % "
            f"of the episodes ({100 * o['sat_within_bound']:.0f} % within quantum + checkpoint + "
            f"tick = {o['bound_min']:.0f} min), p50 {o['sat_p50_min']:.1f} min, p95 "
            f"{o['sat_p95_min']:.0f} min; cost: C/R {100 * o['cr_overhead']:.2f} % of capacity, "
            f"{o['lost_node_h']:.0f} node-h lost, {o['kills']} kills, {o['thrashing']} jobs "
            f"evicted more than 3 times")
    for pol in ("partition", "capping", "fair-share", "sjf-bb"):
        b = pick(pol)
        if b is not None:
            lines.append(f"- {pol}: utilisation {100 * b['utilisation']:.1f} %, served within "
                         f"30 min in {100 * b['sat_within_quantum']:.0f} % of the episodes, p50 "
                         f"{b['sat_p50_min']:.1f} min, p95 {b['sat_p95_min']:.0f} min")
    over = pick("omfs-over", ckpt_share=1.0)
    if over is not None:
        lines.append(
            f"- omfs-over (the paper's looser victims), 100 % checkpointable: utilisation "
            f"{100 * over['utilisation']:.1f} %, served within quantum + checkpoint + tick in "
            f"{100 * over['sat_within_bound']:.0f} % of the episodes, p95 "
            f"{over['sat_p95_min']:.0f} min, mean wait {over['mean_wait_h']:.2f} h")
    best = pick("omfs", quantum_min=30.0, cost="mid", ckpt_share=1.0)
    if best is not None and "deprived_bb" in best:
        lines.append("- why entities wait below their entitlement (omfs, 30 min, 100 % "
                     "checkpointable; share of deprived entity-time): " + ", ".join(
                         f"{c} {100 * best[f'deprived_{c}']:.0f} %" for c in CAUSES))
    if best is not None:
        easy_like = best["utilisation"] >= 0.95 * easy["utilisation"]
        in_time = best["sat_within_bound"] >= 0.9
        lines.append(
            f"- verdict: with every job checkpointable, OMFS "
            f"{'reaches' if easy_like else 'does not reach'} EASY-like utilisation (within 5 % "
            f"of sjf-bb) and {'serves' if in_time else 'does not serve'} 90 % of the "
            f"entitlement episodes within about one quantum (quantum + checkpoint + tick)")
    return "\n".join(lines)


def _show(r) -> None:
    extra = ""
    if r["policy"] == "omfs-opt":
        extra = (f" victim p95 {r['victim_p95_ms']:.1f} ms, saved {r['cost_saved_node_h']:.1f} "
                 f"node-h over {r['victim_choices']} choices ({r['better_than_greedy']} cheaper, "
                 f"{r['greedy_found_none']} where greedy found none)")
    print(f"{r['workload']:10s} {r['policy']:10s} q={r['quantum_min']!s:>5s} "
          f"cost={r['cost']!s:4s} ckpt={r['ckpt_share']!s:3s} util={r['utilisation']:.3f} "
          f"cr={r['cr_overhead']:.4f} sat p50/p95/max={r['sat_p50_min']:.1f}m/"
          f"{r['sat_p95_min']:.1f}m/{r['sat_max_h']:.1f}h within-q={r['sat_within_quantum']!s:.5s} "
          f"wait={r['mean_wait_h']:.2f}h ckpts={r['checkpoints']} kills={r['kills']} "
          f"thrash={r['thrashing']} lost={r['lost_node_h']:.0f}nh {r['seconds']:.1f}s{extra}",
          flush=True)


def _plots(rows, out: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib missing: no plots", file=sys.stderr)
        return
    names = sorted({r["workload"] for r in rows})
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.5), squeeze=False)
    markers = {"omfs": "o", "omfs-opt": "*", "omfs-over": "P", "partition": "s", "capping": "D",
               "fair-share": "^", "sjf-bb": "v"}
    for ax, name in zip(axes[0], names, strict=True):
        for pol, mk in markers.items():
            pts = [r for r in rows if r["workload"] == name and r["policy"] == pol]
            if pts:
                ax.scatter([100 * r["utilisation"] for r in pts],
                           [max(r["sat_p95_min"], 0.01) for r in pts], marker=mk, label=pol,
                           alpha=0.7)
        ax.set_yscale("log")
        ax.set_xlabel("useful node utilisation [%]")
        ax.set_ylabel("entitlement satisfaction p95 [min]")
        ax.set_title(name)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "omfs_util_vs_satisfaction.png", dpi=120)
    plt.close(fig)
    fig, axes = plt.subplots(1, len(names), figsize=(6 * len(names), 4.5), squeeze=False)
    for ax, name in zip(axes[0], names, strict=True):
        for cost in COSTS:
            for share in SHARES[1:]:
                pts = sorted((r["quantum_min"], 100 * r["cr_overhead"]) for r in rows
                             if r["workload"] == name and r["policy"] == "omfs"
                             and r["cost"] == cost and r["ckpt_share"] == share)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                            label=f"{cost} cost, {int(100 * share)} % ckpt")
        ax.set_xscale("symlog", linthresh=5)
        ax.set_xlabel("quantum [min]")
        ax.set_ylabel("C/R node-time [% of capacity]")
        ax.set_title(name)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "omfs_cr_vs_quantum.png", dpi=120)
    plt.close(fig)


if __name__ == "__main__":
    main()
