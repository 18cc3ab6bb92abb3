"""Parsing Slurm's machine-readable output and the BB pool mapping (no Slurm needed)."""

import math

import pytest

from bbopt import Job, Platform
from bbopt.core import GB, TB
from bbopt.errors import InputError
from bbopt.slurm.cluster import SlurmError
from bbopt.slurm.commands import (
    SEP,
    License,
    SlurmCommands,
    SlurmJob,
    SlurmNode,
    expand_hostlist,
    format_minutes,
    parse_duration,
    parse_licenses,
    parse_sinfo,
    parse_squeue,
    parse_time,
)
from bbopt.slurm.pool import (
    bb_of,
    comment_for,
    job_from_slurm,
    licenses_for,
    platform_from_slurm,
    quantize,
)
from tests.slurm.fake import FakeJob, FakeSlurm


def test_hostlists_expand_with_ranges_and_padding():
    assert expand_hostlist("n[1-3,7],m2") == ("n1", "n2", "n3", "n7", "m2")
    assert expand_hostlist("c[08-10]") == ("c08", "c09", "c10")
    assert expand_hostlist("(null)") == ()


@pytest.mark.parametrize("text,seconds", [("1:00", 60), ("0:30", 30), ("2:03:04", 7384),
                                          ("1-00:00:00", 86400), ("5", 300)])
def test_durations(text, seconds):
    assert parse_duration(text) == seconds


def test_unlimited_duration_is_none():
    assert parse_duration("UNLIMITED") is None


def test_walltime_rounds_up_to_whole_minutes():
    assert format_minutes(1) == "1"
    assert format_minutes(60) == "1"
    assert format_minutes(61) == "2"


def test_licenses_parse_and_sum():
    assert parse_licenses("bb:4,other:1,bb:2") == {"bb": 6, "other": 1}
    assert parse_licenses("(null)") == {}


def test_squeue_line_becomes_a_job_with_bb_and_walltime_from_the_comment():
    line = SEP.join(["17", "bbopt-3", "PENDING", "alice", "3", "1:00", "N/A",
                     "2026-01-01T00:00:10", "", "JobHeldUser", "bbopt:walltime=3.5,id=3",
                     "bb:8", "", "batch"])
    (sj,) = parse_squeue(line)
    assert sj.held and sj.nodes == 3 and sj.time_limit == 60 and sj.licenses == {"bb": 8}
    job = job_from_slurm(sj, origin=sj.submit - 10, unit=TB)
    assert job == Job("17", 10.0, 3.5, nodes=3, bb=8 * TB, user="alice")
    assert job.extra["trace_id"] == "3"


def test_without_a_comment_the_slurm_time_limit_is_the_walltime():
    line = SEP.join(["5", "x", "PENDING", "bob", "1", "2:00", "N/A", "2026-01-01T00:00:00", "",
                     "JobHeldUser", "(null)", "(null)", "", "batch"])
    job = job_from_slurm(parse_squeue(line)[0], origin=0.0)
    assert job.walltime == 120 and job.bb == 0


def test_sinfo_states_and_the_platform():
    nodes = parse_sinfo("n1 idle\nn2 allocated\nn3 down*\nn4 idle~\n")
    assert [n.usable for n in nodes] == [True, False, False, True]
    p = platform_from_slurm(nodes, {"bb": License("bb", 80, 3)}, unit=GB)
    assert p == Platform(4, 80 * GB, name="slurm")
    assert platform_from_slurm([SlurmNode("n1", "idle")], {}).bb == 0


def test_bb_maps_both_ways_rounding_up():
    assert licenses_for(0) == 0
    assert licenses_for(1.0) == 1
    assert licenses_for(2 * GB) == 2
    assert licenses_for(2 * GB + 1) == 3
    assert bb_of(licenses_for(4.2 * TB, TB), TB) == 5 * TB
    assert quantize(Job("a", 0, 10, bb=1.5 * GB)).bb == 2 * GB
    assert "walltime=3.5" in comment_for(Job("a", 0, 3.5))


