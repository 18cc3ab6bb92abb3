"""Locating the shared real traces for tests (never copied into the repository)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

KTH_SWF = "KTH-SP2-1996-2.1-cln.swf"
KTH_BATSIM = "KTH-split-alloc-only-part-1.batsim.json"


def data_dir() -> Path | None:
    env = os.environ.get("BBOPT_DATA")
    candidates = [Path(env)] if env else []
    candidates += [Path(__file__).resolve().parents[1] / ".." / "shared" / "data",
                   Path("/work/shared/data")]
    return next((c for c in candidates if c.is_dir()), None)


def data_file(name: str) -> Path:
    """The shared data file ``name``, or skip the test when it is absent."""
    d = data_dir()
    if d is None or not (d / name).exists():
        pytest.skip(f"shared data file {name} not found (set BBOPT_DATA)")
    return d / name
