"""Herbein et al.'s user-arrival model (HPDC 2016, Section 4.2) on hand-made traces and models:
the four time ranges and their boundaries, the calendar cut into pieces, user arrivals bundled
under the 10 s gap, the rates over the time spent in each range, the empirical distributions
normalised, the default and CTS-1 parameters, the offered load, and the jobs drawn from a model
whose distributions have one value each."""

from __future__ import annotations

import numpy as np
import pytest

from bbopt.core import DAY, HOUR, MB, MINUTE, Job
from bbopt.errors import InputError
from bbopt.workloads.generators import herbein
from bbopt.workloads.generators.herbein import WEEK, HerbeinModel

ONE = (np.array([1]), np.array([1.0]))


def _model(rates: dict[str, float] | None = None, *, jobs: int = 1, nodes: int = 8,
           pair: tuple[float, float] = (100.0, 40.0), **kw) -> HerbeinModel:
    """A model with one value per distribution: every arrival brings ``jobs`` jobs of ``nodes``
    nodes and the (time limit, elapsed) ``pair``; one arrival an hour in every range."""
    rates = rates or dict.fromkeys(herbein.RANGES, 1 / HOUR)
    return HerbeinModel(rates, (np.array([jobs]), np.array([1.0])),
                        (np.array([nodes]), np.array([1.0])),
                        (np.array([pair]), np.array([1.0])), **kw)


@pytest.mark.parametrize(("t", "expected"), [
    (6 * HOUR, "weekday_day"), (6 * HOUR - 1e-6, "weekday_night"),
    (19 * HOUR - 1e-6, "weekday_day"), (19 * HOUR, "weekday_night"),
    (4 * DAY + 12 * HOUR, "weekday_day"),  # Friday noon
    (5 * DAY, "weekend_night"), (5 * DAY + 6 * HOUR, "weekend_day"),  # Saturday
    (7 * DAY - 1, "weekend_night"),  # Sunday 23:59:59
    (7 * DAY + 6 * HOUR, "weekday_day"),  # next Monday
    (-1.0, "weekend_night"),  # the second before Monday 00:00: Sunday night
])
def test_time_range_boundaries(t, expected):
    assert herbein.time_range(t) == expected


def test_segments_cut_at_6_00_19_00_and_midnight():
    assert list(herbein._segments(0.0, DAY + 1)) == [
        (0.0, 6 * HOUR, "weekday_night"), (6 * HOUR, 19 * HOUR, "weekday_day"),
        (19 * HOUR, DAY, "weekday_night"), (DAY, DAY + 1, "weekday_night")]
    assert list(herbein._segments(5 * HOUR, 7 * HOUR)) == [
        (5 * HOUR, 6 * HOUR, "weekday_night"), (6 * HOUR, 7 * HOUR, "weekday_day")]
    assert list(herbein._segments(6 * HOUR, 6 * HOUR)) == []
    friday = 4 * DAY + 20 * HOUR
    assert list(herbein._segments(friday, 5 * DAY + 7 * HOUR)) == [
        (friday, 5 * DAY, "weekday_night"), (5 * DAY, 5 * DAY + 6 * HOUR, "weekend_night"),
        (5 * DAY + 6 * HOUR, 5 * DAY + 7 * HOUR, "weekend_day")]


