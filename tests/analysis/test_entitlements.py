"""Which entitlements a command-line run uses (Zvi & Oren, OMFS, Algorithm 1 lines 7-9): the
``--shares`` option when given (checked against the workload), else the shares the workload's
jobs carry, for the policies that take shares; neither is an input error naming ``--shares``."""

from __future__ import annotations

import pytest

from bbopt import Job
from bbopt.analysis.entitlements import describe, share_takers, workload_entitlements
from bbopt.errors import InputError
from bbopt.workloads.shares import with_shares

JOBS = [Job("1", 0, 10, user="alice"), Job("2", 0, 10, user="bob"), Job("3", 0, 10)]
CARRYING = with_shares(JOBS, {"alice": 0.5, "bob": 0.25})


def test_share_takers_keep_the_policies_order():
    assert share_takers(["fcfs", "partition", "omfs", "sjf-bb", "capping"]) == [
        "partition", "omfs", "capping"]
    assert share_takers(["fcfs", "conservative-bb"]) == []


def test_the_workloads_own_shares_when_no_option_gives_them():
    own = {"alice": 0.5, "bob": 0.25, "unknown": 0.0}
    assert workload_entitlements(["fcfs", "omfs"], {}, CARRYING) == own
    assert workload_entitlements(["omfs"], {"shares": None}, CARRYING) == own
    assert workload_entitlements(["fcfs"], {}, CARRYING) is None  # nobody takes shares
    assert workload_entitlements(["omfs"], {"shares": "alice:1"}, CARRYING) is None  # given


@pytest.mark.parametrize(("policies", "verb"), [
    (["fcfs", "omfs"], "omfs needs"),
    (["omfs", "fcfs", "partition"], "omfs, partition need"),
])
def test_a_share_taker_without_shares_is_refused_by_name(policies, verb):
    with pytest.raises(InputError) as info:
        workload_entitlements(policies, {"budget": 1.0}, JOBS)
    assert info.value.field == "--shares"
    assert info.value.reason == (
        f"{verb} entitlement shares: give --shares FILE (YAML/JSON 'entity: share') or a "
        "workload whose jobs carry them (bbopt generate omfs-entities)")


def test_given_shares_that_entitle_nobody_of_the_workload_are_refused():
    with pytest.raises(InputError) as info:
        workload_entitlements(["omfs"], {"shares": {"carol": 0.5}}, CARRYING)
    assert info.value.field == "--shares"
    assert info.value.reason.startswith("the shares entitle none of the workload's 3 entities")


def test_describe_names_the_takers_and_each_share_in_percent():
    assert describe(["fcfs", "omfs", "partition"], {"bob": 0.25, "alice": 1 / 3}) == (
        "omfs, partition: the workload's own entitlements (2 entities: alice 33.33 %, "
        "bob 25 %); --shares FILE overrides them")
