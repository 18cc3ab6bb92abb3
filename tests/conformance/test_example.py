"""The example policy (examples/largest_first.py), written against the public planner API only,
passes the conformance suite on every platform kind once its file registers it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bbopt import Job, Platform, simulate
from bbopt.policies import available_policies, make_policy
from bbopt.policies.promises import unsuited_reason
from tests.conformance.checks import PLATFORMS, SEEDS, checks_of, replay

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "largest_first.py"


def _register_example():
    spec = importlib.util.spec_from_file_location("largest_first_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_register_example()


def test_the_example_is_short_and_registered():
    assert len(EXAMPLE.read_text().splitlines()) <= 60
    assert "largest-first" in available_policies()
    imports = [line for line in EXAMPLE.read_text().splitlines() if "import" in line]
    assert all("bbopt.policies" not in x and "bbopt.models" not in x for x in imports)


@pytest.mark.parametrize("kind", list(PLATFORMS))
def test_the_example_conforms(kind):
    policy = make_policy("largest-first")
    assert unsuited_reason(policy, PLATFORMS[kind]) is None
    for seed in SEEDS:
        run = replay(make_policy("largest-first"), kind, seed)
        for check in checks_of(policy):
            check(run)
        assert any(d.reservations for _, d in run.decisions)  # it reserves for its head


def test_largest_first_with_a_backfill_on_named_bb_nodes():
    """4 nodes, four BB nodes of 2 GB. At 0 the two waiting jobs start largest first (long on
    two nodes, small on one with 1 GB). At 1 wide (4 nodes, four 1 GB pieces) must wait for
    long: reserved at 100. short (1 node, 5 s) is backfilled at 2: it ends before 100."""
    jobs = [Job("small", 0, walltime=10, runtime=10, nodes=1, bb=1e9),
            Job("long", 0, walltime=100, runtime=100, nodes=2),
            Job("wide", 1, walltime=50, runtime=50, nodes=4, bb=4e9),
            Job("short", 2, walltime=5, runtime=5, nodes=1)]
    log = []
    res = simulate(jobs, Platform(4, 8e9, bb_nodes=(2e9,) * 4), "largest-first",
                   on_decision=lambda s, d: log.extend((s.time, r.job_id, r.start)
                                                       for r in d.reservations))
    assert res.start == [0.0, 0.0, 100.0, 2.0]
    assert (1.0, "wide", 100.0) in log and all(r[1] == "wide" for r in log)
