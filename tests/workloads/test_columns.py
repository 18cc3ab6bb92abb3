"""Jobs built from checked columns: the columns' check has Job's bounds exactly (at, below and
above each), and an unchecked job or copy equals the checked one field for field."""

from __future__ import annotations

from dataclasses import astuple, fields, replace

import numpy as np
import pytest

from bbopt.core import Job
from bbopt.errors import InputError
from bbopt.limits import MAX_BYTES, MAX_NODES, MAX_SECONDS
from bbopt.workloads.columns import trusted_job, valid_columns, with_bb, with_bbs

GOOD = {"submit": 5.0, "walltime": 100.0, "run": 50.0, "nodes": 4.0, "bb": 1e9}
UP = np.inf


def _columns(**one):
    """Two records, the first good, the second good but for ``one``."""
    cols = {k: np.array([v, one.get(k, v)]) for k, v in GOOD.items()}
    return valid_columns(cols["submit"], cols["walltime"], cols["run"], cols["nodes"],
                         cols["bb"])


@pytest.mark.parametrize("column, low, high, low_ok", [
    ("submit", 0.0, MAX_SECONDS, True),
    ("walltime", 0.0, MAX_SECONDS, False),
    ("run", 0.0, MAX_SECONDS, True),
    ("bb", 0.0, MAX_BYTES, True),
    ("nodes", 1.0, float(MAX_NODES), True),
])
def test_valid_columns_has_jobs_bounds(column, low, high, low_ok):
    assert _columns() is True
    assert _columns(**{column: low}) is low_ok
    assert _columns(**{column: np.nextafter(low, UP)}) is True
    assert _columns(**{column: np.nextafter(low, -UP)}) is False
    assert _columns(**{column: high}) is True
    assert _columns(**{column: np.nextafter(high, -UP)}) is True
    assert _columns(**{column: np.nextafter(high, UP)}) is False
    assert _columns(**{column: np.nan}) is False
    assert _columns(**{column: np.inf}) is False
    # Job's own checks agree at the bounds
    kw = {"submit": 5.0, "walltime": 100.0, "runtime": 50.0, "nodes": 4, "bb": 1e9}
    name = {"run": "runtime"}.get(column, column)
    value = int(high) if column == "nodes" else high
    assert getattr(Job("j", **{**kw, name: value}), name) == value
    with pytest.raises(InputError):
        Job("j", **{**kw, name: int(high) + 1 if column == "nodes" else float(
            np.nextafter(high, UP))})


def test_trusted_job_equals_the_checked_job():
    extra = {"queue": "q1"}
    job = trusted_job("7", 1.0, 60.0, 30.0, 2, 5e9, "alice", extra)
    expect = Job("7", 1.0, 60.0, runtime=30.0, nodes=2, bb=5e9, user="alice", extra=extra)
    assert astuple(job) == astuple(expect)
    assert job.extra is extra
    assert (job.ssd, job.bandwidth, job.priority, job.preemptable, job.checkpointable) == \
        (0.0, 0.0, 0.0, False, False)


JOB = Job("9", 3.0, 600.0, runtime=400.0, nodes=8, bb=2e9, ssd=1e9, bandwidth=5e8,
          user="bob", priority=2.5, preemptable=True, checkpointable=True, extra={"k": 1})


@pytest.mark.parametrize("bb", [0.0, 1.0, 7e12, MAX_BYTES])
def test_with_bb_copies_every_field_but_bb(bb):
    for copy in (with_bb(JOB, bb), with_bbs([JOB], [bb])[0]):
        assert astuple(copy) == astuple(replace(JOB, bb=bb))
        assert copy.extra == {"k": 1}
        assert [f.name for f in fields(copy)] == [f.name for f in fields(JOB)]


@pytest.mark.parametrize("bb", [-1.0, float("nan"), 2 * MAX_BYTES, float(np.nextafter(MAX_BYTES,
                                                                                       UP))])
def test_a_bad_bb_still_names_the_job_and_value(bb):
    message = f"field 'bb': job 9: bb must be in [0, 1e+21], got {bb!r}"
    for copy in (lambda: with_bb(JOB, bb), lambda: with_bbs([JOB], [bb])):
        with pytest.raises(InputError) as exc:
            copy()
        assert str(exc.value) == message


def test_with_bbs_copies_each_job_with_its_own_value():
    a, b = Job("a", 0.0, 10.0), Job("b", 1.0, 20.0, nodes=3)
    out = with_bbs([a, b], [4.0, 0.0])
    assert [(j.id, j.bb, j.nodes, j.submit) for j in out] == [("a", 4.0, 1, 0.0),
                                                             ("b", 0.0, 3, 1.0)]
    with pytest.raises(ValueError):
        with_bbs([a, b], [1.0])
    assert with_bbs([], []) == []
