"""The two rules of Kopanski's BB request generator (fit-in-platform cap, short jobs) and what
they change on the KTH trace: only the too-wide jobs are rejected."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from bbopt import Job, Platform
from bbopt.core import GB, MB
from bbopt.loading import bb_rules_for, load_workload
from bbopt.workloads.bb import (
    KOPANSKI_RULES,
    KopanskiRules,
    lognormal_bb_per_processor,
    with_lognormal_bb,
)
from bbopt.workloads.swf import read_swf
from tests._workload_data import job_fields


def test_cap_is_what_twelve_40gb_nodes_hold_per_node():
    assert KOPANSKI_RULES.cap_per_node(12) == 40 * GB
    assert KOPANSKI_RULES.cap_per_node(13) == 20 * GB
    assert KOPANSKI_RULES.cap_per_node(84) == math.floor(40e9 / 7)  # as in the authors' files
    assert KOPANSKI_RULES.cap_per_node(96) == 5 * GB


def test_a_96_node_job_with_a_large_draw_is_capped():
    job = Job("w", 0, 3600, 3600, nodes=96)
    assert KOPANSKI_RULES.per_node(job, 30 * GB) == 5 * GB
    assert KOPANSKI_RULES.per_node(job, 3 * GB) == 3 * GB  # below the cap: the draw stands
    # Through the model: 200 such jobs, many draws above 5 GB, all capped exactly there.
    jobs = [Job(str(i), 0, 3600, 3600, nodes=96) for i in range(200)]
    raw = with_lognormal_bb(jobs, 3)
    ruled = with_lognormal_bb(jobs, 3, rules=True)
    over = [r.bb / 96 > 5 * GB for r in raw]
    assert sum(over) > 10
    for r, c, big in zip(raw, ruled, over, strict=True):
        assert c.bb == (5 * GB * 96 if big else r.bb)


def test_a_100_second_job_gets_10_mb_per_node_and_others_keep_their_draws():
    jobs = [Job("short", 0, 100, 50, nodes=4), Job("edge", 0, 120, 50, nodes=2),
            Job("long", 0, 121, 50, nodes=4)]
    raw = with_lognormal_bb(jobs, 0)
    ruled = with_lognormal_bb(jobs, 0, rules=True)
    assert ruled[0].bb == 4 * 10 * MB
    assert ruled[1].bb == 2 * 10 * MB  # walltime <= 120 s
    assert ruled[2].bb == raw[2].bb  # same draw: the rule only replaces the short jobs'
    assert raw[0].bb >= 4 * 100 * MB  # without the rule the draw is clamped at >= 100 MB


def test_rules_follow_the_platform():
    assert bb_rules_for(Platform.kopanski()) == KOPANSKI_RULES
    named = Platform(nodes=8, bb=4 * GB, name="kopanski-small", bb_nodes=(1 * GB,) * 4)
    assert bb_rules_for(named) == KopanskiRules(bb_nodes=4, bb_node_capacity=1 * GB)
    assert bb_rules_for(Platform(nodes=8, bb=4 * GB)) is None


@pytest.mark.slow
def test_on_kth_only_the_too_wide_jobs_are_rejected(kth_swf):
    jobs = read_swf(kth_swf).jobs
    wide = {j.id for j in jobs if j.nodes > 96}
    assert len(wide) == 14
    raw = with_lognormal_bb(jobs, 0)
    for platform in (Platform.kopanski(), Platform.kopanski(named_bb=True)):
        ruled = with_lognormal_bb(jobs, 0, rules=bb_rules_for(platform))
        rejected = {j.id for j in ruled if platform.why_never_fits(j) is not None}
        assert rejected == wide
        # Without the rules the wide jobs' draws exceed the platform: hundreds more rejected.
        assert sum(platform.why_never_fits(j) is not None for j in raw) > 250
    # Every job that fits is short-ruled or within its cap.
    small = [j for j in ruled if j.nodes <= 96]
    per_node = np.array([j.bb / j.nodes for j in small])
    caps = np.array([KOPANSKI_RULES.cap_per_node(j.nodes) for j in small])
    assert np.all(per_node <= caps * (1 + 1e-12))


def test_load_workload_applies_the_rules_by_default_on_kopanski(tmp_path):
    swf = tmp_path / "t.swf"
    swf.write_text("1 0 0 50 96 -1 -1 96 3600 -1 1 1 1 -1 -1 -1 -1 -1\n"
                   "2 10 0 50 4 -1 -1 4 100 -1 1 1 1 -1 -1 -1 -1 -1\n")
    platform = Platform.kopanski()
    on, _ = load_workload(swf, seed=0, platform=platform)
    off, _ = load_workload(swf, seed=0, platform=platform, bb_rules=False)
    assert on[1].bb == 4 * 10 * MB and off[1].bb >= 4 * 100 * MB
    assert on[0].bb <= 96 * 5 * GB
    other, _ = load_workload(swf, seed=0, platform=Platform(nodes=96, bb=480 * GB))
    assert other[1].bb == off[1].bb  # not a Kopanski platform: the paper's model alone


def test_embedded_default_gets_the_rules_on_kopanski():
    """The embedded KTH-like workload of ``bbopt compare`` draws its BB requests itself; they
    follow the generator's rules too, so none of its jobs (all within 96 nodes) is rejected for
    BB, where the paper's model alone rejects 51 wide ones of seed 0."""
    from bbopt.loading import read_workload

    platform = Platform.kopanski()
    on = read_workload(None, seed=0, platform=platform).jobs
    default = read_workload(None, seed=0).jobs  # no platform given: Kopanski's is the default
    off = read_workload(None, seed=0, platform=platform, bb_rules=False).jobs
    assert [j.bb for j in default] == [j.bb for j in on]
    assert max(j.nodes for j in on) <= 96
    assert not [j.id for j in on if platform.why_never_fits(j) is not None]
    too_big = [j for j in off if platform.why_never_fits(j) is not None]
    assert len(too_big) == 51
    for a, b in zip(off, on, strict=True):  # same draws: each job capped, short-ruled or kept
        per_node = KOPANSKI_RULES.per_node(a, a.bb / a.nodes)
        assert b.bb == pytest.approx(per_node * a.nodes, rel=1e-12)
        assert b.bb <= a.bb or a.walltime <= 120
    # With named BB nodes the cap follows them: every job still fits the empty machine.
    named = Platform.kopanski(named_bb=True)
    assert all(named.why_never_fits(j) is None
               for j in read_workload(None, seed=0, platform=named).jobs)