def test_a_model_refuses_missing_or_negative_rates_and_bad_distributions():
    rates = dict.fromkeys(herbein.RANGES, 1.0)
    with pytest.raises(InputError, match=r": rates missing for \['weekend_day', "
                                         r"'weekend_night'\]$") as e:
        _model({"weekday_day": 1.0, "weekday_night": 1.0})
    assert e.value.field == "rates"
    for bad in ({**rates, "weekend_day": -1e-9}, dict.fromkeys(herbein.RANGES, 0.0)):
        with pytest.raises(InputError, match=r": rates must be >= 0 and not all zero$") as e:
            _model(bad)
        assert e.value.field == "rates"
    only = {**dict.fromkeys(herbein.RANGES, 0.0), "weekend_day": 1e-9}
    assert _model(only).rates == only  # zero rates, one positive: accepted
    for name, bad in (("jobs_per_arrival", (np.array([]), np.array([]))),
                      ("node_bins", (np.array([1, 2]), np.array([1.0]))),
                      ("time_pairs", (np.array([[1.0, 1.0]]), np.array([-1.0]))),
                      ("users", (np.array(["a"]), np.array([1.0, 0.0])))):
        args = {"rates": rates, "jobs_per_arrival": ONE, "node_bins": ONE,
                "time_pairs": (np.array([[1.0, 1.0]]), np.array([1.0])), name: bad}
        with pytest.raises(InputError, match=rf": {name}: values and probabilities must be "
                                             r"non-empty, of equal length, probabilities >= 0$"
                           ) as e:
            HerbeinModel(**args)
        assert e.value.field == name
    m = HerbeinModel(rates, ([1, 2], [1, 3]), ([4, 8], [0, 2]),
                     (np.array([[1.0, 1.0]]), [5]), users=(["a", "b"], [2, 2]))
    assert m.jobs_per_arrival[1].tolist() == [0.25, 0.75]  # a zero probability is accepted
    assert m.node_bins[1].tolist() == [0.0, 1.0] and m.time_pairs[1].tolist() == [1.0]
    assert m.users[1].tolist() == [0.5, 0.5] and isinstance(m.users[0], np.ndarray)
    assert m.users[0].tolist() == ["a", "b"] and m.io_rate_per_node == 18 * MB
    assert _model().users[0].tolist() == ["1"] and _model().users[1].tolist() == [1.0]


def _trace(start_day: int = 0) -> list[Job]:
    h = HOUR
    return [Job("1", 7 * h, walltime=600, runtime=300, nodes=1, user="a"),
            Job("2", 7 * h + 5, walltime=600, runtime=300, nodes=3, user="a"),  # same arrival
            Job("3", 7 * h + 15, walltime=60, runtime=None, nodes=4, user="a"),  # 10 s: a new one
            Job("4", 20 * h, walltime=600, runtime=300, nodes=7, user="b"),
            Job("5", 20 * h + 9.5, walltime=600, runtime=300, nodes=8)]  # no user: "?"


def test_fit_bundles_arrivals_and_counts_them_over_the_time_in_each_range():
    m = HerbeinModel.fit(_trace(), io_rate_per_node=5 * MB)
    # from 7:00 to 20:00:09.5 + 1 s: 12 h of weekday day (2 arrivals), 1 h 10.5 s of night (2)
    assert m.rates == {"weekday_day": 2 / (12 * HOUR), "weekday_night": 2 / (HOUR + 10.5),
                       "weekend_day": 0.0, "weekend_night": 0.0}
    assert m.jobs_per_arrival[0].tolist() == [1, 2]
    assert m.jobs_per_arrival[1].tolist() == [0.75, 0.25]  # sizes 2, 1, 1, 1
    assert m.node_bins[0].tolist() == [1, 2, 4, 8]  # 1; 3 -> 2; 4, 7 -> 4; 8
    assert m.node_bins[1].tolist() == [0.2, 0.2, 0.4, 0.2]
    assert m.time_pairs[0].tolist() == [[60.0, 60.0], [600.0, 300.0]]  # no runtime: the limit
    assert m.time_pairs[1].tolist() == [0.2, 0.8]
    assert m.users[0].tolist() == ["?", "a", "b"]
    assert m.users[1].tolist() == [0.25, 0.5, 0.25]
    assert m.io_rate_per_node == 5 * MB
    assert HerbeinModel.fit(_trace()).io_rate_per_node == 18 * MB
    # the same submissions on a Saturday: weekend day and night
    sat = HerbeinModel.fit(_trace(), start=5 * DAY)
    assert sat.rates == {"weekday_day": 0.0, "weekday_night": 0.0,
                         "weekend_day": 2 / (12 * HOUR), "weekend_night": 2 / (HOUR + 10.5)}
    # a wider gap bundles the 15 s submission too; a 5 s gap is not under 5 s
    wide = HerbeinModel.fit(_trace(), burst_gap=10.0001)
    assert wide.jobs_per_arrival[0].tolist() == [1, 3]
    narrow = HerbeinModel.fit(_trace(), burst_gap=5.0)
    assert narrow.jobs_per_arrival[0].tolist() == [1] and narrow.rates["weekday_day"] == \
        3 / (12 * HOUR)


