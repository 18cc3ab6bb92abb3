"""Pausing Python's cyclic garbage collector around a decision request of the decision service.

:mod:`bbopt.interop.serve` answers one request at a time; a collector pass in the middle of a
request (over a 5,000-job state that forms no reference cycles) cost 15 ms against 0.5 ms for
the sjf-bb decision itself, so the service decides inside :func:`gc_paused` and collects with
:func:`collect_if_due` once the reply is sent. Leaving a paused block moves what it kept to the
oldest generation at once (:func:`age_survivors`) instead of by a young pass over it.

The replay, the SWF reader and the BB draw do not pause the collector: measured on whole KTH
``simulate`` processes (CPU time, alternating runs, medians of 8-10 pairs), pausing saved
3.1-4.5 % under fcfs-bb and 3.4 % under conservative-bb, under the 5 % a shim must save.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Tracked objects allocated (net) since the last pass above which :func:`collect_if_due`
#: collects the young generations (the automatic threshold is 700).
YOUNG_LIMIT = 200_000
#: Every this many passes of :func:`collect_if_due`, a full collection.
FULL_EVERY = 10
_passes = [0]


@contextmanager
def gc_paused() -> Iterator[bool]:
    """Turn the automatic collection off for the block (if it was on); yields whether it
    paused it. Nested blocks leave it to the outermost."""
    if not gc.isenabled():
        yield False
        return
    gc.disable()
    try:
        yield True
    finally:
        age_survivors()
        gc.enable()


def age_survivors() -> None:
    """Move every object the collector tracks to its oldest generation without a pass over
    them, and restart the young generations' counts. After a paused block, the first young
    pass would otherwise walk everything the block allocated and kept (the record of a KTH
    replay: about 15 ms) only to move it there. Not done when the program froze objects
    itself (:func:`gc.freeze`): moving them back is its business."""
    if gc.get_freeze_count() == 0:
        gc.freeze()
        gc.unfreeze()


def collect_if_due() -> None:
    """Collect the young generations once :data:`YOUNG_LIMIT` tracked objects were allocated
    (net) since the last pass: a paused replay's periodic pass."""
    if gc.get_count()[0] > YOUNG_LIMIT:
        _passes[0] += 1
        gc.collect(2 if _passes[0] % FULL_EVERY == 0 else 1)
