"""io-fcfs and io-easy are fcfs and fcfs-bb asking a planner that plans link bandwidth
(Herbein et al., HPDC 2016, Section 3.4): where no job asks for bandwidth the I/O tree never
binds and their schedules are those of the I/O-ignorant rules to the byte (the greedy then
takes the lowest-numbered free nodes, as the engine does); with bandwidth asked they differ."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from bbopt import simulate
from bbopt.loading import load_platform
from bbopt.policies.registry import make_policy
from bbopt.workloads.synthetic import kth_like

MB = 1e6


def _digest(jobs, platform, policy, tmp_path) -> str:
    path = simulate(jobs, platform, policy).to_csv(tmp_path / f"{policy}.csv")
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("aware, ignorant", [("io-easy", "fcfs-bb"), ("io-fcfs", "fcfs")])
def test_without_bandwidth_the_io_aware_rules_are_the_queue_rules(aware, ignorant, tmp_path):
    platform = load_platform("kopanski-dragonfly")  # 96 nodes, a BB pool, a dragonfly tree
    jobs = kth_like(300, seed=1, nodes=96, load=0.95, bb=True)
    assert _digest(jobs, platform, aware, tmp_path) == _digest(jobs, platform, ignorant,
                                                               tmp_path)
    asking = [dataclasses.replace(j, bandwidth=(j.nodes % 3) * 40 * MB) for j in jobs]
    assert _digest(asking, platform, aware, tmp_path) != _digest(asking, platform, ignorant,
                                                                 tmp_path)


def test_io_easy_keeps_easys_promise_and_declares_the_bandwidth_it_allocates():
    io_easy, fcfs_bb = make_policy("io-easy"), make_policy("fcfs-bb")
    assert io_easy.io_aware and not fcfs_bb.io_aware
    assert io_easy.promise == fcfs_bb.promise and io_easy.reserve_bb and io_easy.order == "fcfs"
    assert make_policy("io-fcfs").io_aware
