"""The local Slurm fixture: a fresh cluster per test, in a temporary directory, stopped after.

Tests that use it are marked ``slurm``; they skip with the reason when Slurm's programs are
missing or we are not root (``pytest -m "not slurm"`` leaves them out knowingly), except on CI
(``CI`` set), where a missing Slurm is a failure: ``.ci/run`` installs it.
"""

from __future__ import annotations

import os

import pytest

from bbopt.slurm.cluster import LocalSlurm, why_unavailable


def require_slurm() -> None:
    reason = why_unavailable()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the Slurm tests: {reason}")
    pytest.skip(reason)


@pytest.fixture
def local_slurm(request, tmp_path):
    """A started :class:`LocalSlurm`; ``@pytest.mark.cluster(nodes=2, bb_licenses=10)`` on a
    test shapes it (default: 4 nodes, no pool)."""
    require_slurm()
    marker = request.node.get_closest_marker("cluster")
    kwargs = dict(marker.kwargs) if marker else {}
    cluster = LocalSlurm(directory=tmp_path / "slurm", **{"nodes": 4, **kwargs})
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