def test_a_pool_with_another_unit_maps_with_that_unit_both_ways():
    # 1.5 TB in TB licenses is 2 licenses, 2 TB back; in the default GB unit it would be 1,500
    assert quantize(Job("a", 0, 10, bb=1.5 * TB), unit=TB).bb == 2 * TB
    assert quantize(Job("a", 0, 10, bb=1.5 * GB), unit=TB).bb == 1 * TB
    assert platform_from_slurm([SlurmNode("n1", "idle")], {"bb": License("bb", 3, 0)},
                               unit=TB).bb == 3 * TB


def _slurm_job(submit, nodes=1, comment="", name="trace-7"):
    return SlurmJob("42", name, "PENDING", "carol", nodes, 60.0, None, submit, (), "",
                    comment, {})


def test_submit_times_are_relative_to_the_origin_and_clipped_at_zero():
    assert job_from_slurm(_slurm_job(1000.5), origin=1000.0).submit == 0.5
    assert job_from_slurm(_slurm_job(1000.0), origin=1000.0).submit == 0.0
    assert job_from_slurm(_slurm_job(999.0), origin=1000.0).submit == 0.0
    # a job Slurm reports without a submit time counts as submitted at the origin
    assert job_from_slurm(_slurm_job(None), origin=1000.0).submit == 0.0


def test_a_job_keeps_its_node_count_and_at_least_one_node():
    assert job_from_slurm(_slurm_job(0.0, nodes=1), origin=0.0).nodes == 1
    assert job_from_slurm(_slurm_job(0.0, nodes=0), origin=0.0).nodes == 1
    assert job_from_slurm(_slurm_job(0.0, nodes=3), origin=0.0).nodes == 3


def test_the_slurm_name_and_the_trace_id_go_to_extra():
    job = job_from_slurm(_slurm_job(0.0, comment="bbopt:walltime=5,id=t3"), origin=0.0)
    assert job.extra == {"name": "trace-7", "trace_id": "t3"}
    # without an id in the comment the trace id is the Slurm job name
    job = job_from_slurm(_slurm_job(0.0), origin=0.0)
    assert job.extra == {"name": "trace-7", "trace_id": "trace-7"}


def test_site_config_lines_round_the_pool_down_to_whole_licenses():
    from bbopt.slurm.site import job_submit_lua, slurm_conf_lines

    assert slurm_conf_lines(480.5 * GB)[0] == "Licenses=bb:480"
    assert slurm_conf_lines(2 * TB, TB, bf_licenses=True, lua=False) == [
        "Licenses=bb:2", "SchedulerParameters=bf_licenses  # merge with your other parameters"]
    lua = job_submit_lua(["bbopt", "big"], hold_default=False)
    assert '["bbopt"] = true, ["big"] = true' in lua and "HOLD_DEFAULT = false" in lua
    assert "job_desc.priority = 0" in lua
    assert "local BBOPT_PARTITIONS = {  }" in job_submit_lua()


def test_site_config_by_default_adds_the_lua_plugin_and_no_backfill_licenses():
    from bbopt.slurm.site import job_submit_lua, slurm_conf_lines

    assert slurm_conf_lines(2 * GB) == [
        "Licenses=bb:2", "JobSubmitPlugins=lua  # job_submit.lua beside slurm.conf"]
    # a job without -p is held by default: the default partition is taken as bbopt's
    assert "local HOLD_DEFAULT = true  --" in job_submit_lua(["bbopt"])


@pytest.mark.parametrize(("bb", "unit", "field"), [
    (2 * GB, 0.5, "--bb-unit"),  # less than a byte per license
    (0.0, GB, "--bb"), (-1.0, GB, "--bb"), (math.inf, GB, "--bb"), (math.nan, GB, "--bb"),
    (0.5 * GB, GB, "--bb-unit"),  # rounds down to no license
    (2.0**33, 1.0, "--bb-unit"),  # more licenses than Slurm counts
])
def test_site_config_refuses_a_pool_slurm_cannot_hold_naming_the_option(bb, unit, field):
    from bbopt.slurm.site import slurm_conf_lines

    with pytest.raises(InputError) as err:
        slurm_conf_lines(bb, unit)
    assert err.value.field == field


def test_site_config_accepts_one_byte_per_license_and_the_largest_count():
    from bbopt.slurm.site import MAX_LICENSES, slurm_conf_lines

    assert slurm_conf_lines(3.0, 1.0, lua=False) == ["Licenses=bb:3"]
    assert slurm_conf_lines(float(MAX_LICENSES), 1.0, lua=False) == [
        f"Licenses=bb:{MAX_LICENSES}"]


