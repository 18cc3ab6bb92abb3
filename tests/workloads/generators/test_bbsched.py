"""Fan et al.'s scenarios (BBSched, Sections 4.1 and 5) on hand-made traces: the share of jobs
requesting BB reached by rounding, requests drawn from the originals strictly above the
threshold and at most the cap, a distribution conditioned the same way, SSD requests split by
share into whole gigabytes, and the BB capacity sized by demand."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import GB, TB, Job
from bbopt.errors import InputError
from bbopt.workloads.generators import bbsched


def _jobs(n: int = 10) -> list[Job]:
    bbs = [6 * TB, 4 * TB] + [0.0] * (n - 2)
    return [Job(str(i), 0, walltime=100, runtime=50, nodes=1, bb=b) for i, b in enumerate(bbs)]


def _requesting(jobs: list[Job]) -> list[float]:
    return [j.bb for j in jobs if j.bb > 0]


@pytest.mark.parametrize(("share", "count"), [(0.5, 5), (0.35, 4), (0.45, 4), (1.0, 10)])
def test_the_share_is_a_rounded_count_and_new_requests_come_from_above_the_threshold(share,
                                                                                       count):
    out = bbsched.expand_bb_requests(_jobs(), share, 5 * TB, seed=3)
    got = _requesting(out)
    assert len(got) == count
    assert got[:2] == [6 * TB, 4 * TB]  # the original requests are kept
    assert set(got[2:]) <= {6 * TB}  # only 6 TB is strictly above 5 TB


def test_a_share_already_reached_leaves_the_trace_as_it_is():
    jobs = _jobs()
    for share in (0.2, 0.25, 0.0):  # 2, 2.5 -> 2 and 0 requests: 2 already
        out = bbsched.expand_bb_requests(jobs, share, 5 * TB)
        assert [j.bb for j in out] == [j.bb for j in jobs]


def test_the_threshold_is_strict_and_the_cap_inclusive():
    with pytest.raises(InputError, match=r"no BB request above 6e\+12 B") as e:
        bbsched.expand_bb_requests(_jobs(), 0.5, 6 * TB)
    assert e.value.field == "distribution"
    both = _requesting(bbsched.expand_bb_requests(_jobs(40), 1.0, 4 * TB - 1, seed=1))
    assert set(both[2:]) == {4 * TB, 6 * TB}
    capped = _requesting(bbsched.expand_bb_requests(_jobs(40), 1.0, 0.0, seed=1,
                                                    max_request=4 * TB))
    assert set(capped[2:]) == {4 * TB}
    with pytest.raises(InputError):
        bbsched.expand_bb_requests(_jobs(), 0.5, 5 * TB, max_request=6 * TB - 1)


def test_shares_and_traces_are_checked():
    for bad in (-1e-9, 1.0000001):
        with pytest.raises(InputError, match=r"share must be in \[0, 1\]") as e:
            bbsched.expand_bb_requests(_jobs(), bad, 5 * TB)
        assert e.value.field == "share"
    with pytest.raises(InputError, match="empty workload") as e:
        bbsched.expand_bb_requests([], 0.5, 5 * TB)
    assert e.value.field == "jobs"


def test_a_distribution_is_conditioned_on_the_threshold_and_the_cap():
    def steps(rng: np.random.Generator, size: int) -> np.ndarray:
        return np.resize(np.array([5 * TB, 7 * TB, 9 * TB]), size)

    got = _requesting(bbsched.expand_bb_requests(_jobs(), 0.5, 5 * TB, distribution=steps))
    assert got[2:] == [7 * TB, 9 * TB, 7 * TB]  # 5 TB is not above 5 TB
    capped = _requesting(bbsched.expand_bb_requests(_jobs(), 0.5, 5 * TB, distribution=steps,
                                                    max_request=7 * TB))
    assert capped[2:] == [7 * TB] * 3  # 7 TB is at the cap, 9 TB above it
    with pytest.raises(InputError, match=r"distribution rarely exceeds 9e\+12 B \(accepted 0 "
                                         r"of \d+ draws\)") as e:
        bbsched.expand_bb_requests(_jobs(), 0.5, 9 * TB, distribution=steps)
    assert e.value.field == "distribution"


def test_scenarios_scale_their_thresholds():
    jobs = _jobs(20)
    s1 = _requesting(bbsched.bbsched_scenario(jobs, "S1", seed=2))
    assert len(s1) == 10
    s2 = _requesting(bbsched.bbsched_scenario(jobs, "S2", seed=2))
    assert len(s2) == 15
    s3 = _requesting(bbsched.bbsched_scenario(jobs, "S3", seed=2, scale=0.25))  # above 5 TB
    assert len(s3) == 10 and set(s3[2:]) == {6 * TB}
    with pytest.raises(InputError):
        bbsched.bbsched_scenario(jobs, "S3", seed=2, scale=0.3)  # above 6 TB: none
    with pytest.raises(InputError, match=r"scale must be > 0, got 0") as e:
        bbsched.bbsched_scenario(jobs, "S1", scale=0.0)
    assert e.value.field == "scale"
    with pytest.raises(InputError, match=r"unknown scenario 'S8'; known: S1, S2, S3, S4, S5, "
                                         r"S6, S7") as e:
        bbsched.bbsched_scenario(jobs, "S8")
    assert e.value.field == "scenario"
    s5 = bbsched.bbsched_scenario(jobs, "S5", seed=2)
    assert len(_requesting(s5)) == 15
    assert sum(j.ssd <= 128 * GB for j in s5) == 16  # 0.8 x 20


@pytest.mark.parametrize(("share", "small"), [(0.8, 4), (0.5, 2), (0.3, 2), (0.0, 0), (1.0, 5)])
def test_ssd_requests_split_by_share_into_whole_gigabytes(share, small):
    out = bbsched.with_ssd_requests(_jobs(5), share, seed=4)
    sizes = [j.ssd / GB for j in out]
    assert all(s == int(s) for s in sizes)
    assert sum(s <= 128 for s in sizes) == small  # round(1.5) = 2
    assert all(0 <= s <= 256 for s in sizes)
    many = bbsched.with_ssd_requests(_jobs(400), 0.5, seed=4, small=(0, 1), large=(2, 3),
                                     unit=1.0)
    assert {j.ssd for j in many} == {0.0, 1.0, 2.0, 3.0}  # both bounds inclusive
    with pytest.raises(InputError, match=r"small_share must be in \[0, 1\]") as e:
        bbsched.with_ssd_requests(_jobs(5), 1.0000001)
    assert e.value.field == "small_share"


def test_theta_ssd_platform_gives_the_first_half_the_small_ssds():
    p = bbsched.theta_ssd_platform(5, 10 * TB)
    assert p.node_ssd == (128 * GB, 128 * GB, 256 * GB, 256 * GB, 256 * GB)
    assert (p.nodes, p.bb, p.name) == (5, 10 * TB, "theta-ssd")


def test_bb_capacity_for_demand_by_hand():
    # 2 nodes x 100 s with 10 GB, 1 node x 200 s (walltime, no runtime) with none:
    # 400 node-s, 1000 GB-s; on n nodes: n x 1000 / 400 / demand GB, whole GB, at least 10 GB
    jobs = [Job("a", 0, walltime=500, runtime=100, nodes=2, bb=10 * GB),
            Job("b", 0, walltime=200, runtime=None, nodes=1, bb=0.0)]
    assert bbsched.bb_capacity_for_demand(jobs, 10) == 25 * GB
    assert bbsched.bb_capacity_for_demand(jobs, 10, demand=2.0) == 12 * GB  # 12.5 floored
    assert bbsched.bb_capacity_for_demand(jobs, 1) == 10 * GB  # 2.5 GB, below the largest
    with pytest.raises(InputError, match=r"demand must be > 0, got 0") as e:
        bbsched.bb_capacity_for_demand(jobs, 10, demand=0.0)
    assert e.value.field == "demand"
    with pytest.raises(InputError, match="requests no BB") as e:
        bbsched.bb_capacity_for_demand(jobs[1:], 10)
    assert e.value.field == "sized_by"


def test_an_exact_share_or_one_missing_request():
    # 1 byte counts as a request: the share of 1 in 2 is reached and no pool above 1 B is needed
    tiny = [Job("0", 0, walltime=100, nodes=1, bb=1.0), Job("1", 0, walltime=100, nodes=1)]
    assert [j.bb for j in bbsched.expand_bb_requests(tiny, 0.5, 1.0)] == [1.0, 0.0]
    # 2 of 10 request, 0.2 reached: nothing is drawn, so no pool above 10 TB is needed
    assert [j.bb for j in bbsched.expand_bb_requests(_jobs(), 0.2, 10 * TB)] == \
        [j.bb for j in _jobs()]
    # 0.3 of 10: exactly one request is added
    assert sorted(_requesting(bbsched.expand_bb_requests(_jobs(), 0.3, 5 * TB))) == \
        [4 * TB, 6 * TB, 6 * TB]


def test_refusals_say_what_to_pass():
    with pytest.raises(InputError, match=r": empty workload: no jobs$"):
        bbsched.expand_bb_requests([], 0.5, 5 * TB)
    with pytest.raises(InputError, match=r": the trace has no BB request above 6e\+12 B to draw "
                                         r"from; pass distribution=$"):
        bbsched.expand_bb_requests(_jobs(), 0.5, 6 * TB)
    none = [Job("a", 0, walltime=100, nodes=1)]
    with pytest.raises(InputError, match=r": the workload requests no BB \(or no node-time\): "
                                         r"nothing to size the BB by$"):
        bbsched.bb_capacity_for_demand(none, 10)


def _scripted(*batches: list[float]):
    """A distribution returning the given batches in turn, recording the sizes asked for."""
    asked: list[int] = []
    left = iter(batches)

    def draw(rng: np.random.Generator, size: int) -> np.ndarray:
        asked.append(size)
        return np.array(next(left))

    return draw, asked


def test_a_conditioned_draw_asks_twice_the_missing_count_and_at_least_64():
    one_in_four = [7 * TB, 1 * TB, 2 * TB, 3 * TB]

    def quarter(rng: np.random.Generator, size: int) -> np.ndarray:
        asked.append(size)
        return np.resize(np.array(one_in_four), size)

    asked: list[int] = []
    jobs = _jobs(200)  # 2 requests, 0.51 x 200 = 102: 100 missing
    out = bbsched.expand_bb_requests(jobs, 0.51, 5 * TB, distribution=quarter)
    # 200 drawn, 50 kept; 2 x 50 = 100, 25 kept; 2 x 25 = 50 -> 64, 16 kept; 2 x 9 -> 64
    assert asked == [200, 100, 64, 64]
    assert sorted(set(_requesting(out)[2:])) == [7 * TB]


def test_a_conditioned_draw_gives_up_past_1000_per_request_plus_10000_draws():
    jobs = _jobs(4)  # 2 requests, 4 x 1.0: 2 missing, so at most 12,000 draws
    reject, accept = [1 * TB] * 12_000, [7 * TB, 8 * TB]
    draw, asked = _scripted(reject, accept)
    out = bbsched.expand_bb_requests(jobs, 1.0, 5 * TB, distribution=draw)
    assert [j.bb for j in out] == [6 * TB, 4 * TB, 7 * TB, 8 * TB]
    assert asked == [64, 64]  # the 2 accepted in the second batch end the draw
    draw, _ = _scripted([1 * TB] * 12_001, accept)
    with pytest.raises(InputError, match=r": distribution rarely exceeds 5e\+12 B \(accepted 0 "
                                         r"of 12001 draws\)$"):
        bbsched.expand_bb_requests(jobs, 1.0, 5 * TB, distribution=draw)


def test_default_seeds_are_0_and_one_stream_runs_through_a_scenario():
    jobs = _jobs(20)
    for seed in (0, 2):
        s1 = bbsched.bbsched_scenario(jobs, "S1", seed=seed)
        assert s1 == bbsched.expand_bb_requests(jobs, 0.5, 5 * TB, seed=seed)
        s2 = bbsched.bbsched_scenario(jobs, "S2", seed=seed)
        rng = np.random.default_rng(seed)
        s5 = bbsched.with_ssd_requests(bbsched.bbsched_scenario(jobs, "S2", rng), 0.8, rng)
        assert bbsched.bbsched_scenario(jobs, "S5", seed=seed) == s5
        assert [j.bb for j in s5] == [j.bb for j in s2]
    assert bbsched.bbsched_scenario(jobs, "S1") == bbsched.bbsched_scenario(jobs, "S1", seed=0)
    assert bbsched.bbsched_scenario(jobs, "S1") != bbsched.bbsched_scenario(jobs, "S1", seed=1)
    assert bbsched.bbsched_scenario(jobs, "S5") == bbsched.bbsched_scenario(jobs, "S5", seed=0)
    assert bbsched.expand_bb_requests(jobs, 0.5, 5 * TB) == \
        bbsched.expand_bb_requests(jobs, 0.5, 5 * TB, seed=0)
    assert bbsched.expand_bb_requests(jobs, 0.5, 5 * TB) != \
        bbsched.expand_bb_requests(jobs, 0.5, 5 * TB, seed=1)
    ssd = bbsched.with_ssd_requests(jobs, 0.5)
    assert ssd == bbsched.with_ssd_requests(jobs, 0.5, seed=0)
    assert ssd != bbsched.with_ssd_requests(jobs, 0.5, seed=1)


def test_ssd_scenarios_pass_their_options_on_to_s2():
    jobs = _jobs(40)
    capped = bbsched.bbsched_scenario(jobs, "S1", seed=1, max_request=5 * TB, scale=0.5)
    assert set(_requesting(capped)[2:]) == {4 * TB}  # 6 TB above the cap, 4 TB above 2.5 TB
    for name in ("S5", "S6", "S7"):
        out = bbsched.bbsched_scenario(jobs, name, seed=1, max_request=5 * TB, scale=0.5)
        assert set(_requesting(out)[2:]) == {4 * TB} and len(_requesting(out)) == 30
        steps, _ = _scripted([9 * TB] * 64)
        drawn = bbsched.bbsched_scenario(jobs, name, seed=1, distribution=steps)
        assert set(_requesting(drawn)[2:]) == {9 * TB}


def test_bb_capacity_for_one_node_second_and_one_byte():
    # 1 node x 1 s with 1 B: 1 node-s, 1 B-s; 10 nodes: 10 B, floored to 0 GB, so the 1 B request
    one = [Job("a", 0, walltime=5, runtime=1, nodes=1, bb=1.0)]
    assert bbsched.bb_capacity_for_demand(one, 10) == 1.0
    # 1 node x 1 s with 10 GB: 10 nodes x 10 GB
    assert bbsched.bb_capacity_for_demand([Job("a", 0, walltime=5, runtime=1, nodes=1,
                                               bb=10 * GB)], 10) == 100 * GB
