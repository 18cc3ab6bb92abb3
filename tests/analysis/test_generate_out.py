"""``bbopt generate --out`` never overwrites the workload it transforms (the same file by
another name included)."""

from __future__ import annotations

import os

from bbopt.cli import main


def test_generate_refuses_to_overwrite_its_input(tmp_path, capsys):
    src = tmp_path / "in.swf"
    assert main(["generate", "kth-like", "n_jobs=30", "--out", str(src)]) == 0
    before = src.read_bytes()
    capsys.readouterr()
    link = tmp_path / "link.swf"
    os.symlink(src, link)
    for out in (src, link, tmp_path / "." / "in.swf"):
        assert main(["generate", "first", "n=10", "-w", str(src), "--out", str(out)]) == 2
        err = capsys.readouterr().err
        assert "is the input workload" in err and len(err.strip().splitlines()) == 1
        assert src.read_bytes() == before
    assert main(["generate", "first", "n=10", "-w", str(src), "--out",
                 str(tmp_path / "out.swf")]) == 0
    assert (tmp_path / "out.swf").read_text().count("\n") > 10
