"""conservative-bb returns its reservations sorted by (start, job id); after a decision that
changes a few of them it updates the previous tuple instead of sorting them all
(``updated_reservations``). The update must equal the full sort, ties in start included, and
reuse the Reservation of a job whose start did not change."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.policies.booked import sorted_reservations, updated_reservations

starts = st.integers(1, 6).map(float)  # few values: many ties, broken by job id
plans = st.dictionaries(st.sampled_from([f"j{k}" for k in range(30)]), starts, max_size=30)


@settings(max_examples=400, deadline=None)
@given(plans, st.lists(st.tuples(st.sampled_from([f"j{k}" for k in range(34)]),
                                 st.one_of(st.none(), starts)), max_size=12))
def test_updating_equals_sorting_again(before, changes):
    """``changes``: (job, new start or None for a job that leaves the plan), touching up to a
    dozen jobs (both the bisection and the re-sort paths), some not planned before."""
    booked: dict = {}
    previous = sorted_reservations(before, booked)
    future = dict(before)
    touched = []
    for jid, t in changes:
        if t is None:
            future.pop(jid, None)
        else:
            future[jid] = t
        touched.append(jid)
    got = updated_reservations(previous, future, booked, touched)
    assert got == sorted_reservations(future, {})
    kept = {r.job_id: r for r in previous}
    for r in got:  # the same object when the start is the same
        if r.job_id in kept and kept[r.job_id].start == r.start:
            assert r is kept[r.job_id]


def test_a_touched_reservation_not_the_booked_one_is_sorted_again():
    """``before`` holds b at 2.0, but the booked reservation of b says 5.0 (kept by another
    plan): the bisection at 5.0 does not find it, and the count (3 kept + 1 placed against
    3 planned) sends the update to a full sort, which leaves no second reservation of b."""
    from bbopt.core import Reservation

    before = sorted_reservations({"a": 1.0, "b": 2.0, "c": 3.0}, {})
    booked = {"a": before[0], "b": Reservation("b", 5.0), "c": before[2]}
    got = updated_reservations(before, {"a": 1.0, "b": 4.0, "c": 3.0}, booked, ["b"])
    assert [(r.job_id, r.start) for r in got] == [("a", 1.0), ("c", 3.0), ("b", 4.0)]
    assert got[0] is before[0] and got[1] is before[2]
