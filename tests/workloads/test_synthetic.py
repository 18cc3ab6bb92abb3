"""The embedded default workload (a seeded KTH-like trace, Kopanski & Rzadca Section 4.1): its
jobs replayed from the generator's own draws, in their order (sizes by the KTH-like weights,
log-normal runtimes with a 20-minute median clipped to [30 s, 36 h], walltimes over-estimated
by a log-uniform factor in [1, 10] and rounded up to a minute, Poisson arrivals at the rate
that offers ``load``, log-normal BB per processor, users 1..59) and the authors' rules."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.workloads.bb import KOPANSKI_RULES, KopanskiRules, lognormal_bb_per_processor
from bbopt.workloads.synthetic import kth_like

SIZES = np.array([1, 2, 4, 8, 16, 32, 64])
WEIGHTS = np.array([0.34, 0.14, 0.14, 0.13, 0.11, 0.08, 0.06])


def replay(n, seed, nodes, load, bb=True):
    """``(sizes, runtime, walltime, submit, per_proc, users)`` from the generator's draws."""
    rng = np.random.default_rng(seed)
    ok = nodes >= SIZES
    sizes = rng.choice(SIZES[ok], size=n, p=WEIGHTS[ok] / WEIGHTS[ok].sum())
    runtime = np.round(np.clip(rng.lognormal(np.log(1200.0), 1.6, n), 30.0, 129600.0))
    factor = np.exp(rng.uniform(0.0, np.log(10.0), n))
    walltime = np.ceil(runtime * factor / 60.0) * 60.0
    rate = load * nodes / float(np.mean(sizes * runtime))
    submit = np.round(np.cumsum(rng.exponential(1.0 / rate, n)))
    submit -= submit[0]
    per_proc = lognormal_bb_per_processor(n, rng) if bb else np.zeros(n)
    users = rng.integers(1, 60, n)
    return sizes, runtime, walltime, submit, per_proc, users


@pytest.mark.parametrize(("n", "seed", "nodes", "load"), [(300, 0, 96, 0.9), (200, 7, 10, 0.5),
                                                         (50, 3, 64, 1.3)])
def test_jobs_are_the_replayed_draws(n, seed, nodes, load):
    jobs = kth_like(n, seed=seed, nodes=nodes, load=load)
    sizes, runtime, walltime, submit, per_proc, users = replay(n, seed, nodes, load)
    assert [j.id for j in jobs] == [str(k) for k in range(1, n + 1)]
    assert [j.nodes for j in jobs] == sizes.tolist()
    assert [j.runtime for j in jobs] == runtime.tolist()
    assert [j.walltime for j in jobs] == walltime.tolist()
    assert [j.submit for j in jobs] == submit.tolist()
    assert [j.bb for j in jobs] == (per_proc * sizes).tolist()
    assert [j.user for j in jobs] == [str(u) for u in users]
    assert all(type(j.nodes) is int and type(j.submit) is float for j in jobs)
    assert max(j.nodes for j in jobs) <= nodes and jobs[0].submit == 0.0


def test_the_defaults_are_3000_jobs_of_seed_0_offering_0_9_of_96_nodes():
    """The documented defaults, and the draws' ranges and offered load on them."""
    jobs = kth_like()
    sizes, _, walltime, submit, _, _ = replay(3000, 0, 96, 0.9)
    assert len(jobs) == 3000 and [j.nodes for j in jobs] == sizes.tolist()
    assert [j.walltime for j in jobs] == walltime.tolist()
    assert [j.submit for j in jobs] == submit.tolist()
    runtime = np.array([j.runtime for j in jobs])
    assert runtime.min() == 30.0 and runtime.max() == 36 * 3600.0  # both clips reached
    assert all(j.walltime % 60 == 0 and j.runtime <= j.walltime <= 10 * j.runtime + 60
               for j in jobs)
    assert {j.nodes for j in jobs} == set(SIZES.tolist())
    assert {int(j.user) for j in jobs} == set(range(1, 60))
    work = sum(j.nodes * j.runtime for j in jobs)
    span = jobs[-1].submit - jobs[0].submit
    assert work / (96 * span) == pytest.approx(0.9, rel=0.05)


def test_without_bb_the_requests_are_zero_and_the_users_follow_the_walltimes():
    jobs = kth_like(100, seed=4, bb=False, rules=KOPANSKI_RULES)
    sizes, runtime, walltime, submit, _, users = replay(100, 4, 96, 0.9, bb=False)
    assert [j.bb for j in jobs] == [0.0] * 100
    assert [j.user for j in jobs] == [str(u) for u in users]
    assert [j.walltime for j in jobs] == walltime.tolist()


def test_rules_cap_and_shorten_the_same_draws():
    rules = KopanskiRules(bb_nodes=2, bb_node_capacity=3e9, short_walltime=600.0,
                          short_bb_per_node=5e6)
    plain = kth_like(400, seed=1)
    ruled = kth_like(400, seed=1, rules=rules)
    _, _, _, _, per_proc, _ = replay(400, 1, 96, 0.9)
    for a, b, p in zip(plain, ruled, per_proc, strict=True):
        assert (a.id, a.submit, a.walltime, a.runtime, a.nodes, a.user) == (
            b.id, b.submit, b.walltime, b.runtime, b.nodes, b.user)
        if a.walltime <= 600.0:
            want = 5e6
        else:
            want = min(float(p), float(np.floor(3e9 / np.ceil(a.nodes / 2))))
        assert b.bb == want * a.nodes
    assert sum(b.bb != a.bb for a, b in zip(plain, ruled, strict=True)) > 50


@pytest.mark.parametrize("n", [0, -1])
def test_at_least_one_job(n):
    with pytest.raises(ValueError, match=r"^n_jobs must be >= 1$"):
        kth_like(n)
    assert len(kth_like(1)) == 1 and kth_like(1)[0].submit == 0.0
