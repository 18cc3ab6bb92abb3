"""Kopanski & Rzadca's phased job model (Euro-Par 2021, Section 4.1) at its bounds: the phase
count rounded (half to even) and clipped to 1..10, the checkpoint size as a factor of the BB
request, the parameters checked at 0, and the I/O time taken out only above 120 s of walltime."""

from __future__ import annotations

import pytest

from bbopt.core import GB, HOUR, Job
from bbopt.errors import InputError
from bbopt.workloads.generators import kopanski
from bbopt.workloads.synthetic import kth_like


def _job(runtime: float | None, walltime: float = 100 * HOUR, bb: float = 4 * GB,
         nodes: int = 2) -> Job:
    return Job("j", 0, walltime=walltime, runtime=runtime, nodes=nodes, bb=bb)


@pytest.mark.parametrize(("hours", "phases"), [
    (0.49, 1), (0.5, 1), (1.49, 1), (1.5, 2), (2.5, 2), (2.51, 3), (9.49, 9), (9.5, 10),
    (10.5, 10), (11.0, 10)])
def test_phase_count_is_the_rounded_hours_clipped_to_one_and_ten(hours, phases):
    ph = kopanski.phases_of(_job(hours * HOUR))
    assert ph["compute_phases"] == phases
    assert ph["checkpoints"] == phases - 1
    assert ph["compute_seconds"] == pytest.approx(hours * HOUR / phases)


def test_the_walltime_stands_for_a_missing_runtime_and_the_cap_is_an_option():
    ph = kopanski.phases_of(_job(None, walltime=3 * HOUR))
    assert (ph["compute_phases"], ph["compute_seconds"]) == (3, HOUR)
    assert kopanski.phases_of(_job(7 * HOUR), max_phases=4)["compute_phases"] == 4
    assert kopanski.phases_of(_job(7 * HOUR), max_phases=1)["compute_phases"] == 1
    assert kopanski.phases_of(_job(7 * HOUR), phase_length=2 * HOUR)["compute_phases"] == 4


def test_checkpoint_bytes_are_the_factor_times_the_request_and_staging_the_request():
    ph = kopanski.phases_of(_job(HOUR, bb=4 * GB), checkpoint_factor=0.5)
    assert ph == {"model": "kopanski", "compute_phases": 1, "compute_seconds": HOUR,
                  "checkpoints": 0, "checkpoint_bytes": 2 * GB, "stage_in_bytes": 4 * GB,
                  "stage_out_bytes": 4 * GB}
    assert kopanski.phases_of(_job(HOUR), checkpoint_factor=0.0)["checkpoint_bytes"] == 0.0
    assert kopanski.phases_of(_job(HOUR, bb=4 * GB))["checkpoint_bytes"] == 4 * GB  # factor 1


def test_phase_parameters_are_checked_at_zero():
    with pytest.raises(InputError, match=r"phase_length must be > 0 seconds, got 0") as e:
        kopanski.phases_of(_job(HOUR), phase_length=0.0)
    assert e.value.field == "phase_length"
    assert kopanski.phases_of(_job(HOUR), phase_length=1e-3)["compute_phases"] == 10
    with pytest.raises(InputError, match=r"max_phases must be >= 1, got 0") as e:
        kopanski.phases_of(_job(HOUR), max_phases=0)
    assert e.value.field == "max_phases"
    with pytest.raises(InputError, match=r"checkpoint_factor must be >= 0, got -1e-09") as e:
        kopanski.phases_of(_job(HOUR), checkpoint_factor=-1e-9)
    assert e.value.field == "checkpoint_factor"


def test_with_phases_keeps_the_job_s_other_extras_and_passes_its_options():
    job = Job("j", 0, walltime=10 * HOUR, runtime=6 * HOUR, bb=GB, extra={"user": "u"})
    (out,) = kopanski.with_phases([job], phase_length=2 * HOUR, max_phases=5,
                                  checkpoint_factor=0.25)
    assert out.extra["user"] == "u"
    assert out.extra["phases"]["compute_phases"] == 3
    assert kopanski.with_phases([job], max_phases=2)[0].extra["phases"]["compute_phases"] == 2
    assert out.extra["phases"]["checkpoint_bytes"] == 0.25 * GB
    assert job.extra == {"user": "u"}


def test_io_taken_out_uses_the_walltime_for_no_runtime():
    (out,) = kopanski.with_io_taken_out([Job("w", 0, walltime=1_000, runtime=None, nodes=1,
                                             bb=GB)])
    assert out.runtime == pytest.approx(1_000 - 32.0)
    # the floor exactly: 40 x 23.75 GB / 1.25 GB/s = 760 s out of 800 leaves 40 s = 5 %
    at = Job("f", 0, walltime=3_600, runtime=800.0, nodes=1, bb=23.75 * GB)
    assert kopanski.with_io_taken_out([at])[0].runtime == pytest.approx(40.0)


def test_the_workload_draws_with_seed_0_without_the_rules_by_default():
    jobs = kth_like(300, seed=5)
    default = kopanski.kopanski_workload(jobs)
    plain = kopanski.with_lognormal_bb(jobs, 0, rules=False)
    ruled = kopanski.with_lognormal_bb(jobs, 0, rules=True)
    assert [j.bb for j in plain] != [j.bb for j in ruled]  # the rules change this sample
    assert [j.bb for j in default] == [j.bb for j in plain]
    assert [j.bb for j in kopanski.kopanski_workload(jobs, 0, rules=True)] == [j.bb for j in ruled]
    assert [j.bb for j in kopanski.kopanski_workload(jobs, 7)] == [
        j.bb for j in kopanski.with_lognormal_bb(jobs, 7)]
    assert all("phases" in j.extra for j in default)
    bare = kopanski.kopanski_workload(jobs, phases=False)
    assert not any("phases" in j.extra for j in bare)
    long = kopanski.kopanski_workload(jobs, phase_length=1e-3)
    assert {j.extra["phases"]["compute_phases"] for j in long} == {10}
