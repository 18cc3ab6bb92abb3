"""Kopanski's I/O-aware Batsim parts: compute amounts without the I/O time are recognised and
refused as plain runtimes unless the caller chooses how to replay them."""

from __future__ import annotations

import json

import pytest

from bbopt import simulate
from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.topology import kopanski_dragonfly
from bbopt.workloads.batsim import parse_batsim, read_batsim
from tests._workload_data import KTH_BATSIM, data_file


def _doc(fractional: bool, n: int = 12) -> dict:
    jobs, profiles = [], {}
    for i in range(n):
        cpu = (100 + i) * 1e9 - (37_123_456 * (i + 1) if fractional else 0)
        profiles[str(i)] = {"type": "parallel_homogeneous", "cpu": int(cpu), "com": 0,
                            "bb": 2_000_000_000}
        jobs.append({"id": i, "subtime": 10 * i, "walltime": 3600, "res": 2, "profile": str(i)})
    return {"nb_res": 96, "jobs": jobs, "profiles": profiles}


def test_io_aware_part_is_refused_naming_the_option():
    with pytest.raises(InputError, match="io_aware='phased'") as info:
        parse_batsim(_doc(True), source="part.json")
    assert info.value.field == "io_aware" and "part.json" in str(info.value)
    # Whole compute seconds (an allocation-only part) read as before.
    jobs = parse_batsim(_doc(False)).jobs
    assert jobs[3].runtime == 103.0 and "io_aware" not in jobs[3].extra["batsim"]


def test_plain_reads_them_as_runtimes_and_flags_them():
    jobs = parse_batsim(_doc(True), io_aware="plain").jobs
    assert jobs[0].runtime == pytest.approx(100 - 0.037123456)
    assert all(j.extra["batsim"]["io_aware"] for j in jobs)


def test_phased_replays_them_with_the_io_added_back():
    jobs = parse_batsim(_doc(True), io_aware="phased").jobs
    ph = jobs[0].extra["phases"]
    assert ph["model"] == "kopanski" and ph["compute_phases"] == 1
    assert ph["stage_in_bytes"] == ph["stage_out_bytes"] == jobs[0].bb == 4e9
    res = simulate(jobs[:1], kopanski_dragonfly(), "fcfs-bb", execution="phased-io")
    # 100 - 0.04 s of computation plus staging 4 GB in and out: both nodes stage through their
    # nearest BB node, whose 1.25 GB/s link carries the 4 GB, 3.2 s each way.
    elapsed = res.end[0] - res.start[0]
    assert elapsed == pytest.approx(jobs[0].runtime + 2 * 3.2, rel=1e-6)


def test_the_shared_alloc_only_part_is_not_flagged():
    jobs = read_batsim(data_file(KTH_BATSIM)).jobs
    assert len(jobs) == 1221 and not any(j.extra["batsim"].get("io_aware") for j in jobs)


def test_cli_refuses_with_one_line(tmp_path, capsys):
    path = tmp_path / "part-1.json"
    path.write_text(json.dumps(_doc(True)))
    assert main(["simulate", "-w", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "io_aware" in err and len(err.strip().splitlines()) == 1


def test_checkpoint_factor_sizes_the_checkpoints_of_a_phased_part():
    doc = _doc(True)
    doc["profiles"]["0"]["cpu"] = int(3 * 3600e9) - 123_456_789  # three one-hour phases
    half = parse_batsim(doc, io_aware="phased", checkpoint_factor=0.5).jobs[0].extra["phases"]
    whole = parse_batsim(doc, io_aware="phased").jobs[0].extra["phases"]
    assert half["compute_phases"] == whole["compute_phases"] == 3
    assert half["checkpoints"] == 2
    assert half["checkpoint_bytes"] == 2e9 and whole["checkpoint_bytes"] == 4e9


def test_cli_replays_a_part_phased_or_plain(tmp_path, capsys):
    path = tmp_path / "part-1.json"
    path.write_text(json.dumps(_doc(True)))
    out = tmp_path / "out"
    assert main(["simulate", "-w", str(path), "--io-aware", "phased", "--checkpoint-factor",
                 "0.5", "-p", "kopanski-dragonfly", "--execution", "phased-io",
                 "--policy", "fcfs-bb", "--no-progress", "--out", str(out)]) == 0
    rows = (out / "fcfs-bb_jobs.csv").read_text().splitlines()
    head = rows[0].split(",")
    first = dict(zip(head, rows[1].split(","), strict=True))
    # the same 6.4 s of staging as in the Python replay above, added back to the compute
    elapsed = float(first["execution_time"])
    assert elapsed == pytest.approx(100 - 0.037123456 + 2 * 3.2, rel=1e-6)
    assert main(["compare", "-w", str(path), "--io-aware", "plain", "--policies",
                 "fcfs-bb,sjf-bb", "--no-progress"]) == 0
    capsys.readouterr()
    # the options belong to Batsim parts, and the factor to the phased replay
    assert main(["simulate", "-w", str(path), "--checkpoint-factor", "0.5",
                 "--no-progress"]) == 2
    assert "--checkpoint-factor" in capsys.readouterr().err
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 100 2 -1 -1 2 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    assert main(["simulate", "-w", str(swf), "--io-aware", "plain", "--no-progress"]) == 2
    assert "--io-aware" in capsys.readouterr().err


def test_sweep_spec_reads_a_part_phased(tmp_path):
    from bbopt.analysis.store import collect
    from bbopt.analysis.sweep import run_sweep
    from bbopt.analysis.sweep_spec import parse_spec

    path = tmp_path / "part-1.json"
    path.write_text(json.dumps(_doc(True)))
    doc = {"name": "io", "workloads": {"part": {"file": str(path), "bb": "none",
                                                 "reader": {"io_aware": "phased",
                                                            "checkpoint_factor": 0.5}}},
           "platforms": ["kopanski-dragonfly"], "executions": ["phased-io"],
           "policies": ["fcfs-bb"], "seeds": [0]}
    rep = run_sweep(parse_spec(doc, source="<test>", base=tmp_path), tmp_path / "r",
                    executor="serial", progress=False)
    assert (rep.ran, rep.failed) == (1, 0)
    rows = collect(tmp_path / "r")
    assert len(rows) == 1
    plain = simulate(parse_batsim(_doc(True), io_aware="plain").jobs, kopanski_dragonfly(),
                     "fcfs-bb")
    # the phased replay's jobs take their staging on top of the plain compute
    row = rows.iloc[0]
    assert row["finished"] == 12 and row["makespan"] > float(max(plain.end))


def test_the_dragonfly_with_the_authors_bb_placement():
    from bbopt.loading import load_platform

    pool, prox = load_platform("kopanski-dragonfly"), load_platform("kopanski-dragonfly:proximity")
    named = load_platform("kopanski-dragonfly:named")
    assert pool.bb_nodes is None and prox.bb_nodes == named.bb_nodes == (40e9,) * 12
    assert prox.bb_proximity == load_platform("kopanski:proximity").bb_proximity
    assert named.bb_proximity is None and prox.topology is not None
    with pytest.raises(InputError, match="pool, named or proximity"):
        load_platform("kopanski-dragonfly:near")
    jobs = parse_batsim(_doc(True), io_aware="phased", checkpoint_factor=0.5).jobs
    res = simulate(jobs, prox, "sjf-bb", execution="phased-io")
    assert list(res.state).count("finished") == 12
