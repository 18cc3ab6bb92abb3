"""Shared fixtures: the real traces in ../shared/data (never copied into the project)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests._workload_data import KTH_SWF, data_file


@pytest.fixture(scope="session")
def kth_swf() -> Path:
    return data_file(KTH_SWF)
