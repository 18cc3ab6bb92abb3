"""Backends of the pack-building model (:mod:`bbopt.models.packs`): ``cpsat``, ``milp``,
``exhaustive`` and ``greedy``, listed in :data:`bbopt.solvers.base.BUILTIN_BACKENDS`."""
