"""Magnitudes are bounded at every edge (bbopt.limits): a count, size or period outside its sane
range is an InputError naming the field, on every surface that reads one -- platform files,
Batsim ``nb_res``, SWF headers, decide states, generators, ``--jobs``, the tick -- and never an
OverflowError, a memory blow-up or an endless run."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bbopt import Job, Platform, simulate
from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.limits import (
    MAX_JOBS,
    MAX_NODES,
    MAX_SECONDS,
    MAX_TICK,
    MIN_TICK,
    check_count,
    check_number,
    check_tick,
    count_from_text,
    magnitude,
)
from bbopt.loading import load_platform, read_workload
from bbopt.schema import loads_state
from bbopt.workloads.batsim import parse_batsim
from bbopt.workloads.generators.catalog import apply
from bbopt.workloads.swf import read_swf

FAST = settings(max_examples=40, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])
#: Integers around every edge of the node range, and far beyond it.
counts = st.one_of(st.integers(-3, 3), st.integers(MAX_NODES - 2, MAX_NODES + 2),
                   st.integers(10**18, 10**40), st.just(10**5000), st.just(-(10**30)))


def _in_range(n: int) -> bool:
    return 1 <= n <= MAX_NODES


@pytest.mark.parametrize("value, ok", [(0, False), (1, True), (MAX_NODES, True),
                                       (MAX_NODES + 1, False), (96.0, True), (96.5, False),
                                       (True, False), ("96", False), (10**30, False)])
def test_check_count_edges(value, ok):
    if ok:
        assert check_count(value, "nodes") == int(value)
    else:
        with pytest.raises(InputError) as exc:
            check_count(value, "nodes")
        assert exc.value.field == "nodes"


def test_messages_stay_short_for_huge_numbers():
    with pytest.raises(InputError, match=r"got 1e\+30$"):
        check_count(10**30, "nodes")
    with pytest.raises(InputError, match="an integer of 5001 digits"):
        check_count(10**5000, "nodes")
    with pytest.raises(InputError, match="a number of 5001 digits"):
        count_from_text("1" + "0" * 5000, "MaxNodes")
    with pytest.raises(InputError, match=r"must be in \[0, 1\], got 1e\+400|digits"):
        check_number(10**400, "share", high=1.0)


@FAST
@given(counts)
def test_platform_file_nodes(tmp_path, n):
    path = tmp_path / "p.json"
    path.write_text(json.dumps({"nodes": n, "bb": "1TB"}) if abs(n) < 10**4000 else
                    '{"nodes": 1' + "0" * 5000 + ', "bb": 0}')
    if _in_range(n):
        assert load_platform(str(path)).nodes == n
    else:
        with pytest.raises(InputError) as exc:
            load_platform(str(path))
        assert exc.value.source == str(path)
        assert exc.value.field == "nodes" or "4300 digits" in str(exc.value)  # JSON's own limit


@FAST
@given(counts)
def test_batsim_nb_res(n):
    doc = {"nb_res": n, "jobs": [{"id": "1", "subtime": 0, "walltime": 10, "res": 1,
                                  "profile": "p"}],
           "profiles": {"p": {"type": "delay", "delay": 5}}}
    if _in_range(n):
        assert parse_batsim(doc, source="w.json").nb_res == n
    else:
        with pytest.raises(InputError) as exc:
            parse_batsim(doc, source="w.json")
        assert exc.value.field == "nb_res" and exc.value.source == "w.json"


@FAST
@given(st.one_of(st.integers(1, 3), st.integers(MAX_NODES - 1, MAX_NODES + 1),
                 st.integers(10**18, 10**40)))
def test_swf_header_max_nodes(tmp_path, n):
    path = tmp_path / "t.swf"
    path.write_text(f"; MaxNodes: {n}\n1 0 0 100 1 -1 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1\n")
    trace = read_swf(path)
    if _in_range(n):
        assert trace.max_nodes == n
    else:
        with pytest.raises(InputError) as exc:
            trace.max_nodes  # noqa: B018
        assert exc.value.field == "MaxNodes" and exc.value.source == str(path)


def test_swf_burst_buffer_header_declares_no_huge_machine(tmp_path, capsys):
    path = tmp_path / "t.swf"
    path.write_text("; MaxNodes: 100000000000000000000000\n; BurstBuffer: 100\n"
                    "1 0 0 100 1 -1 -1 1 200 -1 1 1 1 -1 1 -1 -1 -1 5\n")
    assert main(["simulate", "-w", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "MaxNodes" in err and str(path) in err and "Traceback" not in err


def _state(nodes, job_nodes=1, walltime=10.0):
    return json.dumps({"time": 0, "platform": {"nodes": nodes, "bb": 0}, "running": [],
                       "queue": [{"id": "a", "walltime": walltime, "nodes": job_nodes}]})


@FAST
@given(counts)
def test_decide_state_platform_nodes(n):
    if abs(n) > 10**4000:
        return  # (JSON's own limit on digits: tests/test_workloads_fuzz.py)
    if _in_range(n):
        assert loads_state(_state(n), "s.json").platform.nodes == n
    else:
        with pytest.raises(InputError) as exc:
            loads_state(_state(n), "s.json")
        assert exc.value.source == "s.json" and exc.value.line == "$.platform"


@pytest.mark.parametrize("over", [{"job_nodes": 10**20}, {"walltime": MAX_SECONDS * 2},
                                  {"walltime": 1e300}])
def test_decide_state_job_magnitudes(over):
    with pytest.raises(InputError) as exc:
        loads_state(_state(96, **over), "s.json")
    assert exc.value.line == "$.queue[0]"


def test_a_huge_state_through_the_cli_is_one_line(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(_state(10**23))
    assert main(["decide", str(path)]) == 2
    err = capsys.readouterr().err
    assert "nodes" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("name, params, field", [
    ("kth-like", {"n_jobs": 10**12}, "n_jobs"),  # refused before 7 TiB are allocated
    ("kth-like", {"n_jobs": MAX_JOBS + 1}, "n_jobs"),
    ("kth-like", {"n_jobs": 0}, "n_jobs"),
    ("kth-like", {"nodes": 10**20}, "nodes"),
    ("kth-like", {"load": 0}, "load"),
    ("kth-like", {"load": float("nan")}, "load"),
    ("herbein", {"n_jobs": -5}, "n_jobs"),
    ("herbein", {"duration": 1e30}, "duration"),
    ("jeannot", {"n_apps": 10**12}, "n_apps"),
    ("capability", {"n_jobs": 2.5}, "n_jobs"),
])
def test_source_generators_refuse_magnitudes_before_drawing(name, params, field):
    with pytest.raises(InputError) as exc:
        apply(name, None, 0, **params)
    assert exc.value.field == field and name in str(exc.value)


@pytest.mark.parametrize("name, params, field", [
    ("first", {"n": -1}, "n"),  # a Python slice would keep all jobs but the last
    ("first", {"n": 0}, "n"),
    ("scale-nodes", {"factor": 0}, "factor"),
    ("max-nodes", {"nodes": -1}, "nodes"),
    ("omfs-preemption", {"preemptable": 1.5}, "preemptable"),
    ("io-rate", {"per_node": -1}, "per_node"),
])
def test_transforms_refuse_out_of_range_parameters(name, params, field):
    jobs = [Job(str(k), float(k), 100.0, nodes=2) for k in range(5)]
    with pytest.raises(InputError) as exc:
        apply(name, jobs, 0, **params)
    assert exc.value.field == field


@pytest.mark.parametrize("n, kept", [(1, 1), (4, 4), (5, 5), (6, 5)])
def test_first_keeps_the_first_n(n, kept):
    jobs = [Job(str(k), float(k), 100.0) for k in range(5)]
    assert [j.id for j in apply("first", jobs, 0, n=n)] == [str(k) for k in range(kept)]


def test_a_transform_that_leaves_nothing_is_an_error():
    jobs = [Job(str(k), float(k), 100.0, nodes=8) for k in range(3)]
    with pytest.raises(InputError, match="left no jobs"):
        apply("max-nodes", jobs, 0, nodes=4)


def test_scaled_jobs_past_the_node_range_are_refused():
    with pytest.raises(InputError, match="nodes must be an integer in"):
        apply("scale-nodes", [Job("a", 0.0, 10.0, nodes=4)], 0, factor=MAX_NODES)


@pytest.mark.parametrize("n", [0, -1, 10**12])
def test_jobs_flag_bounded_before_drawing(n):
    with pytest.raises(InputError) as exc:
        read_workload(None, n_jobs=n)
    assert exc.value.field == "jobs"


def test_generate_first_minus_one_through_the_cli(tmp_path, capsys):
    src = tmp_path / "in.swf"
    assert main(["generate", "kth-like", "n_jobs=20", "--out", str(src)]) == 0
    assert main(["generate", "first", "n=-1", "-w", str(src), "--out",
                 str(tmp_path / "out.swf")]) == 2
    err = capsys.readouterr().err
    assert "'n'" in err and "between 1 and" in err
    assert not (tmp_path / "out.swf").exists()


@pytest.mark.parametrize("tick, ok", [(1e-6, False), (0.5, False), (MIN_TICK, True),
                                      (60.0, True), (1e7, True), (1e8, False),
                                      (float("inf"), False), (float("nan"), False)])
def test_tick_is_bounded(tick, ok):
    jobs = [Job("a", 0.0, 10.0, runtime=5.0)]
    if ok:
        assert simulate(jobs, Platform(nodes=2), "fcfs", tick=tick).jobs
    else:
        with pytest.raises(InputError) as exc:
            simulate(jobs, Platform(nodes=2), "fcfs", tick=tick)
        assert exc.value.field == "tick"


def test_microsecond_tick_through_the_cli(capsys):
    assert main(["simulate", "--jobs", "10", "--tick", "1e-6", "--no-progress"]) == 2
    assert "tick" in capsys.readouterr().err


@pytest.mark.parametrize("value, ok", [("18e6", True), ("1e400", False), ("-5", False),
                                       ("x", False)])
def test_numeric_text_parameters_are_checked_as_numbers(value, ok):
    jobs = [Job("a", 0.0, 10.0)]
    if ok:
        assert apply("io-rate", jobs, 0, per_node=value)[0].bandwidth == 18e6
    else:
        with pytest.raises(InputError) as exc:
            apply("io-rate", jobs, 0, per_node=value)
        assert exc.value.field == "per_node"


def test_null_is_refused_where_the_default_is_not_null():
    with pytest.raises(InputError, match="cannot be null"):
        apply("kth-like", None, 0, n_jobs=None)
    assert len(apply("herbein", None, 0, n_jobs=None, duration=3600.0)) > 0


@pytest.mark.parametrize("value", [10**308, 10**309, 10**400, 10**5000],
                         ids=["1e308", "1e309", "1e400", "1e5000"])
def test_an_integer_past_any_float_is_an_input_error_naming_the_field(value):
    """Python's float() overflows from about 1.8 x 10^308 (a sweep spec's ``bb: 10^400`` was an
    OverflowError traceback); below that the number is read and the range checks refuse it."""
    from bbopt.resources import parse_bytes

    if value < 2**1024:
        assert parse_bytes(value, "bb") == float(value)
        return
    with pytest.raises(InputError, match="too large") as err:
        parse_bytes(value, "platforms[0].bb")
    assert err.value.field == "platforms[0].bb"


def reason(call, *args, **kw):
    """``(reason, source, line, field)`` of the InputError ``call(*args, **kw)`` raises."""
    with pytest.raises(InputError) as info:
        call(*args, **kw)
    e = info.value
    return e.reason, e.source, e.line, e.field


def test_check_count_refusals_name_the_range_the_value_and_where():
    at = {"source": "m.swf", "line": 3}
    assert reason(check_count, 0, "nodes", **at) == (
        "must be between 1 and 10,000,000, got 0", "m.swf", 3, "nodes")
    assert reason(check_count, 101, "jobs", low=5, high=100) == (
        "must be between 5 and 100, got 101", None, None, "jobs")
    assert reason(check_count, "96", "nodes", **at) == (
        "must be an integer, got '96'", "m.swf", 3, "nodes")
    assert reason(check_count, 4, "jobs", low=5, high=100)[0] == "must be between 5 and 100, got 4"
    assert check_count(5, "jobs", low=5, high=100) == 5 and check_count(100, "j", high=100) == 100
    assert type(check_count(96.0, "nodes")) is int


@pytest.mark.parametrize(("text", "value"), [("96", 96), (" 7\n", 7), ("0", 0)])
def test_count_from_text_reads_the_integer_with_the_callers_range(text, value):
    assert count_from_text(text, "MaxJobs", low=0, high=MAX_JOBS) == value


def test_count_from_text_refusals_name_the_range_the_text_and_where():
    at = {"low": 2, "high": 50, "source": "h.swf", "line": "; MaxNodes"}
    assert reason(count_from_text, "1" * 31, "MaxNodes", **at) == (
        "must be between 2 and 50, got a number of 31 digits", "h.swf", "; MaxNodes", "MaxNodes")
    assert reason(count_from_text, "-" + "1" * 31, "n")[0] == (
        "must be between 1 and 10,000,000, got a number of 31 digits")
    # 30 digits is read as a number, then out of range with its magnitude
    assert reason(count_from_text, "1" * 30, "n", **at) == (
        "must be between 2 and 50, got 1.11e+29", "h.swf", "; MaxNodes", "n")
    assert reason(count_from_text, "-" + "1" * 30, "n")[0] == (
        "must be between 1 and 10,000,000, got -1.11e+29")
    # not an integer: the first 40 characters shown (25 past the dashes: not too long)
    assert reason(count_from_text, "-" * 20 + "x" * 25, "n", **at) == (
        f"must be an integer, got '{'-' * 20 + 'x' * 20}'", "h.swf", "; MaxNodes", "n")
    assert reason(count_from_text, "1", "n", **at)[0] == "must be between 2 and 50, got 1"


def test_check_number_at_below_and_above_each_bound():
    assert check_number(0, "x", high=10.0) == 0.0  # the low bound defaults to 0, closed
    assert check_number(10, "x", high=10.0) == 10.0
    assert check_number(2.5, "x", low=2.5, high=3) == 2.5
    assert reason(check_number, -1e-9, "x", high=10.0) == (
        "must be in [0, 10], got -1e-09", None, None, "x")
    assert reason(check_number, 10.000001, "x", high=10.0, source="p.json", line="$.bb") == (
        "must be in [0, 10], got 10.000001", "p.json", "$.bb", "x")
    assert reason(check_number, 0, "rate", high=1.0, low_open=True) == (
        "must be in (0, 1], got 0", None, None, "rate")
    assert check_number(1e-300, "rate", high=1.0, low_open=True) == 1e-300
    assert reason(check_number, float("nan"), "x", high=10.0)[0] == "must be in [0, 10], got nan"
    assert reason(check_number, float("inf"), "x", low=-1.0, high=math.inf)[0] == (
        "must be in [-1, inf], got inf")


def test_check_number_refuses_what_is_not_a_number_where_it_is():
    assert reason(check_number, "5", "bb", high=10.0, source="p.json", line="$.bb") == (
        "must be a number, got '5'", "p.json", "$.bb", "bb")
    assert reason(check_number, True, "bb", high=10.0)[0] == "must be a number, got True"


def test_tick_bounds_and_field():
    assert check_tick(None) is None and check_tick(MIN_TICK) == 1.0 and check_tick(MAX_TICK) == 1e7
    assert reason(check_tick, 0.999) == ("must be in [1, 1e+07], got 0.999", None, None, "tick")
    assert reason(check_tick, 1e7 + 1, "--tick")[3] == "--tick"


def test_magnitude_switches_to_exponent_at_1e12_and_to_digits_at_300():
    assert magnitude(10**12 - 1) == "999999999999" and magnitude(10**12) == "1e+12"
    assert magnitude(-(10**12)) == "-1e+12" and magnitude(2 * 10**12) == "2e+12"
    assert magnitude(10**298) == "1e+298"  # 299 digits
    assert magnitude(10**299) == "an integer of 300 digits"
    assert magnitude(1e15) == "1000000000000000.0" and magnitude("x") == "'x'"
