"""Which entitlements a command-line run uses (Zvi & Oren, OMFS, Algorithm 1 lines 7-9): the
``shares`` option (``--shares FILE``) when given, else those the workload carries
(``Job.extra["entitlement"]``, :func:`bbopt.workloads.shares.workload_shares`), for the policies
that take ``shares``; with neither, such a policy is an input error -- nobody would be entitled
to anything (OMFS would leave every job waiting, partition and capping would run one job at a
time).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bbopt.core import Job
from bbopt.errors import InputError


def share_takers(policies: Sequence[str]) -> list[str]:
    """The policies among ``policies`` that take a ``shares`` option."""
    from bbopt.policies import policy_options

    return [p for p in policies if "shares" in policy_options(p)]


def workload_entitlements(policies: Sequence[str], options: Mapping[str, Any],
                          jobs: Iterable[Job]) -> dict[str, float] | None:
    """The workload's own entitlements when some of ``policies`` take ``shares`` and
    ``options`` has none; ``None`` when no policy takes shares or ``options`` gives them.
    Raises :class:`InputError` when a policy takes shares and neither source has any."""
    from bbopt.workloads.shares import check_entities, parse_shares, workload_shares

    takers = share_takers(policies)
    if not takers:
        return None
    if options.get("shares") is not None:  # given: they must entitle someone of the workload
        check_entities(parse_shares(options["shares"]), jobs, "--shares")
        return None
    own = workload_shares(jobs)
    if own is None:
        raise InputError(f"{', '.join(takers)} {'needs' if len(takers) == 1 else 'need'} "
                         "entitlement shares: give --shares FILE (YAML/JSON 'entity: share') "
                         "or a workload whose jobs carry them (bbopt generate omfs-entities)",
                         field="--shares")
    return own


def describe(policies: Sequence[str], shares: Mapping[str, float]) -> str:
    """One line saying that ``policies`` use the workload's own ``shares``."""
    shown = ", ".join(f"{e} {100 * s:.4g} %" for e, s in sorted(shares.items()))
    return (f"{', '.join(share_takers(policies))}: the workload's own entitlements "
            f"({len(shares)} entities: {shown}); --shares FILE overrides them")
