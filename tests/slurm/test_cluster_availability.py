"""Why a local Slurm cannot start here, said before anything starts: the programs missing from
``PATH`` (and ``/usr/sbin``), else not being root; nothing when both hold."""

from __future__ import annotations

import shutil

from bbopt.slurm import cluster
from bbopt.slurm.cluster import REQUIRED_PROGRAMS, why_unavailable


def _programs(monkeypatch, missing: set[str], uid: int) -> None:
    monkeypatch.setattr(shutil, "which",
                        lambda name, path=None: None if name in missing else f"/usr/bin/{name}")
    monkeypatch.setattr(cluster.os, "geteuid", lambda: uid)


def test_missing_programs_are_named_in_order(monkeypatch):
    _programs(monkeypatch, {"sinfo", "munged"}, uid=0)
    assert why_unavailable() == ("Slurm is not installed (missing munged, sinfo; on Debian: "
                                 "apt-get install slurm-wlm munge)")


def test_installed_but_not_root(monkeypatch):
    _programs(monkeypatch, set(), uid=1000)
    assert why_unavailable() == ("a local Slurm cluster needs root (slurmd runs jobs as their "
                                 "submitting user)")


def test_installed_and_root_is_available(monkeypatch):
    _programs(monkeypatch, set(), uid=0)
    assert why_unavailable() is None
    assert cluster.missing_programs() == []
    _programs(monkeypatch, set(REQUIRED_PROGRAMS), uid=0)
    assert cluster.missing_programs() == list(REQUIRED_PROGRAMS)