def test_compare_without_arguments_rejects_nothing(capsys):
    from bbopt.cli import main

    assert main(["compare", "--policies", "fcfs-bb", "--no-progress"]) == 0
    out = capsys.readouterr().out
    rejected = next(line for line in out.splitlines() if line.startswith("rejected"))
    assert rejected.split()[-1] == "0"
    assert "requests more burst buffer" not in out


def test_sweep_transforms_take_the_rules_and_the_checkpoint_size():
    from bbopt.workloads.generators.catalog import apply

    jobs = [Job(str(i), 0, walltime=60 if i % 2 else 4 * 3600,
                runtime=50 if i % 2 else 3 * 3600, nodes=96) for i in range(40)]
    plain = apply("lognormal-bb", jobs, 3)
    ruled = apply("lognormal-bb", jobs, 3, rules=True)
    assert [j.bb for j in ruled] == [j.bb for j in with_lognormal_bb(jobs, 3, rules=True)]
    assert [j.bb for j in plain] == [j.bb for j in with_lognormal_bb(jobs, 3)]
    # walltime 60 s: 10 MB per node; 96 nodes: at most 5 GB per node
    assert all(j.bb == 96 * 10 * MB for j in ruled[1::2])
    assert all(j.bb <= 96 * 5 * GB for j in ruled) and ruled != plain
    half = apply("kopanski", jobs, 3, rules=True, checkpoint_factor=0.5)
    assert [j.bb for j in half] == [j.bb for j in ruled]
    ph = half[0].extra["phases"]
    assert ph["checkpoints"] == 2 and ph["checkpoint_bytes"] == 0.5 * half[0].bb
    assert apply("kopanski", jobs, 3)[0].extra["phases"]["checkpoint_bytes"] == plain[0].bb


