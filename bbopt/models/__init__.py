"""Formal scheduling problems: pure data and evaluation, no solver imports."""
