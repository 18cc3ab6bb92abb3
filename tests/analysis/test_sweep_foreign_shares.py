"""A sweep refuses, before any run, a policy's ``shares`` that entitle none of the workload's
entities (Zvi & Oren, OMFS): the check ``simulate`` and ``compare`` apply to ``--shares``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbopt.analysis.store import canonical
from bbopt.analysis.sweep import plan
from bbopt.analysis.sweep_inputs import _workload, workload_seed
from bbopt.analysis.sweep_spec import parse_spec
from bbopt.errors import InputError


def _spec(shares):
    doc = {
        "name": "fs",
        "workloads": {"w": {"generator": {"name": "kth-like", "n_jobs": 40, "nodes": 16},
                            "transforms": [{"name": "omfs-entities", "by": "random",
                                            "n_entities": 3, "shares": "usage"}]}},
        "platforms": [{"name": "m", "nodes": 16, "bb": "80GB"}],
        "policies": [{"name": "omfs", "label": "fair", "options": {"shares": shares}},
                     "sjf-bb"],
        "seeds": [0],
    }
    return parse_spec(json.loads(json.dumps(doc)), source="fs.yaml", base=Path.cwd())


def _entities():
    wspec = _spec({"x": 1.0}).workloads["w"]
    jobs, _ = _workload(canonical(wspec), workload_seed(wspec, 0))
    return sorted({j.user for j in jobs})


def test_shares_naming_no_entity_of_the_workload_are_refused_naming_the_field():
    with pytest.raises(InputError) as exc:
        plan(_spec({"alice": 0.5, "bob": 0.5}))
    assert exc.value.field == "policies[label=fair].options.shares"
    assert exc.value.source == "fs.yaml"
    assert "entitle none of the workload's 3 entities" in str(exc.value)
    assert "policies[label=fair].options.shares" in str(exc.value)


def test_shares_entitling_one_entity_of_the_workload_pass():
    first = _entities()[0]
    tasks = {t.policy: t for t in plan(_spec({first: 0.5, "alice": 0.5}))}
    assert tasks["omfs"].options["shares"] == {first: 0.5, "alice": 0.5}


def test_a_zero_share_for_a_real_entity_entitles_nobody_and_is_refused():
    first = _entities()[0]
    with pytest.raises(InputError, match="entitle none"):
        plan(_spec({first: 0.0, "alice": 1.0}))
