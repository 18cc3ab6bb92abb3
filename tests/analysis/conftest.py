"""Fixtures of the analysis tests: a finished sweep's results store, a policy registered for
one test."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bbopt.analysis.store import Store
from bbopt.analysis.sweep import run_sweep
from tests._store_data import sweep_spec


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A results store holding the two runs of :data:`tests._store_data.SPEC` (read only)."""
    root = tmp_path_factory.mktemp("store") / "res"
    report = run_sweep(sweep_spec(), root, executor="serial", progress=False)
    assert report.ran == 2 and report.failed == 0
    return root


@pytest.fixture
def store(finished, tmp_path) -> Store:
    """A copy of :func:`finished` to damage."""
    root = tmp_path / "res"
    shutil.copytree(finished, root)
    return Store(root)


@pytest.fixture
def registered():
    """``registered(name, cls)`` registers the policy class ``cls`` as ``name`` for this test
    (removed after it) and returns the name."""
    from bbopt.policies.registry import POLICIES

    names = []

    def register(name: str, cls: type) -> str:
        POLICIES.register(name)(cls)
        names.append(name)
        return name

    yield register
    for name in names:
        POLICIES.remove(name)
