"""The conformance checks themselves catch what they claim to: a policy that breaks a promise
or that the engine refuses fails them."""

from __future__ import annotations

import pytest

from bbopt.core import Decision, Reservation, Start
from bbopt.policies import make_policy
from bbopt.policies.promises import Promise, promise_of, unsuited_reason
from tests._policies import PoolOnly
from tests.conformance.checks import (
    PLATFORMS,
    check_never_delayed,
    check_no_start_refused,
    check_starts_as_planned,
    checks_of,
    replay,
)


class Procrastinator:
    """Starts nothing while a job is younger than 5 s, and reserves every waiting job one
    second later at each decision: it breaks both reservation promises."""

    name = "procrastinator"
    io_aware = False
    promise = Promise.RESERVATIONS_NEVER_DELAYED

    def decide(self, state):
        free_n, _ = state.free()
        starts, plans = [], []
        for job in state.queue:
            if state.time - job.submit >= 5 and job.nodes <= free_n and not state.running:
                starts.append(Start(job.id))
                free_n -= job.nodes
            else:
                plans.append(Reservation(job.id, state.time + 6.0))
        return Decision(start=tuple(starts[:1]), reservations=tuple(plans))


def test_a_delayed_reservation_fails_the_promise_checks():
    run = replay(Procrastinator(), "pool", 0)
    with pytest.raises(AssertionError):
        check_never_delayed(run)
    with pytest.raises(AssertionError):
        check_starts_as_planned(run)


def test_a_start_the_named_nodes_cannot_place_fails():
    refused = [replay(PoolOnly(), kind, seed).result.refused_starts
               for kind in ("named", "proximity") for seed in range(4)]
    assert any(refused)
    for kind in ("named", "proximity"):
        for seed in range(4):
            run = replay(PoolOnly(), kind, seed)
            if run.result.refused_starts:
                with pytest.raises(AssertionError):
                    check_no_start_refused(run)


def test_promises_and_reasons_are_read_from_the_policy():
    assert promise_of(make_policy("fcfs-bb")) is Promise.HEAD_NEVER_DELAYED
    assert promise_of(make_policy("fcfs-easy")) is Promise.NONE
    assert promise_of(make_policy("conservative-bb")) is Promise.RESERVATIONS_NEVER_DELAYED
    assert promise_of(make_policy("plan-2")) is Promise.STARTS_AS_PLANNED
    assert promise_of(PoolOnly()) is Promise.NONE
    assert check_never_delayed in checks_of(make_policy("sjf-bb"))
    assert check_never_delayed not in checks_of(make_policy("filler"))
    assert unsuited_reason(make_policy("io-easy"), PLATFORMS["pool"]).startswith("needs a platform")
    assert unsuited_reason(make_policy("io-easy"), PLATFORMS["io-tree"]) is None
    assert unsuited_reason(make_policy("pack-max"), PLATFORMS["named"]) is not None
    assert unsuited_reason(make_policy("pack-max"), PLATFORMS["io-tree"]) is None
    assert unsuited_reason(make_policy("plan-1"), PLATFORMS["ssd"]) is not None
    assert unsuited_reason(make_policy("plan-1"), PLATFORMS["pool"]) is None
    assert unsuited_reason(PoolOnly(), PLATFORMS["ssd"]) is None
