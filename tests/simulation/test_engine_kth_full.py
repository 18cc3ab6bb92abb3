"""The full KTH-SP2 trace (28,453 jobs, log-normal BB, Kopanski's platform) under every policy
of the foundation: every job accounted for, capacities respected, the paper's ordering of
policies (fcfs-easy far behind the BB-aware EASY variants)."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt import Platform, simulate
from bbopt.analysis.metrics import summarize
from bbopt.workloads.bb import with_lognormal_bb
from bbopt.workloads.swf import read_swf

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def kth_jobs(kth_swf):
    trace = read_swf(kth_swf, max_nodes=96, oversize="drop")
    return with_lognormal_bb(trace.jobs, seed=0)


@pytest.fixture(scope="module")
def results(kth_jobs):
    return {}


def run(kth_jobs, results, policy):
    if policy not in results:
        results[policy] = simulate(kth_jobs, Platform.kopanski(), policy)
    return results[policy]


def max_usage(res):
    a = res.arrays()
    ran = a["state"] != "rejected"
    t = np.concatenate([a["start"][ran], a["end"][ran]])
    kind = np.concatenate([np.ones(ran.sum()), np.zeros(ran.sum())])  # ends (0) sort first
    order = np.lexsort((kind, t))
    sign = np.where(kind[order] == 1, 1.0, -1.0)
    nodes = np.cumsum(sign * np.concatenate([a["nodes"][ran], a["nodes"][ran]])[order])
    bb = np.cumsum(sign * np.concatenate([a["bb"][ran], a["bb"][ran]])[order])
    return nodes.max(), bb.max()


@pytest.mark.parametrize("policy", ["fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb",
                                    "conservative-bb"])
def test_full_trace(kth_jobs, results, policy):
    res = run(kth_jobs, results, policy)
    m = summarize(res)
    assert m["finished"] + m["killed"] + m["rejected"] == len(kth_jobs) == 28453
    # Rejected: exactly the jobs whose BB exceeds the 480 GB platform.
    assert m["rejected"] == sum(j.bb > 480e9 for j in kth_jobs)
    n, b = max_usage(res)
    assert n <= 96 and b <= 480e9 * (1 + 1e-9)


def test_paper_ordering(kth_jobs, results):
    wait = {p: summarize(run(kth_jobs, results, p))["mean_wait"]
            for p in ("fcfs", "fcfs-easy", "fcfs-bb", "sjf-bb")}
    # Kopanski & Rzadca, Fig. 6: fcfs-easy is orders of magnitude behind BB-aware EASY.
    assert wait["fcfs-easy"] > 20 * wait["fcfs-bb"]
    assert wait["fcfs"] > wait["fcfs-easy"]
    assert wait["sjf-bb"] < 1.2 * wait["fcfs-bb"]