@pytest.mark.parametrize("rules", [None, True])
def test_bb_draw_copies_equal_replace(kth_swf, rules):
    """The draw's unchecked copies equal ``dataclasses.replace``'s."""
    jobs = read_swf(kth_swf).jobs[:3000]
    got = with_lognormal_bb(jobs, seed=3, rules=rules)
    per_proc = lognormal_bb_per_processor(len(jobs), np.random.default_rng(3))
    want = [dataclasses.replace(j, bb=(KOPANSKI_RULES.per_node(j, float(p)) if rules
                                       else float(p)) * j.nodes)
            for j, p in zip(jobs, per_proc, strict=True)]
    assert [job_fields(j) for j in got] == [job_fields(j) for j in want]


class _HalfRules(KopanskiRules):
    """A site's own rule: every job asks half of what the authors' rules give it per node."""

    def per_node(self, job: Job, drawn: float) -> float:
        return super().per_node(job, drawn) / 2


_JOBS = [Job(str(i), 0, walltime=60.0 * (i + 1), runtime=30.0, nodes=1 + 7 * i)
         for i in range(6)]


def test_a_rules_subclass_sees_each_job_and_the_same_draws():
    from bbopt.workloads.bb import lognormal_bb_column

    ruled = with_lognormal_bb(_JOBS, 5, rules=True)
    half = with_lognormal_bb(_JOBS, 5, rules=_HalfRules())
    assert [j.bb for j in half] == [j.bb / 2 for j in ruled]
    assert half[0].bb == 10 * MB / 2  # walltime 60 s: the short-job rule, halved
    assert [j.id for j in half] == [j.id for j in _JOBS]
    # a generator given as the seed draws the same stream as its seed
    again = with_lognormal_bb(_JOBS, np.random.default_rng(5), rules=_HalfRules())
    assert [j.bb for j in again] == [j.bb for j in half]
    nodes = np.array([j.nodes for j in _JOBS])
    walltime = np.array([j.walltime for j in _JOBS])
    assert lognormal_bb_column(nodes, walltime, 5, rules=_HalfRules()) is None


def test_the_column_draw_is_the_jobs_draw():
    from bbopt.workloads.bb import lognormal_bb_column

    nodes = np.array([j.nodes for j in _JOBS])
    walltime = np.array([j.walltime for j in _JOBS])
    # the default seed is 0 in both; rules=True means the authors' rules in both
    assert lognormal_bb_column(nodes, walltime).tolist() == [j.bb for j in with_lognormal_bb(_JOBS)]
    ruled = lognormal_bb_column(nodes, walltime, 0, rules=True).tolist()
    assert ruled == [j.bb for j in with_lognormal_bb(_JOBS, 0, rules=True)]
    assert ruled[0] == 10 * MB and ruled[1] == 8 * 10 * MB  # walltimes 60 and 120 s
    assert ruled != lognormal_bb_column(nodes, walltime, 0).tolist()


def test_the_per_job_path_and_the_column_path_give_the_same_bytes():
    class Same(KopanskiRules):
        """A subclass that changes nothing: drawn job by job instead of by columns."""

    jobs = [Job(str(i), 0, walltime=30.0 * (i % 9 + 1), runtime=10.0, nodes=1 + (i * 7) % 96)
            for i in range(400)]
    by_job = with_lognormal_bb(jobs, 11, rules=Same())
    assert [j.bb for j in by_job] == [j.bb for j in with_lognormal_bb(jobs, 11, rules=True)]
