"""Parsing Slurm's machine-readable output and the BB pool mapping (no Slurm needed)."""

import math
import os
from pathlib import Path

import pytest

from bbopt import Job, Platform
from bbopt.core import GB, TB
from bbopt.errors import InputError
from bbopt.slurm.cluster import SlurmError
from bbopt.slurm.commands import (
    SEP,
    SQUEUE_FORMAT,
    License,
    SlurmCommands,
    SlurmJob,
    SlurmNode,
    expand_hostlist,
    format_minutes,
    parse_duration,
    parse_licenses,
    parse_licenses_show,
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


# -- the command layer against stand-in programs (real processes, no Slurm) -----------------

_PROGRAM = """#!/bin/sh
# a stand-in for Slurm's {name}: records its arguments and SLURM_CONF, answers as told
log="{dir}/{name}.log"
printf '%s\\n' "SLURM_CONF=$SLURM_CONF" >> "$log"
for a in "$@"; do printf '%s\\n' "arg=$a" >> "$log"; done
printf '%s\\n' "end" >> "$log"
if [ -f "{dir}/{name}.sleep" ]; then /bin/sleep "$(/bin/cat "{dir}/{name}.sleep")"; fi
if [ -f "{dir}/{name}.out" ]; then /bin/cat "{dir}/{name}.out"; fi
if [ -f "{dir}/{name}.err" ]; then /bin/cat "{dir}/{name}.err" >&2; fi
exit "$(/bin/cat "{dir}/{name}.rc" 2>/dev/null || echo 0)"
"""


class _Programs:
    """Stand-ins for Slurm's client programs in a folder put first on the commands' PATH."""

    def __init__(self, folder):
        self.dir = folder
        for name in ("squeue", "sinfo", "scontrol", "sbatch", "scancel"):
            path = folder / name
            path.write_text(_PROGRAM.format(name=name, dir=folder))
            path.chmod(0o755)

    def answer(self, name: str, out: str = "", err: str = "", rc: int = 0,
               sleep: float | None = None) -> None:
        (self.dir / f"{name}.out").write_text(out)
        (self.dir / f"{name}.err").write_text(err)
        (self.dir / f"{name}.rc").write_text(str(rc))
        if sleep is not None:
            (self.dir / f"{name}.sleep").write_text(str(sleep))

    def calls(self, name: str) -> list[tuple[str, tuple[str, ...]]]:
        """Each call of ``name``: the SLURM_CONF it saw and its arguments."""
        log = self.dir / f"{name}.log"
        out, conf, args = [], None, []
        for line in (log.read_text().splitlines() if log.exists() else []):
            if line.startswith("SLURM_CONF="):
                conf, args = line.removeprefix("SLURM_CONF="), []
            elif line.startswith("arg="):
                args.append(line.removeprefix("arg="))
            else:
                out.append((conf, tuple(args)))
        return out


@pytest.fixture
def programs(tmp_path):
    return _Programs(tmp_path)


def _commands(programs, **kw) -> SlurmCommands:
    return SlurmCommands(conf="/etc/slurm/test.conf", env={"PATH": str(programs.dir)}, **kw)


def test_reading_commands_run_slurms_programs_with_these_lines(programs):
    line = SEP.join(("12", "w", "PENDING", "alice", "2", "1:00:00", "N/A", "N/A", "(null)",
                     "JobHeldUser", "(null)", "bb:2", "(null)", "batch"))
    programs.answer("squeue", out=f"{line}\n")
    programs.answer("sinfo", out="n2 idle\nn10 down*\nn2 idle\nn1 allocated\n")
    programs.answer("scontrol", out="LicenseName=bb Total=10 Used=3 Free=7 Remote=no\n")
    slurm = _commands(programs)
    assert [j.id for j in slurm.jobs()] == ["12"]
    assert [j.id for j in slurm.jobs(partition="debug")] == ["12"]
    # each node once, in natural order, as sinfo -N lists a node once per partition
    assert slurm.nodes(partition="debug") == [SlurmNode("n1", "allocated"),
                                              SlurmNode("n2", "idle"),
                                              SlurmNode("n10", "down", responding=False)]
    assert slurm.licenses() == {"bb": License("bb", 10, 3)}
    conf = "/etc/slurm/test.conf"
    fmt = SQUEUE_FORMAT
    assert programs.calls("squeue") == [
        (conf, ("-h", "-a", "-t", "all", "-o", fmt)),
        (conf, ("-h", "-a", "-t", "all", "-o", fmt, "-p", "debug"))]
    assert programs.calls("sinfo") == [(conf, ("-h", "-N", "-o", "%N %T", "-p", "debug"))]
    assert programs.calls("scontrol") == [(conf, ("show", "licenses", "-o"))]


def test_nodes_without_a_partition_ask_sinfo_for_every_node(programs):
    programs.answer("sinfo", out="n1 idle\n")
    assert _commands(programs).nodes() == [SlurmNode("n1", "idle")]
    assert programs.calls("sinfo") == [("/etc/slurm/test.conf", ("-h", "-N", "-o", "%N %T"))]


def test_acting_commands_run_slurms_programs_with_these_lines(programs):
    programs.answer("sbatch", out="4711;cluster\n")
    slurm = _commands(programs)
    assert slurm.submit(name="j1", seconds=90.5, walltime=121.0, nodes=3,
                        licenses={"bb": 2, "ssd": 1, "none": 0}, hold=True,
                        comment="bbopt:bb=2", partition="debug", output="/tmp/o",
                        user_args=("--exclusive",)) == "4711"
    assert slurm.submit(name="j2", seconds=-5.0, walltime=30.0) == "4711"
    assert slurm.submit(name="j3", seconds=0.5, walltime=60.0, licenses={"bb": 1}) == "4711"
    slurm.set_nodes("4711", ["n1", "n3"])
    slurm.release("4711")
    slurm.cancel("4711")
    conf = "/etc/slurm/test.conf"
    assert programs.calls("sbatch") == [
        (conf, ("--parsable", "-J", "j1", "-N", "3", "--time", "3", "-o", "/tmp/o", "-e",
                "/tmp/o", "-L", "bb:2,ssd:1", "--hold", "--comment", "bbopt:bb=2", "-p",
                "debug", "--exclusive", "--wrap", "sleep 90.500")),
        # the defaults: one node, no licenses, not held, output thrown away, no negative sleep
        (conf, ("--parsable", "-J", "j2", "-N", "1", "--time", "1", "-o", "/dev/null", "-e",
                "/dev/null", "--wrap", "sleep 0.000")),
        (conf, ("--parsable", "-J", "j3", "-N", "1", "--time", "1", "-o", "/dev/null", "-e",
                "/dev/null", "-L", "bb:1", "--wrap", "sleep 0.500"))]
    assert programs.calls("scontrol") == [
        (conf, ("update", "JobId=4711", "NodeList=n1,n3")), (conf, ("release", "4711"))]
    assert programs.calls("scancel") == [(conf, ("4711",))]


def test_a_failing_program_is_a_slurm_error_with_its_message(programs):
    programs.answer("scontrol", err="scontrol: error: Invalid job id specified\n", rc=3)
    slurm = _commands(programs)
    with pytest.raises(SlurmError) as err:
        slurm.release("99")
    assert str(err.value) == ("scontrol release 99 failed (3): "
                              "scontrol: error: Invalid job id specified")
    programs.answer("squeue", out="squeue: error: no such partition\n", rc=1)
    with pytest.raises(SlurmError) as err:  # (nothing on stderr: what it printed)
        slurm.jobs(partition="nope")
    assert str(err.value) == (f"squeue -h -a -t all -o {SQUEUE_FORMAT} -p nope failed (1): "
                              "squeue: error: no such partition")


def test_a_cancel_slurm_refuses_is_not_an_error(programs):
    # (the job may have ended by itself: scancel's refusal is then no news)
    programs.answer("scancel", out="half\n", err="scancel: error: Kill job error\n", rc=1)
    slurm = _commands(programs)
    slurm.cancel("5")
    assert slurm.run(["scancel", "5"], check=False) == "half\n"
    assert len(programs.calls("scancel")) == 2


def test_a_missing_program_and_one_that_hangs_are_slurm_errors_saying_so(programs):
    slurm = SlurmCommands(env={"PATH": str(programs.dir / "nowhere")})
    with pytest.raises(SlurmError) as err:
        slurm.jobs()
    assert str(err.value) == "squeue not found (is Slurm installed?)"
    programs.answer("scontrol", out="Slurmctld(primary) at h is UP\n", sleep=5)
    with pytest.raises(SlurmError) as err:
        _commands(programs, timeout=0.25).release("1")
    assert str(err.value) == "scontrol release 1 timed out after 0.25 s"


def test_a_controller_that_answers_but_is_not_up_is_named_with_the_configuration(programs):
    down = "Slurmctld(primary) at h is DOWN " + "x" * 300
    programs.answer("scontrol", out=f"{down}\n")
    with pytest.raises(SlurmError) as err:
        _commands(programs).check_reachable()
    assert str(err.value) == (f"Slurm's controller is not up ({down[:200]}); "
                              "SLURM_CONF: /etc/slurm/test.conf")
    programs.answer("scontrol", out="Slurmctld(primary)\n   at h\tis UP\n")
    _commands(programs).check_reachable()
    programs.answer("scontrol", out="Slurmctld(primary) at\n  h is   DOWN\n")
    with pytest.raises(SlurmError) as err:  # (its words joined by one space)
        SlurmCommands(env={"PATH": str(programs.dir)}).check_reachable()
    assert str(err.value) == ("Slurm's controller is not up (Slurmctld(primary) at h is DOWN); "
                              "SLURM_CONF: the default slurm.conf")


def test_commands_carry_the_callers_environment_and_configuration(monkeypatch):
    monkeypatch.setenv("BBOPT_SLURM_PROBE", "on")
    monkeypatch.delenv("SLURM_CONF", raising=False)
    plain = SlurmCommands()
    assert plain.env == dict(os.environ) and plain.env is not os.environ
    assert plain.env["BBOPT_SLURM_PROBE"] == "on" and "SLURM_CONF" not in plain.env
    assert plain.timeout == 30.0
    given = {"PATH": "/x"}
    mine = SlurmCommands(conf=Path("/etc/s.conf"), env=given, timeout=2.5)
    assert mine.env == {"PATH": "/x", "SLURM_CONF": "/etc/s.conf"} and given == {"PATH": "/x"}
    assert mine.timeout == 2.5
    assert SlurmCommands(env={}).env == {}


def test_every_squeue_field_is_read_and_blank_lines_are_skipped_anywhere():
    first = SEP.join(["17", "my job", "RUNNING ", "alice", "2", "1-00:00:00",
                      "2026-01-01T00:00:10", "2026-01-01T00:00:00", "n[1-2]", "None",
                      "(null)", "bb:8", "(null)", " debug "])
    second = SEP.join(["18", "x", "PENDING", "bob", "1", "5", "N/A", "N/A", "", "Priority",
                       "bbopt:id=3", "(null)", "n3", "batch"])
    one, two = parse_squeue(f"\n{first}\n   \n{second}\n\n")
    assert one == SlurmJob("17", "my job", "RUNNING", "alice", 2, 86400.0,
                           parse_time("2026-01-01T00:00:10"), parse_time("2026-01-01T00:00:00"),
                           ("n1", "n2"), "None", "", {"bb": 8}, (), "debug")
    assert (two.comment, two.req_nodes, two.time_limit, two.start) == ("bbopt:id=3", ("n3",),
                                                                       300.0, None)


def test_an_squeue_line_with_another_number_of_fields_is_a_slurm_error_quoting_it():
    for line in (SEP.join(["1"] * 13), SEP.join(["1"] * 15)):
        with pytest.raises(SlurmError) as err:
            parse_squeue(line)
        assert str(err.value) == f"unexpected squeue line {line!r}"


def test_sinfo_flags_leave_the_state_and_a_star_marks_a_node_not_responding():
    nodes = parse_sinfo("\nn1 idle*\n\nn2 drained~\nn3 mixed#\n")
    assert nodes == [SlurmNode("n1", "idle", responding=False), SlurmNode("n2", "drained"),
                     SlurmNode("n3", "mixed")]
    assert [n.usable for n in nodes] == [False, False, False]


def test_license_lines_without_a_total_or_use_count_none():
    text = "LicenseName=bb Used=2\nLicenseName=io Total=4\nnothing here\n"
    assert parse_licenses_show(text) == {"bb": License("bb", 0, 2), "io": License("io", 4, 0)}


def test_a_hostlist_not_set_is_empty_and_a_bad_range_is_quoted():
    assert expand_hostlist("N/A") == expand_hostlist("(null)") == expand_hostlist(" ") == ()
    assert expand_hostlist("n/a") == ("n/a",)  # (a host name, not Slurm's "not set")
    with pytest.raises(SlurmError) as err:
        expand_hostlist("n[1-x]")
    assert str(err.value) == "cannot read host list 'n[1-x]'"


def test_programs_read_no_input_from_the_caller(programs, tmp_path):
    """Slurm's programs get an empty standard input, not the caller's (a bridge run from a
    terminal or a pipe must not have its input read by squeue)."""
    reader = programs.dir / "sinfo"
    reader.write_text("#!/bin/sh\n/bin/cat\necho 'n1 idle'\n")
    read, write = os.pipe()
    os.write(write, b"typed by the user\n")
    os.close(write)
    saved = os.dup(0)
    os.dup2(read, 0)
    try:
        nodes = _commands(programs, timeout=5.0).nodes()
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(read)
    assert nodes == [SlurmNode("n1", "idle")]


def test_the_reachability_poll_waits_ten_seconds_by_default_and_restores_the_timeout():
    seen = []

    class Probe(SlurmCommands):
        def run(self, argv, check=True):
            seen.append((tuple(argv), self.timeout))
            return "Slurmctld(primary) at h is UP\n"

    probe = Probe(env={}, timeout=42.0)
    probe.check_reachable()
    probe.check_reachable(timeout=1.5)
    assert seen == [(("scontrol", "ping"), 10.0), (("scontrol", "ping"), 1.5)]
    assert probe.timeout == 42.0
