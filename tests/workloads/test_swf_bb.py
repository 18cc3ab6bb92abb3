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


# BBSimulator's own trace: SWF rows as floats ("1.00"), tab-separated, then data_in (in 1/1000
# of the unit), data_run, data_out; jobs below 256 processors are raised to 256.
BBSIMULATOR = (
    "1.00\t0.00\t6680.00\t7560.00\t2048.00\t-1.00\t-1.00\t2048.00\t10800.00\t-1.00\t-1.00\t1.00"
    "\t-1.00\t-1.00\t1.00\t-1.00\t-1.00\t-1.00\t1100.00\t3200.00\t5800.00\t\n"
    "2.00\t7.00\t36.00\t3653.00\t256.00\t-1.00\t-1.00\t64.00\t3600.00\t-1.00\t-1.00\t3.00"
    "\t-1.00\t-1.00\t3.00\t-1.00\t-1.00\t-1.00\t9000.00\t3.00\t2.00\t\n"
)


def test_bbsimulator_trace_units_and_processor_raise(tmp_path: Path):
    path = tmp_path / "two.swf.bb"
    path.write_text(BBSIMULATOR)
    trace = read_swf(path)
    assert trace.bb_columns == "bbsimulator"
    a, b = trace.jobs
    assert (a.id, b.id) == ("1", "2")
    assert a.extra["staging"] == {"in": 1.1 * GB, "run": 3200 * GB, "out": 5800 * GB}
    assert a.bb == 5800 * GB
    # Stage-in 9000 is 9 units, more than data_run 3 and data_out 2: it sets the request.
    assert b.extra["staging"]["in"] == pytest.approx(9 * GB) and b.bb == pytest.approx(9 * GB)
    assert (a.nodes, b.nodes) == (2048, 256)  # 64 requested -> 256
    assert read_swf(path, bbsimulator_min_processors=1).jobs[1].nodes == 64


def test_bbsimulator_trace_as_companion_of_its_swf(tmp_path: Path):
    swf = tmp_path / "two.swf"
    swf.write_text("".join(line.replace("\t", " ").rsplit(" ", 4)[0] + "\n"
                           for line in BBSIMULATOR.splitlines()))
    (tmp_path / "two.swf.bb").write_text(BBSIMULATOR)
    trace = read_swf(swf)
    assert trace.bb_columns == "bbsimulator"
    assert [j.bb for j in trace.jobs] == pytest.approx([5800 * GB, 9 * GB])
    assert [j.nodes for j in trace.jobs] == [2048, 256]


def test_a_companion_matching_no_job_warns(tmp_path: Path):
    plain = tmp_path / "p.swf"
    plain.write_text("\n".join(_lines(["", "", ""])))
    (tmp_path / "p.swf.bb").write_text("11 2 8 1\n13 1 1 1\n")
    with pytest.warns(UserWarning, match="none of its 2 job numbers"):
        trace = read_swf(plain)
    assert all(j.bb == 0 for j in trace.jobs)
    (tmp_path / "p.swf.bb").write_text("1 2 8 1\n13 1 1 1\n")
    with pytest.warns(UserWarning, match="1 of its 2 job numbers match no job"):
        read_swf(plain)


def test_cli_reads_a_bbsimulator_trace(tmp_path: Path, capsys):
    from bbopt.cli import main

    path = tmp_path / "two.swf.bb"
    path.write_text(BBSIMULATOR)
    platform = tmp_path / "p.json"
    platform.write_text('{"nodes": 4096, "bb": "20 TB"}')
    assert main(["simulate", "-w", str(path), "-p", str(platform), "--policy", "fcfs-bb",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "two: 2 jobs" in out
