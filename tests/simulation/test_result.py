"""The record of a run (:mod:`bbopt.simulation.result`) on hand-made outcomes: each jobs.csv
column of a finished, killed, rejected, dropped and zero-length job computed by hand (the
bounded slowdown's ten-minute bound, Kopanski & Rzadca Section 4.2, set apart from the plain
slowdown and the stretch), Batsim's interval sets, the number format, the per-job frame, the run
segments and the preemption columns, and the stream writer's order."""

from __future__ import annotations

import csv
import io
import math

import numpy as np
import pytest

from bbopt import Job, Platform
from bbopt.simulation.result import (
    BATSIM_COLUMNS,
    BBOPT_COLUMNS,
    BSLD_BOUND,
    OUTCOME_COLUMNS,
    PREEMPTION_COLUMNS,
    JobsCsvStream,
    SimulationResult,
    _num,
    procset,
)

JOBS = [
    Job("f", 10, 100, 50, 2, 1.5e9, user="u1"),  # finished: 20-70
    Job("k", 0, 300, 1000, 1, user="u2"),  # killed at its walltime: 900-1200
    Job("r", 4, 10, 10, 9, 2.0, user="u1"),  # rejected
    Job("z", 3, 10, 0, 1),  # zero-length run at 5
    Job("d", 1, 50, None, 3),  # dropped: 2-6
]


def _result(**kw) -> SimulationResult:
    res = SimulationResult(JOBS, Platform(8, 4e9), "fcfs", "wl", **kw)
    res.start = [20.0, 900.0, math.nan, 5.0, 2.0]
    res.end = [70.0, 1200.0, math.nan, 5.0, 6.0]
    res.state = ["finished", "killed", "rejected", "finished", "dropped"]
    res.allocation = [(3, 1), (0,), (), (2,), (4, 5, 7)]
    res.reasons = {"r": "needs 9 nodes"}
    return res


def test_a_new_record_has_one_empty_entry_per_job():
    res = SimulationResult(JOBS, Platform(8), "fcfs")
    assert len(res) == 5 and res.workload_name == "workload"
    assert all(math.isnan(x) for x in res.start + res.end)
    assert (res.state, res.allocation) == ([""] * 5, [()] * 5)
    kept = SimulationResult(JOBS[:1], Platform(8), "fcfs", start=[1.0], end=[2.0],
                            state=["finished"], allocation=[(0,)])
    assert (kept.start, kept.end, kept.state, kept.allocation) == ([1.0], [2.0], ["finished"],
                                                                   [(0,)])


def test_each_row_is_computed_by_hand():
    res = _result()
    assert res.row(0) == [
        "f", "wl", "f", "10", "2", "100", "1", "COMPLETED_SUCCESSFULLY", "20", "50", "70", "10",
        "60", "1.2", "1 3", "0", "", "1500000000", "50", "1.2", "1", "u1", ""]
    # 900 s of wait, 300 s run: stretch and slowdown 1200 / 300 = 4; the bounded slowdown
    # divides by the ten-minute bound instead: 1200 / 600 = 2
    assert res.row(1) == [
        "k", "wl", "k", "0", "1", "300", "0", "COMPLETED_WALLTIME_REACHED", "900", "300", "1200",
        "900", "1200", "4", "0", "0", "", "0", "1000", "4", "2", "u2", ""]
    assert res.row(2) == [
        "r", "wl", "r", "4", "9", "10", "0", "REJECTED", "-1", "-1", "-1", "-1", "-1", "-1", "",
        "0", "", "2", "10", "", "", "u1", "needs 9 nodes"]
    # a zero-length run: no stretch, slowdown over one second, bounded slowdown at least 1
    assert res.row(3) == [
        "z", "wl", "z", "3", "1", "10", "1", "COMPLETED_SUCCESSFULLY", "5", "0", "5", "2", "2",
        "", "2", "0", "", "0", "0", "2", "1", "", ""]
    assert res.row(4)[6:8] == ["0", "COMPLETED_KILLED"]
    assert res.row(4)[14] == "4-5 7" and res.row(4)[18] == ""  # no trace runtime
    assert list(res.rows()) == [res.row(k) for k in range(5)]


