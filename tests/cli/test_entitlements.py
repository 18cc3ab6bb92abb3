"""``bbopt simulate`` / ``compare`` with a workload that carries its entitlements
(``Job.extra["entitlement"]``, Zvi & Oren): a fair-share policy uses them when no ``--shares``
is given -- the same schedule and metrics as the equivalent ``--shares`` file --, ``--shares``
overrides them, and with neither a shares-taking policy is a clear input error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bbopt.cli import main
from bbopt.loading import load_workload
from bbopt.workloads.shares import workload_shares

FLAGS = ["--no-progress", "--preemptable", "1", "--checkpointable", "1",
         "--execution", "checkpoint", "--workers", "1", "--format", "json"]


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> tuple[Path, Path, dict[str, float]]:
    """A small Batsim workload whose jobs carry 3 entities' entitlements (written by
    ``bbopt generate``), and the same workload without them (SWF)."""
    d = tmp_path_factory.mktemp("ent")
    base = d / "base.swf"
    assert main(["generate", "kth-like", "n_jobs=150", "nodes=32", "load=1.3", "--seed", "2",
                 "--out", str(base)]) == 0
    carried = d / "e.json"
    assert main(["generate", "omfs-entities", "by=random", "n_entities=3", "--workload",
                 str(base), "--seed", "4", "--out", str(carried)]) == 0
    shares = workload_shares(load_workload(carried, bb="none")[0])
    assert shares is not None and len(shares) == 3
    return base, carried, shares


def _compare(capsys, out: Path, *argv: str) -> tuple[dict, str, dict[str, str]]:
    capsys.readouterr()
    assert main(["compare", *argv, *FLAGS, "--out", str(out)]) == 0
    cap = capsys.readouterr()
    jobs = {p.name: p.read_text() for p in sorted(out.glob("*_jobs.csv"))}
    return json.loads(cap.out), cap.err, jobs


POLICIES = "omfs,capping,fair-share,fcfs"


def test_the_workloads_entitlements_give_the_same_run_as_the_equivalent_shares_file(
        workload, tmp_path, capsys):
    _, carried, shares = workload
    own, err, own_jobs = _compare(capsys, tmp_path / "own", "-w", str(carried),
                                  "--policies", POLICIES)
    assert "the workload's own entitlements (3 entities" in err
    assert err.count("entitlements") == 1  # one line says so
    f = tmp_path / "shares.yaml"
    f.write_text(json.dumps({"shares": shares}))
    given, err2, given_jobs = _compare(capsys, tmp_path / "file", "-w", str(carried),
                                       "--policies", POLICIES, "--shares", str(f))
    assert "own entitlements" not in err2
    for m in (own, given):
        for policy in m.values():
            for k in [k for k in policy if k.startswith("decision_time")
                      or k.endswith("wall_time")]:
                policy.pop(k)  # timings of this machine
    assert own == given
    assert own_jobs == given_jobs and len(own_jobs) == 4
    # the entitlements did reach the policies and the measurements: satisfaction is measured
    # for every policy, and OMFS preempted to give entities their share
    assert all("share_shortfall_max" in own[p] for p in POLICIES.split(","))
    assert own["omfs"]["checkpoints"] > 0


def test_shares_file_overrides_the_workloads_entitlements(workload, tmp_path, capsys):
    _, carried, shares = workload
    own, _, own_jobs = _compare(capsys, tmp_path / "own", "-w", str(carried),
                                "--policies", "capping")
    big = max(shares, key=shares.get)
    f = tmp_path / "shares.yaml"  # the largest entity entitled to nothing
    f.write_text("".join(f"{e}: {0.0 if e == big else 0.5}\n" for e in sorted(shares)))
    given, _, given_jobs = _compare(capsys, tmp_path / "file", "-w", str(carried),
                                    "--policies", "capping", "--shares", str(f))
    assert own_jobs != given_jobs
    assert own["capping"]["mean_wait"] != given["capping"]["mean_wait"]


def test_simulate_uses_them_too_and_without_any_entitlements_is_an_input_error(
        workload, tmp_path, capsys):
    base, carried, shares = workload
    capsys.readouterr()
    assert main(["simulate", "-w", str(carried), "--policy", "partition", "--no-progress",
                 "--out", str(tmp_path / "a")]) == 0
    assert "own entitlements" in capsys.readouterr().err
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["provenance"]["policy_options"]["shares"] == pytest.approx(shares)
    f = tmp_path / "s.json"
    f.write_text(json.dumps(shares))
    assert main(["simulate", "-w", str(carried), "--policy", "partition", "--no-progress",
                 "--shares", str(f), "--out", str(tmp_path / "b")]) == 0
    assert (tmp_path / "a" / "partition_jobs.csv").read_text() == \
        (tmp_path / "b" / "partition_jobs.csv").read_text()
    capsys.readouterr()
    for argv in (["simulate", "--policy", "omfs"], ["compare", "--policies", "fcfs,partition"]):
        assert main([*argv, "-w", str(base), "--no-progress"]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "needs entitlement shares" in err and "--shares" in err
    # a workload that carries none, with a policy that takes none: no word about entitlements
    assert main(["simulate", "-w", str(base), "--policy", "fcfs", "--no-progress"]) == 0
    assert "entitlement" not in capsys.readouterr().err
