"""Jeannot, Pallez & Vidal's periodic applications (IJHPCA 2023): equation (2) by hand, the
truncated normal I/O proportions against their CDF, the Mira law's first step and its cap, the
size classes of the Mira durations, the Uniform protocol's sizes and mean, the BiNormal choice
of each application replayed from its uniforms, Normal's calibration and its bounds, the jobs'
fields, every refusal, and the command line's spec."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from bbopt.core import GB, HOUR, MINUTE, Job
from bbopt.errors import InputError
from bbopt.workloads.generators import jeannot
from bbopt.workloads.generators.jeannot import PeriodicWorkload

SD = math.sqrt(0.1)


def _app(name: str, n: int, w: float, io_seconds: float, q: int, b: float = 2.0) -> Job:
    return Job(name, 0, walltime=100, nodes=q, extra={"io": {
        "iterations": n, "compute_seconds": w, "io_bytes": io_seconds * b, "io_bandwidth": b}})


def test_io_load_is_equation_2_by_hand():
    jobs = [_app("a", 10, 100.0, 10.0, 2), _app("b", 20, 50.0, 5.0, 4, b=8.0)]
    # sum n v / b = 100 + 100; sum Q / P n (w + v / b) = 2/8 x 10 x 110 + 4/8 x 20 x 55
    assert jeannot.io_load(jobs, 8) == pytest.approx(200 / 825)
    assert jeannot.io_load(jobs, 16) == pytest.approx(400 / 825)
    with pytest.raises(InputError, match=r": io_load needs jobs with extra\['io'\] \(periodic "
                                         r"applications\)$") as e:
        jeannot.io_load([*jobs, Job("c", 0, walltime=1)], 8)
    assert e.value.field == "io"


def test_relative_error_is_the_distance_over_the_target():
    assert PeriodicWorkload([], 0.55, 0.5, "U-No", 8, 1.0).relative_error == pytest.approx(0.1)
    assert PeriodicWorkload([], 0.4, 0.5, "U-No", 8, 1.0).relative_error == pytest.approx(0.2)


def test_truncated_normal_inverts_its_cdf_on_0_1():
    x = np.array([0.0, 0.05, 0.3, 0.5, 0.9, 1.0])
    for mean, sd in ((0.1, SD), (0.9, SD), (0.4, 0.2)):
        lo, hi = stats.norm.cdf(-mean / sd), stats.norm.cdf((1 - mean) / sd)
        u = (stats.norm.cdf((x - mean) / sd) - lo) / (hi - lo)
        got = jeannot._trunc_normal(u, mean, sd) if sd != SD else jeannot._trunc_normal(u, mean)
        assert got == pytest.approx(x, abs=1e-9)


class _Uniforms:
    """A stand-in generator whose uniform draws are given."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=float)

    def uniform(self, size):
        assert size == len(self.values)
        return self.values


def test_mira_processors_first_step_and_cap():
    lam, span = 1.35e-4, 49152 - 512
    first = (1 - math.exp(-lam)) / (1 - math.exp(-lam * (span + 1)))  # P(Q = 512)
    # (1e-8 apart: the truncation to span + 2 values would move the step by 2e-7)
    got = jeannot.mira_processors(4, _Uniforms([0.0, first * (1 - 1e-8), first * (1 + 1e-8),
                                                1.0]))
    assert got.tolist() == [512, 512, 513, 49152]
    two = (1 - math.exp(-2 * lam)) / (1 - math.exp(-lam * (span + 1)))  # P(Q <= 513)
    assert jeannot.mira_processors(2, _Uniforms([two * (1 - 1e-8), two * (1 + 1e-8)])
                                   ).tolist() == [513, 514]


def test_mira_durations_by_size_class():
    rng = np.random.default_rng(0)
    for q, median in ((512, HOUR), (4095, HOUR), (4096, 2 * HOUR), (16384, 2 * HOUR),
                      (16385, 0.5 * HOUR), (49152, 0.5 * HOUR)):
        d = jeannot.mira_durations(np.full(4000, float(q)), rng)
        assert np.median(d) == pytest.approx(median, rel=0.01)
        assert np.std(d) == pytest.approx(0.1 * median, rel=0.05)
        assert d.min() > 0