def test_fit_adds_up_the_time_of_each_range_over_days():
    h = HOUR
    two_days = [Job("1", 7 * h, walltime=60, nodes=1, user="a"),
                Job("2", DAY + 5 * h, walltime=60, nodes=1, user="a")]
    m = HerbeinModel.fit(two_days)
    # [7:00, Tuesday 5:00 + 1 s): day 12 h; night 5 h on Monday, 5 h 1 s on Tuesday
    assert m.rates["weekday_day"] == 1 / (12 * HOUR)
    assert m.rates["weekday_night"] == 1 / (10 * HOUR + 1)
    # an arrival at 19:00 sharp, the last: its night lasts the 1 s added to the span
    at_19 = [Job("1", 7 * h, walltime=60, nodes=1, user="a"),
             Job("2", 19 * h, walltime=60, nodes=1, user="a")]
    assert HerbeinModel.fit(at_19).rates["weekday_night"] == 1.0


def test_fit_needs_two_jobs():
    with pytest.raises(InputError, match=r": fitting needs at least two jobs$") as e:
        HerbeinModel.fit(_trace()[:1])
    assert e.value.field == "jobs"
    two = HerbeinModel.fit(_trace()[:2])  # one arrival at 7:00 over [7:00, 7:00 + 6 s)
    assert two.rates["weekday_day"] == 1 / 6 and two.jobs_per_arrival[0].tolist() == [2]


def test_default_parameters():
    m = HerbeinModel.default()
    assert m.rates == {"weekday_day": 6 / HOUR, "weekday_night": 2.5 / HOUR,
                       "weekend_day": 2.5 / HOUR, "weekend_night": 1.5 / HOUR}
    assert m.jobs_per_arrival[0].tolist() == [1, 2, 3, 4, 8, 16]
    assert m.jobs_per_arrival[1] == pytest.approx([0.62, 0.14, 0.07, 0.08, 0.06, 0.03])
    assert m.node_bins[0].tolist() == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    assert m.node_bins[1] == pytest.approx([0.30, 0.14, 0.14, 0.13, 0.11, 0.08, 0.05, 0.03,
                                            0.02])
    pairs, p = m.time_pairs
    assert len(pairs) == 40 and pairs.dtype == float
    limits = [30, 60, 120, 240, 480, 720, 960, 1440]
    assert pairs[:, 0].tolist() == [m * MINUTE for m in limits for _ in range(5)]
    assert pairs[:, 1].tolist() == [round(f * m * MINUTE) for m in limits
                                    for f in (0.05, 0.2, 0.5, 0.9, 1.0)]
    assert pairs[:5].tolist() == [[1800, 90], [1800, 360], [1800, 900], [1800, 1620],
                                  [1800, 1800]]
    assert pairs[-5:].tolist() == [[86400, 4320], [86400, 17280], [86400, 43200],
                                   [86400, 77760], [86400, 86400]]
    total = (1 - 0.8 ** 8) / 0.2  # the five weights sum to 1, times 0.8^k for limit k
    assert p[:5] == pytest.approx(np.array([0.25, 0.3, 0.25, 0.15, 0.05]) / total)
    assert p[-1] == pytest.approx(0.05 * 0.8 ** 7 / total)
    users, up = m.users
    assert users.tolist() == [str(u) for u in range(1, 41)]
    harmonic = sum(1 / k for k in range(1, 41))
    assert up[0] == pytest.approx(1 / harmonic) and up[39] == pytest.approx(1 / 40 / harmonic)
    assert m.io_rate_per_node == 18 * MB


def test_cts1_rates_give_the_offered_load_in_the_default_shape():
    for load, nodes in ((0.9, 3888), (0.5, 100), (2.0, 64)):
        m = HerbeinModel.cts1(load=load, nodes=nodes)
        assert m.offered_load(nodes) == pytest.approx(load, rel=1e-12)
        assert m.offered_load(nodes, start=3 * DAY) == pytest.approx(load, rel=1e-12)
        shape = {"weekday_day": 6.0, "weekday_night": 2.5, "weekend_day": 2.5,
                 "weekend_night": 1.5}
        for r in herbein.RANGES:
            assert m.rates[r] / m.rates["weekday_day"] == pytest.approx(shape[r] / 6.0)
    m = HerbeinModel.cts1()
    assert m.offered_load(3888) == pytest.approx(0.9, rel=1e-12)
    assert m.node_bins[0].tolist() == (2 ** np.arange(12)).tolist()
    assert m.node_bins[1] == pytest.approx(np.array([0.24, 0.15, 0.13, 0.11, 0.10, 0.09, 0.06,
                                                     0.045, 0.035, 0.025, 0.01, 0.005]))
    d = HerbeinModel.default()
    assert m.time_pairs[0].tolist() == d.time_pairs[0].tolist()
    assert m.jobs_per_arrival[0].tolist() == d.jobs_per_arrival[0].tolist()
    assert m.users[0].tolist() == d.users[0].tolist()
    assert m.users[1] == pytest.approx(d.users[1])
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(InputError, match=r": load must be > 0, got ") as e:
            HerbeinModel.cts1(load=bad)
        assert e.value.field == "load"


