"""Leaving a paused block (:mod:`bbopt.gc_pause`): what the block kept goes to the oldest
generation without the young pass that would walk it, a program's own frozen objects stay
frozen, and garbage cycles made in the block are still collected."""

from __future__ import annotations

import gc
import weakref

from bbopt.gc_pause import gc_paused


class _Node:
    """A tracked object that can sit in a reference cycle."""

    def __init__(self) -> None:
        self.other: _Node | None = None


def test_survivors_of_a_paused_block_need_no_young_pass():
    assert gc.isenabled()
    with gc_paused():
        kept = [_Node() for _ in range(5000)]  # far above the young threshold (700)
    assert gc.isenabled()
    assert gc.get_count()[0] < 700  # no young pass is due over what the block kept
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept[0]) in oldest and id(kept[-1]) in oldest


def test_a_programs_frozen_objects_stay_frozen():
    frozen = _Node()
    gc.freeze()
    try:
        before = gc.get_freeze_count()
        assert before > 0

        with gc_paused():
            work = [_Node() for _ in range(1000)]
        assert len(work) == 1000
        assert gc.get_freeze_count() == before  # not moved back by the pause
    finally:
        gc.unfreeze()
    assert frozen.other is None


def test_cycles_made_while_paused_are_still_collected():
    with gc_paused():
        a, b = _Node(), _Node()
        a.other, b.other = b, a
        gone = weakref.ref(a)
        del a, b
    assert gone() is not None  # only the cyclic collector can free it
    gc.collect()
    assert gone() is None
