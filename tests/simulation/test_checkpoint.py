"""The checkpoint/restart execution model driven directly through its protocol (Zvi & Oren,
OMFS, Algorithm 1 lines 35-39): its options, the walltime bounding useful work across restarts,
an eviction during a restart charging only the restart time spent, and ``work + lost +
checkpoint + restart = run time`` for every job. (The checkpoint and restart times themselves
are pinned in ``test_checkpoint_costs.py``.)

Times are chosen so that every formula's plausible variant gives another value: images of 1 GB,
PFS 10 MB/s (100 s), BB 100 MB/s (10 s)."""

from __future__ import annotations

import pytest

from bbopt.core import Job, Platform
from bbopt.errors import InputError
from bbopt.simulation.checkpoint import CheckpointRestart

GB1 = 1e9


def _model(**kw) -> CheckpointRestart:
    kw = {"memory_per_node": GB1, "pfs_bandwidth": 1e7, "bb_bandwidth": 1e8} | kw
    return CheckpointRestart(**kw)


def _run(model: CheckpointRestart, *jobs: Job) -> CheckpointRestart:
    model.reset(list(jobs), Platform(8, 100 * GB1))
    return model


# ---------------------------------------------------------------- options
@pytest.mark.parametrize("kw,field", [({"memory_per_node": -1.0}, "memory_per_node"),
                                      ({"pfs_bandwidth": 0.0}, "pfs_bandwidth"),
                                      ({"bb_bandwidth": 0.0}, "bb_bandwidth"),
                                      ({"bb_bandwidth": -1.0}, "bb_bandwidth"),
                                      ({"target": "ssd"}, "target"),
                                      ({"on_kill": "kill"}, "on_kill")])
def test_bad_options_are_refused_naming_the_field(kw, field):
    with pytest.raises(InputError) as info:
        _model(**kw)
    assert info.value.field == field


def test_option_messages_and_an_empty_image_is_allowed():
    with pytest.raises(InputError, match=r"pfs_bandwidth must be positive, got 0\.0"):
        _model(pfs_bandwidth=0.0)
    with pytest.raises(InputError, match=r"checkpoint target must be 'pfs' or 'bb', got 'x'"):
        _model(target="x")
    with pytest.raises(InputError, match=r"on_kill must be 'drop' or 'requeue', got 'x'"):
        _model(on_kill="x")
    model = _model(memory_per_node=0)
    assert model.memory_per_node == 0.0 and isinstance(model.memory_per_node, float)
    assert model.checkpoint_time(Job("a", 0.0, 10.0)) == 0.0
    model = CheckpointRestart(memory_per_node=3, pfs_bandwidth=2, bb_bandwidth=5, target="bb",
                              on_kill="requeue")
    assert (model.memory_per_node, model.pfs_bandwidth, model.bb_bandwidth) == (3.0, 2.0, 5.0)
    assert (model.target, model.on_kill) == ("bb", "requeue")


def test_the_defaults_are_64_gb_images_1_gb_s_pfs_and_8_gb_s_bb_on_the_pfs():
    model = CheckpointRestart()
    assert (model.memory_per_node, model.pfs_bandwidth, model.bb_bandwidth) == (
        64e9, 1e9, 8e9)
    assert (model.target, model.on_kill) == ("pfs", "drop")


# ---------------------------------------------------------------- the protocol
def test_rigid_ends_before_any_eviction():
    fin = Job("f", 0.0, 1000.0, 1000.0)  # runtime = walltime: finished, not killed
    over = Job("o", 0.0, 1000.0, 1001.0)
    unknown = Job("u", 0.0, 700.0)  # no runtime: runs its walltime
    model = _run(_model(), fin, over, unknown, Job("never", 0.0, 5.0))
    assert model.next_time() == float("inf")
    for k in range(3):
        model.start(k, 10.0, (k,))
    assert model.next_time() == 710.0
    assert model.finish(709.0) == []
    assert model.finish(710.0) == [(2, "finished")]
    assert model.next_time() == 1010.0
    assert model.finish(1010.0) == [(0, "finished"), (1, "killed")]
    assert model.next_time() == float("inf")
    result = _Result()
    model.record(result)
    assert set(result.preemption) == {"f", "o", "u"}  # the job never started is not recorded
    assert [result.preemption[x]["work_done"] for x in "fou"] == [1000.0, 1000.0, 700.0]


class _Result:
    def __init__(self) -> None:
        self.preemption: dict[str, dict] = {}


