"""The command line reaches the pack/list comparison: a generated periodic workload by name, its
machine, the exclusive-I/O execution model and the paper's metrics in the table."""

from __future__ import annotations

import json

import pytest

from bbopt.cli import main
from bbopt.errors import InputError
from bbopt.loading import declared_platform, load_workload


def test_jeannot_workload_spec_brings_its_machine():
    jobs, name = load_workload("jeannot:U-No:0.4:30", seed=1)
    assert name == "jeannot:U-No:0.4:30"
    assert len(jobs) == 30 and all("io" in j.extra for j in jobs)
    assert declared_platform("jeannot:U-No:0.4").nodes == 2048
    assert declared_platform("jeannot:M-BN:0.4").nodes == 49152
    with pytest.raises(InputError, match="FAMILY"):
        load_workload("jeannot:Z-No:0.4")
    with pytest.raises(InputError, match="ALPHA"):
        load_workload("jeannot:U-No:high")


def test_compare_pack_and_list_from_the_command_line(tmp_path, capsys):
    assert main(["compare", "--workload", "jeannot:U-No:0.4:30", "--policies",
                 "io-list,pack-max,pack-opt", "--no-progress", "--format", "json"]) == 0
    metrics = json.loads(capsys.readouterr().out)
    assert set(metrics) == {"io-list", "pack-max", "pack-opt"}
    for m in metrics.values():
        assert m["finished"] == 30
        assert m["xio_max_stretch"] >= 1.0
        assert 0.0 <= m["xio_idle_ratio"] <= 1.0
    # under the rigid model (no I/O simulated) the exclusive-I/O metrics are not reported
    assert main(["simulate", "--workload", "jeannot:U-No:0.4:30", "--policy", "pack-max",
                 "--execution", "rigid", "--no-progress"]) == 0
    assert "max stretch" not in capsys.readouterr().out
