"""Shared fixtures: the real traces in ../shared/data (never copied into the project), one
platform of each kind (tests/_platforms.py), and the seed of the property tests.

Property tests explore, reproducibly: every run draws its examples from one seed, taken from
``BBOPT_HYPOTHESIS_SEED`` when it is set, else from the commit checked out (so each commit's
run searches new examples, and the same commit always gives the same verdict). The seed is
printed in pytest's header; ``BBOPT_HYPOTHESIS_SEED=<seed> pytest ...`` repeats a run. No
example database is read or written under this profile: a run depends on its seed only. A
failure found this way is kept as an explicit ``@example`` on its property.

Other profiles: ``HYPOTHESIS_PROFILE=deterministic`` (the same fixed examples on every run and
commit), ``explore`` (fresh random examples, with the local database), ``slow`` (more examples:
property tests that size their example count as ``max(N, settings.default.max_examples)``, see
:data:`tests._properties.CHEAP`, search far longer).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import core, settings

from bbopt import Platform
from tests import _platforms
from tests._workload_data import KTH_SWF, data_file

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def kth_swf() -> Path:
    return data_file(KTH_SWF)


@pytest.fixture
def kopanski_platform():
    """Kopanski & Rzadca's Section 3.1 platform: 4 nodes, 10 TB of burst buffer."""
    from tests._paper_examples import KOPANSKI_PLATFORM

    return KOPANSKI_PLATFORM


@pytest.fixture
def kopanski_jobs():
    """Kopanski & Rzadca's eight jobs of Section 3.1 (minutes of 60 s)."""
    from tests._paper_examples import kopanski_jobs as jobs

    return jobs()


@pytest.fixture
def pool_platform() -> Platform:
    """8 nodes, 100 GB of burst buffer in one pool."""
    return _platforms.POOL


@pytest.fixture
def named_platform() -> Platform:
    """8 nodes, the burst buffer on four named BB nodes of 25 GB (first fit)."""
    return _platforms.NAMED


@pytest.fixture
def proximity_platform() -> Platform:
    """The named BB nodes placed by proximity (2 compute nodes per chassis, 2 per group)."""
    return _platforms.PROXIMITY


@pytest.fixture
def ssd_platform() -> Platform:
    """8 nodes with local SSDs (four of 50 GB, four of 100 GB) beside a 100 GB pool."""
    return _platforms.SSD


@pytest.fixture
def io_tree_platform() -> Platform:
    """Herbein et al.'s Figure 2-3 I/O tree: 4 nodes, two 256 MB/s switches of two nodes under
    a 384 MB/s network switch, PFS 1 GB/s."""
    return _platforms.IO_TREE


@pytest.fixture(params=sorted(_platforms.PLATFORMS))
def any_platform(request: pytest.FixtureRequest) -> Platform:
    """Each platform kind in turn (pool, named, proximity, SSD, I/O tree)."""
    return _platforms.PLATFORMS[request.param]


settings.register_profile("seeded", derandomize=False, database=None, deadline=None)
settings.register_profile("deterministic", derandomize=True, deadline=None)
settings.register_profile("explore", deadline=None)
settings.register_profile("slow", max_examples=3000, deadline=None)


def property_seed() -> int:
    """The seed of this run's property tests: ``BBOPT_HYPOTHESIS_SEED``, else the first 32 bits
    of the commit checked out, else 0 (no git)."""
    value = os.environ.get("BBOPT_HYPOTHESIS_SEED", "").strip()
    if value:
        return int(value, 0)
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        return int(head[:8], 16)
    except (OSError, subprocess.SubprocessError, ValueError):
        return 0


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("hypothesis_profile", None) is None:
        settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "seeded"))
    if config.getoption("hypothesis_seed", None) is None:
        config._bbopt_property_seed = property_seed()  # type: ignore[attr-defined]
        core.global_force_seed = config._bbopt_property_seed  # type: ignore[attr-defined]


def pytest_report_header(config: pytest.Config) -> str:
    seed = getattr(config, "_bbopt_property_seed", config.getoption("hypothesis_seed", None))
    return (f"property tests: profile {settings.get_current_profile_name()}, seed {seed} "
            f"(repeat with BBOPT_HYPOTHESIS_SEED={seed})")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Marks the property tests ``property``: ``pytest -m property`` runs them alone (e.g. under
    several seeds in a row)."""
    for item in items:
        if getattr(getattr(item, "obj", None), "is_hypothesis_test", False):
            item.add_marker(pytest.mark.property)
