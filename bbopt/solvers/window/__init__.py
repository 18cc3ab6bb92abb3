"""Backends of the window model (see bbopt.solvers.base for the contract)."""
