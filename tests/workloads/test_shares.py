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