def test_checkpoints_and_restarts_keep_the_work_and_charge_their_time():
    job = Job("a", 0.0, 1500.0, 1000.0, nodes=2, checkpointable=True)
    model = _run(_model(), job)
    model.start(0, 0.0, (0, 1))
    assert model.next_time() == 1000.0
    assert model.evict(0, 400.0) == 500.0  # 100 s of checkpoint, the nodes held until then
    assert model.next_time() == 500.0  # the old end is stale
    assert model.finish(500.0) == [(0, "checkpointed")]
    again = model.resubmit(0)
    # walltime: 100 s restart + 1100 s left; runtime: 100 s restart + 600 s of work left
    assert (again.walltime, again.runtime) == (1200.0, 700.0)
    assert again.extra["work_done"] == 400.0 and again.extra["restarts"] == 1
    model.start(0, 600.0, (2, 3))
    assert model.next_time() == 1300.0  # 600 + 100 restart + 600 left
    assert model.evict(0, 800.0) == 900.0  # 100 s of work after its restart
    assert model.finish(900.0) == [(0, "checkpointed")]
    assert model.resubmit(0).extra["work_done"] == 500.0
    model.start(0, 1000.0, (0, 1))
    # evicted half a second before its restart is read: 99.5 s of that restart spent, no work
    assert model.evict(0, 1099.5) == 1199.5
    assert model.finish(1199.5) == [(0, "checkpointed")]
    assert model.resubmit(0).extra["restarts"] == 3
    model.start(0, 1200.0, (0, 1))
    assert model.next_time() == 1800.0  # (the engine asks for it before every finish)
    assert model.finish(1800.0) == [(0, "finished")]
    result = _Result()
    model.record(result)
    p = result.preemption["a"]
    assert p == {"evictions": 3, "checkpoints": 3, "restarts": 3, "kills": 0,
                 "checkpoint_time": 300.0, "restart_time": 299.5, "work_done": 1000.0,
                 "lost_work": 0.0}
    # segments [0, 500], [600, 900], [1000, 1199.5], [1200, 1800]: run time = work + lost +
    # checkpoint + restart
    assert sum(p[x] for x in ("work_done", "lost_work", "checkpoint_time", "restart_time")) \
        == 500.0 + 300.0 + 199.5 + 600.0


def test_half_a_second_of_work_left_after_a_restart():
    job = Job("a", 0.0, 1000.0, checkpointable=True, extra={"site": "x"})  # runtime: walltime
    model = _run(_model(), job)
    model.start(0, 0.0, (0,))
    model.evict(0, 999.5)
    model.finish(1099.5)
    again = model.resubmit(0)
    assert (again.walltime, again.runtime) == (100.5, 100.5)
    assert again.extra == {"site": "x", "work_done": 999.5, "restarts": 1}
    model.start(0, 1200.0, (0,))
    assert model.next_time() == 1300.5


def test_jobs_ending_together_are_all_reported_past_a_stale_end():
    jobs = [Job(k, 0.0, 2000.0, 1000.0, checkpointable=True) for k in "abc"]
    model = _run(_model(), *jobs)
    for k in range(3):
        model.start(k, 0.0, (k,))
    model.evict(1, 400.0)  # b's end at 1000 is stale, between a's and c's
    assert model.finish(500.0) == [(1, "checkpointed")]
    assert model.next_time() == 1000.0
    assert model.finish(1000.0) == [(0, "finished"), (2, "finished")]


def test_a_model_never_reset_records_nothing():
    result = _Result()
    CheckpointRestart().record(result)
    assert result.preemption == {}


def test_a_bandwidth_under_one_byte_per_second_is_still_positive():
    assert _model(pfs_bandwidth=0.5).checkpoint_time(Job("a", 0.0, 1.0)) == 2e9


def test_the_walltime_bounds_the_useful_work_across_a_restart():
    job = Job("a", 0.0, 800.0, 1000.0, checkpointable=True)  # would run past its walltime
    model = _run(_model(), job)
    model.start(0, 0.0, (0,))
    model.evict(0, 300.0)
    model.finish(400.0)
    again = model.resubmit(0)
    assert (again.walltime, again.runtime) == (600.0, 800.0)  # 100 + 500, 100 + 700
    model.start(0, 500.0, (0,))
    assert model.next_time() == 1100.0  # 500 + 100 restart + 500 of walltime left
    assert model.finish(1100.0) == [(0, "killed")]
    result = _Result()
    model.record(result)
    assert result.preemption["a"]["work_done"] == 800.0


@pytest.mark.parametrize("on_kill,why", [("drop", "dropped"), ("requeue", "requeued")])
def test_a_job_that_cannot_checkpoint_is_killed_and_loses_its_work(on_kill, why):
    job = Job("a", 0.0, 1000.0, 1000.0, preemptable=True)
    model = _run(_model(on_kill=on_kill), job)
    model.start(0, 100.0, (0,))
    assert model.evict(0, 400.0) == 400.0  # no checkpoint: the nodes come back at once
    assert model.finish(400.0) == [(0, why)]
    again = model.resubmit(0)
    assert (again.walltime, again.runtime) == (1000.0, 1000.0)
    assert again.extra["work_done"] == 0.0 and again.extra["restarts"] == 0
    model.start(0, 500.0, (0,))
    model.evict(0, 550.0)
    model.finish(550.0)
    result = _Result()
    model.record(result)
    assert result.preemption["a"] == {
        "evictions": 2, "checkpoints": 0, "restarts": 0, "kills": 2, "checkpoint_time": 0.0,
        "restart_time": 0.0, "work_done": 0.0, "lost_work": 350.0}
