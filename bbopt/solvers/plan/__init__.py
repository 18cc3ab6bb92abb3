"""Backends of the plan model (see bbopt.solvers.base for the contract)."""
