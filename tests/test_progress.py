"""Progress of long commands (bbopt.progress): bars only on a terminal, plain lines every N
seconds in a log, nothing for short runs, the same rule in simulate, compare and sweep."""

from __future__ import annotations

import io

import pytest

import bbopt
from bbopt.cli import main
from bbopt.progress import EVERY, ProgressLog, Silent, default_every, progress
from bbopt.workloads.synthetic import kth_like


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_and_a_log_gets_lines():
    bar = progress(10, unit="job", desc="d", stream=Terminal())
    assert type(bar).__name__ == "tqdm"
    bar.close()
    log = progress(10, unit="job", desc="d", stream=io.StringIO(), every=5.0)
    assert isinstance(log, ProgressLog) and log.every == 5.0 and log.delay == 0.0
    assert isinstance(progress(10, unit="job", desc="d", enabled=False), Silent)
    assert isinstance(progress(0, unit="job", desc="d", stream=io.StringIO()), Silent)


def test_log_lines_count_items_in_their_plural_and_estimate_what_is_left():
    out = io.StringIO()
    log = progress(3, unit="policy", desc="compare", stream=out, every=0.0)
    for _ in range(3):
        log.update()
    lines = out.getvalue().splitlines()
    assert [ln.split(",")[0] for ln in lines] == [
        "compare: 1/3 policies", "compare: 2/3 policies", "compare: 3/3 policies"]
    assert "failed" not in lines[0] and lines[-1].endswith("about 0m00s left")
    out = io.StringIO()
    log = progress(2, unit="run", desc="sweep", stream=out, every=0.0, count_failed=True,
                   skipped=5)
    log.set_postfix(failed=1)
    log.update()
    assert out.getvalue().startswith("sweep: 1/2 runs (5 done before), 1 failed, ")


def test_quiet_logs_print_nothing_before_every_seconds():
    out = io.StringIO()
    log = progress(2, unit="job", desc="fcfs", stream=out, every=3600.0, quiet=True)
    assert log.delay == 3600.0
    log.update(2)
    log.close()
    assert out.getvalue() == ""  # a short run in a log: not even a final line
    out = io.StringIO()
    log = progress(2, unit="job", desc="fcfs", stream=out, every=3600.0)
    log.update(2)
    assert out.getvalue().startswith("fcfs: 2/2 jobs")  # not quiet: the final line


@pytest.mark.parametrize("value, expected", [("5", 5.0), ("0.5", 0.5), ("0", EVERY),
                                             ("-3", EVERY), ("soon", EVERY)])
def test_every_from_the_environment(monkeypatch, value, expected):
    monkeypatch.setenv("BBOPT_PROGRESS_EVERY", value)
    assert default_every() == expected
    monkeypatch.delenv("BBOPT_PROGRESS_EVERY")
    assert default_every() == EVERY == 60.0


def test_simulate_writes_lines_into_a_log_not_a_bar(monkeypatch, capsys):
    monkeypatch.setenv("BBOPT_PROGRESS_EVERY", "1e-9")
    bbopt.simulate(kth_like(300, seed=0), bbopt.Platform.kopanski(), "fcfs", progress=True)
    err = capsys.readouterr().err
    assert "\r" not in err
    assert [ln.split(",")[0] for ln in err.splitlines()] == ["fcfs: 256/300 jobs",
                                                             "fcfs: 300/300 jobs"]


def test_compare_reports_each_policy_in_a_log(monkeypatch, capsys):
    monkeypatch.setenv("BBOPT_PROGRESS_EVERY", "1e-9")
    assert main(["compare", "--jobs", "300", "--policies", "fcfs,sjf-bb", "--workers", "1"]) == 0
    err = [ln.split(",")[0] for ln in capsys.readouterr().err.splitlines()]
    assert "compare: 1/2 policies" in err and "compare: 2/2 policies" in err
    assert main(["simulate", "--jobs", "300", "--policy", "sjf-bb"]) == 0
    err = [ln.split(",")[0] for ln in capsys.readouterr().err.splitlines()]
    assert "sjf-bb: 300/300 jobs" in err  # within a run: the engine's lines
    assert main(["compare", "--jobs", "300", "--policies", "fcfs", "--no-progress"]) == 0
    assert "compare:" not in capsys.readouterr().err
