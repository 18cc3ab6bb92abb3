"""The reservations conservative backfilling returns at each decision, built from its plan of
job id -> start and kept between decisions (Kopanski & Rzadca, Section 3.2: every waiting job
holds a reservation; :mod:`bbopt.policies.conservative`): sorted by (start, job id), one
:class:`~bbopt.core.Reservation` per job and start reused while the start stays, and the
previous decision's tuple updated where jobs changed instead of sorted again.
"""

from __future__ import annotations

from bisect import bisect_left, insort
from operator import attrgetter, itemgetter

from bbopt.core import Reservation

_by_start_id = attrgetter("start", "job_id")


def _booking(jid: str, t: float, booked: dict[str, Reservation]) -> Reservation:
    """The reservation of job ``jid`` at ``t``: the one in ``booked`` if it starts then, else a
    new one, kept there."""
    r = booked.get(jid)
    if r is None or r.start != t:
        r = booked[jid] = Reservation(jid, t)
    return r


def sorted_reservations(future: dict[str, float],
                        booked: dict[str, Reservation]) -> tuple[Reservation, ...]:
    """The reservations of ``future`` (job id -> start) sorted by (start, job id)."""
    return tuple(_booking(jid, t, booked)
                 for jid, t in sorted(future.items(), key=itemgetter(1, 0)))


def updated_reservations(before: tuple[Reservation, ...], future: dict[str, float],
                         booked: dict[str, Reservation],
                         touched: list[str]) -> tuple[Reservation, ...]:
    """:func:`sorted_reservations` of ``future`` when ``before`` is that of a dict that
    differs from ``future`` only at the ``touched`` job ids and holds the reservations kept in
    ``booked``: the others keep their place, each touched one is found by bisection at its
    booked start and taken out, and those still reserved are placed again (a few jobs change at
    a decision on KTH, of 15 to 40 reservations; this costs a tenth to two thirds of sorting
    them all). Should ``before`` hold another reservation of a touched job than the booked one,
    the count tells, and they are sorted again."""
    out = list(before)
    gone = dict.fromkeys(touched)
    for jid in gone:
        r = booked.get(jid)
        if r is not None:
            i = bisect_left(out, (r.start, jid), key=_by_start_id)
            if i < len(out) and out[i] is r:
                del out[i]
    placed = [_booking(jid, future[jid], booked) for jid in gone if jid in future]
    if len(out) + len(placed) != len(future):  # (one was not found at its booked start)
        return sorted_reservations(future, booked)
    if len(placed) > 4:  # (a sort of the whole list then costs less than bisections)
        out.extend(placed)
        out.sort(key=_by_start_id)
    else:
        for r in placed:
            insort(out, r, key=_by_start_id)
    return tuple(out)
