"""``bbopt simulate`` without ``--out`` imports no module it only needs to write files or read
compressed traces (json, shlex, csv, gzip: a few milliseconds of every run), and still writes
every file when asked."""

from __future__ import annotations

import json
import subprocess
import sys

LAZY = ("json", "shlex", "csv", "gzip")

SWF = "".join(f"{k} {10 * k} 0 {50 + k} 2 -1 -1 2 {100 + k} -1 1 {k % 3} 1 -1 -1 -1 -1 -1\n"
              for k in range(1, 40))


def _run(args: list[str]) -> tuple[str, list[str]]:
    code = ("import sys\nfrom bbopt.cli import main\n"
            f"rc = main({args!r})\n"
            f"print('LOADED', *[m for m in {LAZY!r} if m in sys.modules])\n"
            "raise SystemExit(rc)")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    last = out.strip().splitlines()[-1].split()
    assert last[0] == "LOADED"
    return out, last[1:]


def test_simulate_imports_no_writer(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text(SWF)
    out, loaded = _run(["simulate", "-w", str(trace), "--policy", "sjf-bb", "--no-progress"])
    assert "mean wait" in out
    assert loaded == []


def test_simulate_with_out_still_writes_everything(tmp_path):
    trace = tmp_path / "t.swf.gz"
    import gzip

    trace.write_bytes(gzip.compress(SWF.encode()))
    res = tmp_path / "res"
    _, loaded = _run(["simulate", "-w", str(trace), "--policy", "conservative-bb", "--no-progress",
                      "--out", str(res), "-o", "depth=3"])
    assert set(loaded) == set(LAZY)
    summary = json.loads((res / "summary.json").read_text())
    assert summary["provenance"]["command"].startswith("bbopt simulate")
    assert summary["provenance"]["policy_options"] == {"depth": 3}
    rows = (res / "conservative-bb_jobs.csv").read_text().splitlines()
    assert len(rows) == 40 and rows[0].startswith("job_id,")
