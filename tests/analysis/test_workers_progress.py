"""``bbopt compare`` reports how far each policy's run is (jobs whose record is final out of
all) from the process that runs it -- this one or a worker -- as a bar on a terminal and a
plain line every N seconds in a log."""

from __future__ import annotations

import io

import pytest

from bbopt import progress as progress_module
from bbopt.analysis.workers import compare_policies
from bbopt.progress import Within
from bbopt.runs import REPORTS_PER_RUN, RunSpec, load


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    c = FakeClock()
    monkeypatch.setattr(progress_module, "monotonic", c)
    return c


def test_a_log_gets_a_line_every_interval_and_none_before(clock):
    log = io.StringIO()  # not a terminal: a pipe, a batch job's log
    within = Within(unit="job", every=10.0, stream=log)
    for t, done in [(0, 10), (5, 15), (9.99, 19), (10, 20), (15, 30), (19.99, 40), (20, 50),
                    (29.9, 60), (30, 70), (31, 100)]:
        clock.now = 1000.0 + t
        within.report("fcfs", done, 100)
    assert log.getvalue().splitlines() == [
        "fcfs: 20/100 jobs, 0m10s elapsed, about 0m40s left",
        "fcfs: 50/100 jobs, 0m20s elapsed, about 0m20s left",
        "fcfs: 70/100 jobs, 0m30s elapsed, about 0m13s left",
        "fcfs: 100/100 jobs, 0m31s elapsed, about 0m00s left",
    ]
    assert "\r" not in log.getvalue()  # no bar in a pipe
    within.report("fcfs", 100, 100)  # a late report of an ended run shows nothing
    assert len(log.getvalue().splitlines()) == 4


def test_a_run_that_ends_within_the_interval_prints_nothing(clock):
    log = io.StringIO()
    within = Within(unit="job", every=10.0, stream=log)
    within.report("sjf-bb", 10, 100)
    clock.now += 9.9
    within.report("sjf-bb", 100, 100)
    within.close()
    assert log.getvalue() == ""


def test_each_policy_has_its_own_lines_and_disabled_shows_nothing(clock):
    log, off = io.StringIO(), io.StringIO()
    within = Within(unit="job", every=1.0, stream=log)
    silent = Within(unit="job", every=1.0, stream=off, enabled=False)
    for w in (within, silent):
        w.report("a", 1, 4)
        w.report("b", 1, 2)
    clock.now += 1.0
    for w in (within, silent):
        w.report("a", 2, 4)
        w.report("b", 2, 2)
    assert log.getvalue().splitlines() == [
        "a: 2/4 jobs, 0m01s elapsed, about 0m01s left",
        "b: 2/2 jobs, 0m01s elapsed, about 0m00s left"]
    assert off.getvalue() == ""


def _spec(n: int) -> RunSpec:
    return load(RunSpec(first=n, policy="fcfs"))[0]


@pytest.mark.parametrize("workers", [1, 2])
def test_compare_reports_each_policys_finished_jobs_from_its_process(workers):
    spec = _spec(450)  # 450 // REPORTS_PER_RUN = 2 jobs between two reports
    seen: dict[str, list[tuple[int, int]]] = {}
    runs = list(compare_policies(spec, ["fcfs", "sjf-bb"], workers_=workers,
                                 on_jobs=lambda p, done, total: seen.setdefault(p, []).append(
                                     (done, total))))
    assert [p for p, _, _ in runs] == ["fcfs", "sjf-bb"]
    assert REPORTS_PER_RUN == 200
    for policy in ("fcfs", "sjf-bb"):
        assert seen[policy] == [(k, 450) for k in range(2, 451, 2)]


def test_a_run_of_fewer_jobs_than_reports_reports_every_job():
    spec = _spec(30)
    seen = []
    list(compare_policies(spec, ["fcfs"], workers_=1, on_jobs=lambda *m: seen.append(m)))
    assert seen == [("fcfs", k, 30) for k in range(1, 31)]


def test_compare_split_counts_its_runs_on_the_common_display(monkeypatch, capsys):
    """``compare --split`` shows its runs through :func:`bbopt.progress.progress` (a bar on a
    terminal, lines in a log), not a counter of its own."""
    from bbopt.cli import main

    shown = []

    class Display:
        def __init__(self, total, **kw):
            self.n, self.total, self.kw, self.closed = 0, total, kw, False
            shown.append(self)

        def update(self, n=1):
            self.n += n

        def close(self):
            self.closed = True

    monkeypatch.setattr(progress_module, "progress", Display)
    assert main(["compare", "--jobs", "60", "--policies", "fcfs-bb", "--split", "2",
                 "--workers", "1", "--format", "csv"]) == 0
    assert "runs" not in capsys.readouterr().err
    [bar] = shown
    # 2 parts x (the reference sjf-bb and fcfs-bb)
    assert (bar.n, bar.total, bar.closed) == (4, 4, True)
    assert bar.kw["unit"] == "run" and bar.kw["enabled"]
    assert main(["compare", "--jobs", "60", "--policies", "fcfs-bb", "--split", "2",
                 "--workers", "1", "--format", "csv", "--no-progress"]) == 0
    assert not shown[-1].kw["enabled"]
