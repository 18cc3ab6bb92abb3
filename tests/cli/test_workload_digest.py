"""The workload file's SHA-256 is computed only when asked (the provenance of written results),
and is the digest of the file's bytes."""

from __future__ import annotations

import hashlib
import json

from bbopt.cli import main
from bbopt.loading import read_workload

_SWF = ("; MaxNodes: 16\n"
        "1 0 -1 100 4 -1 -1 4 200 -1 1 3 1 -1 -1 -1 -1 -1\n"
        "2 10 -1 100 4 -1 -1 4 200 -1 1 3 1 -1 -1 -1 -1 -1\n")


def test_reading_does_not_hash_and_the_digest_is_the_files(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text(_SWF)
    w = read_workload(trace)
    assert w.digest is None  # nothing hashed by reading
    assert w.sha256 == hashlib.sha256(trace.read_bytes()).hexdigest()
    assert w.digest == w.sha256  # kept once computed
    assert read_workload(None, n_jobs=10).sha256 is None  # the embedded workload has no file


def test_written_provenance_names_the_files_digest(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text(_SWF)
    out = tmp_path / "out"
    assert main(["simulate", "--workload", str(trace), "--out", str(out), "--no-progress"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["provenance"]["workload"]["sha256"] == \
        hashlib.sha256(trace.read_bytes()).hexdigest()
