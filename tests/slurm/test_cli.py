"""``bbopt slurm``: replay through a real Slurm writes bbopt's jobs.csv; bad input exits 2."""

import csv

import pytest

from bbopt.cli import main
from tests.slurm.conftest import require_slurm


def test_unknown_policy_is_one_line_and_status_2(capsys):
    assert main(["slurm", "run", "--policy", "nope", "--state-dir", "/nonexistent/x"]) == 2
    err = capsys.readouterr().err
    assert "unknown policy 'nope'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slurm
def test_replay_under_slurm_backfill_writes_every_job(tmp_path):
    require_slurm()
    out = tmp_path / "jobs.csv"
    assert main(["slurm", "replay", "--jobs", "10", "--speedup", "20000", "--nodes", "4",
                 "--scheduler", "slurm", "--interval", "0.2", "--out", str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 10
    for r in rows:
        assert r["final_state"] == "COMPLETED_SUCCESSFULLY"
        assert float(r["starting_time"]) >= float(r["submission_time"])
        assert float(r["finish_time"]) >= float(r["starting_time"])
        assert r["allocated_resources"] != ""


def test_site_config_prints_the_pool_and_writes_the_lua(tmp_path, capsys):
    lua = tmp_path / "job_submit.lua"
    assert main(["slurm", "site-config", "--bb", "480TB", "--bb-unit", "1TB", "--partition",
                 "bbopt", "--lua", str(lua)]) == 0
    assert capsys.readouterr().out.splitlines() == ["Licenses=bb:480",
                                                    "JobSubmitPlugins=lua  # job_submit.lua "
                                                    "beside slurm.conf"]
    assert '["bbopt"] = true' in lua.read_text()