def test_offered_load_and_expected_arrivals_by_hand():
    per_hour = {"weekday_day": 6.0, "weekday_night": 2.0, "weekend_day": 3.0,
                "weekend_night": 1.0}
    m = _model({r: v / HOUR for r, v in per_hour.items()}, jobs=2, nodes=4, pair=(100, 50))
    # Monday: 11 h of night at 2, 13 h of day at 6
    assert m.expected_arrivals(DAY) == pytest.approx(11 * 2 + 13 * 6)
    assert m.expected_arrivals(DAY, start=5 * DAY) == pytest.approx(11 * 1 + 13 * 3)
    assert m.expected_arrivals(HOUR, start=5 * HOUR + 30 * MINUTE) == pytest.approx(1 + 3)
    assert m.expected_arrivals(6 * HOUR) == pytest.approx(12, rel=1e-9)  # from Monday 0:00
    assert m.offered_load(10, duration=6 * HOUR) == \
        pytest.approx(12 * 2 * 4 * 50 / (10 * 6 * HOUR), rel=1e-9)
    # 100 arrivals of 2 jobs of 4 nodes x 50 s over a day on 10 nodes
    assert m.offered_load(10, duration=DAY) == pytest.approx(100 * 2 * 4 * 50 / (10 * DAY))
    week = 5 * 100 + 2 * 50
    assert m.offered_load(10) == pytest.approx(week * 2 * 4 * 50 / (10 * WEEK))
    assert m.offered_load(10, start=5 * DAY, duration=DAY) == \
        pytest.approx(50 * 2 * 4 * 50 / (10 * DAY))


def test_generated_jobs_carry_the_model_values():
    m = _model(jobs=1, nodes=8, pair=(100.0, 40.0), io_rate_per_node=7 * MB)
    jobs = m.generate(n_jobs=5, cores_per_node=4, seed=3)
    assert [j.id for j in jobs] == ["1", "2", "3", "4", "5"]
    assert {(j.nodes, j.walltime, j.runtime, j.bandwidth, j.user) for j in jobs} == \
        {(8, 100.0, 40.0, 7 * MB, "1")}
    assert [j.extra for j in jobs] == [{"cores": 32}] * 5
    assert m.generate(n_jobs=1)[0].extra == {"cores": 8 * 36}
    submits = [j.submit for j in jobs]
    assert submits == sorted(submits) and len(set(submits)) == 5
    assert all(s == round(s, 3) for s in submits)
    assert [j.nodes for j in m.generate(n_jobs=3, max_nodes=5)] == [5, 5, 5]
    assert [j.nodes for j in m.generate(n_jobs=3, max_nodes=8)] == [8, 8, 8]
    floor = _model(pair=(0.5, -3.0)).generate(n_jobs=2)
    assert [(j.walltime, j.runtime) for j in floor] == [(1.0, 0.0)] * 2
    assert [(j.walltime, j.runtime) for j in _model(pair=(1.5, 0.5)).generate(n_jobs=1)] == \
        [(1.5, 0.5)]


def _never(rates: dict[str, float] | None = None) -> HerbeinModel:
    """One value per distribution again, each with a second value of probability 0."""
    return HerbeinModel(rates or dict.fromkeys(herbein.RANGES, 1 / HOUR),
                        (np.array([1, 50]), np.array([1.0, 0.0])),
                        (np.array([8, 1024]), np.array([1.0, 0.0])),
                        (np.array([[100.0, 40.0], [7.0, 7.0]]), np.array([1.0, 0.0])),
                        (np.array(["u", "v"]), np.array([1.0, 0.0])))