def test_lua_strings_keep_printable_ascii_and_escape_the_rest():
    from bbopt.slurm.site import lua_string

    assert lua_string("Xa b~") == '"Xa b~"'  # space (32) and ~ (126) kept
    assert lua_string('"\\') == '"\\034\\092"'  # quote and backslash escaped
    assert lua_string("\x1f\x7f") == '"\\031\\127"'  # just below and at the bounds
    assert lua_string("\u00e9") == '"\\195\\169"'  # UTF-8 bytes


def test_a_partition_name_that_slurm_refuses_is_an_input_error_naming_the_rule():
    from bbopt.slurm.site import check_partition

    assert check_partition("a" * 64) == "a" * 64
    with pytest.raises(InputError, match="at most 64; no blank") as err:
        check_partition("a" * 65, field="partitions")
    assert err.value.field == "partitions"


@pytest.mark.parametrize("text", ["", "N/A", "Unknown", "None", "(null)"])
def test_slurm_times_that_are_not_set_read_as_none(text):
    assert parse_time(text) is None


@pytest.mark.parametrize("text", ["UNLIMITED", "infinite", "Invalid", "n/a", "NOT_SET", ""])
def test_time_limits_that_are_not_set_read_as_none_in_any_case(text):
    assert parse_duration(text) is None


def test_unreadable_times_and_durations_are_slurm_errors_quoting_them():
    with pytest.raises(SlurmError, match="cannot read Slurm time 'soon'"):
        parse_time("soon")
    with pytest.raises(SlurmError, match="cannot read Slurm duration '1:2:3:4'"):
        parse_duration("1:2:3:4")


def test_licenses_not_set_are_none_and_remote_ones_count_under_their_name():
    assert parse_licenses("N/A") == {}
    assert parse_licenses("bb@db1:3,bb:2,io") == {"bb": 5, "io": 1}


def test_the_command_layer_reads_and_acts_on_the_recorded_fake():
    """SlurmCommands' reading and acting methods on the fake's answers, in Slurm's formats: the
    same parsing as against a real Slurm; the command lines are the recorded ones."""
    slurm = FakeSlurm(node_names=("n1", "n2", "n10"), bb_licenses=8,
                      node_states={"n2": "drained"})
    slurm.add(FakeJob("7", nodes=2, licenses=3, time_limit=3600.0, submit=slurm.now - 60))
    assert isinstance(slurm, SlurmCommands)  # only its command line is replaced
    (job,) = slurm.jobs()
    assert (job.id, job.nodes, job.held) == ("7", 2, True)
    assert [(n.name, n.usable) for n in slurm.nodes()] == [("n1", True), ("n2", False),
                                                          ("n10", True)]
    assert slurm.licenses()["bb"].total == 8 and slurm.licenses()["bb"].free == 8
    slurm.set_nodes("7", ["n1", "n10"])
    slurm.release("7")
    assert slurm.licenses()["bb"].free == 5  # the released job holds its 3 licenses
    assert slurm.actions() == [("scontrol", "update", "JobId=7", "NodeList=n1,n10"),
                               ("scontrol", "release", "7")]
    slurm.check_reachable(timeout=1.0)
    assert slurm.calls[-1] == ("scontrol", "ping")


def test_an_unreachable_controller_is_a_slurm_error_saying_what_to_check():
    slurm = FakeSlurm(failing={"ping": "Connection refused"})
    with pytest.raises(SlurmError) as caught:
        slurm.check_reachable(timeout=1.0)
    assert str(caught.value) == (
        "cannot reach Slurm (scontrol ping failed (1): Connection refused); check --conf / "
        "SLURM_CONF (the default slurm.conf) and that slurmctld runs")
    assert slurm.timeout == SlurmCommands(env={}).timeout  # the poll's own timeout is back


@pytest.mark.parametrize("text", ["x", "1-2-3", "1-x", "-5", "1:x", "2-1:2:3:4"])
def test_an_unreadable_duration_is_a_slurm_error_quoting_it_whole(text):
    # (not a ValueError of one of its parts: callers report Slurm's answers they cannot read)
    with pytest.raises(SlurmError) as err:
        parse_duration(text)
    assert str(err.value) == f"cannot read Slurm duration {text!r}"
