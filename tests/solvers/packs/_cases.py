"""What the pack builders' tests share: Jeannot et al.'s periodic applications (from
``tests/_periodic.py``) and the three-stage lexicographic case."""

from __future__ import annotations

from bbopt.models.packs import PackModel
from tests._periodic import B, periodic


def three_stages() -> PackModel:
    """One node at 10 s: A (T = 10, submitted at 0) or B (two iterations of 5 s, submitted at
    5): equal work (10), stretch-work 20 against 15, B first in Char order (5 against 10)."""
    jobs = [periodic("A", 1, 9.0, 1.0), periodic("B", 2, 4.0, 1.0, submit=5.0)]
    return PackModel.from_jobs(jobs, 1, B, now=10.0, objective="lexicographic",
                               tiebreak="char")
