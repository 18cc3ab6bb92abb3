"""Every paper's sweep specification parses, and its --quick variant runs and reports."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bbopt.analysis.store import collect
from bbopt.analysis.sweep import run_sweep
from bbopt.analysis.sweep_spec import load_spec
from tests._workload_data import KTH_SWF, data_file

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
SPECS = sorted(EXPERIMENTS.glob("*.yaml"))


@pytest.fixture(autouse=True)
def _data(monkeypatch):
    monkeypatch.setenv("BBOPT_DATA", str(data_file(KTH_SWF).parent))


def test_every_paper_has_a_spec():
    assert {p.stem for p in SPECS} >= {"kopanski", "bbsched", "herbein", "jeannot",
                                       "omfs"}


def test_jeannot_grid_runs_each_family_on_its_protocols_platform():
    """The reachable cells of 4 families x alpha, every seed a new static batch, the Mira
    families on Mira's 49,152 nodes and the Uniform ones on 2,048, under exclusive I/O."""
    spec = load_spec(EXPERIMENTS / "jeannot.yaml")
    cells = spec.cells()
    assert len(spec.workloads) == 17 and len(cells) == 17 * 6 * 10
    nodes = {"mira": 49152, "uniform": 2048}
    for c in cells:
        assert c.platform == {"M": "mira", "U": "uniform"}[c.workload[0]]
        assert spec.platforms[c.platform]["nodes"] == nodes[c.platform]
        assert spec.executions[c.execution]["name"] == "exclusive-io"
    assert {p.label for p in spec.policies} == {"io-list", "io-list-greedy", "pack-random",
                                                 "pack-max", "pack-char", "pack-opt"}
    greedy = next(p for p in spec.policies if p.label == "io-list-greedy")
    assert (greedy.name, greedy.options) == ("io-list", {"backfill": "greedy"})
    assert all(m.startswith("xio_") for m in spec.metrics)


def test_kopanski_draws_run_both_models_on_the_authors_platform():
    """Kopanski's two models over five draws of the BB requests, whole trace: allocation-only
    rigid on the named BB nodes with proximity placement, I/O-aware phased on their Dragonfly,
    each with the eight policies of the paper (plan-1/2/3 included) and sjf-bb as reference."""
    policies = {"fcfs", "filler", "fcfs-easy", "fcfs-bb", "sjf-bb", "plan-1", "plan-2", "plan-3"}
    for name, platform, execution in (("kopanski-draws", "kopanski:proximity", "rigid"),
                                      ("kopanski-io-draws", "kopanski-dragonfly:proximity",
                                       "phased-io")):
        spec = load_spec(EXPERIMENTS / f"{name}.yaml")
        cells = spec.cells()
        assert len(cells) == 8 * 5
        assert {p.label for p in spec.policies} == policies and spec.reference == "sjf-bb"
        assert {c.platform for c in cells} == {platform}
        assert {c.execution for c in cells} == {execution}
        assert sorted({c.seed for c in cells}) == [0, 1, 2, 3, 4]
        assert spec.workloads["kth"].get("split") is None  # the whole trace


@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_full_spec_parses_to_the_papers_grid(path):
    full = load_spec(path)
    quick = load_spec(path, quick=True)
    assert full.reference is not None
    assert 0 < len(quick.cells()) < len(full.cells())


def _non_trivial(png: Path) -> bool:
    import matplotlib.image

    img = matplotlib.image.imread(png)[..., :3]
    colours = np.unique((img.reshape(-1, 3) * 255).astype(np.uint8), axis=0)
    ink = np.mean(np.any(img < 0.95, axis=-1))
    return png.stat().st_size > 10_000 and len(colours) > 20 and ink > 0.02


@pytest.mark.slow
@pytest.mark.parametrize("path", SPECS, ids=lambda p: p.stem)
def test_quick_variant_runs_and_reports(path, tmp_path):
    pytest.importorskip("matplotlib")
    from bbopt.analysis.report import write_report

    spec = load_spec(path, quick=True)
    rep = run_sweep(spec, tmp_path / "r", executor="processes", workers=2, progress=False)
    assert rep.failed == 0, rep.failures
    assert rep.ran == len(spec.cells())
    table = collect(tmp_path / "r")
    assert set(table["policy"]) == {p.label for p in spec.policies}
    assert table[spec.metrics].notna().all().all()
    page = write_report(tmp_path / "r", tmp_path / "report")
    assert page.exists() and "<img" in page.read_text()
    pngs = sorted((tmp_path / "report").glob("*.png"))
    paper = [p for p in pngs if p.stem.startswith("jeannot_")]  # Figures 4-9 of that paper
    assert len(paper) == (5 if path.stem == "jeannot" else 0)
    kinds = {p.stem.split("_", 1)[1] for p in pngs if p not in paper}
    # the Pareto front of a window policy's decision, where one ran (BBSched's methods)
    assert kinds - {"pareto"} == {"forest", "wait_ecdf", "utilisation", "gantt"}
    if path.stem == "bbsched":
        assert "pareto" in kinds
    for png in pngs:
        assert _non_trivial(png), png.name
