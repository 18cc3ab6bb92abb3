"""Entitlement shares that entitle nobody are refused: all zero, or naming no entity (user) of
the workload; any other mapping is fractions summing to (0, 1]."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt import Job
from bbopt.analysis.entitlements import workload_entitlements
from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.workloads.shares import check_entities, entitled_nodes, parse_shares


@pytest.mark.parametrize("spec", ["a:0,b:0", {"a": 0, "b": 0.0}, {"a": 0}])
def test_all_zero_shares_are_refused(spec):
    with pytest.raises(InputError, match="all zero"):
        parse_shares(spec)


def test_all_zero_shares_file_names_the_file(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text("shares: {alice: 0, bob: 0}\n")
    with pytest.raises(InputError) as exc:
        parse_shares(str(path))
    assert exc.value.source == str(path) and "all zero" in str(exc.value)


@pytest.mark.parametrize("spec, expect", [("a:1e-9", {"a": 1e-9}), ("a:0,b:1", {"a": 0, "b": 1}),
                                          ("a:60,b:40", {"a": 0.6, "b": 0.4})])
def test_small_and_partial_shares_are_kept(spec, expect):
    assert parse_shares(spec) == pytest.approx(expect)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.text(min_size=1, max_size=5), st.one_of(st.floats(-1, 200), st.floats()),
                       max_size=6))
def test_shares_are_fractions_that_entitle_someone_or_an_input_error(spec):
    try:
        out = parse_shares(spec)
    except InputError:
        return
    assert 0 < sum(out.values()) <= 1 + 1e-9
    assert all(v >= 0 and math.isfinite(v) for v in out.values())


@pytest.mark.parametrize("value, shown", [(10**400, "an integer of 401 digits"),
                                          (-10**30, "-1e+30"), (-1, "-1"), ("inf", "'inf'")])
def test_a_share_beyond_any_float_or_negative_is_refused_by_name(value, shown):
    import re

    with pytest.raises(InputError, match=re.escape(f"share of 'a' must be >= 0 and finite, "
                                                   f"got {shown}") + "$") as err:
        parse_shares({"a": value})
    assert err.value.field == "shares.a"


JOBS = [Job("1", 0.0, 10.0, user="alice"), Job("2", 0.0, 10.0, user="bob"),
        Job("3", 0.0, 10.0)]


@pytest.mark.parametrize("shares, ok", [({"alice": 0.5}, True), ({"unknown": 0.2}, True),
                                        ({"carol": 0.5}, False),
                                        ({"carol": 0.5, "alice": 0.0}, False)])
def test_shares_must_entitle_an_entity_of_the_workload(shares, ok):
    if ok:
        check_entities(shares, JOBS)
    else:
        with pytest.raises(InputError, match="entitle none of the workload's 3 entities"):
            check_entities(shares, JOBS)


def test_given_shares_are_checked_against_the_workload():
    with pytest.raises(InputError) as exc:
        workload_entitlements(["omfs"], {"shares": "carol:0.5"}, JOBS)
    assert exc.value.field == "--shares"
    assert workload_entitlements(["omfs"], {"shares": "alice:0.5"}, JOBS) is None
    assert workload_entitlements(["fcfs"], {"shares": "carol:0.5"}, JOBS) is None  # unused


def test_shares_of_another_trace_through_the_cli(tmp_path, capsys):
    shares = tmp_path / "s.yaml"
    shares.write_text("nobody_here: 50\n")
    assert main(["simulate", "--jobs", "50", "--policy", "omfs", "--shares", str(shares),
                 "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "entitle none of the workload's" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(("share", "nodes", "entitled"), [
    (0.25, 10, 2),   # floor(2.5): rounding gives 2 or 3, ceil 3
    (0.5, 7, 3),     # floor(3.5): round-half-up and ceil give 4
    (0.39, 10, 3),   # floor(3.9): any rounding gives 4
    (0.29, 100, 29),  # 0.29 x 100 is 28.999999999999996 in floats: a bare floor gives 28
    (0.57, 100, 57),  # 56.99999999999999 likewise
    (1.0, 96, 96),
    (0.01, 96, 0),   # floor(0.96): an entity may be entitled to no node
])
def test_entitlement_is_the_floor_of_share_times_nodes(share, nodes, entitled):
    # Zvi & Oren, Algorithm 1 line 25: floor((percent / 100) x CPU_total); shares are the
    # fractions percent / 100, not percents
    assert entitled_nodes({"u": share}, nodes) == {"u": entitled}


@pytest.mark.parametrize("suffix, text", [
    (".yaml", "shares:\n  physics: 50\n  chemistry: 30\n"),
    (".yml", "physics: 50\nchemistry: 30\n"),
    (".json", '{"shares": {"physics": 0.5, "chemistry": 0.3}}'),
    (".json", '{"physics": 0.5, "chemistry": 0.3}'),
])
def test_a_shares_file_with_or_without_its_top_level_key(tmp_path, suffix, text):
    path = tmp_path / f"s{suffix}"
    path.write_text(text)
    for spec in (str(path), path):
        assert parse_shares(spec) == pytest.approx({"physics": 0.5, "chemistry": 0.3})


def test_a_missing_shares_file_is_named(tmp_path):
    path = str(tmp_path / "nope.yml")
    with pytest.raises(InputError) as exc:
        parse_shares(path, field="--shares")
    assert (exc.value.source, exc.value.field, exc.value.reason) == (
        path, "--shares", "shares file not found")


@pytest.mark.parametrize("text, message", [
    ("[]", "shares must be a non-empty mapping entity -> share"),
    ("shares: {}", "shares must be a non-empty mapping entity -> share"),
    ("a: x", "share of 'a' is not a number: 'x'"),
    ("a: [1]", "share of 'a' is not a number: [1]"),
    ("a: -2", "share of 'a' must be >= 0 and finite, got -2"),
    ("a: 0.9\nb: 0.5", "shares sum to 1.4 > 1 (100 %)"),
    ("a: 0\nb: 0", "shares are all zero: nobody would be entitled to anything"),
])
def test_a_bad_shares_file_names_the_file_and_field(tmp_path, text, message):
    path = tmp_path / "s.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as exc:
        parse_shares(str(path), field="f")
    assert exc.value.source == str(path) and exc.value.reason == message
    assert exc.value.field == ("f.a" if "of 'a'" in message else "f")


@pytest.mark.parametrize("spec, expect", [
    ("a:0.5,,b:0.25,", {"a": 0.5, "b": 0.25}),          # empty parts are skipped
    (" a : 0.5 , b:0.25", {"a": 0.5, "b": 0.25}),       # names stripped
    ("x:y:0.5", {"x:y": 0.5}),                           # the last colon splits
    ({1: 0.5, "b": "0.25"}, {"1": 0.5, "b": 0.25}),      # names as text, values as numbers
])
def test_a_shares_string_or_mapping_is_read(spec, expect):
    out = parse_shares(spec)
    assert out == expect and all(type(v) is float for v in out.values())


@pytest.mark.parametrize("spec, part", [("a0.5", "a0.5"), ("a:0.5,:0.5", ":0.5"),
                                        ("a:0.5, :0.2", " :0.2")])
def test_a_share_without_its_entity_is_named(spec, part):
    with pytest.raises(InputError) as exc:
        parse_shares(spec, field="--shares")
    assert exc.value.reason == f"share {part!r} is not ENTITY:SHARE"
    assert (exc.value.field, exc.value.source) == ("--shares", None)


@pytest.mark.parametrize("spec, message, field", [
    ("", "shares must be a non-empty mapping entity -> share", "shares"),
    (",", "shares must be a non-empty mapping entity -> share", "shares"),
    ({}, "shares must be a non-empty mapping entity -> share", "shares"),
    (0.5, "shares must be a non-empty mapping entity -> share", "shares"),
    ("a:b", "share of 'a' is not a number: 'b'", "shares.a"),
    ({"a": None}, "share of 'a' is not a number: None", "shares.a"),
    ({"a": float("nan")}, "share of 'a' must be >= 0 and finite, got nan", "shares.a"),
])
def test_a_bad_share_is_named_by_entity(spec, message, field):
    with pytest.raises(InputError) as exc:
        parse_shares(spec)
    assert (exc.value.reason, exc.value.field, exc.value.source) == (message, field, None)


@pytest.mark.parametrize("spec, expect", [
    ({"a": 1.0, "b": 0.5}, "1.5"),                 # 1.5 is not read as percentages: too much
    ({"a": 1.0, "b": 0.51}, {"a": 0.01, "b": 0.0051}),  # above 1.5: percentages
    ({"a": 100.0}, {"a": 1.0}), ({"a": 1.0}, {"a": 1.0}),
    ({"a": 1.0 + 0.5e-9}, {"a": 1.0 + 0.5e-9}),   # rounding above 1 is kept
    ({"a": 1.0 + 1e-9}, {"a": 1.0 + 1e-9}),       # up to 1 + 1e-9 itself
    ({"a": 1.0 + 2e-9}, "1"), ({"a": 100.0, "b": 1e-6}, "1"),
    ({"a": 50.0, "b": 51.0}, "1.01"),             # 101 %: refused in fractions, not percents
])
def test_percentages_and_the_total_bound(spec, expect):
    if isinstance(expect, str):
        with pytest.raises(InputError) as exc:
            parse_shares(spec)
        assert str(exc.value) == f"field 'shares': shares sum to {expect} > 1 (100 %)"
    else:
        assert parse_shares(spec) == pytest.approx(expect, rel=1e-12, abs=0)


def test_the_total_is_shown_in_the_unit_read():
    with pytest.raises(InputError) as exc:
        parse_shares({"a": 60, "b": 60})
    assert exc.value.reason == "shares sum to 1.2 > 1 (100 %)"
    with pytest.raises(InputError) as exc:
        parse_shares({"a": 0.75, "b": 0.5})
    assert exc.value.reason == "shares sum to 1.25 > 1 (100 %)"


def test_the_number_of_entities_is_bounded(monkeypatch):
    import bbopt.workloads.shares as shares

    monkeypatch.setattr(shares, "MAX_ENTITIES", 3)
    assert len(parse_shares({"a": 0.1, "b": 0.1, "c": 0.1})) == 3
    with pytest.raises(InputError) as exc:
        parse_shares({"a": 0.1, "b": 0.1, "c": 0.1, "d": 0.1}, field="f")
    assert (exc.value.reason, exc.value.field) == ("4 entities; at most 3", "f")


def test_too_many_entities_in_a_file_names_the_file(monkeypatch, tmp_path):
    import bbopt.workloads.shares as shares

    monkeypatch.setattr(shares, "MAX_ENTITIES", 1)
    path = tmp_path / "s.json"
    path.write_text('{"a": 0.5, "b": 0.5}')
    with pytest.raises(InputError) as exc:
        parse_shares(path)
    assert str(exc.value) == f"{path}, field 'shares': 2 entities; at most 1"


def test_entities_named_in_the_refusal_are_the_first_five():
    jobs = [Job(str(k), 0.0, 1.0, user=u) for k, u in enumerate("fedcba")]
    with pytest.raises(InputError) as exc:
        check_entities({"z": 1.0}, jobs, field="--shares")
    assert exc.value.reason == ("the shares entitle none of the workload's 6 entities (a, b, c, "
                                "d, e, ...); entities are the jobs' users")
    assert exc.value.field == "--shares"
    with pytest.raises(InputError) as exc:
        check_entities({"z": 1.0}, jobs[:5])
    assert exc.value.reason.startswith("the shares entitle none of the workload's 5 entities "
                                       "(b, c, d, e, f); ")
    assert exc.value.field == "shares"
    check_entities({"z": 1.0}, [])  # no job: nothing to entitle


def test_with_shares_writes_each_entitys_share_and_keeps_extra():
    from bbopt.workloads.shares import SHARE_KEY, with_shares

    jobs = [Job("1", 0.0, 1.0, user="alice", extra={"q": 1}), Job("2", 0.0, 1.0, user="bob"),
            Job("3", 0.0, 1.0)]
    out = with_shares(jobs, {"alice": 1, "unknown": 0.25})
    assert SHARE_KEY == "entitlement"
    assert [j.extra for j in out] == [{"q": 1, "entitlement": 1.0}, {"entitlement": 0.0},
                                      {"entitlement": 0.25}]
    assert type(out[0].extra["entitlement"]) is float and jobs[0].extra == {"q": 1}
    assert [(j.id, j.user) for j in out] == [("1", "alice"), ("2", "bob"), ("3", None)]


def test_workload_shares_reads_them_back():
    from bbopt.workloads.shares import with_shares, workload_shares

    jobs = [Job("1", 0.0, 1.0, user="alice"), Job("2", 0.0, 1.0, user="bob"), Job("3", 0.0, 1.0)]
    assert workload_shares(jobs) is None
    assert workload_shares(with_shares(jobs, {"alice": 0.5, "unknown": 0.25})) == {
        "alice": 0.5, "bob": 0.0, "unknown": 0.25}
    tagged = jobs[1:] + with_shares(jobs[:1], {"alice": 50})  # untagged jobs are left out
    assert workload_shares(tagged) == {"alice": 0.5}
    clash = with_shares(jobs, {"alice": 0.5}) + with_shares([Job("4", 0.0, 1.0, user="alice")],
                                                            {"alice": 0.25})
    with pytest.raises(InputError) as exc:
        workload_shares(clash)
    assert exc.value.reason == ("jobs of entity 'alice' carry different entitlement shares (0.5 "
                                "and 0.25; job 4)")
    assert exc.value.field == "extra.entitlement"
    none_user = with_shares([jobs[2]], {"unknown": 0.5}) + with_shares([jobs[2]], {"unknown": 0.1})
    with pytest.raises(InputError, match="entity 'unknown'"):
        workload_shares(none_user)
