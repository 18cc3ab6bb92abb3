"""Shared fixtures: the real traces in ../shared/data (never copied into the project)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import settings

from tests._workload_data import KTH_SWF, data_file


@pytest.fixture(scope="session")
def kth_swf() -> Path:
    return data_file(KTH_SWF)


# ``pytest --hypothesis-profile=slow``: property tests that size their example count from the
# active profile (``max(N, settings.default.max_examples)``) search far longer for rare violations.
settings.register_profile("slow", max_examples=3000, deadline=None)
