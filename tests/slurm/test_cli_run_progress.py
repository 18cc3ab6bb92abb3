"""``bbopt slurm run`` has no total (it serves until stopped): a line every N seconds of the
clock of :mod:`bbopt.progress` with the decisions, jobs started and failed polls."""

from __future__ import annotations

import io
from types import SimpleNamespace

from bbopt import progress as progress_module
from bbopt.slurm.cli import RunProgress


def test_a_line_every_interval_and_none_between(monkeypatch, tmp_path):
    now = [100.0]
    monkeypatch.setattr(progress_module, "monotonic", lambda: now[0])
    bridge = SimpleNamespace(errors=0, error_file=tmp_path / "errors.jsonl")
    out = io.StringIO()
    progress = RunProgress(bridge, every=60.0, stream=out)
    for t in (10.0, 59.9):
        now[0] = 100.0 + t
        progress.step(SimpleNamespace(started=["a", "b"]))
        progress.tick()
    assert out.getvalue() == ""
    now[0] = 160.0
    progress.tick()
    now[0] = 219.9
    progress.tick()
    now[0] = 3820.0
    progress.step(SimpleNamespace(started=[]))
    progress.tick()
    assert out.getvalue().splitlines() == [
        "bbopt slurm run: 1m00s elapsed, 2 decisions, 4 jobs started, 0 failed polls",
        "bbopt slurm run: 1h02m00s elapsed, 3 decisions, 4 jobs started, 0 failed polls"]
