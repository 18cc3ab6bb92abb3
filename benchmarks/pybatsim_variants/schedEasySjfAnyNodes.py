"""pybatsim's schedEasySjfBackfill without its consecutive-resources filter (EASY with
shortest-first backfilling on any free nodes; benchmarks/speed/batsim_agreement.py)."""

from batsim.sched.algorithms.backfilling import backfilling_sched


def SchedEasySjfAnyNodes(scheduler):
    backfilling_sched(scheduler, reservation_depth=1, backfilling_sort=lambda j: j.requested_time)
