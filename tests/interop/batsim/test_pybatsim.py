"""pybatsim's own schedulers (the Python schedulers of Batsim's community) run unmodified on
bbopt's simulator over a KTH part, and their schedules against bbopt's policies, start for start
(docs/interop.md, "pybatsim on bbopt"). Each kind of difference is shown by a variant in
benchmarks/pybatsim_variants/ that removes it: the agreement becomes total.

Setup (CI does it): ``pip install 'bbopt[batsim]'`` then ``pip install --no-deps
pybatsim==3.2.1``; without pybatsim these tests skip and say why.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from bbopt.interop.batsim.pybatsim import agreement, pybatsim_missing

if (why := pybatsim_missing()) is not None:
    print(f"tests/interop/batsim/test_pybatsim.py: skipped: {why}")
    pytest.skip(why, allow_module_level=True)

from bbopt.core import Platform  # noqa: E402
from bbopt.interop.batsim.pybatsim import run_pybatsim  # noqa: E402
from bbopt.loading import read_workload  # noqa: E402
from bbopt.simulation import simulate  # noqa: E402
from tests._workload_data import KTH_BATSIM, data_file  # noqa: E402

VARIANTS = Path(__file__).resolve().parents[3] / "benchmarks" / "pybatsim_variants"
#: The first 120 jobs of the KTH part (submitted over 2.3 days), without BB (pybatsim's
#: schedulers know none), on its 96 nodes.
N = 120


@pytest.fixture(scope="module")
def part():
    w = read_workload(data_file(KTH_BATSIM), n_jobs=N)
    return [dataclasses.replace(j, bb=0.0) for j in w.jobs], Platform(nodes=96, bb=0.0)


def _run(scheduler, policy, part, tmp_path):
    jobs, platform = part
    ref = simulate(jobs, platform, policy)
    res = run_pybatsim(scheduler, jobs, platform, timeout=60, log=tmp_path / "pybatsim.log")
    assert all(s in ("finished", "killed") for s in res.state)  # every job ran to its end
    assert not any(math.isnan(s) for s in res.start)
    return agreement(ref, res), res


@pytest.mark.parametrize(("scheduler", "policy", "same"), [
    # contiguity: the sched API's consecutive_resources_filter starts a job only on consecutive
    # free nodes; bbopt counts nodes (at t=8243 job 1796 asks 13 of 17 free nodes, in two
    # blocks of 12 and 5, and waits under pybatsim)
    ("schedFcfs", "fcfs", 20),
    # contiguity (rectangles: one interval of nodes per job), same instant, same job 1796
    ("easyBackfill", "fcfs-easy", 55),
    pytest.param("schedEasySjfBackfill", "sjf-bb", 55, marks=pytest.mark.slow),
])
def test_pybatsim_scheduler_on_bbopt(scheduler, policy, same, part, tmp_path):
    a, _ = _run(scheduler, policy, part, tmp_path)
    assert (a.same, a.jobs, a.first_difference) == (same, N, 8243.0)


def test_pybatsim_filler_on_bbopt(part, tmp_path):
    """fillerSched keeps its open jobs in a set: which of two waiting jobs that both fit goes
    first depends on the jobs' hashes (memory addresses), not on their arrival, so its schedule
    varies from run to run; it cannot differ before t=8003, the first instant at which two
    waiting jobs compete for the free nodes (in arrival order it agrees throughout: below)."""
    a, _ = _run("fillerSched", "filler", part, tmp_path)
    assert a.first_difference >= 8003.0


@pytest.mark.parametrize(("variant", "policy"), [
    ("schedFcfsAnyNodes.py", "fcfs"),  # schedFcfs on any free nodes
    ("fillerSchedInOrder.py", "filler"),  # arrival order, one pass per message
])
def test_without_the_difference_the_schedules_agree_start_for_start(variant, policy, part,
                                                                     tmp_path):
    a, _ = _run(str(VARIANTS / variant), policy, part, tmp_path)
    assert (a.same, a.first_difference) == (N, math.inf)


def test_easy_sjf_on_any_nodes_differs_only_by_its_node_reservation(part, tmp_path):
    """Without contiguity, pybatsim's EASY-SJF reserves the head job on named nodes (the first
    free at its start, which include the nodes free now) where bbopt reserves a count: at
    t=54380, 6 nodes are free, the head (13 nodes) starts at 67888 when 84 more free; bbopt
    backfills job 1850 (5 nodes, past 67888: 6 + 84 - 13 = 77 spare nodes then), pybatsim
    keeps those 6 nodes for the head."""
    jobs, _ = part
    a, res = _run(str(VARIANTS / "schedEasySjfAnyNodes.py"), "sjf-bb", part, tmp_path)
    assert (a.same, a.first_difference) == (N - 1, 54380.0)
    k = next(i for i, j in enumerate(jobs) if j.id == "1850")
    assert res.start[k] > 54380.0
