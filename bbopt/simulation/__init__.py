"""The minimal event-driven simulator (DESIGN.md, "Simulation engine")."""

from bbopt.simulation.engine import simulate
from bbopt.simulation.result import SimulationResult

__all__ = ["SimulationResult", "simulate"]
