"""A small sweep and ways to damage the runs it writes, shared by the results store's tests."""

from __future__ import annotations

from pathlib import Path

from bbopt.analysis.store import Store
from bbopt.analysis.sweep_spec import SweepSpec, parse_spec

#: Two policies on 30 KTH-like jobs: two runs, written in about a second.
SPEC = {"name": "st", "workloads": {"syn": {"generator": {"name": "kth-like", "n_jobs": 30}}},
        "policies": ["fcfs-bb", "sjf-bb"], "seeds": [0]}


def sweep_spec(**over) -> SweepSpec:
    """:data:`SPEC` with ``over`` replacing its top-level keys, parsed."""
    return parse_spec({**SPEC, **over}, source="<test>", base=Path.cwd())


def run_dirs(store: Store) -> list[Path]:
    """The run directories of ``store`` (not its temporaries), sorted."""
    return sorted(d for d in store.runs.iterdir() if not d.name.startswith("."))


def damage(path: Path, how: str) -> None:
    """Damage the file ``path``: ``empty``, ``half``, ``one-short``, ``garbage`` or ``list``."""
    data = path.read_bytes()
    path.write_bytes({"empty": b"", "half": data[:len(data) // 2], "one-short": data[:-1],
                      "garbage": b"\x00\xff not json", "list": b"[1, 2]"}[how])
