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
        # not moved back by the pause: still in no generation (the count itself may fall as
        # frozen objects die)
        assert gc.get_freeze_count() > 0
        assert all(o is not frozen for o in gc.get_objects())
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


class _Collector:
    """The collector as :func:`collect_if_due` sees it: a young count, and the passes asked."""

    def __init__(self, young: int) -> None:
        self.young = young
        self.passes: list[int] = []

    def get_count(self) -> tuple[int, int, int]:
        return (self.young, 0, 0)

    def collect(self, generation: int = 2) -> int:
        self.passes.append(generation)
        return 0


def test_a_young_pass_is_due_only_above_the_limit_and_every_tenth_is_full(monkeypatch):
    """200,000 tracked objects since the last pass: no pass; one more: a young pass (the young
    generations, 1), every tenth of them a full one (2)."""
    from bbopt import gc_pause

    assert (gc_pause.YOUNG_LIMIT, gc_pause.FULL_EVERY) == (200_000, 10)
    monkeypatch.setattr(gc_pause, "_passes", [0])
    for young, want in ((199_999, []), (200_000, []), (200_001, [1])):
        fake = _Collector(young)
        monkeypatch.setattr(gc_pause, "gc", fake)
        gc_pause.collect_if_due()
        assert fake.passes == want
    fake = _Collector(200_001)
    monkeypatch.setattr(gc_pause, "gc", fake)
    for _ in range(19):
        gc_pause.collect_if_due()
    assert fake.passes == [1] * 8 + [2] + [1] * 9 + [2]
    assert gc_pause._passes == [20]


def test_a_block_entered_with_the_collector_off_leaves_it_off():
    """Nested in a pause (or under a program that turned it off), the block pauses nothing and
    says so; the outer block turns it back on."""
    with gc_paused() as outer:
        with gc_paused() as inner:
            assert not gc.isenabled()
        assert (outer, inner) == (True, False) and not gc.isenabled()
    assert gc.isenabled()


def test_leaving_a_paused_block_starts_no_young_pass():
    """5,000 objects kept in a paused block (far above the young threshold of 700): after it,
    a hundred more allocations start no collection, since the kept ones went to the oldest
    generation and the young counts restarted."""
    started: list[int] = []

    def record(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(info["generation"])

    with gc_paused():
        kept = [_Node() for _ in range(5000)]
    gc.callbacks.append(record)
    try:
        more = [_Node() for _ in range(100)]
    finally:
        gc.callbacks.remove(record)
    assert started == [] and len(kept) + len(more) == 5100
