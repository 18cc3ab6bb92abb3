"""SWF burst-buffer variants (CQSim, BBSimulator), SWF output of a schedule, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from bbopt.core import GB, Platform
from bbopt.errors import InputError
from bbopt.simulation import simulate
from bbopt.workloads.swf import read_swf
from bbopt.workloads.swf_writer import write_swf
from tests._workload_data import KTH_SWF, data_file

REC = "{n} {s} -1 {r} {p} -1 -1 {p} {w} -1 1 {u} 3 -1 -1 -1 -1 -1"


def _lines(extra: list[str]) -> list[str]:
    base = [REC.format(n=1, s=0, r=50, p=2, w=100, u=7),
            REC.format(n=2, s=10, r=20, p=1, w=60, u=8),
            REC.format(n=3, s=15, r=5, p=4, w=10, u=7)]
    return [f"{b} {e}".strip() for b, e in zip(base, extra, strict=True)]


def test_cqsim_column_and_capacity_header(tmp_path: Path):
    path = tmp_path / "cq.swf"
    path.write_text("; MaxNodes: 8\n; BurstBuffer: 100\n" + "\n".join(_lines(["5", "0", "12.5"])))
    trace = read_swf(path)
    assert trace.bb_columns == "cqsim"
    assert trace.bb_capacity == 100 * GB
    assert [j.bb for j in trace.jobs] == [5 * GB, 0.0, 12.5 * GB]
    trace_tb = read_swf(path, bb_unit=1e12)
    assert trace_tb.bb_capacity == 100e12


def test_bbsim_columns_and_companion_file(tmp_path: Path):
    path = tmp_path / "bs.swf"
    path.write_text("\n".join(_lines(["1 4 2", "0 0 0", "3 -1 1"])))
    trace = read_swf(path)
    assert trace.bb_columns == "bbsim"
    assert [j.bb for j in trace.jobs] == [4 * GB, 0.0, 3 * GB]
    assert trace.jobs[0].extra["staging"] == {"in": 1 * GB, "run": 4 * GB, "out": 2 * GB}
    plain = tmp_path / "plain.swf"
    plain.write_text("\n".join(_lines(["", "", ""])))
    (tmp_path / "plain.swf.bb").write_text("; job in run out\n1 2 8 1\n3 1 1 1\n")
    trace = read_swf(plain)
    assert trace.bb_columns == "bbsim"
    assert [j.bb for j in trace.jobs] == [8 * GB, 0.0, 1 * GB]
    assert read_swf(plain, bb_columns="none").jobs[0].bb == 0


def test_plain_kth_has_no_bb_and_keeps_groups():
    trace = read_swf(data_file(KTH_SWF), groups=True)
    assert trace.bb_columns == "none" and all(j.bb == 0 for j in trace.jobs)
    assert len(trace.jobs) == 28467 and "group" in trace.jobs[0].extra


@pytest.mark.parametrize(("text", "line", "fld"), [
    ("1 0 -1 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1\n", 1, "think_time"),
    ("; c\n1 0 -1 5 1 -1 -1 x 10 -1 1 1 1 -1 -1 -1 -1 -1\n", 2, "requested_processors"),
    ("1 -4 -1 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n", 1, "submit_time"),
    ("1 0 -1 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n1 3 -1 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 "
     "-1\n", 2, "job_number"),
])
def test_bad_swf_names_line_and_field(tmp_path: Path, text, line, fld):
    path = tmp_path / "bad.swf"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_swf(path)
    assert info.value.line == line and info.value.field == fld
    assert str(info.value).startswith(f"{path}, line {line}, field {fld!r}")


def test_empty_swf_and_bad_companion(tmp_path: Path):
    empty = tmp_path / "e.swf"
    empty.write_text("; only a header\n")
    with pytest.raises(InputError, match="no job records"):
        read_swf(empty)
    plain = tmp_path / "p.swf"
    plain.write_text("\n".join(_lines(["", "", ""])))
    (tmp_path / "p.swf.bb").write_text("1 2 x 1\n")
    with pytest.raises(InputError) as info:
        read_swf(plain)
    assert info.value.field == "data_run" and info.value.line == 1


def test_write_swf_of_a_schedule_reads_back(tmp_path: Path):
    jobs = read_swf(data_file(KTH_SWF), max_nodes=96, oversize="drop").jobs[:300]
    from bbopt.workloads.bb import with_lognormal_bb

    jobs = with_lognormal_bb(jobs, 0)
    result = simulate(jobs, Platform.kopanski(), "fcfs-bb")
    path = write_swf(result.jobs, tmp_path / "out.swf", start=result.start, end=result.end,
                     state=result.state, max_nodes=result.platform.nodes, bb_columns="cqsim",
                     bb_capacity=480 * GB)
    rows = [line.split() for line in path.read_text().splitlines() if not line.startswith(";")]
    states = result.state
    assert "rejected" in states  # some log-normal requests exceed the 480 GB: status 5
    ran = []
    for k, (job, row) in enumerate(zip(jobs, rows, strict=True)):
        assert row[0] == job.id and int(row[7]) == job.nodes
        if states[k] == "rejected":
            assert (row[2], row[3], row[10]) == ("-1", "-1", "5")
            continue
        ran.append(k)
        assert float(row[2]) == pytest.approx(result.start[k] - job.submit)
        assert float(row[3]) == pytest.approx(result.end[k] - result.start[k])
    back = read_swf(path)  # rejected jobs (run time -1) are dropped by the reader
    assert back.bb_capacity == pytest.approx(480 * GB)
    assert [j.id for j in back.jobs] == [jobs[k].id for k in ran]
    assert [j.bb for j in back.jobs] == pytest.approx([jobs[k].bb for k in ran])
    assert [j.runtime for j in back.jobs] == pytest.approx(
        [result.end[k] - result.start[k] for k in ran])
