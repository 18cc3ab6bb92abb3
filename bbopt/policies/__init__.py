"""Scheduling policies, registered by name (see :mod:`bbopt.policies.registry`).

The built-in policies are the modules imported below; importing one registers its names. A new
policy module is one file and one line here.
"""

from bbopt.policies import (  # noqa: F401 (they register)
    fairshare,
    io,
    io_window,
    packs,
    plan,
    queue,
    window,
)
from bbopt.policies.registry import (
    Policy,
    available_policies,
    make_policy,
    policy_options,
    register,
)

__all__ = ["Policy", "available_policies", "make_policy", "policy_options", "register"]