def test_max_entropy_weights_are_exponential_in_the_values_and_clip_the_mean():
    sizes = jeannot.UNIFORM_SIZES
    for mean in (2.0, 100.0, 1500.0, 2000.0):  # theta past -1 and 1: the bracket doubles
        w = jeannot.max_entropy_weights(sizes, mean)
        assert float(w @ sizes) == pytest.approx(mean, rel=1e-9)
        kept = w > 1e-200  # (the others underflow)
        slopes = np.diff(np.log(w[kept])) / np.diff(sizes[kept].astype(float))
        assert slopes == pytest.approx(np.full(len(slopes), slopes[0]), rel=1e-6)
    # a mean outside is clipped 1e-9 of the range inside it
    assert float(jeannot.max_entropy_weights(sizes, 0.0) @ sizes) == \
        pytest.approx(1 + 2047e-9, abs=1e-11)
    assert float(jeannot.max_entropy_weights(sizes, 1e6) @ sizes) == \
        pytest.approx(2048 - 2047e-9, abs=1e-9)
    assert jeannot.max_entropy_weights([1, 2, 3], 2.0) == pytest.approx([1 / 3] * 3)


def _uniform_stream(n: int, seed: int):
    """The Uniform protocol's draws in their order: iterations, w, the sizes' uniforms, then
    the uniforms of the I/O proportions (low or Normal, then high)."""
    rng = np.random.default_rng(seed)
    rng.integers(10, 101, n)
    rng.uniform(10 * MINUTE, 100 * MINUTE, n)
    rng.random(n)
    return rng.uniform(size=n), rng.uniform(size=n)


def test_binormal_picks_high_while_the_running_alpha_is_below_the_target():
    n, alpha = 60, 0.3
    wl = jeannot.generate(n, alpha=alpha, protocol="uniform", seed=5)
    u_main, u_alt = _uniform_stream(n, 5)
    low = jeannot._trunc_normal(u_main, 0.1)
    high = jeannot._trunc_normal(u_alt, 0.9)
    p, num, den = wl.nodes, 0.0, 0.0
    classes = [j.extra["io"]["io_class"] for j in wl.jobs]
    assert set(classes) == {"low", "high"}
    for k, j in enumerate(wl.jobs):
        io = j.extra["io"]
        it, w, q = io["iterations"], io["compute_seconds"], j.nodes
        if k == 0:  # the type whose own alpha lands closer to the target
            scale = w * q / p
            own = [x * scale / (w + x * scale) * p / q for x in (low[0], high[0])]
            assert (classes[0] == "high") == (abs(own[1] - alpha) < abs(own[0] - alpha))
        else:
            assert (classes[k] == "high") == (num / den < alpha)
        x = high[k] if classes[k] == "high" else low[k]
        assert io["io_fraction"] == x
        io_t = io["io_bytes"] / io["io_bandwidth"]
        assert io_t == pytest.approx(x * w * q / p, rel=1e-12)
        num += it * io_t
        den += q / p * it * (w + io_t)
    assert wl.alpha == pytest.approx(num / den, rel=1e-12)


def test_the_first_application_may_be_low():
    # a target far below anything high gives: the first application is low
    wl = jeannot.generate(5, alpha=0.01, protocol="uniform", strict=False, seed=5)
    assert wl.jobs[0].extra["io"]["io_class"] == "low"
    wl = jeannot.generate(5, alpha=50.0, protocol="uniform", strict=False, seed=5)
    assert [j.extra["io"]["io_class"] for j in wl.jobs] == ["high"] * 5


