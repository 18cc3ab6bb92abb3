"""The checkpoint/restart model's costs (Zvi & Oren, OMFS, with bbopt's reading in
:mod:`bbopt.simulation.checkpoint`) pinned on values that separate them from their variants:
an image per node written in parallel (``memory / bandwidth``, not ``nodes x memory /
bandwidth``), restarts read from the PFS, and the burst buffer used only when the job's own
allocation holds its whole image (at, just below and just above ``nodes x memory``)."""

from __future__ import annotations

import pytest

from bbopt import Job
from bbopt.core import GB
from bbopt.simulation.checkpoint import CheckpointRestart


def _job(nodes: int, bb: float = 0.0, **extra) -> Job:
    return Job("j", 0.0, 3600.0, 3600.0, nodes, bb, preemptable=True, checkpointable=True,
               extra=extra)


def test_checkpoint_and_restart_take_memory_per_node_over_bandwidth_per_node():
    model = CheckpointRestart(memory_per_node=8 * GB, pfs_bandwidth=2 * GB, bb_bandwidth=16 * GB)
    for nodes in (1, 4):  # the nodes write their images in parallel: 4 s whatever the size
        assert model.checkpoint_time(_job(nodes)) == 4.0
        assert model.restart_time(_job(nodes)) == 4.0
    # the trace's image size per node wins over the default
    assert model.checkpoint_time(_job(4, memory_per_node=1 * GB)) == 0.5


@pytest.mark.parametrize(("bb", "seconds"), [
    (4 * 8 * GB, 0.5),        # the own allocation holds the 4 images exactly: BB, 8 / 16 s
    (4 * 8 * GB + 1, 0.5),    # room to spare
    (4 * 8 * GB - 1, 4.0),    # one byte short: the PFS, 8 / 2 s
])
def test_burst_buffer_target_only_when_the_own_allocation_holds_the_image(bb, seconds):
    model = CheckpointRestart(memory_per_node=8 * GB, pfs_bandwidth=2 * GB,
                              bb_bandwidth=16 * GB, target="bb")
    job = _job(4, bb)
    assert model.checkpoint_time(job) == seconds
    assert model.restart_time(job) == 4.0  # read back from the PFS in every case
    assert CheckpointRestart(memory_per_node=8 * GB, pfs_bandwidth=2 * GB,
                             bb_bandwidth=16 * GB).checkpoint_time(job) == 4.0  # target pfs
