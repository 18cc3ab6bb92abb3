"""Nothing is overwritten without --force: report, generate and sweep collect refuse an existing
output before any work, name it, and replace it with --force."""

from __future__ import annotations

import pytest
import yaml

from bbopt.cli import main

SPEC = {"name": "f", "workloads": {"syn": {"generator": {"name": "kth-like", "n_jobs": 60}}},
        "policies": ["fcfs-bb"], "seeds": [0], "reference": "fcfs-bb"}


@pytest.fixture
def store(tmp_path):
    spec = tmp_path / "s.yaml"
    spec.write_text(yaml.safe_dump(SPEC))
    assert main(["sweep", str(spec), "--out", str(tmp_path / "r"), "--serial",
                 "--no-progress"]) == 0
    return tmp_path / "r"


def test_report_refuses_to_overwrite_without_force(store, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    rep = tmp_path / "rep"
    assert main(["report", str(store), "--out", str(rep)]) == 0
    page = (rep / "index.html").read_text()
    (rep / "index.html").write_text("mine")
    assert main(["report", str(store), "--out", str(rep)]) == 2
    err = capsys.readouterr().err
    assert "would overwrite index.html" in err and "--force" in err
    assert (rep / "index.html").read_text() == "mine"
    assert main(["report", str(store), "--out", str(rep), "--force"]) == 0
    assert (rep / "index.html").read_text() == page


def test_collect_refuses_to_overwrite_without_force(store, tmp_path, capsys):
    table = tmp_path / "t.csv"
    table.write_text("mine")
    assert main(["sweep", "collect", str(store), "--out", str(table)]) == 2
    assert "exists; choose another name or add --force" in capsys.readouterr().err
    assert table.read_text() == "mine"
    assert main(["sweep", "collect", str(store), "--out", str(table), "--force"]) == 0
    assert table.read_text().startswith("sweep,") or "policy" in table.read_text()


def test_generate_refuses_to_overwrite_without_force(tmp_path, capsys):
    out = tmp_path / "w.swf"
    assert main(["generate", "kth-like", "n_jobs=20", "--out", str(out)]) == 0
    first = out.read_text()
    out.write_text("mine")
    assert main(["generate", "kth-like", "n_jobs=20", "--out", str(out)]) == 2
    assert "exists; choose another name or add --force" in capsys.readouterr().err
    assert out.read_text() == "mine"
    assert main(["generate", "kth-like", "n_jobs=20", "--out", str(out), "--force"]) == 0
    assert out.read_text() == first
