"""A jobs.csv read back from a results store is checked before the report reads it: a missing
column or a cell that is not the number it must be is an InputError naming the file, the row and
the column, never a KeyError or ValueError traceback from pandas."""

from __future__ import annotations

import gzip
import io

import pandas as pd
import pytest

from bbopt.analysis.frames import check_jobs_csv, from_jobs_csv
from bbopt.errors import InputError

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
