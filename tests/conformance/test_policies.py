"""Every registered policy on every platform kind: the common checks and its own promise
(:mod:`bbopt.policies.promises`). A policy registered anywhere is picked up here by name; one
that does not apply to a platform kind is skipped with the reason it gives itself."""

from __future__ import annotations

import pytest

from bbopt.policies import available_policies, make_policy
from bbopt.policies.promises import unsuited_reason
from tests.conformance.checks import PLATFORMS, SEEDS, checks_of, replay


def cases(names=None):
    names = sorted(available_policies()) if names is None else names
    return [pytest.param(name, kind, id=f"{name}-{kind}") for name in names for kind in PLATFORMS]


@pytest.mark.parametrize(("name", "kind"), cases())
def test_policy_conforms(name: str, kind: str) -> None:
    policy = make_policy(name)
    why = unsuited_reason(policy, PLATFORMS[kind])
    if why is not None:
        pytest.skip(f"{name} on {kind}: {why}")
    for seed in SEEDS:
        run = replay(make_policy(name), kind, seed)
        for check in checks_of(policy):
            check(run)
