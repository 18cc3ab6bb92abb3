"""The papers' worked examples as data, shared by the tests that replay them (and as fixtures in
tests/conftest.py)."""

from __future__ import annotations

from bbopt import Job, Platform
from bbopt.core import MINUTE, TB

#: Kopanski & Rzadca, Section 3.1: job, submit [min], runtime [min], CPUs, BB [TB]; walltime =
#: runtime; the scheduler runs every minute.
KOPANSKI_TABLE = [(1, 0, 10, 1, 4), (2, 0, 4, 1, 2), (3, 1, 1, 3, 8), (4, 2, 3, 2, 4),
                  (5, 3, 1, 3, 4), (6, 3, 1, 2, 2), (7, 4, 5, 1, 2), (8, 4, 3, 2, 4)]
#: Its platform: 4 nodes, 10 TB of burst buffer.
KOPANSKI_PLATFORM = Platform(4, 10 * TB)


def kopanski_jobs(minute: float = MINUTE) -> list[Job]:
    """The eight jobs, one minute being ``minute`` seconds."""
    return [Job(str(j), s * minute, r * minute, r * minute, c, b * TB)
            for j, s, r, c, b in KOPANSKI_TABLE]
