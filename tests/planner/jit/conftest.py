"""The compiled kernels against their Python loops: each test switches the kernels off itself
where it needs the Python side, so a run with ``BBOPT_NO_JIT=1`` (the Python loops everywhere
else) still compares the two here."""

import pytest


@pytest.fixture(autouse=True)
def _kernels_on(monkeypatch):
    monkeypatch.delenv("BBOPT_NO_JIT", raising=False)
