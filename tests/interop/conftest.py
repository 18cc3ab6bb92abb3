"""Fixtures of the interoperability tests: a ZeroMQ endpoint of their own for each test."""

from __future__ import annotations

import os
import tempfile

import pytest


@pytest.fixture
def endpoint():
    """An ``ipc://`` endpoint in a fresh short directory (an ipc path has at most about 100
    characters), removed with what the sockets left there."""
    d = tempfile.mkdtemp(prefix="bbz")
    yield f"ipc://{d}/s"
    for name in os.listdir(d):
        os.unlink(os.path.join(d, name))
    os.rmdir(d)
