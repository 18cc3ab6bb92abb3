"""Backends of the pack-building model (:mod:`bbopt.models.packs`): ``cpsat``, ``milp``,
``exhaustive`` and ``greedy``. Importing the package registers them."""

from bbopt.solvers.packs import cpsat, exhaustive, greedy, milp  # noqa: F401 (registration)
