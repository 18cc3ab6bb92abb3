"""The budget mode of a run: deterministic unless it says otherwise, it reaches every optimising
policy, and each one then gives the same jobs.csv on an idle machine and on one so loaded that
every look at the clock finds time gone (every ``_time`` of the policies, solvers and models
replaced by a slowed clock). In the wall mode the same slowed clock changes some schedules."""

from __future__ import annotations

import sys
from dataclasses import dataclass

import numpy as np
import pytest

from bbopt.core import MB, Job, Platform
from bbopt.runs import RunSpec, run, with_budget_mode
from bbopt.workloads.synthetic import kth_like


@dataclass
class SlowClock:
    """Every look at any clock is ``step`` seconds after the previous one."""

    step: float
    t: float = 0.0

    def _tick(self) -> float:
        self.t += self.step
        return self.t

    def perf_counter(self) -> float:
        return self._tick()

    monotonic = process_time = time = perf_counter

    def sleep(self, seconds: float) -> None:
        self.t += seconds


def _slow_down(monkeypatch, step: float) -> int:
    """Replace the clock of every loaded policy, solver and model module; how many."""
    import time

    clock = SlowClock(step)
    n = 0
    for name, mod in list(sys.modules.items()):
        if not name.startswith(("bbopt.policies", "bbopt.solvers", "bbopt.models")):
            continue
        for attr in ("_time", "time"):
            if getattr(mod, attr, None) is time:
                monkeypatch.setattr(mod, attr, clock)
                n += 1
        if getattr(mod, "perf_counter", None) is time.perf_counter:
            monkeypatch.setattr(mod, "perf_counter", clock.perf_counter)
            n += 1
    return n


def _kth(n: int = 60) -> list[Job]:
    """KTH-like jobs submitted within minutes: a long queue at every decision."""
    from dataclasses import replace

    return [replace(j, submit=j.submit / 200) for j in kth_like(n, seed=2)]


def _omfs() -> list[Job]:
    """Entity a fills the machine with 96 one-node jobs of mixed lengths; entity b, entitled
    to half of it, then submits wide jobs: each needs victims among many candidates (the
    exact victim choice, CP-SAT beyond a dozen)."""
    from bbopt.workloads.shares import with_shares

    rng = np.random.default_rng(4)
    a = [Job(f"a{i}", float(i), 20_000.0, runtime=float(rng.integers(3_000, 20_000)), nodes=1,
             user="a", preemptable=True, checkpointable=bool(i % 2)) for i in range(120)]
    b = [Job(f"b{i}", 2_000.0 + 900 * i, 3_000.0, runtime=2_500.0, nodes=8 + 4 * (i % 3),
             user="b", preemptable=True, checkpointable=True) for i in range(8)]
    return with_shares(a + b, {"a": 0.5, "b": 0.5})


def _io() -> tuple[list[Job], Platform]:
    from bbopt.topology import from_description, platform_from_topology

    tree = from_description({"tree": {"type": "pfs", "bandwidth": 600 * MB, "children": [
        {"type": "switch", "bandwidth": 400 * MB, "count": 2,
         "children": [{"type": "node", "count": 6}]}]}})
    rng = np.random.default_rng(3)
    jobs, t = [], 0.0
    for i in range(30):
        t += float(rng.exponential(30))
        wall = float(rng.integers(60, 600))
        jobs.append(Job(str(i), t, wall, runtime=wall * float(rng.uniform(0.3, 1.0)),
                        nodes=int(rng.integers(1, 7)), bandwidth=int(rng.integers(0, 80)) * MB))
    return jobs, platform_from_topology(tree)


def _cases() -> dict[str, RunSpec]:
    kop = Platform.kopanski()
    io_jobs, io_platform = _io()
    return {
        "plan-2": RunSpec(_kth(), kop, "plan-2", {"budget": 0.05}),
        "bbsched": RunSpec(_kth(), kop, "bbsched", {"budget": 0.05}),
        "bbsched-nsga2": RunSpec(_kth(40), kop, "bbsched-nsga2", {"budget": 0.05}),
        "omfs-opt": RunSpec(_omfs(), Platform(96, 0.0), "omfs-opt",
                            {"budget": 0.01, "quantum": 600}, execution="checkpoint",
                            execution_options={"memory_per_node": "1GB"}),
        "pack-opt": RunSpec("jeannot:U-No:0.4:30", None, "pack-opt", {"budget": 0.05}),
        "io-window": RunSpec(io_jobs, io_platform, "io-window", {"budget": 0.05, "window": 6}),
    }


CASES = _cases()


def _jobs_csv(spec: RunSpec, tmp_path, tag: str) -> bytes:
    path = tmp_path / f"{tag}.csv"
    run(spec).result.to_csv(path)
    return path.read_bytes()


@pytest.mark.parametrize("policy", sorted(CASES))
def test_deterministic_mode_is_the_default_and_ignores_the_load(policy, tmp_path, monkeypatch):
    spec = CASES[policy]
    assert with_budget_mode(policy, spec.options, spec.budget_mode)["budget_mode"] == \
        "deterministic"
    idle = _jobs_csv(spec, tmp_path, "idle")
    with monkeypatch.context() as m:
        assert _slow_down(m, 0.05) > 0
        loaded = _jobs_csv(spec, tmp_path, "loaded")
    assert loaded == idle


@pytest.mark.parametrize("policy", ["plan-2", "pack-opt"])
def test_wall_mode_depends_on_the_load(policy, tmp_path, monkeypatch):
    """The contrast: the same slowed clock cuts the searches short in the wall mode."""
    from dataclasses import replace

    spec = replace(CASES[policy], budget_mode="wall")
    idle = _jobs_csv(spec, tmp_path, "idle")
    with monkeypatch.context() as m:
        _slow_down(m, 0.05)
        loaded = _jobs_csv(spec, tmp_path, "loaded")
    assert loaded != idle
