"""OMFS's workload inputs (Zvi & Oren): entities from users, groups or a seeded draw, each
entity's entitlement from its usage, equal or given weights normalised to 1, and the preemption
flags as exact, rounded fractions of the whole workload, checkpointable ones among the
preemptable."""

from __future__ import annotations

import pytest

from bbopt.core import Job
from bbopt.errors import InputError
from bbopt.workloads.generators import omfs


def _jobs() -> list[Job]:
    # user a: 2 nodes x 100 s + 1 node x (walltime 300 s, no runtime) = 500 node-s;
    # user b: 4 nodes x 50 s = 200 node-s; a job without a user
    return [Job("1", 0, walltime=1000, runtime=100, nodes=2, user="a", extra={"group": "g1"}),
            Job("2", 0, walltime=300, runtime=None, nodes=1, user="a", extra={"group": "g2"}),
            Job("3", 0, walltime=1000, runtime=50, nodes=4, user="b"),
            Job("4", 0, walltime=1000, runtime=100, nodes=1, user=None)]


def test_usage_shares_are_node_seconds_of_runtime_over_the_total():
    out, shares = omfs.assign_entities(_jobs())
    # a 500, b 200, unknown 100: of 800
    assert shares == {"a": 500 / 800, "b": 200 / 800, "unknown": 100 / 800}
    assert [j.user for j in out] == ["a", "a", "b", "unknown"]
    assert all("original_user" not in j.extra for j in out[:3])


def test_groups_are_entities_and_the_user_is_kept():
    out, shares = omfs.assign_entities(_jobs(), by="group", shares="equal")
    assert [j.user for j in out] == ["g1", "g2", "unknown", "unknown"]
    assert [j.extra.get("original_user") for j in out] == ["a", "a", "b", None]
    assert shares == {"g1": 1 / 3, "g2": 1 / 3, "unknown": 1 / 3}


def test_explicit_weights_are_normalised_and_checked():
    _, shares = omfs.assign_entities(_jobs()[:3], shares={"a": 3, "b": 1, "c": 9})
    assert shares == {"a": 0.75, "b": 0.25}
    _, zero = omfs.assign_entities(_jobs()[:3], shares={"a": 0.0, "b": 2.0})
    assert zero == {"a": 0.0, "b": 1.0}  # a weight of 0 is allowed
    with pytest.raises(InputError, match=r"shares must be >= 0") as e:
        omfs.assign_entities(_jobs()[:3], shares={"a": -1e-9, "b": 1.0})
    assert e.value.field == "shares"
    with pytest.raises(InputError, match=r"shares sum to zero"):
        omfs.assign_entities(_jobs()[:3], shares={"a": 0.0, "b": 0.0})
    with pytest.raises(InputError, match=r"no share given for entities \['b'\]"):
        omfs.assign_entities(_jobs()[:3], shares={"a": 1.0})
    with pytest.raises(InputError, match=r"shares must be 'equal', 'usage' or a mapping, "
                                         r"got 'even'"):
        omfs.assign_entities(_jobs(), shares="even")


def test_entity_options_are_checked_at_their_bounds():
    with pytest.raises(InputError, match="empty workload"):
        omfs.assign_entities([])
    with pytest.raises(InputError, match=r"by must be 'user', 'group' or 'random', got 'team'"):
        omfs.assign_entities(_jobs(), by="team")
    with pytest.raises(InputError, match=r"n_entities must be >= 1, got 0") as e:
        omfs.assign_entities(_jobs(), n_entities=0)
    assert e.value.field == "n_entities"
    one, shares = omfs.assign_entities(_jobs(), n_entities=1)
    assert {j.user for j in one} == {"e0"} and shares == {"e0": 1.0}
    with pytest.raises(InputError, match=r"by='random' needs n_entities"):
        omfs.assign_entities(_jobs(), by="random")


def test_a_seeded_random_draw_of_entities():
    jobs = _jobs() * 25
    a, _ = omfs.assign_entities(jobs, by="random", n_entities=2, seed=4)
    b, _ = omfs.assign_entities(jobs, by="random", n_entities=2, seed=4)
    c, _ = omfs.assign_entities(jobs, by="random", n_entities=2, seed=5)
    assert [j.user for j in a] == [j.user for j in b] != [j.user for j in c]
    assert {j.user for j in a} == {"e0", "e1"}


@pytest.mark.parametrize(("pre", "ckpt", "n_pre", "n_ckpt"), [
    (0.0, 0.0, 0, 0), (1.0, 1.0, 5, 5), (0.5, 0.5, 2, 2), (0.7, 0.3, 4, 2), (0.5, 0.1, 2, 0)])