def test_normal_is_calibrated_to_the_target_or_keeps_mu_at_alpha():
    n = 40
    u_main, _ = _uniform_stream(n, 2)
    for alpha in (0.2, 0.4):
        wl = jeannot.generate(n, alpha=alpha, protocol="uniform", io_profile="normal", seed=2)
        assert wl.alpha == pytest.approx(alpha, abs=1e-7)
        assert {j.extra["io"]["io_class"] for j in wl.jobs} == {"normal"}
        raw = jeannot.generate(n, alpha=alpha, protocol="uniform", io_profile="normal", seed=2,
                               calibrate=False, strict=False)
        fractions = [j.extra["io"]["io_fraction"] for j in raw.jobs]
        assert fractions == pytest.approx(jeannot._trunc_normal(u_main, alpha).tolist(),
                                          rel=1e-12)
        assert raw.alpha == pytest.approx(jeannot.io_load(raw.jobs, raw.nodes))
    # out of reach: mu at the bracket's end (-5 below, 6 above)
    for alpha, mu in ((1e-6, -5.0), (100.0, 6.0)):
        wl = jeannot.generate(n, alpha=alpha, protocol="uniform", io_profile="normal",
                              strict=False, seed=2)
        fractions = [j.extra["io"]["io_fraction"] for j in wl.jobs]
        assert fractions == pytest.approx(jeannot._trunc_normal(u_main, mu).tolist(),
                                          rel=1e-9, abs=1e-12)


def test_uniform_sizes_have_the_rearranged_mean_and_stay_under_p():
    # Q_bar = P E(X) / (alpha (1 + E(X))): E(X) = 0.5 for BiNormal, the truncated mean for Normal
    n = 4000
    bn = jeannot.generate(n, alpha=1.0, protocol="uniform", strict=False, seed=3)
    assert np.mean([j.nodes for j in bn.jobs]) == pytest.approx(2048 * 0.5 / 1.5, rel=0.05)
    ex = stats.truncnorm.mean(-2.0 / SD, -1.0 / SD, loc=2.0, scale=SD)
    no = jeannot.generate(n, alpha=2.0, protocol="uniform", io_profile="normal", strict=False,
                          seed=3)
    assert np.mean([j.nodes for j in no.jobs]) == pytest.approx(2048 * ex / (2 * (1 + ex)),
                                                                rel=0.05)
    small = jeannot.generate(200, alpha=0.3, protocol="uniform", nodes=100, strict=False, seed=3)
    assert {j.nodes for j in small.jobs} <= {1, 2, 4, 8, 16, 32, 64}
    assert 64 in {j.nodes for j in small.jobs}
    w = [j.extra["io"]["compute_seconds"] for j in bn.jobs]
    assert 10 * MINUTE <= min(w) < 11 * MINUTE and 99 * MINUTE < max(w) <= 100 * MINUTE


def test_jobs_fields_follow_equation_1():
    wl = jeannot.generate(12, alpha=0.4, protocol="uniform", bandwidth=3 * GB, strict=False,
                          seed=1)
    assert (wl.family, wl.nodes, wl.bandwidth, wl.target) == ("U-BN", 2048, 3 * GB, 0.4)
    assert [j.id for j in wl.jobs][:2] == ["app01", "app02"] and wl.jobs[-1].id == "app12"
    for j in wl.jobs:
        io = j.extra["io"]
        assert set(io) == {"model", "iterations", "compute_seconds", "io_bytes", "io_fraction",
                           "io_class", "io_bandwidth"}
        assert io["model"] == "periodic" and io["io_bandwidth"] == 3 * GB
        assert isinstance(io["iterations"], int) and 10 <= io["iterations"] <= 100
        t = io["iterations"] * (io["compute_seconds"] + io["io_bytes"] / (3 * GB))
        assert j.submit == 0.0 and j.walltime == pytest.approx(t) and j.runtime == j.walltime
        assert j.bandwidth == pytest.approx(io["iterations"] * io["io_bytes"] / (t * j.nodes))
    assert jeannot.io_load(wl.jobs, wl.nodes) == pytest.approx(wl.alpha)
    assert [j.id for j in jeannot.generate(9, alpha=0.4, protocol="uniform", strict=False,
                                           seed=1).jobs][-1] == "app9"
    mira = jeannot.generate(20, alpha=0.5, io_profile="normal", seed=1)
    assert (mira.family, mira.nodes) == ("M-No", 49152)
    assert all(512 <= j.nodes <= 49152 for j in mira.jobs)
    totals = [j.extra["io"]["iterations"] * j.extra["io"]["compute_seconds"] for j in mira.jobs]
    assert min(totals) > 0.3 * HOUR and max(totals) < 2.6 * HOUR


