"""Synchronous jobs in the contention model (Herbein et al., Section 3.3 and Figure 3): a job
runs at its slowest process's rate, so bandwidth it cannot use is not counted against it (or
others) higher up. Worked by hand on small trees."""

from __future__ import annotations

import pytest

from bbopt import Job, simulate
from bbopt.core import MB
from bbopt.simulation.io_metrics import io_summary
from bbopt.simulation.io_model import Flow, IOContention, contention
from bbopt.topology import from_description, herbein_example_topology, platform_from_topology


def _flows(tree, nodes, bw):
    return [Flow(bw, 1, tree.finite_path(int(tree.node_vertex[i]))) for i in nodes]


def test_figure3_with_the_384_mb_network_switch_gives_two_thirds():
    # Job1 on nodes 0, 1 (switch 1, 256 MB/s) and 2 (switch 2), 192 MB/s per process.
    # Switch 1 gives nodes 0 and 1 128 MB/s each: the job runs at 128. At the 384 MB/s network
    # switch it then moves 3 x 128 = 384: no contention there, I = 128/192.
    # Counting node 2's unusable 192 instead: 256 + 192 = 448 > 384, the switch gives each
    # subtree 192, nodes 0-1 get 96: I = 1/2 (the old reading).
    tree = herbein_example_topology()  # 256 MB/s switches, 384 MB/s network switch
    flows = _flows(tree, (0, 1, 2), 192 * MB)
    assert contention(tree, flows, jobs=[1, 1, 1]) == pytest.approx([128 * MB] * 3)
    assert min(contention(tree, flows)) == pytest.approx(96 * MB)
    job = Job("1", 0, walltime=1000, runtime=100, nodes=3, bandwidth=192 * MB)
    platform = platform_from_topology(tree)
    for synchronous, interference in ((True, 2 / 3), (False, 1 / 2)):
        model = IOContention(synchronous=synchronous)
        res = simulate([job], platform, "fcfs", execution=model)
        assert res.end[0] == pytest.approx(100 / interference)
        assert io_summary(res, model)["compute_share_min"] == pytest.approx(interference)


def test_bandwidth_a_synchronous_job_cannot_use_goes_to_another_job():
    # Network switch 512 MB/s over three 256 MB/s switches of two nodes. Job1 on nodes 0, 1, 2
    # (switches 1 and 2) at 192 MB/s per process; job2 on node 4 (switch 3) at 192 MB/s.
    tree = from_description({"name": "three", "tree": {
        "type": "pfs", "bandwidth": "10 GB/s", "children": [{
            "type": "switch", "name": "net", "bandwidth": "512 MB/s", "children": [
                {"type": "switch", "count": 3, "bandwidth": "256 MB/s",
                 "children": [{"type": "node", "count": 2}]}]}]}})
    flows = _flows(tree, (0, 1, 2), 192 * MB) + _flows(tree, (4,), 192 * MB)
    # Synchronous: switch 1 cuts job1 to 128, so switch 2 carries 128 of job1 and the network
    # sees 256 + 128 + 192 = 576 > 512: sorted, switch 2 (128) and switch 3 (192) are served in
    # full, switch 1 gets 512 - 320 = 192, 96 per node. Job1 runs at 96 (I = 1/2), job2 at 192.
    rates = contention(tree, flows, jobs=[1, 1, 1, 2])
    assert rates == pytest.approx([96 * MB] * 3 + [192 * MB])
    # Per flow: the network sees 256 + 192 + 192 = 640; the two 192 requests get 512/3 each
    # and switch 1 the same, 85.3 per node: job2 loses what job1 could never use.
    rates = contention(tree, flows)
    assert rates[3] == pytest.approx(512 / 3 * MB)
    assert min(rates[:3]) == pytest.approx(256 / 3 * MB)