@pytest.mark.parametrize("run,turnaround,bsld", [
    (599.0, 1198.0, "1.9966666666666666"),  # under the bound: turnaround / 600
    (600.0, 1200.0, "2"),
    (601.0, 1202.0, "2"),  # above it: turnaround / run
    (300.0, 500.0, "1"),  # 500 / 600 < 1: at least 1
])
def test_the_bounded_slowdown_divides_by_at_least_ten_minutes(run, turnaround, bsld):
    assert BSLD_BOUND == 600.0
    job = Job("j", 0.0, 2000.0, run)
    res = SimulationResult([job], Platform(1), "fcfs", start=[turnaround - run],
                           end=[turnaround], state=["finished"], allocation=[(0,)])
    assert res.row(0)[20] == bsld
    assert res.to_pandas()["bounded_slowdown"][0] == pytest.approx(float(bsld))


@pytest.mark.parametrize("x,text", [
    (3, "3"), (-1.0, "-1"), (2.5, "2.5"), (1.2, "1.2"), (999999999999999.0, "999999999999999"),
    (1e15, "1000000000000000.0"), (-1e15, "-1000000000000000.0"), (math.nan, "nan"),
    ("", ""), ("x", "x"),
])
def test_numbers_are_written_whole_without_a_fraction_below_ten_to_the_fifteen(x, text):
    assert _num(x) == text


@pytest.mark.parametrize("nodes,text", [
    ((), ""), ((5,), "5"), ((3, 1), "1 3"), ((7, 8), "7-8"), ((0, 1, 2, 5), "0-2 5"),
    ((10, 9, 0, 2, 3, 4), "0 2-4 9-10"), ((4, 6, 8), "4 6 8"),
])
def test_allocations_are_written_as_batsim_interval_sets(nodes, text):
    assert procset(nodes) == text


def test_the_jobs_csv_is_batsims_columns_then_bbopts(tmp_path):
    res = _result()
    path = res.to_csv(tmp_path / "jobs.csv")
    assert path == tmp_path / "jobs.csv"
    rows = list(csv.reader(path.open()))
    assert tuple(rows[0]) == BATSIM_COLUMNS + BBOPT_COLUMNS
    assert rows[1:] == [res.row(k) for k in range(5)]
    assert path.read_text().endswith("\n") and "\r" not in path.read_text()


def test_a_run_with_preemption_adds_its_columns_zero_for_jobs_never_evicted(tmp_path):
    res = _result(preemption={"f": {"evictions": 2, "checkpoint_time": 12.5,
                                    "work_done": 50.0}})
    rows = list(csv.reader(res.to_csv(tmp_path / "jobs.csv").open()))
    assert tuple(rows[0]) == BATSIM_COLUMNS + BBOPT_COLUMNS + PREEMPTION_COLUMNS
    width = len(BATSIM_COLUMNS + BBOPT_COLUMNS)
    assert rows[1][width:] == ["2", "0", "0", "0", "12.5", "0", "50", "0"]
    assert rows[2][width:] == ["0"] * 8
    assert rows[1][:width] == res.row(0)


def test_segments_are_numbered_per_job_with_the_jobs_nodes(tmp_path):
    res = _result(segments=[("f", 0.0, 10.5, "checkpointed"), ("d", 2.0, 6.0, "dropped"),
                            ("f", 20.0, 70.0, "finished")])
    path = res.segments_to_csv(tmp_path / "segments.csv")
    assert path.read_bytes().decode() == ("job_id,segment,start,end,why,nodes\n"
                                "f,1,0,10.5,checkpointed,2\n"
                                "d,1,2,6,dropped,3\n"
                                "f,2,20,70,finished,2\n")