def test_draws_follow_the_probabilities():
    jobs = _never().generate(n_jobs=300, seed=4)
    assert len({j.submit for j in jobs}) == 300  # one job per arrival
    assert {(j.nodes, j.walltime, j.runtime, j.user) for j in jobs} == {(8, 100.0, 40.0, "u")}
    assert any(j.submit != int(j.submit) for j in jobs)  # kept to the millisecond


def test_n_jobs_reached_at_a_segments_end_draws_no_further():
    m = HerbeinModel.default()  # several node bins, pairs and users: the draws tell
    ones = HerbeinModel(m.rates, (np.array([1]), np.array([1.0])), m.node_bins, m.time_pairs,
                        m.users)
    night = ones.generate(duration=6 * HOUR, seed=3)  # Monday 0:00-6:00, one segment
    assert len(night) == 8 and len({j.nodes for j in night}) > 1
    same = ones.generate(n_jobs=len(night), seed=3)  # the last arrival of the segment ends it
    assert same == night
    assert [j.extra for j in same] == [j.extra for j in night]


def test_bundles_share_a_submit_time_and_n_jobs_cuts_the_last():
    jobs = _model(jobs=3).generate(n_jobs=4, seed=1)
    assert len(jobs) == 4
    s = [j.submit for j in jobs]
    assert s[0] == s[1] == s[2] < s[3]
    assert len({j.user for j in jobs}) == 1
    three = _model(jobs=3).generate(n_jobs=3, seed=1)
    assert [j.submit for j in three] == s[:3]


def test_arrivals_follow_the_calendar_from_start_within_duration():
    weekend = {**dict.fromkeys(herbein.RANGES, 0.0), "weekend_day": 60 / HOUR}
    m = _model(weekend)
    with pytest.raises(InputError, match=r": no arrival in the requested duration$") as e:
        m.generate(duration=5 * DAY)  # Monday to Friday: no weekend day
    assert e.value.field == "duration"
    sat = m.generate(duration=DAY, start=5 * DAY, seed=2)
    # Saturday 6:00 to 19:00 only, submit times counted from the start
    assert all(6 * HOUR <= j.submit < 19 * HOUR for j in sat)
    assert 600 < len(sat) < 960  # 13 h at 60 an hour: 780
    assert [j.submit for j in sat] == sorted(j.submit for j in sat)
    # over two weeks from Monday: the arrivals of both weekends, submit times from 0
    two = m.generate(duration=2 * WEEK, seed=2)
    days = {int(j.submit // DAY) for j in two}
    assert days == {5, 6, 12, 13}
    # n_jobs past the first week: the draw goes on into the next
    many = m.generate(n_jobs=2000, seed=2)
    assert len(many) == 2000 and max(j.submit for j in many) > WEEK
    # a duration ends the draw even when n_jobs is not reached
    assert len(m.generate(n_jobs=10_000, duration=WEEK, seed=2)) < 2000


def test_generation_needs_n_jobs_or_a_duration():
    m = _model()
    with pytest.raises(InputError, match=r": give n_jobs or duration$") as e:
        m.generate()
    assert e.value.field == "n_jobs"
    with pytest.raises(InputError, match=r": n_jobs must be >= 1, got 0$") as e:
        m.generate(n_jobs=0)
    assert e.value.field == "n_jobs"
    assert len(m.generate(n_jobs=1)) == 1
    assert m.generate(n_jobs=20) == m.generate(n_jobs=20, seed=0, start=0.0)
    assert m.generate(n_jobs=20) != m.generate(n_jobs=20, start=1.0)
    assert m.generate(n_jobs=20) != m.generate(n_jobs=20, seed=1)


@pytest.mark.parametrize(("header", "expected"), [
    ({"UnixStartTime": "0"}, 3 * DAY),  # 1970-01-01 00:00 UTC was a Thursday
    ({"UnixStartTime": "0", "TimeZone": "3600"}, 3 * DAY + HOUR),
    ({"UnixStartTime": "0", "TimeZone": "UTC+1"}, 3 * DAY),
    ({"UnixStartTime": str(4 * DAY + 5)}, 5.0),  # Monday 1970-01-05 00:00:05
    ({"UnixStartTime": "x"}, 0.0), ({}, 0.0), ({"TimeZone": "3600"}, 0.0),
])
def test_start_of_swf(header, expected):
    assert herbein.start_of_swf(header) == expected
