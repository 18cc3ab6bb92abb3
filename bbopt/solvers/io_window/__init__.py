"""Backends of the io_window model (see bbopt.solvers.base for the contract)."""
