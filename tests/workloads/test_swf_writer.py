"""SWF output (bbopt.workloads.swf_writer): the archive's header, each field of a workload's and
of a schedule's records as the format defines it (-1 for unknown), the status codes, ids that
are not numbers, and the burst-buffer columns of CQSim and BBSimulator."""

from __future__ import annotations

import pytest

from bbopt.core import Job
from bbopt.errors import InputError
from bbopt.workloads.swf_writer import _fmt, write_swf


def _records(path) -> list[list[str]]:
    return [line.split() for line in path.read_text().splitlines() if not line.startswith(";")]


def _header(path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.startswith(";")]


def test_a_workload_is_written_field_by_field(tmp_path):
    jobs = [Job("7", 5.0, 60.0, 30.0, nodes=3, user="12", extra={"group": "4",
                                                                  "memory_per_node": 2048.0}),
            Job("9", 6.5, 90.0, None, nodes=1)]
    p = write_swf(jobs, tmp_path / "w.swf")
    assert _header(p) == ["; Version: 2.2", "; Conversion: bbopt", "; MaxJobs: 2",
                          "; MaxRecords: 2", "; MaxNodes: 3", "; MaxProcs: 3"]
    assert _records(p) == [
        ["7", "5", "-1", "30", "-1", "-1", "2", "3", "60", "-1", "1", "12", "4"] + ["-1"] * 5,
        ["9", "6.5", "-1", "-1", "-1", "-1", "-1", "1", "90", "-1", "1", "-1", "-1"]
        + ["-1"] * 5]


def test_a_schedule_has_its_wait_run_allocation_and_status(tmp_path):
    jobs = [Job(str(k), 10.0, 100.0, 50.0, nodes=2) for k in range(1, 6)]
    start = [12.0, 20.0, -1.0, 30.0, 40.0]
    end = [62.0, 120.0, -1.0, 35.5, 45.0]
    state = ["finished", "killed", "rejected", "dropped", "finished"]
    p = write_swf(jobs, tmp_path / "s.swf", start=start, end=end, state=state, max_nodes=8)
    assert "; Note: schedule simulated by bbopt" in _header(p) and "; MaxNodes: 8" in _header(p)
    assert [r[2:5] + [r[10]] for r in _records(p)] == [
        ["2", "50", "2", "1"], ["10", "100", "2", "0"], ["-1", "-1", "-1", "5"],
        ["20", "5.5", "2", "-1"], ["30", "5", "2", "1"]]


@pytest.mark.parametrize("missing", ["start", "end", "state"])
def test_a_schedule_needs_its_three_arrays(tmp_path, missing):
    jobs = [Job("1", 0.0, 10.0, 5.0)]
    outcome = {"start": [0.0], "end": [5.0], "state": ["finished"]}
    del outcome[missing]
    with pytest.raises(InputError, match="^a schedule needs start, end and state, each one "
                                         "value per job$"):
        write_swf(jobs, tmp_path / "s.swf", **outcome)


@pytest.mark.parametrize("short", ["start", "end", "state"])
def test_a_schedule_needs_one_value_per_job(tmp_path, short):
    jobs = [Job("1", 0.0, 10.0, 5.0), Job("2", 0.0, 10.0, 5.0)]
    outcome = {"start": [0.0, 0.0], "end": [5.0, 5.0], "state": ["finished"] * 2}
    outcome[short] = outcome[short][:1]
    with pytest.raises(InputError, match="one value per job"):
        write_swf(jobs, tmp_path / "s.swf", **outcome)


def test_an_empty_workload_and_an_unknown_convention_are_refused(tmp_path):
    with pytest.raises(InputError, match="^empty workload: nothing to write$"):
        write_swf([], tmp_path / "e.swf")
    with pytest.raises(InputError, match="^bb_columns must be 'none', 'cqsim' or 'bbsim', got "
                                         "'x'$"):
        write_swf([Job("1", 0.0, 10.0)], tmp_path / "e.swf", bb_columns="x")
    assert not (tmp_path / "e.swf").exists()


def test_ids_that_are_not_numbers_are_renumbered_and_users_numbered_by_first_sight(tmp_path):
    jobs = [Job("a", 0.0, 10.0, 5.0, user="bob"), Job("2", 1.0, 10.0, 5.0, user="eve"),
            Job("c", 2.0, 10.0, 5.0, user="bob"), Job("d", 3.0, 10.0, 5.0, user="7")]
    p = write_swf(jobs, tmp_path / "r.swf", comments=("made by a test", "second"))
    assert _header(p)[-3:] == ["; Note: job ids renumbered 1..n in input order",
                               "; made by a test", "; second"]
    assert [(r[0], r[11]) for r in _records(p)] == [("1", "1"), ("2", "2"), ("3", "1"),
                                                    ("4", "7")]


