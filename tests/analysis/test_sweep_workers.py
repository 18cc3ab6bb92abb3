"""How many worker processes ``bbopt compare`` takes by default (bbopt.analysis.workers)."""

from __future__ import annotations

import pytest

from bbopt.analysis import workers
from bbopt.analysis.sweep_schedule import estimate


def _pow(x: int, y: int) -> int:
    return x ** y


@pytest.fixture
def four_cores(monkeypatch):
    monkeypatch.setattr(workers, "default_workers", lambda: 4)


def test_small_runs_stay_in_this_process_and_large_ones_take_every_core(four_cores):
    queue_rules = ["fcfs", "fcfs-easy", "filler", "fcfs-bb", "sjf-bb", "conservative-bb"]
    # compare's embedded workload (3,000 jobs) under its six default policies: serial.
    assert workers.workers_for(3_000, queue_rules) == 1
    # The whole KTH trace under the same policies: every core.
    assert workers.workers_for(28_467, queue_rules) == 4
    # One cheap policy on a large trace is still small; a policy with a solver budget is not.
    assert workers.workers_for(28_467, ["fcfs"]) == 1
    assert workers.workers_for(28_467, ["fcfs", "bbsched"]) == 4


def test_the_threshold_is_the_estimated_cpu_of_all_runs(four_cores):
    per_job = estimate(1000, "conservative-bb", {}) / 1000
    below = int(workers.MIN_PARALLEL_CPU / per_job) - 1
    assert workers.workers_for(below, ["conservative-bb"]) == 1
    assert workers.workers_for(below + 2, ["conservative-bb"]) == 4
    # Two policies each under the threshold add up to more than it.
    assert workers.workers_for(below // 2 + 2, ["conservative-bb", "conservative-bb"]) == 4


def test_runs_give_results_in_task_order_on_workers():
    got = list(workers.run_each(_pow, [(2, k) for k in range(6)], workers=2))
    assert got == [2 ** k for k in range(6)]
    with pytest.raises(ValueError, match="workers must be >= 1"):
        list(workers.run_each(_pow, [(2, 1)], workers=0))


def test_plan_policies_are_costed_as_measured_not_as_a_window_policy(four_cores):
    # plan-2 costs about 3 CPU s per 1,000 KTH jobs: 2,000 jobs of it and a queue rule are
    # worth two workers, where a window policy's default cost would have kept them serial.
    assert estimate(1000, "plan-2", {"budget": 5.0}) > 5 * estimate(1000, "bbsched", {})
    assert workers.workers_for(2_000, ["plan-2", "sjf-bb"]) == 4
