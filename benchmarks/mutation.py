"""Mutation testing of the promised rules: how many plausible bugs does the fast suite catch?

Each mutant below is a small, realistic bug in one rule the papers or the README promise (the
EASY variants and conservative backfilling of Kopanski & Rzadca, Section 3.2; BBSched's decision
rule and starvation bound, Fan et al., Sections 3.1 and 3.2.4; the plan model and its annealing,
Kopanski & Rzadca, Section 3.3; Herbein's sorted max-min contention; the metrics' definitions;
the trace readers and Kopanski's BB generator rules; first-fit placement on named BB nodes;
the engine's idle gate; OMFS's eviction rules; Jeannot et al.'s list and pack scheduling; the
sweep's results store; the Slurm bridge's checks). For every mutant the script copies
``bbopt/``, ``tests/``, ``examples/`` and ``experiments/`` (plus ``pyproject.toml``,
``README.md`` and the scripts of ``benchmarks/``) into a fresh temporary directory, replaces one
exact snippet of one file, runs the fast suite there (``pytest -q -x -m "not slow"``) and records
whether a test failed (killed) or not (survived). A snippet that is no longer found exactly once
is reported as ``stale`` (the code moved; the mutant needs updating), never silently skipped.

Standard library only; a benchmark, not part of the test suite. Typical use::

    BBOPT_DATA=/path/to/data nohup python benchmarks/mutation.py --jobs 2 \
        --out mutation.md > mutation.log 2>&1 &

``--full`` runs the whole suite instead of the fast one (to check that the fast suite kills
everything the full suite kills); ``--only NAME[,NAME]`` runs some mutants; ``--list`` prints
them.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Mutant:
    """One planted bug: ``original`` (found exactly once in ``file``) becomes ``replacement``.
    ``also`` lists ``(file, original, replacement)`` forms of the same bug in other versions of
    the code (tried in order when the first is not found), so one list serves a tree that is
    being re-laid out."""

    name: str
    file: str
    original: str
    replacement: str
    breaks: str
    also: tuple[tuple[str, str, str], ...] = ()


M = Mutant
#: Where the window policies' shared rules (decision maker, starvation bound) live.
WC = "bbopt/policies/window_common.py"
MUTANTS: list[Mutant] = [
    # --- resources: availability profiles -------------------------------------------------
    M("profile-closed-segments", "bbopt/resources.py",
      "if i == k or times[i] >= end:", "if i == k or times[i] > end:",
      "a job ending at t frees its resources for a job starting at t (half-open segments)"),
    M("profile-ignores-bb", "bbopt/resources.py",
      "row = free[i]\n            if row[0] < need0 or row[1] < need1:",
      "row = free[i]\n            if row[0] < need0:",
      "earliest fit needs nodes and burst buffer free together"),
    M("profile-reserve-half", "bbopt/resources.py",
      "row[d] -= demand[d]", "row[d] -= demand[d] / 2",
      "a reservation takes its whole demand"),
    M("profile-release-nothing", "bbopt/resources.py",
      "row[d] += amount[d]", "row[d] += 0.0 * amount[d]",
      "release gives back what reserve took"),
    M("shadow-scan-skips-last-release", "bbopt/resources.py",
      "        if k == n:\n            return math.inf",
      "        if k >= n - 1:\n            return math.inf",
      "the shadow-time scan hands out every release, the last one too",
      also=(("bbopt/resources.py", "        if fits():\n            return max(t, now)",
             "        if fits() and r is not None:\n            return max(t, now)"),)),
    M("shadow-started-free-now", "bbopt/policies/queue.py",
      "mine = sorted([(now + j.walltime, j.nodes, j.bb) for j in started], key=_first)",
      "mine = sorted([(now, j.nodes, j.bb) for j in started], key=_first)",
      "jobs started now hold their resources until now + walltime in the shadow-time scan",
      also=(("bbopt/policies/queue.py",
             "ends.extend(Release(now + j.walltime, j.nodes, j.bb) for j in started)",
             "ends.extend(Release(now, j.nodes, j.bb) for j in started)"),)),
    M("shadow-releases-unsorted", "bbopt/policies/queue.py",
      "    ends.sort(key=_release_time)\n", "",
      "the shadow-time scan sees the expected ends in time order (just-started jobs included)",
      also=(("bbopt/policies/queue.py", "            free_n += n\n            free_b += b\n"
             "            i += 1", "            i += 1"),)),
    M("profile-releases-from-now", "bbopt/resources.py",
      "releases = [(r.start + r.job.walltime, (r.job.nodes, r.job.bb))",
      "releases = [(state.time + r.job.walltime, (r.job.nodes, r.job.bb))",
      "running jobs free their resources at start + walltime"),
    # --- queue policies (Kopanski & Rzadca, Algorithm 1) ----------------------------------
    M("sjf-longest-first", "bbopt/policies/queue.py",
      "key=_walltime) if free_n > 0 else ()",
      "key=_walltime, reverse=True) if free_n > 0 else ()",
      "sjf-bb takes backfill candidates shortest walltime first"),
    M("sjf-named-longest-first", "bbopt/policies/queue.py",
      "rest = sorted(rest, key=_walltime)\n",
      "rest = sorted(rest, key=_walltime, reverse=True)\n",
      "sjf-bb on named BB nodes takes backfill candidates shortest walltime first"),
    M("easy-reserves-bb", "bbopt/policies/queue.py",
      "need_b = head.bb if reserve_bb else 0.0", "need_b = head.bb",
      "fcfs-easy reserves processors only (the head can act as a barrier)",
      also=(("bbopt/policies/queue.py", "(head.bb if reserve_bb else 0.0)", "head.bb"),)),
    M("bb-variants-forget-bb", "bbopt/policies/queue.py",
      "need_b = head.bb if reserve_bb else 0.0", "need_b = 0.0",
      "fcfs-bb / sjf-bb reserve the head's burst buffer with its processors",
      also=(("bbopt/policies/queue.py", "(head.bb if reserve_bb else 0.0)", "0.0"),)),
    M("backfill-ignores-shadow", "bbopt/policies/queue.py",
      "late = now + job.walltime > shadow", "late = False",
      "a backfilled job may not delay the head's reservation"),
    M("backfill-shadow-boundary", "bbopt/policies/queue.py",
      "late = now + job.walltime > shadow", "late = now + job.walltime >= shadow",
      "a job ending exactly at the shadow time does not delay the head"),
    M("backfill-extra-off-by-one", "bbopt/policies/queue.py",
      "if late and (n > extra_n or", "if late and (n > extra_n + 1 or",
      "a late backfilled job only uses the nodes the head leaves at the shadow time"),
    M("shadow-extra-not-reduced", "bbopt/policies/queue.py",
      "return max(t, now), free_n - need_n, free_b - need_b",
      "return max(t, now), free_n, free_b",
      "the head's own nodes and BB are not extra at the shadow time",
      also=(("bbopt/policies/queue.py",
             "return (t if t > now else now), free_n - need_n, free_b - need_b",
             "return (t if t > now else now), free_n, free_b"),
            ("bbopt/policies/queue.py", "return shadow, free[0] - need_n, free[1] - need_b",
             "return shadow, free[0], free[1]"))),
    M("fcfs-skips-blocked", "bbopt/policies/queue.py",
      "            i += 1\n        else:\n            break",
      "            i += 1\n        else:\n            continue",
      "fcfs stops at the first job that does not fit"),
    M("filler-stops-at-first", "bbopt/policies/queue.py",
      "                if free_n == 0:\n                    break\n        return",
      "                if free_n == 0:\n                    break\n            else:\n"
      "                break\n        return",
      "filler starts every job that fits, in queue order"),
    M("conservative-forgets", "bbopt/policies/conservative.py",
      'previous: dict[str, float] = state.memory.get("reservations", {})',
      'previous: dict[str, float] = state.memory.get("reservation", {})',
      "conservative-bb keeps its reservations between decisions (never delayed)"),
    M("conservative-no-compression", "bbopt/policies/conservative.py",
      "if start < old:  # moved up: its old slot is given back",
      "if False:  # moved up: its old slot is given back",
      "conservative-bb moves reservations earlier when jobs end early"),
    M("conservative-depth-off-by-one", "bbopt/policies/conservative.py",
      "if n_planned < depth:", "if n_planned <= depth:",
      "conservative-bb gives reservations to exactly `depth` jobs"),
    M("conservative-stuck-ignores-walltime", "bbopt/policies/conservative.py",
      "need0 >= s0 and need1 >= s1 and walltime >= sw", "need0 >= s0 and need1 >= s1",
      "a reservation skipped after one that could not move needs as much and runs as long"),
    M("freed-reach-past-old", "bbopt/policies/freed_slots.py",
      "return b if b < old else old", "return b",
      "the scan for an earlier start stops at the reservation's own start"),
    # --- window model, solvers and BBSched policy (Fan et al.) ----------------------------
    M("bbsched-factor-1x", "bbopt/policies/window.py",
      "factor = 2.0 if len(gains) == 1 else 4.0", "factor = 1.0 if len(gains) == 1 else 4.0",
      "BBSched switches only if the BB gain exceeds 2x the node loss",
      also=((WC, "factor = 2.0 if len(gains) == 1 else 4.0",
             "factor = 1.0 if len(gains) == 1 else 4.0"),)),
    M("bbsched-rule-no-loss", "bbopt/policies/window.py",
      'loss = fb.get("nodes", 0.0) - f.get("nodes", 0.0)', "loss = 0.0",
      "the decision rule weighs the node loss",
      also=((WC, 'loss = fb.get("nodes", 0.0) - f.get("nodes", 0.0)', "loss = 0.0"),)),
    M("starvation-counter-reset", "bbopt/policies/window.py",
      "rounds = {j.id: prev.get(j.id, 0) + 1 for j",
      "rounds = {j.id: 1 for j",
      "the starvation counter grows across rounds",
      also=((WC, "{j.id: prev.get(j.id, 0) + 1 for j", "{j.id: 1 for j"),)),
    M("starvation-threshold-strict", "bbopt/policies/window.py",
      "prev.get(j.id, 0) >= self.starvation]", "prev.get(j.id, 0) > self.starvation]",
      "a job that spent `starvation` rounds in the window is forced",
      also=((WC, "if prev.get(j.id, 0) < starvation:",
             "if prev.get(j.id, 0) <= starvation:"),)),
    M("window-one-too-many", "bbopt/policies/window.py",
      "window = eligible[:self.window]", "window = eligible[:self.window + 1]",
      "the window holds `window` jobs",
      also=(("bbopt/policies/window.py", "window = jobs[:self.window]",
             "window = jobs[:self.window + 1]"),)),
    M("max-nodes-tiebreak-back", "bbopt/policies/window.py",
      'return (f.get("nodes", 0.0), order_w, f.get("bb", 0.0))',
      'return (f.get("nodes", 0.0), -order_w, f.get("bb", 0.0))',
      "ties between max-node solutions go to the jobs nearest the window front",
      also=((WC, 'return (f.get("nodes", 0.0), order_w, f.get("bb", 0.0))',
             'return (f.get("nodes", 0.0), -order_w, f.get("bb", 0.0))'),)),
    M("bb-not-a-gain", "bbopt/models/window.py",
      "integer_unit=lambda m: _int(m).bb_unit, gain=True)",
      "integer_unit=lambda m: _int(m).bb_unit, gain=False)",
      "the decision maker counts the BB objective as a gain against the node loss",
      also=(("bbopt/policies/window.py",
             'gains = [n for n in ("bb", "ssd", "ssd_waste") if n in model.objectives]',
             'gains = [n for n in ("ssd", "ssd_waste") if n in model.objectives]'),)),
    M("window-model-node-capacity", "bbopt/models/window.py",
      "ok = X @ self.nodes <= self.free_nodes", "ok = X @ self.nodes <= self.free_nodes + 1",
      "a window selection fits the free nodes"),
    M("cpsat-capacity-slack", "bbopt/solvers/window/cpsat.py",
      "m.add(self._expr(cx, ca) <= int(ub))", "m.add(self._expr(cx, ca) <= int(ub) + 1)",
      "the CP-SAT window model respects capacities"),
    # The capacities carry a margin (half a node, the BB slack), so ``<=`` against them cannot
    # be told from ``<``: the off-by-one that matters is in the node capacity itself.
    M("exhaustive-strict-capacity", "bbopt/solvers/window/exhaustive.py",
      "caps = [model.free_nodes + 0.5, model.bb_room]",
      "caps = [model.free_nodes - 0.5, model.bb_room]",
      "exhaustive enumeration admits selections that fill the free nodes exactly",
      also=(("bbopt/solvers/window/exhaustive.py", "ok &= (ls[:, None] + hs[None, sl]) <= cap",
             "ok &= (ls[:, None] + hs[None, sl]) < cap"),)),
    # --- plan model, annealing, exact plan search (Kopanski & Rzadca, Section 3.3) --------
    M("plan-alpha-ignored", "bbopt/models/plan.py",
      "            if alpha == 2:\n                score += wait * wait",
      "            if alpha == 2:\n                score += wait",
      "plan-2 scores sum(wait ** 2)"),
    M("plan-ignores-bb", "bbopt/models/plan.py",
      "                while FN[i] < n or FB[i] < bneed:\n                    i += 1",
      "                while FN[i] < n:\n                    i += 1",
      "the plan places a job where nodes and BB are free together"),
    M("annealing-pure-descent", "bbopt/solvers/plan/annealing.py",
      "threshold = current + temperature * u", "threshold = current",
      "annealing accepts a worse move with probability exp(-delta / T) (Metropolis)"),
    M("annealing-no-temperature", "bbopt/solvers/plan/annealing.py",
      "threshold = current + temperature * u", "threshold = current + u",
      "the Metropolis slack scales with the temperature"),
    M("annealing-forgets-best", "bbopt/solvers/plan/annealing.py",
      "            if score < best:\n", "            if score < best and False:\n",
      "annealing returns the best plan seen"),
    M("plan-exhaustive-overprunes", "bbopt/solvers/plan/exhaustive.py",
      'if bound >= state["best"]:', 'if bound >= 0.5 * state["best"]:',
      "exhaustive plan search is optimal"),
    # --- engine and execution ---------------------------------------------------------------
    M("rigid-kills-on-time", "bbopt/simulation/execution.py",
      "if runtime > job.walltime:", "if runtime >= job.walltime:",
      "a job whose runtime equals its walltime finishes (it is not killed)"),
    M("rigid-killed-runs-on", "bbopt/simulation/execution.py",
      "heapq.heappush(self._heap, (t + job.walltime, k, JobState.KILLED))",
      "heapq.heappush(self._heap, (t + runtime, k, JobState.KILLED))",
      "a job over its walltime is killed at the walltime"),
    M("engine-bb-unchecked", "bbopt/simulation/engine.py",
      "if free_b < -tol:", "if free_b < -tol - cap_b:",
      "the engine refuses a decision that over-allocates burst buffer",
      also=(("bbopt/simulation/ledger.py", "if job.bb - free_b > self.bb_tol:",
             "if job.bb - free_b > self.bb_tol + self.platform.bb:"),)),
    M("ledger-release-forgets-bb", "bbopt/simulation/ledger.py",
      "        self.used_bb -= job.bb\n", "",
      "a job that ends gives its burst buffer back"),
    M("ledger-busy-nodes-unchecked", "bbopt/simulation/ledger.py",
      "busy = [x for x in asked if x not in free]", "busy = []",
      "the engine refuses a decision naming busy nodes"),
    M("ledger-ssd-unchecked", "bbopt/simulation/ledger.py",
      "small = [x for x in asked if node_ssd[x] < job.ssd]", "small = []",
      "the engine refuses nodes with less local SSD than the job asks per node"),
    M("ledger-ssd-most-waste", "bbopt/simulation/ledger.py",
      "asked = tuple(x for _, x in fit[:job.nodes])",
      "asked = tuple(x for _, x in fit[len(fit) - job.nodes:])",
      "without a node set the engine gives an SSD job the smallest admissible SSDs"),
    M("engine-no-ticks", "bbopt/simulation/engine.py",
      "next_tick = (math.floor(t / tick) + 1) * tick if queue else math.inf",
      "next_tick = math.inf",
      "with a tick the engine also schedules periodically while jobs wait"),
    M("engine-shifted-running-start", "bbopt/simulation/engine.py",
      "insert(k, RunningJob(job, t, nodes, ledger.pieces_of(job) if named else None))",
      "insert(k, RunningJob(job, t + 60.0, nodes, ledger.pieces_of(job) if named else None))",
      "policies see running jobs' true starts (expected end = start + walltime)"),
    # --- metrics ----------------------------------------------------------------------------
    M("bsld-threshold-60s", "bbopt/simulation/result.py",
      "BSLD_BOUND = 600.0", "BSLD_BOUND = 60.0",
      "bounded slowdown bounds execution below by 600 s"),
    M("bsld-no-floor", "bbopt/analysis/metrics.py",
      "np.maximum(turnaround / np.maximum(execution, BSLD_BOUND), 1.0)",
      "turnaround / np.maximum(execution, BSLD_BOUND)",
      "bounded slowdown is at least 1"),
    M("wait-finished-only", "bbopt/analysis/metrics.py",
      'ran = (a["state"] == JobState.FINISHED) | (a["state"] == JobState.KILLED)\n'
      '    submit',
      'ran = (a["state"] == JobState.FINISHED)\n    submit',
      "per-job metrics (mean wait) include killed jobs"),
    M("utilisation-unclipped", "bbopt/analysis/metrics.py",
      'held = np.clip(np.minimum(m["end"], t1) - np.maximum(m["start"], t0), 0.0, None)',
      'held = m["end"] - m["start"]',
      "utilisation over an interval counts only time held inside it"),
    # --- readers ----------------------------------------------------------------------------
    M("swf-requested-allocated-swapped", "bbopt/workloads/swf.py",
      'primary, secondary = (7, 4) if processors == "requested" else (4, 7)',
      'primary, secondary = (4, 7) if processors == "requested" else (7, 4)',
      "SWF: Job.nodes is the requested processors (field 8) by default"),
    M("swf-walltime-field", "bbopt/workloads/swf.py",
      "req_time, user, group = table[:, 8], table[:, 11], table[:, 12]",
      "req_time, user, group = table[:, 9], table[:, 11], table[:, 12]",
      "SWF: the walltime is field 9 (requested time)"),
    M("batsim-walltime-fallback", "bbopt/workloads/batsim.py",
      'walltime = (max(runtime, 1.0) if missing_walltime == "runtime"',
      'walltime = (max(2 * runtime, 1.0) if missing_walltime == "runtime"',
      "Batsim: a job without walltime gets its runtime"),
    # --- I/O model and I/O-aware policies (Herbein et al.) --------------------------------
    M("maxmin-equal-split", "bbopt/simulation/io_model.py",
      "got = r if r <= share else share", "got = share",
      "sorted max-min: a child asking less than its share gets what it asks"),
    M("contention-top-down", "bbopt/simulation/io_model.py",
      "for v in sorted(at, key=lambda u: (-depth[u], u)):",
      "for v in sorted(at, key=lambda u: (depth[u], u)):",
      "contention is resolved bottom-up (leaves first)"),
    M("ledger-overallocation-unchecked", "bbopt/topology/alloc.py",
      "bad = np.flatnonzero(self.avail < -tol)", "bad = np.flatnonzero(self.avail < -tol - 1e30)",
      "the engine refuses a decision that over-allocates a link"),
    M("io-easy-head-bandwidth-unchecked", "bbopt/policies/io.py",
      "if not trial.fits(head.nodes, head.bandwidth):", "if False:",
      "io-easy: a late backfilled job must leave the head its bandwidth at the shadow time"),
    # --- preemption, checkpoints, victim choice (Zvi & Oren, OMFS) ---------------------------
    M("checkpoint-restart-free", "bbopt/simulation/checkpoint.py",
      "self._push(t + r + max(left_run, 0.0), k, JobState.FINISHED)",
      "self._push(t + max(left_run, 0.0), k, JobState.FINISHED)",
      "a restarted job first reads its checkpoint back (restart time R), then runs what is left"),
    M("checkpoint-walltime-restarts", "bbopt/simulation/checkpoint.py",
      "        left_wall = job.walltime - self.work_done[k]\n        left_run",
      "        left_wall = job.walltime\n        left_run",
      "the walltime bounds a job's useful work across restarts"),
    # (Dropping the reset of work_done on a kill is equivalent: only checkpoints add to it.)
    M("requeue-keeps-work", "bbopt/simulation/checkpoint.py",
      "        self.lost_work[k] += useful + self.work_done[k]\n",
      "        self.work_done[k] += useful\n",
      "a killed, requeued job starts again from scratch (its work is lost)"),
    M("victims-most-prioritised-first", "bbopt/models/preemption.py",
      "for i in self.order:", "for i in self.order[::-1]:",
      "Algorithm 1 evicts the least prioritised jobs first"),
    M("victims-below-entitlement", "bbopt/models/preemption.py",
      "return bool(np.all(per <= self.slack))", "return bool(np.all(per <= self.slack + 1))",
      "no victim entity drops below its entitlement"),
    # --- packs and exclusive I/O (Jeannot, Pallez & Vidal) --------------------------------------
    M("pack-bandwidth-row-ignored", "bbopt/models/packs.py",
      "return float(self.io_time[x].sum()) <= longest * (1 + REL)", "return True",
      "a pack's I/O time fits within its longest member (average-bandwidth row)"),
    M("pack-greedy-overfills-nodes", "bbopt/models/packs.py",
      "            if used + qi > cap:", "            if used + qi > cap + 1:",
      "first-fit packs never exceed the free nodes"),
    M("exclusive-io-lifo", "bbopt/simulation/exclusive_io.py",
      "k, since = fifo.popleft()", "k, since = fifo.pop()",
      "an I/O node serves waiting transfers first come, first served"),
    # --- fair share (Zvi & Oren, OMFS, Algorithm 1) ------------------------------------------
    M("omfs-ignores-quantum", "bbopt/policies/fairshare.py",
      "now - r.start >= self.quantum", "now - r.start >= 0",
      "a job runs at least one quantum before it may be evicted"),
    # (Dropping "entity_of(r.job) != u" from the candidates is equivalent: a job evicts only
    # when it fits within its entity's entitlement, so its entity is never over-entitled.)
    # (So is ">=" for ">" in the candidates' over-entitled test: the victim-choice model gives
    # an entity at its entitlement no slack; "victims-below-entitlement" plants that rule's bug.)
    M("omfs-nonpreemptable-beyond-entitlement", "bbopt/policies/fairshare.py",
      "if not _preemptable(job) and held_np.get(u, 0) + job.nodes > ent:",
      "if not _preemptable(job) and held_np.get(u, 0) > ent:",
      "non-preemptable jobs never take an entity beyond its entitlement (line 26)"),
    # --- I/O-aware list scheduling and pack backfilling (Jeannot, Pallez & Vidal) -------------
    M("io-list-ignores-bandwidth", "bbopt/policies/packs.py",
      "if job.nodes <= free_n and used_bw + bw <= cap_bw:", "if job.nodes <= free_n:",
      "io-list starts a job only when the running jobs' average bandwidth leaves room"),
    M("pack-backfill-outlives-pack", "bbopt/policies/packs.py",
      "if job.nodes > free_n or now + t[i] > end * (1 + _EPS):",
      "if job.nodes > free_n:",
      "a job backfilled into a pack ends before the pack does (never delays the next pack)"),
    M("pack-backfill-breaks-average", "bbopt/policies/packs.py",
      "if io + u[i] > span * (1 + _EPS):", "if False:",
      "a backfilled job keeps the pack within the average-bandwidth constraint"),
    # --- experiments: the results store (resume, run names) ----------------------------------
    M("sweep-reruns-done-cells", "bbopt/analysis/sweep.py",
      "todo = [t for t in tasks if not store.done(t.hash)]", "todo = list(tasks)",
      "an interrupted or widened sweep runs only the cells without a summary"),
    M("run-hash-ignores-seed", "bbopt/analysis/sweep.py",
      '            "seed": cell.seed,\n            "budget"', '            "budget"',
      "the run's name changes with the seed"),
    M("workload-hash-ignores-bb", "bbopt/analysis/store.py",
      "j.nodes, j.bb, j.ssd,", "j.nodes, j.ssd,",
      "the workload's content hash covers every job field (a changed BB request is a new run)"),
    M("sweep-ignores-workload-entitlements", "bbopt/analysis/sweep_inputs.py",
      "    return shares\n", "    return None\n",
      "every run of a workload with entitlements is measured against them (OMFS)"),
    M("sized-bb-ignores-demand", "bbopt/workloads/generators/bbsched.py",
      "nodes * bb_s / (demand * node_s)", "nodes * bb_s / node_s",
      "a BB sized from a workload gives it the BB demand asked for (Fan et al.'s S4 regime)"),
    M("budget-entry-sets-solver-options-only", "bbopt/analysis/sweep_spec.py",
      'if k in accepted or "**" in accepted}',
      'if k in ("budget", "deterministic") and (k in accepted or "**" in accepted)}',
      "a budget entry's other policy options (a base order) reach the policies"),
    # --- experiments: frames and figures -----------------------------------------------------
    M("to-pandas-dropped-jobs-have-times", "bbopt/simulation/result.py",
      'ran = (a["state"] == JobState.FINISHED) | (a["state"] == JobState.KILLED)\n'
      '        start = np.where(ran, a["start"]',
      'ran = a["state"] != JobState.REJECTED\n        start = np.where(ran, a["start"]',
      "the per-job frame gives times only to jobs that ran (not dropped ones)"),
    M("gantt-first-node-range-only", "bbopt/analysis/figures.py",
      "        for lo, hi in ranges:\n", "        for lo, hi in ranges[:1]:\n",
      "the Gantt chart covers every node range of a job's allocation"),
    # (Starts before ends within one instant alone is an equivalent mutant of the timeline:
    # only the state after each instant is kept; with every event kept it is caught.)
    # --- the Slurm bridge: checked decisions ----------------------------------------------------
    M("bridge-skips-bb-check", "bbopt/slurm/bridge.py",
      "if job.nodes > free_n or job.bb > free_bb + _EPS * max(1.0, job.bb):",
      "if job.nodes > free_n:",
      "the bridge refuses a start whose burst buffer is not free"),
    M("bridge-forgets-bb-taken", "bbopt/slurm/bridge.py",
      "            free_bb -= job.bb\n", "",
      "two starts of one decision cannot both take the same free burst buffer"),
    # --- Kopanski's BB generator rules, BBSimulator traces, named BB nodes -------------------
    M("kopanski-short-rule-strict", "bbopt/workloads/bb.py",
      "np.where(walltime <= rules.short_walltime,", "np.where(walltime < rules.short_walltime,",
      "a job of walltime at most 120 s (120 s included) asks 10 MB per node"),
    M("kopanski-cap-no-ceil", "bbopt/workloads/bb.py",
      "np.floor(rules.bb_node_capacity / np.ceil(nodes / rules.bb_nodes))",
      "np.floor(rules.bb_node_capacity / (nodes / rules.bb_nodes))",
      "the cap shares one BB node among ceil(nodes / 12) whole pieces"),
    M("bbsimulator-stage-in-unit", "bbopt/workloads/swf.py",
      'in_scale = 1e-3 if bb_columns == "bbsimulator" else 1.0', "in_scale = 1.0",
      "BBSimulator stores stage-in in 1/1000 of the other volumes' unit"),
    M("bbsimulator-no-min-size", "bbopt/workloads/swf.py",
      "np.maximum(procs, float(bbsimulator_min_processors))", "np.maximum(procs, 1.0)",
      "BBSimulator raises requests below 256 processors to 256"),
    M("first-fit-tolerance-sign", "bbopt/models/bb_nodes.py",
      "short = piece - tol  #", "short = piece + tol  #",
      "a piece fits a BB node within the byte tolerance, not only with room to spare"),
    M("named-profile-start-only", "bbopt/policies/named_bb.py",
      "while i < len(times) and times[i] < end:", "while i < len(times) and times[i] < start:",
      "a later reservation's pieces fit the least free space over its whole interval"),
    # --- the engine's idle gate, OMFS's drain, workload entitlements ------------------------
    M("idle-gate-size-off-by-one", "bbopt/simulation/engine.py",
      "not any(self.waiting_sizes[1:free_n + 1])", "not any(self.waiting_sizes[1:free_n])",
      "a rule is asked whenever some waiting job fits the free nodes exactly"),
    M("omfs-drain-on-busy-machine", "bbopt/policies/fairshare.py",
      "not claims and _oversize_ok(state, job, started)", "not claims",
      "a job wider than its entitlement drains an otherwise idle machine only"),
    M("entitlements-ignore-workload", "bbopt/analysis/entitlements.py",
      "own = workload_shares(jobs)", "own = None",
      "simulate/compare give shares-taking policies the workload's own entitlements"),
]


def _copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
    for name in ("bbopt", "tests", "examples", "experiments"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    (dest / "benchmarks").mkdir()
    for script in (ROOT / "benchmarks").glob("*.py"):  # some tests run a benchmark's parser
        shutil.copy2(script, dest / "benchmarks" / script.name)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, dest / name)


#: Test files run first (quick ones pinning the rules), so that most mutants die within seconds;
#: the others follow in name order. The order changes only the time taken, never the verdict.
FIRST = ["test_paper_example.py", "test_metrics.py", "test_swf.py", "planner/test_profile.py",
         "test_policy_properties.py", "test_engine.py", "test_window_model.py",
         "test_plan_model.py", "test_io.py"]


#: Test files that pin the rules of a module (by path prefix): run before the others for a
#: mutant of that module. Again only the time changes, never the verdict.
RELATED = {
    "bbopt/planner": ["planner/test_profile.py", "planner/test_plan.py",
                      "test_paper_example.py", "test_policy_properties.py"],
    "bbopt/policies/queue.py": ["test_paper_example.py", "test_policy_properties.py"],
    "bbopt/policies/window": ["test_window_policies.py", "test_objectives.py",
                              "test_io_window.py"],
    "bbopt/models/window.py": ["test_window_policies.py", "test_window_model.py",
                               "test_objectives.py"],
    "bbopt/solvers/window": ["test_window_model.py", "test_window_fronts.py"],
    "bbopt/models/plan.py": ["test_plan_model.py", "test_plan_solvers.py"],
    "bbopt/solvers/plan": ["test_plan_solvers.py", "test_plan_policy.py"],
    "bbopt/simulation/checkpoint.py": ["test_preemption_rules.py", "test_omfs.py",
                                       "test_omfs_properties.py"],
    "bbopt/simulation/exclusive_io.py": ["test_exclusive_io.py", "test_exclusive_io_fifo.py"],
    "bbopt/models/preemption.py": ["test_preemption_rules.py", "test_omfs.py",
                                   "test_fairshare_baselines.py"],
    "bbopt/models/packs.py": ["test_pack_model.py", "test_pack_builders_exact_vs_greedy.py"],
    "bbopt/simulation": ["test_engine.py", "test_io.py"],
    "bbopt/analysis": ["test_metrics.py"],
    "bbopt/workloads/swf.py": ["test_swf.py"],
    "bbopt/workloads/batsim.py": ["test_batsim.py"],
    "bbopt/topology": ["test_io.py"],
    "bbopt/policies/io.py": ["test_io.py"],
    "bbopt/policies/fairshare.py": ["test_omfs.py", "test_omfs_properties.py",
                                    "test_fairshare_baselines.py"],
    "bbopt/policies/packs.py": ["test_pack_policies.py"],
    "bbopt/analysis/s": ["test_sweep.py", "test_sweep_shares.py", "test_sweep_platforms.py"],
    "bbopt/analysis/f": ["test_figures.py"],
    "bbopt/slurm": ["slurm/test_bridge.py"],
}


def _test_files(dest: Path, mutated: str = "") -> list[str]:
    names = sorted(str(p.relative_to(dest / "tests"))
                   for p in (dest / "tests").rglob("test_*.py"))
    first = [n for prefix, files in RELATED.items() if mutated.startswith(prefix)
             for n in files] + FIRST
    first = list(dict.fromkeys(n for n in first if n in names))
    ordered = first + [n for n in names if n not in first]
    return [f"tests/{n}" for n in ordered]


def _apply(m: Mutant, dest: Path) -> tuple[str | None, str]:
    """Plant ``m`` in the copy at ``dest``: (the reason it could not be planted or ``None``,
    the file it went into)."""
    notes = []
    for file, original, replacement in ((m.file, m.original, m.replacement), *m.also):
        path = dest / file
        if not path.exists():
            notes.append(f"{file} not found")
            continue
        text = path.read_text()
        count = text.count(original)
        if count == 1:
            path.write_text(text.replace(original, replacement))
            return None, file
        notes.append(f"snippet found {count} times in {file}")
    return "; ".join(notes), ""


def _pytest_cmd(full: bool, extra: tuple[str, ...], dest: Path, mutated: str = "") -> list[str]:
    cmd = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    if not full:
        cmd += ["-m", "not slow"]
    return cmd + (list(extra) if extra else _test_files(dest, mutated))


def _env(dest: Path) -> dict[str, str]:
    env = dict(os.environ)
    # The copy comes first on the path, ahead of an editable install of the real tree.
    env["PYTHONPATH"] = str(dest) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("BBOPT_DATA", str(ROOT.parent / "shared" / "data"))
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_mutant(m: Mutant | None, full: bool, timeout: float,
               extra: tuple[str, ...] = ()) -> dict:
    """Apply ``m`` (``None``: the unmutated baseline) to a fresh copy and run the suite."""
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bbopt-mutant-") as tmp:
        dest = Path(tmp)
        _copy_tree(dest)
        mutated = ""
        if m is not None:
            why, mutated = _apply(m, dest)
            if why is not None:
                return {"status": "stale", "detail": why, "seconds": 0.0}
        env = _env(dest)
        check = subprocess.run([sys.executable, "-c", "import bbopt; print(bbopt.__file__)"],
                               cwd=dest, env=env, capture_output=True, text=True)
        if not check.stdout.strip().startswith(str(dest)):
            return {"status": "error", "seconds": 0.0,
                    "detail": f"bbopt imported from {check.stdout.strip()!r}, not the copy"}
        try:
            r = subprocess.run(_pytest_cmd(full, extra, dest, mutated), cwd=dest, env=env,
                               capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"status": "killed", "detail": f"timeout after {timeout:.0f} s",
                    "seconds": time.perf_counter() - t0}
    out = r.stdout + r.stderr
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, flags=re.M)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    if r.returncode == 0:
        status, detail = "survived", last
    elif r.returncode == 1:
        status, detail = "killed", failed[0] if failed else last
    else:
        status, detail = "error", f"pytest exit {r.returncode}: {last}"
    return {"status": status, "detail": detail, "seconds": time.perf_counter() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1, help="mutants run at once (default 1)")
    ap.add_argument("--full", action="store_true", help="run the whole suite, slow tests too")
    ap.add_argument("--only", default="", help="comma-separated mutant names")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds per mutant (default: 3x the baseline + 60 s, else 900 s); "
                         "a mutant over it counts as killed (it hangs the suite)")
    ap.add_argument("--out", default="", help="also write the table (Markdown) here")
    ap.add_argument("--no-baseline", action="store_true",
                    help="skip the unmutated run (which must pass)")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("pytest_args", nargs="*",
                    help="passed on to pytest, e.g. some test files for a quick look")
    args = ap.parse_args(argv)
    mutants = MUTANTS
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {m.name for m in MUTANTS}
        if unknown:
            ap.error(f"unknown mutants: {', '.join(sorted(unknown))}")
        mutants = [m for m in MUTANTS if m.name in wanted]
    if args.list:
        for m in mutants:
            print(f"{m.name:36} {m.file:36} {m.breaks}")
        return 0
    suite = "full suite" if args.full else "fast suite (-m 'not slow')"
    if args.pytest_args:
        suite += " " + " ".join(args.pytest_args)
    timeout = args.timeout or 900.0
    if not args.no_baseline:
        base = run_mutant(None, args.full, timeout, tuple(args.pytest_args))
        print(f"baseline ({suite}): {base['status']} in {base['seconds']:.0f} s "
              f"({base['detail']})", flush=True)
        if base["status"] != "survived":
            print("the unmutated suite does not pass; fix that first", file=sys.stderr)
            return 1
        if args.timeout is None:
            timeout = 3.0 * base["seconds"] + 60.0
    results: dict[str, dict] = {}

    def one(m: Mutant) -> tuple[Mutant, dict]:
        res = run_mutant(m, args.full, timeout, tuple(args.pytest_args))
        print(f"{res['status']:8} {m.name:36} {res['seconds']:6.0f} s  {res['detail']}",
              flush=True)
        return m, res

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for m, res in pool.map(one, mutants):
            results[m.name] = res
    lines = [f"Mutation run over the {suite}, {len(mutants)} mutants", "",
             "| mutant | file | rule it breaks | result | first failing test / note |",
             "|---|---|---|---|---|"]
    for m in mutants:
        r = results[m.name]
        lines.append(f"| {m.name} | {m.file} | {m.breaks} | {r['status']} | {r['detail']} |")
    counts = {s: sum(r["status"] == s for r in results.values())
              for s in ("killed", "survived", "stale", "error")}
    live = counts["killed"] + counts["survived"]
    rate = 100.0 * counts["killed"] / live if live else float("nan")
    lines += ["", f"killed {counts['killed']} / {live} applicable ({rate:.0f} %); "
              f"survived {counts['survived']}; stale {counts['stale']}; error {counts['error']}"]
    table = "\n".join(lines)
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
