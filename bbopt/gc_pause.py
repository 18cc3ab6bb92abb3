"""Pausing Python's cyclic garbage collector over bulk work.

Reading a trace, drawing its burst-buffer requests and replaying it allocate hundreds of
thousands of small objects that form no reference cycles (jobs, states, decisions): reference
counting frees them, and the collector's automatic passes over them find nothing yet cost about a
tenth of a KTH replay and of the reader's time (measured side by side by
``benchmarks/whole_process.py``). Inside :func:`gc_paused` the automatic passes are off;
:func:`collect_if_due` is the replay's own, much rarer pass (a policy may create cycles: the
garbage they leave is bounded by :data:`YOUNG_LIMIT` objects), and every
:data:`FULL_EVERY` th of its passes is a full one, as the automatic schedule collects the oldest
generation once per ten passes over the middle one. Leaving a paused block moves what it kept
to the oldest generation at once (:func:`age_survivors`) instead of by a young pass over it.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

F = TypeVar("F", bound=Callable)

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


def pausing_gc(fn: F) -> F:
    """Decorator: call ``fn`` inside :func:`gc_paused` (for bulk work that makes no cycles)."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        with gc_paused():
            return fn(*args, **kwargs)

    return call  # type: ignore[return-value]
