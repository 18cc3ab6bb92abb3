"""What a scheduling policy promises about its own reservations, declared on the policy.

A policy object may carry ``promise``, one :class:`Promise`, and ``unsuited(platform)``, the
reason it does not apply to a platform (``None`` when it does). Both are optional (a policy
without them promises nothing beyond feasibility and applies everywhere); the conformance suite
(``tests/conformance``) reads them from every registered policy and checks each promise on
small random workloads, so a new policy is checked by registering it.

The promises are those of the backfilling literature (Mu'alem & Feitelson, IEEE TPDS 2001; the
BB-aware variants of Kopanski & Rzadca, Euro-Par 2021, Section 3.2):

- EASY keeps the head job's reservation: once reserved, the head starts no later than that.
- Conservative backfilling keeps every reservation: none is ever moved later.
- A plan policy starts every job no later than the last plan made before its start said.
"""

from __future__ import annotations

from enum import StrEnum

from bbopt.core import Platform


class Promise(StrEnum):
    """A guarantee a policy makes about the reservations in its decisions."""

    #: Only feasibility (every start fits; the engine refuses none).
    NONE = "none"
    #: Every reservation a job is given is no later than the one before it, and the job starts
    #: no later than its first reservation (EASY's head; the head is the only job reserved).
    HEAD_NEVER_DELAYED = "head-never-delayed"
    #: The same for every reserved job at once (conservative backfilling).
    RESERVATIONS_NEVER_DELAYED = "reservations-never-delayed"
    #: A job starts no later than the start the last decision before it planned for it.
    STARTS_AS_PLANNED = "starts-as-planned"


def promise_of(policy: object) -> Promise:
    """The promise ``policy`` declares (:attr:`Promise.NONE` when it declares none)."""
    return Promise(getattr(policy, "promise", Promise.NONE))


def unsuited_reason(policy: object, platform: Platform) -> str | None:
    """Why ``policy`` does not apply to ``platform`` (its own ``unsuited``), or ``None``."""
    unsuited = getattr(policy, "unsuited", None)
    return None if unsuited is None else unsuited(platform)
