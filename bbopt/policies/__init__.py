"""Scheduling policies, registered by name (see :mod:`bbopt.policies.registry`).

The built-in policies are the modules listed below with the names each registers; importing
one registers its names. They are imported when a policy is first asked for by name (the module
of that name alone; :func:`available_policies` imports them all), so ``bbopt simulate --policy
sjf-bb`` does not import the solvers and models of the optimising policies. A new policy module
is one file and one line here (a name missing from its line is still found: an unknown name
imports every listed module before it is refused).
"""

from bbopt.policies.registry import (
    Policy,
    available_policies,
    declare_builtin,
    make_policy,
    policy_options,
    register,
)

declare_builtin({
    "bbopt.policies.queue": ("fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb"),
    "bbopt.policies.conservative": ("conservative-bb",),
    "bbopt.policies.fairshare": ("omfs", "omfs-opt", "capping", "partition", "fair-share"),
    "bbopt.policies.io": ("io-fcfs", "io-easy"),
    "bbopt.policies.io_window": ("io-window",),
    "bbopt.policies.packs": ("io-list", "pack-random", "pack-max", "pack-char", "pack-opt",
                             "pack-opt-char"),
    "bbopt.policies.plan": ("plan-1", "plan-2", "plan-3"),
    "bbopt.policies.window": ("bbsched", "bbsched-nsga2", "naive", "weighted", "weighted-cpu",
                              "weighted-bb", "constrained-cpu", "constrained-bb", "bin-packing"),
})

__all__ = ["Policy", "available_policies", "make_policy", "policy_options", "register"]