def test_a_mira_set_needs_p_at_least_its_widest_job():
    rng = np.random.default_rng(4)
    rng.integers(10, 101, 10)
    widest = int(jeannot.mira_processors(10, rng).max())
    ok = jeannot.generate(10, alpha=0.5, nodes=widest, strict=False, seed=4)
    assert ok.nodes == widest and max(j.nodes for j in ok.jobs) == widest
    with pytest.raises(InputError, match=rf": Mira jobs reach 49152 nodes; nodes={widest - 1} "
                                         r"is too small$") as e:
        jeannot.generate(10, alpha=0.5, nodes=widest - 1, seed=4)
    assert e.value.field == "nodes"


def test_strict_tolerance_and_the_reachable_range():
    loose = jeannot.generate(30, alpha=0.05, protocol="uniform", strict=False, seed=1)
    gap = abs(loose.alpha - 0.05) / 0.05
    assert jeannot.generate(30, alpha=0.05, protocol="uniform", tolerance=gap * 1.001,
                            seed=1).jobs == loose.jobs
    u_main, u_alt = _uniform_stream(30, 1)
    p = 2048
    n = np.array([j.extra["io"]["iterations"] for j in loose.jobs], dtype=float)
    w = np.array([j.extra["io"]["compute_seconds"] for j in loose.jobs])
    q = np.array([j.nodes for j in loose.jobs], dtype=float)
    a_min = jeannot._alpha(n, w, jeannot._trunc_normal(u_main, 0.1) * w * q / p, q, p)
    a_max = jeannot._alpha(n, w, jeannot._trunc_normal(u_alt, 0.9) * w * q / p, q, p)
    message = (f": target I/O load alpha=0.05 not reached: got {loose.alpha:.4g}; this "
               f"uniform-binormal set on P=2048 nodes reaches about [{a_min:.3g}, {a_max:.3g}] "
               "(strict=False returns it anyway)")
    with pytest.raises(InputError) as e:
        jeannot.generate(30, alpha=0.05, protocol="uniform", tolerance=gap * 0.999, seed=1)
    assert str(e.value).endswith(message) and e.value.field == "alpha"
    with pytest.raises(InputError) as e:
        jeannot.generate(30, alpha=5.0, protocol="uniform", io_profile="normal", seed=1)
    assert "uniform-normal set on P=2048 nodes reaches about [0, " in str(e.value)
    no = jeannot.generate(30, alpha=5.0, protocol="uniform", io_profile="normal", strict=False,
                          seed=1).jobs
    n = np.array([j.extra["io"]["iterations"] for j in no], dtype=float)
    w = np.array([j.extra["io"]["compute_seconds"] for j in no])
    q = np.array([j.nodes for j in no], dtype=float)
    a_one = jeannot._alpha(n, w, w * q / p, q, p)  # every proportion 1
    assert str(e.value).endswith(f"{a_one:.3g}] (strict=False returns it anyway)")


@pytest.mark.parametrize(("kw", "field", "message"), [
    ({"alpha": 0.0}, "alpha", "alpha must be > 0, got 0.0"),
    ({"alpha": float("inf")}, "alpha", "alpha must be > 0, got inf"),
    ({"alpha": float("nan")}, "alpha", "alpha must be > 0, got nan"),
    ({"protocol": "Mira"}, "protocol", "protocol must be 'mira' or 'uniform', got 'Mira'"),
    ({"io_profile": "bn"}, "io_profile",
     "io_profile must be 'binormal' or 'normal', got 'bn'"),
    ({"bandwidth": 0.0}, "bandwidth", "bandwidth must be > 0 bytes/s, got 0.0"),
])
def test_generate_refuses(kw, field, message):
    with pytest.raises(InputError) as e:
        jeannot.generate(5, **kw)
    assert str(e.value).endswith(": " + message) and e.value.field == field


def test_a_distance_of_exactly_the_tolerance_is_accepted():
    loose = jeannot.generate(30, alpha=0.05, protocol="uniform", strict=False, seed=0)
    tolerance = abs(loose.alpha - 0.05) / 0.05
    assert tolerance * 0.05 == abs(loose.alpha - 0.05)  # (exact in floating point here)
    assert jeannot.generate(30, alpha=0.05, protocol="uniform", tolerance=tolerance,
                            seed=0).jobs == loose.jobs


