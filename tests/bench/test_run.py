"""``bbopt bench run`` and ``report`` on a few small instances: the grid, the store (resumed
runs are skipped), the recorded values, and the report's tables and figures."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from bbopt.bench.instances import LIBRARY, read_instance
from bbopt.bench.report import load_runs, report
from bbopt.bench.run import run_tier, solve_one, tasks
from bbopt.cli import main

_NAMES = sorted(p.stem for p in (LIBRARY / "small").glob("*.json"))
_WINDOW = next(n for n in _NAMES if n.startswith("window-kth") and n.endswith("weighted"))
#: a weighted window, the Pareto instance of the same state, a victim choice
PICKS = [_WINDOW, _WINDOW.replace("weighted", "pareto"),
         next(n for n in _NAMES if n.startswith("victims"))]


@pytest.fixture(scope="module")
def tier(tmp_path_factory):
    d = tmp_path_factory.mktemp("tier")
    for name in PICKS:
        shutil.copy(LIBRARY / "small" / f"{name}.json", d)
    return d


def test_the_grid_runs_seeded_backends_per_seed_and_the_others_once(tier):
    grid = tasks(tier, budgets=[0.5], seeds=2, backend_names=["cpsat", "greedy", "scip"])
    per = {}
    for path, _, backend, _, seed in grid:
        per.setdefault((path.rsplit("/", 1)[1], backend), []).append(seed)
    assert per[(f"{PICKS[2]}.json", "cpsat")] == [0, 1]
    assert per[(f"{PICKS[2]}.json", "greedy")] == [0]
    assert len(grid) == 3 * (2 + 1 + 2)


def test_run_resume_and_report(tier, tmp_path):
    store = tmp_path / "store"
    every = ["cpsat", "greedy", "milp", "scip", "highs", "nsga2"]
    summary = run_tier(tier, store, budgets=[0.5], seeds=1, backends=every, workers=1)
    assert summary.startswith("16 runs") and "error" not in summary  # 6 + 6 + 4
    assert run_tier(tier, store, budgets=[0.5], seeds=1, backends=every,
                    workers=1).startswith("0 runs")
    runs = {(r["instance"], r["backend"]): r for r in load_runs(store)}
    for name in PICKS:
        inst = read_instance(tier / f"{name}.json")
        r = runs[(name, "cpsat")]
        assert r["status"] == "OPTIMAL"
        if inst.problem == "window":
            assert runs[(name, "nsga2")]["status"] == "FEASIBLE"
        if inst.kind == "pareto":
            assert r["hv_ratio"] == pytest.approx(1.0)
            assert r["front"] == inst.known["front"]
        else:
            assert r["objective"] == pytest.approx(inst.known["objective"])
            assert r["gap"] == 0.0 and r["trace"][-1][1] == pytest.approx(r["objective"])
    greedy = runs[(PICKS[2], "greedy")]
    known = read_instance(tier / f"{PICKS[2]}.json").known["objective"]
    assert greedy["objective"] >= known
    files = report(store, tmp_path / "report")
    names = {p.name for p in files}
    assert {"profiles-small.png", "gap-small.png", "hv-ecdf-small.png", "tables.md"} <= names
    md = (tmp_path / "report" / "tables.md").read_text()
    assert "| window-weighted | cpsat | 1 | 1 | 1 | 0 | 0 |" in md
    assert "agree on 3 of 3 instances" in md  # cpsat, milp, highs, scip: one value each
    assert "| victims-min-cost | greedy | 0/" in md  # the rule proves nothing


def test_annealing_on_a_plan_order_traces_its_best_so_far_down_to_its_answer():
    inst = max((read_instance(LIBRARY / "small" / f"{n}.json") for n in _NAMES
                if n.startswith("plan-kth-small")), key=lambda i: i.size)
    assert inst.size > 5  # beyond the annealing's own exhaustive search
    r = solve_one(inst, "annealing", 5.0, 0)
    values = [v for _, v in r["trace"]]
    times = [t for t, _ in r["trace"]]
    assert r["status"] == "FEASIBLE" and values[-1] == r["objective"]
    assert times == sorted(times) and all(np.diff(values) < 0)  # each entry an improvement
    assert values[0] == min(inst.score(o) for _, o in inst.model.candidates())  # best candidate
    assert r["objective"] >= inst.known["objective"]
    exact = solve_one(inst, "exhaustive", 5.0, 0)
    assert exact["status"] == "OPTIMAL" and exact["gap"] == 0.0
    assert exact["objective"] == pytest.approx(inst.known["objective"], rel=1e-12)


def test_the_gap_figure_has_a_panel_for_plan_orders(tmp_path, monkeypatch):
    from bbopt.bench import report as rep

    drawn = []
    panels = rep._panels

    def counted(plt, n):
        drawn.append(n)
        return panels(plt, n)

    monkeypatch.setattr(rep, "_panels", counted)
    runs = [{"problem": p, "form": f, "instance": f"{p}-i", "backend": "greedy", "budget": 1.0,
             "seed": 0, "trace": [[0.1, 1.0]], "objective": 1.0, "status": "FEASIBLE",
             "wall_time": 0.1} for p, f in (("plan", "min-score"), ("window", "pareto"),
                                            ("victims", "min-cost"))]
    rep.gap_figure(runs, {"plan-i": 1.0, "victims-i": 1.0}, None)
    assert drawn == [2]  # plan orders and victims: the scalar models, not the Pareto one


def test_the_plan_grid_runs_annealing_per_seed_and_exhaustive_once(tmp_path):
    pooled = next(n for n in _NAMES if n.startswith("plan-kth-small"))
    shutil.copy(LIBRARY / "small" / f"{pooled}.json", tmp_path)
    assert {b for _, _, b, _, _ in tasks(tmp_path, budgets=[1.0], seeds=1)} == {
        "annealing", "cpsat", "exhaustive", "greedy"}
    (tmp_path / f"{pooled}.json").unlink()
    name = next(n for n in _NAMES if n.startswith("plan-kth-named"))
    shutil.copy(LIBRARY / "small" / f"{name}.json", tmp_path)
    grid = tasks(tmp_path, budgets=[0.1, 1.0], seeds=3)
    per = {}
    for _, _, backend, budget, seed in grid:
        per.setdefault(backend, set()).add((budget, seed))
    # CP-SAT too: the BB-pool relaxation's order placed on the nodes, with its bound
    assert set(per) == {"annealing", "cpsat", "exhaustive", "greedy"}
    assert len(per["annealing"]) == 6 and len(per["cpsat"]) == 6
    assert len(per["exhaustive"]) == 2


def test_the_cli_reports_a_missing_store_without_a_traceback(tmp_path, capsys):
    code = main(["bench", "report", str(tmp_path / "nothing")])
    assert code != 0
    assert "no such results directory" in capsys.readouterr().err