def test_flags_are_rounded_counts_and_checkpointable_within_preemptable(pre, ckpt, n_pre, n_ckpt):
    jobs = [Job(str(i), 0, walltime=10, runtime=5) for i in range(5)]
    out = omfs.with_preemption_flags(jobs, preemptable=pre, checkpointable=ckpt, seed=1)
    assert sum(j.preemptable for j in out) == n_pre  # round(2.5) = 2, round(3.5) = 4
    assert sum(j.checkpointable for j in out) == n_ckpt
    assert all(j.preemptable for j in out if j.checkpointable)


def test_flag_fractions_are_checked_at_0_and_1():
    jobs = [Job("1", 0, walltime=10, runtime=5)]
    for name, bad in (("preemptable", 1.0000001), ("preemptable", -1e-9),
                      ("checkpointable", -1e-9)):
        with pytest.raises(InputError, match=rf"{name} must be in \[0, 1\]") as e:
            omfs.with_preemption_flags(jobs, **{name: bad})
        assert e.value.field == name
    with pytest.raises(InputError, match=r"checkpointable=0.6 > preemptable=0.5") as e:
        omfs.with_preemption_flags(jobs, preemptable=0.5, checkpointable=0.6)
    assert e.value.field == "checkpointable"
    (half,) = omfs.with_preemption_flags(jobs)  # 0.5 of 1 job rounds to 0
    assert (half.preemptable, half.checkpointable) == (False, False)


def _raises(field: str, message: str, call, *args, **kwargs) -> None:
    with pytest.raises(InputError) as e:
        call(*args, **kwargs)
    assert e.value.field == field
    assert message in str(e.value) and "XX" not in str(e.value)
    assert str(e.value).endswith(message)


def test_every_refusal_names_its_field_and_says_why():
    jobs = _jobs()[:3]
    _raises("jobs", "empty workload: no jobs", omfs.assign_entities, [])
    _raises("by", "by must be 'user', 'group' or 'random', got 'team'", omfs.assign_entities,
            jobs, by="team")
    _raises("n_entities", "by='random' needs n_entities", omfs.assign_entities, jobs,
            by="random")
    _raises("shares", "shares must be 'equal', 'usage' or a mapping, got 'even'",
            omfs.assign_entities, jobs, shares="even")
    _raises("shares", "no share given for entities ['b']", omfs.assign_entities, jobs,
            shares={"a": 1.0})
    _raises("shares", "shares must be >= 0", omfs.assign_entities, jobs,
            shares={"a": -1.0, "b": 1.0})
    _raises("shares", "shares sum to zero", omfs.assign_entities, jobs,
            shares={"a": 0.0, "b": 0.0})
    _raises("checkpointable", "checkpointable jobs are a subset of preemptable ones: "
            "checkpointable=0.6 > preemptable=0.5", omfs.with_preemption_flags, jobs,
            preemptable=0.5, checkpointable=0.6)


def test_at_most_five_missing_entities_are_named():
    jobs = [Job(str(i), 0, walltime=10, runtime=5, user=f"u{i}") for i in range(7)]
    with pytest.raises(InputError) as e:
        omfs.assign_entities(jobs, shares={"u0": 1.0})
    assert str(e.value).endswith("no share given for entities ['u1', 'u2', 'u3', 'u4', 'u5']")


def test_weights_summing_below_one_are_scaled_up():
    _, shares = omfs.assign_entities(_jobs()[:3], shares={"a": 0.3, "b": 0.2})
    assert shares == pytest.approx({"a": 0.6, "b": 0.4})


def test_both_draws_are_seeded_with_0_by_default():
    jobs = [Job(str(i), 0, walltime=10, runtime=5, user=f"u{i}") for i in range(40)]
    users = [j.user for j in omfs.assign_entities(jobs, by="random", n_entities=3)[0]]
    assert users == [j.user for j in omfs.assign_entities(jobs, by="random", n_entities=3,
                                                          seed=0)[0]]
    assert users != [j.user for j in omfs.assign_entities(jobs, by="random", n_entities=3,
                                                          seed=1)[0]]
    flags = [j.preemptable for j in omfs.with_preemption_flags(jobs)]
    assert flags == [j.preemptable for j in omfs.with_preemption_flags(jobs, seed=0)]
    assert flags == [j.preemptable for j in omfs.with_preemption_flags(jobs)]
    assert flags != [j.preemptable for j in omfs.with_preemption_flags(jobs, seed=1)]
