"""Shared fixtures: the real traces in ../shared/data (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def data_dir() -> Path | None:
    candidates = [os.environ.get("BBOPT_DATA"), ROOT.parent / "shared" / "data",
                  Path("/work/shared/data")]
    for c in candidates:
        if c and (Path(c) / "KTH-SP2-1996-2.1-cln.swf").exists():
            return Path(c)
    return None


@pytest.fixture(scope="session")
def kth_swf() -> Path:
    d = data_dir()
    if d is None:
        pytest.skip("the KTH trace (shared/data) is not available")
    return d / "KTH-SP2-1996-2.1-cln.swf"
