"""The jobs.csv reader, the timeline and the utilisation of `bbopt.analysis.frames`.

A jobs.csv read back from a results store is checked before the report reads it: a missing
column or a cell that is not the number it must be is an InputError naming the file, the row and
the column, never a KeyError or ValueError traceback from pandas. What it reads are the columns
of a result's own frame, with the wait, turnaround and bounded slowdown computed from its times;
the timeline and the utilisation are checked on hand-computed step functions."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pytest

import bbopt
from bbopt.analysis.frames import (
    check_jobs_csv,
    from_jobs_csv,
    metrics_frame,
    outcomes,
    timeline,
    utilisation,
)
from bbopt.analysis.metrics import summarize
from bbopt.errors import InputError
from bbopt.simulation.result import OUTCOME_COLUMNS

HEAD = ("job_id,submission_time,requested_number_of_resources,requested_time,final_state,"
        "starting_time,finish_time\n")
GOOD = "1,0,4,100,COMPLETED_SUCCESSFULLY,5,50\n2,1,0,100,REJECTED,,\n"


def _frame(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), dtype={"job_id": str})


def test_a_whole_jobs_csv_passes_and_reads():
    frame = _frame(HEAD + GOOD)
    check_jobs_csv(frame)  # a rejected job's empty times are allowed
    out = from_jobs_csv(frame)
    assert out["wait"].iloc[0] == 5.0 and out["nodes"].tolist() == [4, 0]


@pytest.mark.parametrize("column", ["job_id", "submission_time", "requested_time",
                                    "requested_number_of_resources", "starting_time",
                                    "final_state", "finish_time"])
def test_each_missing_column_is_named(column):
    frame = _frame(HEAD + GOOD).drop(columns=[column])
    with pytest.raises(InputError, match="column is missing") as err:
        check_jobs_csv(frame)
    assert err.value.field == column


@pytest.mark.parametrize(("row", "column", "ok"), [
    ("3,2,1,100,REJECTED,,", None, True),  # 1 node: fine
    ("3,2,-1,100,REJECTED,,", "requested_number_of_resources", False),  # just below 0
    ("3,2,1.5,100,REJECTED,,", "requested_number_of_resources", False),  # not whole
    ("3,2,10000000,100,REJECTED,,", None, True),  # at MAX_NODES
    ("3,2,10000001,100,REJECTED,,", "requested_number_of_resources", False),  # just above
    ("3,2," + "1" + "0" * 30 + ",100,REJECTED,,", "requested_number_of_resources",
     False),  # (too large for an integer column: was an OverflowError in report)
    ("3,,1,100,REJECTED,,", "submission_time", False),  # required, empty
    ("3,2,1,x,REJECTED,,", "requested_time", False),
    ("3,2,1,100,COMPLETED_SUCCESSFULLY,inf,9", "starting_time", False),
    ("3,2,1,100,COMPLETED_SUCCESSFULLY,3,nine", "finish_time", False),
])
def test_a_bad_cell_names_its_row_and_column(row, column, ok):
    frame = _frame(HEAD + GOOD + row + "\n")
    if ok:
        check_jobs_csv(frame)
        return
    with pytest.raises(InputError) as err:
        check_jobs_csv(frame)
    assert (err.value.field, err.value.line) == (column, 3)


def test_the_store_names_the_file(tmp_path):
    from bbopt.analysis.store import JOBS, Store

    store = Store(tmp_path)
    run = store.runs / "abc"
    run.mkdir(parents=True)
    (run / JOBS).write_bytes(gzip.compress((HEAD + "1,0,x,100,REJECTED,,\n").encode()))
    frame = store.jobs_frame("abc")  # read as a frame; what reads it as outcomes checks it
    with pytest.raises(InputError) as err:
        from_jobs_csv(frame)
    assert str(run / JOBS) in str(err.value) and err.value.line == 1


def test_a_missing_column_names_the_file_and_says_what_is_missing():
    frame = _frame(HEAD + GOOD).drop(columns=["requested_time"])
    frame.attrs["source"] = "runs/abc/jobs.csv.gz"
    with pytest.raises(InputError, match="a jobs.csv column is missing") as err:
        check_jobs_csv(frame)
    assert err.value.source == "runs/abc/jobs.csv.gz" and err.value.field == "requested_time"


def test_the_message_says_what_the_cell_must_be_and_what_it_holds():
    with pytest.raises(InputError, match=r"must be a finite number, got 'x'"):
        check_jobs_csv(_frame(HEAD + "3,2,1,x,REJECTED,,\n"))
    with pytest.raises(InputError, match=r"must be a whole number in \[0, 10,000,000\], got "
                                         r"np.float64\(1.5\)|must be a whole number in "
                                         r"\[0, 10,000,000\], got 1.5"):
        check_jobs_csv(_frame(HEAD + "3,2,1.5,100,REJECTED,,\n"))


def test_the_trace_runtime_is_checked_without_a_bb_column():
    # the optional columns are checked each when present, not only up to the first absent one
    frame = _frame(HEAD.rstrip("\n") + ",trace_runtime\n" + "1,0,4,100,REJECTED,,,soon\n")
    with pytest.raises(InputError) as err:
        check_jobs_csv(frame)
    assert (err.value.field, err.value.line) == ("trace_runtime", 1)


# Two jobs that ran, one rejected, one in a final state bbopt does not write (read as no state,
# no times). a: 100 s of execution, under the 600 s bound: turnaround 110 s, bounded slowdown
# max(110 / 600, 1) = 1. b: killed at its walltime after 800 s, submitted at 0 and started at
# 300: turnaround 1100 s, bounded slowdown 1100 / 800 = 1.375 (not 1100 / 600 = 1.83).
FULL = (
    "job_id,submission_time,requested_number_of_resources,requested_time,final_state,"
    "starting_time,finish_time,allocated_resources,bb,trace_runtime,user\n"
    "a,10,3,200,COMPLETED_SUCCESSFULLY,20,120,0-2,5000000000,90,u1\n"
    "b,0,2,800,COMPLETED_WALLTIME_REACHED,300,1100,3 5,0,900,u2\n"
    "c,5,2,100,REJECTED,,,,1000,,u1\n"
    "7,6,1,100,COMPLETED_KILLED,40,50,,0,,u3\n"
)


def _full_expected() -> pd.DataFrame:
    nan = np.nan
    return pd.DataFrame({
        "job_id": ["a", "b", "c", "7"], "submit": [10.0, 0.0, 5.0, 6.0],
        "start": [20.0, 300.0, nan, nan], "end": [120.0, 1100.0, nan, nan],
        "state": ["finished", "killed", "rejected", ""], "nodes": [3, 2, 2, 1],
        "bb": [5e9, 0.0, 1000.0, 0.0], "ssd": [0.0] * 4,
        "walltime": [200.0, 800.0, 100.0, 100.0], "runtime": [90.0, 900.0, nan, nan],
        "wait": [10.0, 300.0, nan, nan], "turnaround": [110.0, 1100.0, nan, nan],
        "bounded_slowdown": [1.0, 1.375, nan, nan], "user": ["u1", "u2", "u1", "u3"],
        "allocation": ["0-2", "3 5", "", ""],
    }, columns=list(OUTCOME_COLUMNS))


def test_a_jobs_csv_reads_as_the_outcome_columns():
    out = from_jobs_csv(pd.read_csv(io.StringIO(FULL)))
    pd.testing.assert_frame_equal(out.astype({"state": str}), _full_expected())
    assert out["nodes"].dtype.kind == "i"


def test_a_jobs_csv_read_as_text_reads_the_same():
    # check_jobs_csv takes a number written as text, so what it passes must read as numbers
    text = pd.read_csv(io.StringIO(FULL), dtype=str)
    check_jobs_csv(text)
    out = from_jobs_csv(text)
    pd.testing.assert_frame_equal(out.astype({"state": str}), _full_expected())


def test_a_jobs_csv_without_bbopts_columns_has_no_bb_runtime_user_or_allocation():
    frame = pd.read_csv(io.StringIO(FULL)).drop(
        columns=["bb", "trace_runtime", "user", "allocated_resources"])
    out = from_jobs_csv(frame)
    assert out["bb"].tolist() == [0.0] * 4 and out["ssd"].tolist() == [0.0] * 4
    assert out["runtime"].isna().all() and out["user"].isna().all()
    assert out["allocation"].tolist() == [""] * 4


def test_outcomes_of_a_jobs_csv_are_what_the_reader_reads():
    frame = pd.read_csv(io.StringIO(FULL))
    pd.testing.assert_frame_equal(outcomes(frame), from_jobs_csv(frame))
    own = from_jobs_csv(frame)
    assert outcomes(own) is own


def test_the_timeline_of_a_jobs_csv_is_its_step_functions():
    # only the jobs that ran: b submitted at 0, a at 10; a runs [20, 120), b [300, 1100)
    tl = timeline(pd.read_csv(io.StringIO(FULL)))
    assert tl["time"].tolist() == [0.0, 10.0, 20.0, 120.0, 300.0, 1100.0]
    assert tl["nodes"].tolist() == [0, 0, 3, 0, 2, 0]
    assert tl["bb"].tolist() == [0.0, 0.0, 5e9, 0.0, 0.0, 0.0]
    assert tl["queued"].tolist() == [1, 2, 1, 1, 0, 0]
    assert tl["running"].tolist() == [0, 0, 1, 0, 1, 0]


def test_the_timeline_of_a_run_where_nothing_ran_is_empty():
    tl = timeline(_frame(HEAD + "1,0,4,100,REJECTED,,\n2,1,2,100,REJECTED,,\n"))
    assert list(tl.columns) == ["time", "nodes", "bb", "queued", "running"] and len(tl) == 0


def test_the_bb_in_use_never_goes_below_zero_by_round_off():
    # 0.1 + 0.2 + 3.3 - 0.1 - 0.2 - 3.3 is -4.4e-16 in floats: the use after the last end is 0
    rows = "".join(f"{k},0,1,100,COMPLETED_SUCCESSFULLY,{k},{10 + k},{bb}\n"
                   for k, bb in enumerate((0.1, 0.2, 3.3)))
    tl = timeline(_frame(HEAD.rstrip("\n") + ",bb\n" + rows))
    assert tl["bb"].iloc[-1] == 0.0 and (tl["bb"] >= 0.0).all()
    assert tl["bb"].iloc[2] == pytest.approx(3.6)


# nodes in use: 4 over [10, 20), 2 over [20, 30), 0 from 30
STEPS = pd.DataFrame({"time": [10.0, 20.0, 30.0], "nodes": [4.0, 2.0, 0.0],
                      "bb": [1.0, 1.0, 0.0]})


@pytest.mark.parametrize(("t0", "t1", "expected"), [
    (None, None, (4 * 10 + 2 * 10) / (4 * 20)),  # the timeline's span, [10, 30]
    (15.0, None, (4 * 5 + 2 * 10) / (4 * 15)),  # from inside the first step
    (None, 25.0, (4 * 10 + 2 * 5) / (4 * 15)),  # to inside the second
    (0.0, 40.0, (4 * 10 + 2 * 10) / (4 * 40)),  # nothing in use outside the steps
])
def test_utilisation_is_the_time_average_over_the_capacity(t0, t1, expected):
    assert utilisation(STEPS, 4.0, t0=t0, t1=t1) == pytest.approx(expected, rel=1e-12)


def test_utilisation_of_another_column_and_of_short_or_degenerate_spans():
    assert utilisation(STEPS, 2.0, "bb") == pytest.approx(20 / (2 * 20))
    one = pd.DataFrame({"time": [0.0], "nodes": [3.0]})  # one instant, held to t1
    assert utilisation(one, 4.0, t0=0.0, t1=10.0) == pytest.approx(0.75)
    assert utilisation(one, 4.0, t0=0.0, t1=0.5) == pytest.approx(0.75)  # under a second
    assert utilisation(one, 0.5, t0=0.0, t1=10.0) == pytest.approx(6.0)
    assert np.isnan(utilisation(one, 0.0, t0=0.0, t1=10.0))  # no capacity
    assert np.isnan(utilisation(STEPS.iloc[:0], 4.0))  # no step


def test_metrics_frame_is_summarize_per_run_over_the_interval():
    jobs = [bbopt.Job("a", 0, 100, 100, nodes=4), bbopt.Job("b", 50, 100, 100, nodes=4),
            bbopt.Job("c", 300, 100, 100, nodes=2)]
    res = bbopt.simulate(jobs, bbopt.Platform(4, 0.0), "fcfs")
    single = metrics_frame(res)
    assert single.index.tolist() == [res.policy] and single.index.name == "run"
    assert single.loc[res.policy].to_dict() == pytest.approx(summarize(res), nan_ok=True)
    both = metrics_frame({"x": res, "y": res}, interval=(0.0, 100.0))
    assert both.index.tolist() == ["x", "y"] and both.index.name == "run"
    within = summarize(res, interval=(0.0, 100.0))
    assert within != summarize(res)
    assert both.loc["y"].to_dict() == pytest.approx(within, nan_ok=True)
