"""``bbopt bench run`` shows the runs done and failed (:mod:`bbopt.progress`): a line every N
seconds in a log, no bar in a pipe, nothing with ``progress=False``."""

from __future__ import annotations

import pytest

from bbopt import progress as progress_module
from bbopt.bench import run as bench_run

STATUSES = ["optimal", "failed", "feasible", "optimal", "optimal"]


@pytest.fixture
def fake_grid(monkeypatch):
    grid = [(f"i{k}.json", f"sha{k}", "greedy", 0.5, 0) for k in range(len(STATUSES))]
    monkeypatch.setattr(bench_run, "tasks", lambda *a, **k: grid)
    status = dict(zip((g[1] for g in grid), STATUSES, strict=True))
    monkeypatch.setattr(bench_run, "_task",
                        lambda root, path, sha, *rest: ("h" + sha, status[sha]))
    clock = iter([0.0, 10.0, 20.0, 30.0, 40.0, 50.0, 51.0])  # start, one per run, the end
    monkeypatch.setattr(progress_module, "monotonic", lambda: next(clock))
    monkeypatch.setenv("BBOPT_PROGRESS_EVERY", "20")


def test_a_log_gets_a_line_every_interval_with_the_failures(fake_grid, tmp_path, capsys):
    summary = bench_run.run_tier("unused", tmp_path / "store", workers=1, progress=True)
    assert summary.startswith("5 runs in ") and "1 failed, 1 feasible, 3 optimal" in summary
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "bench: 2/5 runs, 1 failed, 0m20s elapsed, about 0m30s left",
        "bench: 4/5 runs, 1 failed, 0m40s elapsed, about 0m10s left",
        "bench: 5/5 runs, 1 failed, 0m50s elapsed, about 0m00s left",
    ]
    assert "\r" not in err


def test_no_progress_prints_nothing(fake_grid, tmp_path, capsys):
    bench_run.run_tier("unused", tmp_path / "store", workers=1, progress=False)
    assert capsys.readouterr().err == ""