def test_the_per_job_frame_keeps_times_only_of_jobs_that_ran():
    frame = _result().to_pandas()
    assert list(frame.columns) == list(OUTCOME_COLUMNS)
    assert frame.attrs == {"policy": "fcfs", "workload": "wl", "platform_nodes": 8,
                           "platform_bb": 4e9}
    assert list(frame["job_id"]) == ["f", "k", "r", "z", "d"]
    assert list(frame["submit"]) == [10.0, 0.0, 4.0, 3.0, 1.0]
    np.testing.assert_array_equal(frame["start"], [20.0, 900.0, np.nan, 5.0, np.nan])
    np.testing.assert_array_equal(frame["end"], [70.0, 1200.0, np.nan, 5.0, np.nan])
    np.testing.assert_array_equal(frame["wait"], [10.0, 900.0, np.nan, 2.0, np.nan])
    np.testing.assert_array_equal(frame["turnaround"], [60.0, 1200.0, np.nan, 2.0, np.nan])
    np.testing.assert_array_equal(frame["bounded_slowdown"], [1.0, 2.0, np.nan, 1.0, np.nan])
    assert list(frame["state"]) == ["finished", "killed", "rejected", "finished", "dropped"]
    assert list(frame["nodes"]) == [2, 1, 9, 1, 3] and frame["nodes"].dtype == np.int64
    assert list(frame["bb"]) == [1.5e9, 0.0, 2.0, 0.0, 0.0]
    assert list(frame["walltime"]) == [100.0, 300.0, 10.0, 10.0, 50.0]
    np.testing.assert_array_equal(frame["runtime"], [50.0, 1000.0, 10.0, 0.0, np.nan])
    assert list(frame["user"][:3]) == ["u1", "u2", "u1"] and frame["user"][3:].isna().all()
    assert list(frame["allocation"]) == ["1 3", "0", "", "2", "4-5 7"]
    assert list(frame["ssd"]) == [0.0] * 5


def test_column_arrays_are_floats_indexed_like_the_jobs():
    a = _result().arrays()
    assert list(a) == ["submit", "walltime", "nodes", "bb", "start", "end", "state"]
    assert a["submit"].tolist() == [10.0, 0.0, 4.0, 3.0, 1.0]
    assert a["walltime"].tolist() == [100.0, 300.0, 10.0, 10.0, 50.0]
    assert a["nodes"].tolist() == [2.0, 1.0, 9.0, 1.0, 3.0]
    assert a["bb"].tolist() == [1.5e9, 0.0, 2.0, 0.0, 0.0]
    assert a["end"].tolist()[:2] == [70.0, 1200.0] and a["start"].dtype == float
    assert a["state"].dtype == object and a["state"].tolist()[2] == "rejected"


def test_the_stream_writes_each_row_once_every_earlier_job_has_ended():
    res = _result()
    fh = io.StringIO(newline="")
    stream = JobsCsvStream(fh)
    lines = []
    for k in (2, 1, 0, 4, 3):
        stream.ended(res, k)
        lines.append((stream.next, fh.getvalue().count("\n")))
    # the header at the first end; rows 0-2 once job 0 ends, row 3 last
    assert lines == [(0, 1), (0, 1), (3, 4), (3, 4), (5, 6)]
    stream.close(res)
    expected = io.StringIO(newline="")
    res._write_csv(expected)
    assert fh.getvalue() == expected.getvalue()


def test_the_stream_closes_with_the_rows_not_written_yet_or_the_whole_file():
    res = _result()
    fh = io.StringIO(newline="")
    stream = JobsCsvStream(fh)
    stream.ended(res, 0)
    stream.ended(res, 2)
    stream.close(res)  # jobs 1, 3, 4 not reported: written by close
    whole = io.StringIO(newline="")
    res._write_csv(whole)
    assert fh.getvalue() == whole.getvalue() and stream.next == 5
    for pre in ({"f": {"evictions": 1}}, {}):  # preemption columns, or no job reported
        fh = io.StringIO(newline="")
        fh.write("stale text")
        stream = JobsCsvStream(fh)
        done = _result(preemption=pre)
        if pre:
            stream.ended(done, 0)
        stream.close(done)
        whole = io.StringIO(newline="")
        done._write_csv(whole)
        assert fh.getvalue() == whole.getvalue()


def test_whole_second_times_give_float_columns_and_a_half_second_run_its_stretch():
    """Times given as integers still make float arrays; a run of half a second has a stretch
    (turnaround / run: 3 / 0.5 = 6) and a slowdown over one second (3)."""
    job = Job("h", 0, 10, 0.5)
    res = SimulationResult([job], Platform(1), "fcfs", start=[2.5], end=[3],
                           state=["finished"], allocation=[(0,)])
    assert res.row(0)[13] == "6" and res.row(0)[19] == "3"
    whole = SimulationResult([job], Platform(1), "fcfs", start=[2], end=[3],
                             state=["finished"], allocation=[(0,)])
    a = whole.arrays()
    assert a["start"].dtype == np.float64 and a["end"].dtype == np.float64