def test_a_target_at_the_lowest_reachable_alpha_keeps_mu_at_the_low_end():
    n, p, seed = 20, jeannot.MIRA_NODES, 6
    rng = np.random.default_rng(seed)  # the Mira protocol's draws: sizes do not depend on alpha
    it = rng.integers(10, 101, n).astype(float)
    q = jeannot.mira_processors(n, rng)
    w = jeannot.mira_durations(q, rng) / it
    u_main = rng.uniform(size=n)
    lowest = jeannot._alpha(it, w, jeannot._trunc_normal(u_main, -5.0) * w * q / p, q, p)
    wl = jeannot.generate(n, alpha=lowest, io_profile="normal", strict=False, seed=seed)
    assert [j.extra["io"]["io_fraction"] for j in wl.jobs] == \
        jeannot._trunc_normal(u_main, -5.0).tolist()
    assert wl.alpha == lowest


def test_n_apps_and_bandwidth_bounds():
    with pytest.raises(InputError, match=r"must be between 1 and 100,000,000, got 0") as e:
        jeannot.generate(0)
    assert e.value.field == "n_apps"
    with pytest.raises(InputError) as e:
        jeannot.generate(10**8 + 1)
    assert e.value.field == "n_apps"
    with pytest.raises(InputError) as e:  # 10^7 + 1 applications pass the count
        jeannot.generate(10**7 + 1, alpha=0.0)
    assert e.value.field == "alpha"
    one = jeannot.generate(5, alpha=0.3, protocol="uniform", bandwidth=1.0, strict=False)
    assert {j.extra["io"]["io_bandwidth"] for j in one.jobs} == {1.0}


def test_defaults():
    assert jeannot.generate(8).jobs == \
        jeannot.generate(8, alpha=0.5, protocol="mira", io_profile="binormal", nodes=49152,
                         bandwidth=10 * GB, calibrate=True, tolerance=0.05, seed=0).jobs
    assert jeannot.generate(8, alpha=0.3, protocol="uniform").jobs != \
        jeannot.generate(8, alpha=0.3, protocol="uniform", seed=1).jobs
    wl = jeannot.generate(alpha=0.5, protocol="uniform", io_profile="normal")
    assert len(wl.jobs) == 1000 and wl.jobs[0].extra["io"]["io_bandwidth"] == 10 * GB
    with pytest.raises(InputError):
        jeannot.generate(alpha=0.05)  # strict by default: M-BN cannot reach 0.05
    with pytest.raises(InputError):
        jeannot.generate(0)


def test_from_spec():
    wl = jeannot.from_spec("jeannot:u-no:0.4:12", seed=3)
    ref = jeannot.generate(12, alpha=0.4, protocol="uniform", io_profile="normal", seed=3)
    assert (wl.family, len(wl.jobs), wl.target) == ("U-No", 12, 0.4) and wl.jobs == ref.jobs
    assert jeannot.from_spec("jeannot:U-BN:0.3:7").jobs == \
        jeannot.generate(7, alpha=0.3, protocol="uniform", seed=0).jobs
    assert jeannot.from_spec("jeannot:M-No:0.5:5").family == "M-No"
    assert jeannot.from_spec("jeannot:M-BN:0.5:8").family == "M-BN"
    assert len(jeannot.from_spec("jeannot:U-No:0.5").jobs) == 1000
    for bad in ("jeannot:U-No", "jeannot:U-No:0.5:5:5", "jean:U-No:0.5", "jeannot:X-No:0.5"):
        with pytest.raises(InputError) as e:
            jeannot.from_spec(bad)
        assert str(e.value).endswith(f": workload {bad!r}: expected jeannot:FAMILY:ALPHA[:APPS]"
                                     " with FAMILY one of M-BN, M-No, U-BN, U-No")
        assert e.value.field == "workload"
    for bad in ("jeannot:U-No:half", "jeannot:U-No:0.5:many"):
        with pytest.raises(InputError) as e:
            jeannot.from_spec(bad)
        assert str(e.value).endswith(f": workload {bad!r}: ALPHA must be a number and APPS an "
                                     "integer") and e.value.field == "workload"
