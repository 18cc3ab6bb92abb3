"""Scheduling policies, registered by name (see :mod:`bbopt.policies.registry`)."""

from bbopt.policies.registry import Policy, available_policies, make_policy, register

__all__ = ["Policy", "available_policies", "make_policy", "register"]