def test_ids_and_users_in_digits_other_than_ascii_are_no_numbers(tmp_path):
    """``²`` and ``١`` are digits to ``str.isdigit`` but no SWF number: the ids are
    renumbered, the users numbered by first sight."""
    jobs = [Job("²", 0.0, 10.0, 5.0, user="١٢"), Job("2", 1.0, 10.0, 5.0, user="²"),
            Job("3", 2.0, 10.0, 5.0, user="12")]
    p = write_swf(jobs, tmp_path / "u.swf")
    assert "; Note: job ids renumbered 1..n in input order" in _header(p)
    assert [(r[0], r[11]) for r in _records(p)] == [("1", "1"), ("2", "2"), ("3", "12")]


@pytest.mark.parametrize("group, field", [("5", "5"), (3, "3"), ("-2", "-2"), ("ops", "-1"),
                                          ("X5", "-1"), ("--5", "-1"), ("²", "-1"),
                                          ("-", "-1"), (None, "-1")])
def test_a_group_is_written_when_it_is_a_whole_number(tmp_path, group, field):
    extra = {} if group is None else {"group": group}
    p = write_swf([Job("1", 0.0, 10.0, 5.0, extra=extra)], tmp_path / "g.swf")
    assert _records(p)[0][12] == field


@pytest.mark.parametrize("memory, field", [(None, "-1"), (0.0, "-1"), (1024.0, "1"),
                                           (512.0, "0.5")])
def test_the_memory_per_node_is_written_in_kilobytes(tmp_path, memory, field):
    extra = {} if memory is None else {"memory_per_node": memory}
    p = write_swf([Job("1", 0.0, 10.0, 5.0, extra=extra)], tmp_path / "m.swf")
    assert _records(p)[0][6] == field


def test_cqsim_writes_the_request_in_units_and_the_capacity_header(tmp_path):
    jobs = [Job("1", 0.0, 10.0, 5.0, bb=3e9), Job("2", 0.0, 10.0, 5.0, bb=5e8)]
    p = write_swf(jobs, tmp_path / "c.swf", bb_columns="cqsim", bb_capacity=2.5e12)
    assert "; BurstBuffer: 2500" in _header(p)
    assert [r[18:] for r in _records(p)] == [["3"], ["0.5"]]
    p = write_swf(jobs, tmp_path / "c.swf", bb_columns="cqsim", bb_unit=1e6)
    assert not any("BurstBuffer" in h for h in _header(p))
    assert [r[18:] for r in _records(p)] == [["3000"], ["500"]]
    p = write_swf(jobs, tmp_path / "c.swf", bb_capacity=2.5e12)
    assert not any("BurstBuffer" in h for h in _header(p)) and len(_records(p)[0]) == 18


def test_bbsim_writes_the_staging_volumes_or_the_request_in_and_out(tmp_path):
    jobs = [Job("1", 0.0, 10.0, 5.0, bb=4e9, extra={"staging": {"in": 1e9, "run": 4e9,
                                                                 "out": 2e9}}),
            Job("2", 0.0, 10.0, 5.0, bb=3e9),
            Job("3", 0.0, 10.0, 5.0, bb=3e9, extra={"staging": {"run": 3e9}})]
    p = write_swf(jobs, tmp_path / "b.swf", bb_columns="bbsim")
    assert [r[18:] for r in _records(p)] == [["1", "4", "2"], ["3", "0", "3"], ["0", "3", "0"]]


@pytest.mark.parametrize("x, text", [(3.0, "3"), (-1.0, "-1"), (2.5, "2.5"),
                                     (1e15, "1000000000000000.0"),
                                     (999999999999999.0, "999999999999999"),
                                     (-1e15, "-1000000000000000.0")])
def test_numbers_are_whole_when_they_are_below_1e15(x, text):
    assert _fmt(x) == text


def test_the_machine_size_defaults_to_the_widest_job(tmp_path):
    jobs = [Job("1", 0.0, 10.0, 5.0, nodes=4), Job("2", 0.0, 10.0, 5.0, nodes=9),
            Job("3", 0.0, 10.0, 5.0, nodes=2)]
    p = write_swf(jobs, tmp_path / "n.swf")
    assert _header(p)[4:6] == ["; MaxNodes: 9", "; MaxProcs: 9"]


def test_a_gz_path_is_written_gzipped_and_reads_back(tmp_path):
    import gzip

    from bbopt.workloads.swf import read_swf

    jobs = [Job("1", 0.0, 10.0, 5.0, nodes=2), Job("2", 3.0, 20.0, 7.0)]
    p = write_swf(jobs, tmp_path / "w.swf.gz")
    plain = write_swf(jobs, tmp_path / "w.swf")
    assert gzip.decompress(p.read_bytes()) == plain.read_bytes()
    assert [(j.id, j.submit, j.runtime, j.nodes) for j in read_swf(p).jobs] == [
        ("1", 0.0, 5.0, 2), ("2", 3.0, 7.0, 1)]
    again = write_swf(jobs, tmp_path / "again.swf.gz")
    assert again.read_bytes() == p.read_bytes()  # (no time stamp in the gzip header)
    assert p.read_bytes()[4:8] == bytes(4)  # (the header's MTIME field: 0, "no time stamp")
