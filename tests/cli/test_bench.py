"""``bbopt bench capture``, ``export`` and ``run`` from the command line, on the generated pack
family (no trace needed) and one committed instance: what they print and what they write."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from bbopt.bench.instances import LIBRARY
from bbopt.bench.report import load_runs
from bbopt.cli import main

PACK = "pack-jeannot-small-d00000-0-stages"


@pytest.fixture
def one_instance(tmp_path):
    d = tmp_path / "instances"
    d.mkdir()
    shutil.copy(LIBRARY / "small" / f"{PACK}.json", d)
    return d


def test_capture_writes_the_family_s_instances(tmp_path, capsys):
    assert main(["bench", "capture", "--family", "pack-jeannot", "--out", str(tmp_path),
                 "--no-optimum"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "8 instances written"
    files = sorted((tmp_path / "small").glob("*.json"))
    committed = sorted((LIBRARY / "small").glob("pack-jeannot-*.json"))
    assert [f.name for f in files] == [f.name for f in committed]
    # without the reference solve, no optimum is recorded
    assert "no proven optimum" in out
    assert json.loads(files[0].read_text()).get("known") in (None, {})


def test_export_writes_the_integer_form_as_mps_and_lp(one_instance, tmp_path, capsys):
    out_dir = tmp_path / "mps"
    assert main(["bench", "export", "--instances", str(one_instance), "--out",
                 str(out_dir)]) == 0
    assert capsys.readouterr().out == f"2 files written to {out_dir}\n"
    assert sorted(p.name for p in out_dir.iterdir()) == [
        "manifest.json", f"{PACK}.lp", f"{PACK}.mps"]
    assert "ROWS" in (out_dir / f"{PACK}.mps").read_text()


def test_run_solves_the_grid_into_a_resumable_store(one_instance, tmp_path, capsys):
    store = tmp_path / "store"
    args = ["bench", "run", "--instances", str(one_instance), "--out", str(store),
            "--budgets", "5", "--seeds", "1", "--backends", "greedy", "--workers", "1",
            "--no-progress"]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert re.fullmatch(r"1 runs in [0-9.]+ s \(1 FEASIBLE\); store .*\n", captured.out)
    assert "1 runs in the grid, 0 already in" in captured.err
    (run,) = load_runs(store)
    known = json.loads((one_instance / f"{PACK}.json").read_text())["known"]["objective"]
    assert (run["instance"], run["backend"], run["status"]) == (PACK, "greedy", "FEASIBLE")
    assert run["objective"] == pytest.approx(known) and run["gap"] == 0.0
    # run again: everything is in the store already
    assert main(args) == 0
    assert capsys.readouterr().out.startswith("0 runs")


def test_report_tables_the_store_s_runs(one_instance, tmp_path, capsys):
    store, out = tmp_path / "store", tmp_path / "report"
    assert main(["bench", "run", "--instances", str(one_instance), "--out", str(store),
                 "--budgets", "5", "--seeds", "1", "--backends", "greedy", "--workers", "1",
                 "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["bench", "report", str(store), "--out", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed == [str(out / name) for name in ("profiles-small.png", "gap-small.png",
                                                    "tables.md", "tables.csv")]
    md = (out / "tables.md").read_text()
    # one greedy run: not proven optimal, reaching the known optimum, no fallback, no error
    # (then its times, which depend on the machine, and its largest gap: 0)
    row = next(line for line in md.splitlines() if line.startswith("| pack-stages | greedy | 1"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:7] == ["pack-stages", "greedy", "1", "0", "1", "0", "0"]
    assert cells[-1] == "0.00e+00"
    assert "| pack-stages | greedy | 0/1 of 1 |" in md
