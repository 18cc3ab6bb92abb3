"""The eviction candidates of one fair-share decision (Zvi & Oren, OMFS, Algorithm 1 lines
34-39): the pool's running jobs, not yet taken, of entities holding strictly more than their
entitlement, never the asking entity's own, in the pool's order; filtered again only when the
version of the decision's starts and evictions changes (or none is given)."""

from __future__ import annotations

from bbopt import Job
from bbopt.core import RunningJob
from bbopt.policies.eviction_candidates import EvictionCandidates


def _running(id_: str, user: str) -> RunningJob:
    return RunningJob(Job(id_, 0, 100, 100, 1, user=user), 0.0, (0,))


POOL = [_running("a1", "A"), _running("b1", "B"), _running("a2", "A"), _running("c1", "C"),
        _running("b2", "B")]


def _ids(jobs):
    return [r.job.id for r in jobs]


def _candidates(held, entitled, taken=()):
    return EvictionCandidates(list(POOL), entitled, held, set(taken), lambda job: job.user)


def test_only_entities_strictly_over_their_entitlement_other_than_the_asker():
    """A holds 3 of 2 (over), B 2 of 2 (exactly: not over), C 1 of none (over): a job of C may
    evict A's jobs, a job of D A's and C's, never an entity's own."""
    over = _candidates({"A": 3, "B": 2, "C": 1}, {"A": 2, "B": 2})
    assert _ids(over.candidates("C")) == ["a1", "a2"]
    assert _ids(over.candidates("D")) == ["a1", "a2", "c1"]
    assert _ids(over.candidates("A")) == ["c1"]
    assert _ids(_candidates({"B": 3}, {"B": 2}).candidates("A")) == ["b1", "b2"]
    assert _ids(_candidates({}, {"A": 0}).candidates("D")) == []  # nothing held: none over


def test_jobs_taken_already_are_not_candidates():
    over = _candidates({"A": 3, "C": 1}, {"A": 2}, taken={"a2", "c1"})
    assert _ids(over.candidates("D")) == ["a1"]


def test_the_filter_is_kept_while_the_version_stays_and_made_again_when_it_changes():
    held, taken = {"A": 3, "C": 1}, set()
    over = EvictionCandidates(list(POOL), {"A": 2}, held, taken, lambda job: job.user)
    assert _ids(over.candidates("D", (0, 0))) == ["a1", "a2", "c1"]
    assert over.version == (0, 0)
    taken.add("a1")
    held["A"] = 2  # (A is no longer over its entitlement)
    assert _ids(over.candidates("D", (0, 0))) == ["a1", "a2", "c1"]  # the same version: kept
    assert _ids(over.candidates("D", (0, 1))) == ["c1"]  # a new version: filtered again
    assert over.version == (0, 1)
    held["A"] = 3
    assert _ids(over.candidates("D")) == ["a2", "c1"]  # no version: always filtered
    assert over.version is None


def test_an_empty_pool_has_no_candidates():
    empty = EvictionCandidates([], {}, {"A": 5}, set(), lambda job: job.user)
    assert empty.candidates("B", (0, 0)) == [] and empty.version is None


def test_a_job_added_takes_its_place_in_the_pools_order_and_is_filtered_at_once():
    """A start of the decision counted among the running jobs: it is inserted where the pool's
    order puts it (here by id), and the next call filters again even for an unchanged
    version."""
    held = {"A": 3, "B": 3, "C": 1}
    pool = sorted(POOL, key=lambda r: r.job.id)
    over = EvictionCandidates(pool, {"A": 2, "B": 2}, held, set(), lambda job: job.user)
    assert _ids(over.candidates("D", (1, 0))) == ["a1", "a2", "b1", "b2", "c1"]
    over.add(_running("b15", "B"), key=lambda r: r.job.id)
    assert _ids(over.pool) == ["a1", "a2", "b1", "b15", "b2", "c1"]
    assert _ids(over.candidates("D", (1, 0))) == ["a1", "a2", "b1", "b15", "b2", "c1"]
    assert over.version == (1, 0)
