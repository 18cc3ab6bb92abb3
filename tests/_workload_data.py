"""Locating the shared real traces for tests (never copied into the repository)."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from bbopt.core import Job

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


def job_fields(job: Job) -> tuple:
    """Every field of ``job`` with its value and type (a job built without ``Job``'s checks
    compares equal to a checked one only if this does)."""
    return tuple((f.name, getattr(job, f.name), type(getattr(job, f.name)))
                 for f in dataclasses.fields(Job)) + (("extra", dict(job.extra)),)
