"""The example state file the README points to is a valid state and decides as documented."""

from __future__ import annotations

import json
from pathlib import Path

from bbopt import decide
from bbopt.cli import main
from bbopt.schema import loads_state

STATE = Path(__file__).resolve().parents[2] / "examples" / "state.json"


def test_example_state_decides_as_the_readme_says(capsys):
    state = loads_state(STATE.read_bytes(), str(STATE))
    d = decide(state, "fcfs-bb")
    assert [s.job_id for s in d.start] == ["a"]
    assert [(r.job_id, r.start) for r in d.reservations] == [("b", 600.0)]
    assert main(["decide", str(STATE), "--policy", "sjf-bb"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["job_id"] for s in out["start"]] == ["a"]
