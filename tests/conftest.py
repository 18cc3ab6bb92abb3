"""Shared fixtures: the real traces in ../shared/data (never copied into the project)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

from tests._workload_data import KTH_SWF, data_file


@pytest.fixture(scope="session")
def kth_swf() -> Path:
    return data_file(KTH_SWF)


# Property tests draw the same examples on every run (``derandomize``), so the suite gives the same
# verdict on every machine and at every load (no per-example deadline either). To search afresh:
# ``HYPOTHESIS_PROFILE=explore pytest`` (random examples), or ``--hypothesis-profile=slow``:
# property tests that size their example count from the active profile
# (``max(N, settings.default.max_examples)``) search far longer for rare violations.
settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.register_profile("slow", max_examples=3000, deadline=None)


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("hypothesis_profile", None) is None:
        settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))
