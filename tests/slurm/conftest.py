"""The local Slurm fixture: a fresh cluster per test, in a temporary directory, stopped after.

Tests that use it are marked ``slurm``. Where a local cluster cannot run (Slurm's programs
missing, not root) they skip with the reason, which ``pytest -rs`` prints; ``pytest -m "not
slurm"`` leaves them out knowingly. ``.ci/run`` installs Slurm when it can; if that fails it
says why in ``BBOPT_SLURM_UNAVAILABLE``, which becomes part of the skip reason.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from bbopt.slurm.cluster import LocalSlurm, why_unavailable


def require_slurm() -> None:
    reason = why_unavailable()
    if reason is None:
        return
    why_not_installed = os.environ.get("BBOPT_SLURM_UNAVAILABLE")
    if why_not_installed:
        reason = f"{reason} [{why_not_installed}]"
    pytest.skip(reason)


@pytest.fixture
def short_dir():
    """A fresh directory short enough for Slurm's unix sockets (pytest's ``tmp_path`` may not
    be: it grows with the test's name and the worker's), removed after the test."""
    with tempfile.TemporaryDirectory(prefix="c-", ignore_cleanup_errors=True) as directory:
        yield Path(directory)


@pytest.fixture
def local_slurm(request):
    """A started :class:`LocalSlurm`; ``@pytest.mark.cluster(nodes=2, bb_licenses=10)`` on a
    test shapes it (default: 4 nodes, no pool). Its directory is a short one of its own under
    the system's temporary directory, not pytest's ``tmp_path``: Slurm's unix sockets must stay
    within 107 bytes, and pytest's path grows with the test's name and the worker's."""
    require_slurm()
    marker = request.node.get_closest_marker("cluster")
    kwargs = dict(marker.kwargs) if marker else {}
    with tempfile.TemporaryDirectory(prefix="slurm-", ignore_cleanup_errors=True) as directory:
        cluster = LocalSlurm(directory=Path(directory) / "c", **{"nodes": 4, **kwargs})
        cluster.start()
        try:
            yield cluster
        finally:
            cluster.stop()
