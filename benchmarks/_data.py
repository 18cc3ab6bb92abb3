"""Where the benchmarks find the real traces: $BBOPT_DATA, else ../shared/data beside the repo."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def find_data(name: str) -> Path | None:
    """The trace ``name`` from $BBOPT_DATA or ../shared/data, or None."""
    for base in (os.environ.get("BBOPT_DATA"), ROOT.parent / "shared" / "data",
                 Path("/work/shared/data")):
        if base and (Path(base) / name).exists():
            return Path(base) / name
    return None


def data_path(name: str) -> Path:
    """The trace ``name``; exits with a message saying where to put it when it is missing."""
    path = find_data(name)
    if path is None:
        sys.exit(f"{name} not found: set BBOPT_DATA to the folder that holds it")
    return path
