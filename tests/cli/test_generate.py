"""`bbopt generate`: every generator of the catalog writes a workload bbopt reads back."""

from __future__ import annotations

import os

import pytest

from bbopt.cli import main
from bbopt.loading import load_workload
from bbopt.workloads.generators.catalog import GENERATORS, apply, generator

SOURCE_PARAMS = {"kth-like": ["n_jobs=60"], "herbein": ["n_jobs=80"],
                 "jeannot": ["n_apps=30", "alpha=0.3"], "capability": ["n_jobs=50"]}
TRANSFORM_PARAMS = {"bbsched": ["scenario=S2", "scale=0.01"], "first": ["n=20"],
                    "max-nodes": ["nodes=16"], "scale-nodes": ["factor=2"]}


def test_every_source_is_covered():
    assert {n for n in GENERATORS if generator(n).kind == "source"} == set(SOURCE_PARAMS)


@pytest.mark.parametrize("name", sorted(SOURCE_PARAMS))
@pytest.mark.parametrize("suffix", [".swf", ".json"])
def test_sources_write_swf_and_batsim(name, suffix, tmp_path):
    out = tmp_path / f"w{suffix}"
    assert main(["generate", name, *SOURCE_PARAMS[name], "--seed", "3", "--out",
                 str(out)]) == 0
    jobs, _ = load_workload(out, bb="none")
    expected = apply(name, None, 3, **{k: float(v) if "." in v else int(v) for k, v in
                                       (p.split("=") for p in SOURCE_PARAMS[name])})
    assert len(jobs) == len(expected)
    assert [j.nodes for j in jobs] == [j.nodes for j in expected]
    assert [j.submit for j in jobs] == pytest.approx([j.submit for j in expected], abs=1)


@pytest.mark.parametrize("name", sorted(n for n in GENERATORS
                                        if generator(n).kind == "transform"))
def test_transforms_rewrite_a_workload(name, tmp_path):
    base = tmp_path / "base.swf"
    assert main(["generate", "kth-like", "n_jobs=80", "--out", str(base)]) == 0
    out = tmp_path / "t.json"
    assert main(["generate", name, *TRANSFORM_PARAMS.get(name, []), "--workload", str(base),
                 "--seed", "1", "--out", str(out)]) == 0
    jobs, _ = load_workload(out, bb="none")
    params = {k: float(v) if v[0].isdigit() and "." in v else int(v) if v.isdigit() else v
              for k, v in (p.split("=") for p in TRANSFORM_PARAMS.get(name, []))}
    expected = apply(name, load_workload(base, bb="none")[0], 1, **params)
    assert 0 < len(jobs) == len(expected) <= 80
    for field in ("id", "nodes", "bb", "ssd", "bandwidth", "preemptable", "user"):
        got = [getattr(j, field) for j in jobs]
        want = [getattr(j, field) for j in expected]
        if field == "bb":
            assert got == pytest.approx(want, rel=1e-9), field
        else:
            assert got == want, field


def test_generate_errors(tmp_path, capsys):
    assert main(["generate", "kth-like", "n_job=3", "--out", str(tmp_path / "x.swf")]) == 2
    assert "n_jobs" in capsys.readouterr().err
    assert main(["generate", "bbsched", "--out", str(tmp_path / "x.swf")]) == 2
    assert main(["generate", "nope", "--out", str(tmp_path / "x.swf")]) == 2


def test_generate_refuses_to_overwrite_its_input(tmp_path, capsys):
    """``--out`` never overwrites the workload it transforms (the same file by another name
    included)."""
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
