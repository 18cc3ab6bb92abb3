"""Entitlement shares of entities, from a mapping, a ``"a:0.5,b:0.3"`` string or a YAML/JSON
file (Zvi & Oren, OMFS, Algorithm 1 lines 7-9: ``u.percent``, summing to at most 100 %).

A shares file is a mapping ``entity: share`` (shares as fractions or percentages: a total above
1.5 is read as percentages), optionally under a top-level ``shares:`` key::

    shares:
      physics: 50
      chemistry: 30
      biology: 20

Shares are returned as fractions ``{entity: share}`` that sum to at most 1 (Algorithm 1, line 9);
an entity absent from the mapping is entitled to nothing (its jobs run only on idle nodes and may
always be preempted).

A workload can carry its entitlements: :func:`with_shares` writes each entity's share into its
jobs (``Job.extra["entitlement"]``; the ``omfs-entities`` generator does), and
:func:`workload_shares` reads them back -- a sweep gives them to the fair-share policies and
measures every run against them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from bbopt.core import Job
from bbopt.errors import InputError
from bbopt.limits import MAX_ENTITIES, magnitude
from bbopt.units import read_document


def parse_shares(spec: Any, field: str = "shares") -> dict[str, float]:
    """Entitlement fractions from a mapping, an ``"e:share,..."`` string or a file path."""
    source = None
    if isinstance(spec, str | Path) and (Path(spec).suffix in (".yaml", ".yml", ".json")):
        source = str(spec)
        if not Path(spec).is_file():
            raise InputError("shares file not found", source=source, field=field)
        spec = read_document(spec)
        if isinstance(spec, Mapping) and "shares" in spec:
            spec = spec["shares"]
    elif isinstance(spec, str):
        pairs = {}
        for part in spec.split(","):
            if not part.strip():
                continue
            name, sep, value = part.rpartition(":")
            if not sep or not name.strip():
                raise InputError(f"share {part!r} is not ENTITY:SHARE", field=field)
            pairs[name.strip()] = value
        spec = pairs
    if not isinstance(spec, Mapping) or not spec:
        raise InputError("shares must be a non-empty mapping entity -> share", source=source,
                         field=field)
    out: dict[str, float] = {}
    for name, value in spec.items():
        try:
            x = float(value)
        except (TypeError, ValueError):
            raise InputError(f"share of {name!r} is not a number: {value!r}", source=source,
                             field=f"{field}.{name}") from None
        except OverflowError:  # an integer beyond any float: refused below as not finite
            x = math.inf
        if not (x >= 0 and math.isfinite(x)):
            raise InputError(f"share of {name!r} must be >= 0 and finite, got "
                             f"{magnitude(value)}", source=source, field=f"{field}.{name}")
        out[str(name)] = x
    total = sum(out.values())
    if total > 1.5:  # percentages
        out = {k: v / 100.0 for k, v in out.items()}
        total /= 100.0
    if total > 1 + 1e-9:
        raise InputError(f"shares sum to {total:.4g} > 1 (100 %)", source=source, field=field)
    if total <= 0:
        raise InputError("shares are all zero: nobody would be entitled to anything",
                         source=source, field=field)
    if len(out) > MAX_ENTITIES:
        raise InputError(f"{len(out):,} entities; at most {MAX_ENTITIES:,}", source=source,
                         field=field)
    return out


def check_entities(shares: Mapping[str, float], jobs: Iterable[Job],
                   field: str = "shares") -> None:
    """Refuse entitlements that name no entity (``Job.user``) of the workload: every job
    would then belong to an entity entitled to nothing (a misspelt file, another trace's)."""
    entities = {j.user if j.user is not None else "unknown" for j in jobs}
    if entities and not entities & {e for e, s in shares.items() if s > 0}:
        some = ", ".join(sorted(entities)[:5]) + (", ..." if len(entities) > 5 else "")
        raise InputError(f"the shares entitle none of the workload's {len(entities)} entities "
                         f"({some}); entities are the jobs' users", field=field)


def entitled_nodes(shares: Mapping[str, float], nodes: int) -> dict[str, int]:
    """Each entity's entitlement in nodes: ``floor(share * nodes)`` (Algorithm 1, line 25)."""
    return {e: int(math.floor(s * nodes + 1e-9)) for e, s in shares.items()}


#: ``Job.extra`` key of the entitlement share of the job's entity (``Job.user``), written by
#: the ``omfs-entities`` generator so that a workload carries its own entitlements.
SHARE_KEY = "entitlement"


def with_shares(jobs: Sequence[Job], shares: Mapping[str, float]) -> list[Job]:
    """The jobs, each carrying its entity's share in ``Job.extra[SHARE_KEY]`` (an entity
    without a share gets 0: it is entitled to nothing)."""
    return [replace(j, extra={**j.extra, SHARE_KEY: float(shares.get(
        j.user if j.user is not None else "unknown", 0.0))}) for j in jobs]


def workload_shares(jobs: Iterable[Job]) -> dict[str, float] | None:
    """The entitlements a workload carries (:func:`with_shares`), or ``None`` if no job has
    one. Entities whose jobs disagree on their share are an error."""
    out: dict[str, float] = {}
    for j in jobs:
        if SHARE_KEY not in j.extra:
            continue
        entity = j.user if j.user is not None else "unknown"
        share = float(j.extra[SHARE_KEY])
        if out.setdefault(entity, share) != share:
            raise InputError(f"jobs of entity {entity!r} carry different entitlement shares "
                             f"({out[entity]:g} and {share:g}; job {j.id})",
                             field=f"extra.{SHARE_KEY}")
    if not out:
        return None
    return parse_shares(out)
