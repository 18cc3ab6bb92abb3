"""The capability-computing workload (Theta-like) for BBSched's S1-S4: the stated properties
(Cobalt's 128-node minimum, Theta's size, 17.18 % of jobs in [1 GB, 285 TB], offered load)
hold on the draws, and the Lublin-Feitelson shapes (power-of-two sizes, wider jobs longer)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from bbopt.core import GB, TB
from bbopt.errors import InputError
from bbopt.workloads.generators.bbsched import bbsched_scenario
from bbopt.workloads.generators.capability import (
    THETA_NODES,
    CapabilityModel,
    job_rate_per_day,
    theta_platform,
)

JOBS = CapabilityModel().generate(6000, seed=3)


def test_sizes_are_capability_jobs_on_theta():
    nodes = np.array([j.nodes for j in JOBS])
    assert nodes.min() >= 128 and nodes.max() <= THETA_NODES
    assert (nodes >= 1024).mean() > 0.05  # the upper stage reaches the whole machine
    pow2 = np.array([n & (n - 1) == 0 for n in nodes])
    assert 0.6 < pow2.mean() < 0.9  # pow2_prob 0.75 plus non-rounded draws that land on one


def test_offered_load_and_job_rate():
    span = JOBS[-1].submit - JOBS[0].submit
    load = sum(j.nodes * j.runtime for j in JOBS) / (THETA_NODES * span)
    assert load == pytest.approx(0.85, rel=0.05)
    assert job_rate_per_day(JOBS) == pytest.approx(len(JOBS) / (span / 86400), rel=1e-3)
    assert all(b.submit >= a.submit for a, b in zip(JOBS, JOBS[1:], strict=False))


def test_original_bb_requests_follow_theta():
    bb = np.array([j.bb for j in JOBS])
    asks = bb > 0
    assert asks.mean() == pytest.approx(0.1718, abs=0.015)
    assert bb[asks].min() >= 1 * GB and bb[asks].max() <= 285 * TB
    # log-uniform: the median request is near the geometric mean of the range
    assert math.log(np.median(bb[asks])) == pytest.approx(math.log(math.sqrt(285e3) * GB),
                                                          abs=0.6)


def test_wider_jobs_run_longer_and_walltimes_bound_runtimes():
    nodes = np.array([j.nodes for j in JOBS])
    rt = np.array([j.runtime for j in JOBS])
    assert np.median(rt[nodes >= 2048]) > 5 * np.median(rt[nodes <= 256])
    assert all(j.runtime <= j.walltime <= 24 * 3600 for j in JOBS)
    m = CapabilityModel()
    p = m.short_probability(np.array([128, 4392]))
    assert p[0] == pytest.approx(0.78 - 0.0054 * 128 * 128 / 4392)
    assert p[1] == pytest.approx(0.78 - 0.0054 * 128)


def test_same_seed_same_jobs_and_s4_on_it():
    again = CapabilityModel().generate(6000, seed=3)
    assert [(j.submit, j.nodes, j.runtime, j.bb) for j in again] == \
        [(j.submit, j.nodes, j.runtime, j.bb) for j in JOBS]
    s4 = bbsched_scenario(JOBS, "S4", 1)
    assert np.mean([j.bb > 0 for j in s4]) == pytest.approx(0.75, abs=0.001)
    added = [b.bb for a, b in zip(JOBS, s4, strict=True) if a.bb == 0 and b.bb > 0]
    assert min(added) > 20 * TB
    assert theta_platform().bb == 1.26e15 and theta_platform().nodes == 4392


def test_bad_parameters_are_refused():
    with pytest.raises(InputError, match="min_nodes"):
        CapabilityModel(min_nodes=5000)
    with pytest.raises(InputError, match="n_jobs"):
        CapabilityModel().generate(0)


def test_catalog_parameters_reach_the_model():
    """The sweep's ``capability`` generator: defaults are the model's; a smaller long-branch
    scale gives shorter long jobs, so at the same offered load Theta's ~470 jobs a day."""
    from bbopt.workloads.generators.catalog import apply

    assert apply("capability", None, 3, n_jobs=6000) == JOBS
    fast = apply("capability", None, 3, n_jobs=6000, long_log_scale=0.023)
    assert [j.nodes for j in fast] == [j.nodes for j in JOBS]  # same sizes, shorter runs
    assert 400 < job_rate_per_day(fast) < 550 and job_rate_per_day(JOBS) < 120
    span = fast[-1].submit - fast[0].submit
    assert sum(j.nodes * j.runtime for j in fast) / (THETA_NODES * span) == pytest.approx(
        0.85, rel=0.05)
    small = apply("capability", None, 3, n_jobs=2000, min_nodes=8, load=0.5)
    assert min(j.nodes for j in small) < 128 and min(j.nodes for j in small) >= 8
