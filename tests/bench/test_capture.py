"""Capture is reproducible: recording the pack family again (its workload is generated, no
trace file needed) gives the committed small instances, models and optima alike."""

from __future__ import annotations

import json

from bbopt.bench.capture import capture
from bbopt.bench.instances import LIBRARY, read_instance
from bbopt.solvers import backends_for


def _content(path):
    doc = json.loads(path.read_text())
    doc["known"].pop("seconds", None)  # the reference solve's time depends on the machine
    return doc


def test_recapturing_the_pack_family_reproduces_the_committed_instances(tmp_path):
    files = capture(["pack-jeannot"], ("small",), tmp_path)
    committed = sorted((LIBRARY / "small").glob("pack-jeannot-*.json"))
    assert [f.name for f in sorted(files)] == [f.name for f in committed]
    assert len({f.name for f in files}) == len(files) == 8
    for new, old in zip(sorted(files), committed, strict=True):
        assert _content(new) == _content(old), new.name
    assert "bench-capture" not in backends_for(read_instance(committed[0]).model)
