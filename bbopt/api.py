"""The public entry point :func:`decide`: one scheduling decision for one cluster state.

This is the same call the simulator makes at every scheduling point (DESIGN.md, "The pieces and
how data flows"), so what a simulation measures is what an outside caller gets.
"""

from __future__ import annotations

from typing import Any

from bbopt.core import ClusterState, Decision
from bbopt.policies.registry import Policy, make_policy
from bbopt.validation import validate_state


def decide(state: ClusterState, policy: str | Policy = "fcfs-bb", **options: Any) -> Decision:
    """Decide which waiting jobs of ``state`` start now, and what is planned for the others.

    ``policy`` is a registered name (see :func:`bbopt.available_policies`) or a policy object;
    ``options`` go to the policy's constructor (e.g. ``depth=10`` for ``conservative-bb``).
    Unknown policy names and options raise errors that list the known ones. An impossible
    state (see :func:`bbopt.validation.validate_state`) raises :class:`~bbopt.errors.InputError`.
    """
    validate_state(state)
    return make_policy(policy, **options).decide(state)
