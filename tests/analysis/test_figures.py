"""Frames, timeline, intervals and figures: what is drawn is what was simulated."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import bbopt
from bbopt.analysis.frames import from_jobs_csv, metrics_frame, timeline, to_pandas, utilisation
from bbopt.analysis.intervals import interval_table, log_ratio_interval, t_interval
from bbopt.workloads.synthetic import kth_like

pytest.importorskip("matplotlib")
from bbopt.analysis import figures  # noqa: E402


@pytest.fixture(scope="module")
def run():
    return bbopt.simulate(kth_like(400, seed=3), bbopt.Platform.kopanski(), "fcfs-bb")


def test_to_pandas_matches_summarize_and_the_csv(run, tmp_path):
    f = to_pandas(run)
    m = bbopt.summarize(run)
    assert len(f) == len(run)
    assert f["wait"].mean() == pytest.approx(m["mean_wait"])
    assert f["bounded_slowdown"].mean() == pytest.approx(m["mean_bounded_slowdown"])
    back = from_jobs_csv(pd.read_csv(run.to_csv(tmp_path / "j.csv"), dtype={"job_id": str}))
    for col in ("submit", "start", "end", "nodes", "bb", "wait"):
        np.testing.assert_allclose(back[col].to_numpy(float), f[col].to_numpy(float))
    assert list(back["allocation"]) == list(f["allocation"])
    mf = metrics_frame({"a": run, "b": run})
    assert list(mf.index) == ["a", "b"] and mf.loc["a", "mean_wait"] == m["mean_wait"]


def test_timeline_utilisation_equals_summarize(run):
    tl = timeline(run)
    m = bbopt.summarize(run)
    f = to_pandas(run)
    t0, t1 = f["submit"].min(), f["end"].max()
    assert utilisation(tl, run.platform.nodes, "nodes", t0, t1) == pytest.approx(
        m["node_utilization"], rel=1e-12)
    assert utilisation(tl, run.platform.bb, "bb", t0, t1) == pytest.approx(
        m["bb_utilization"], rel=1e-9)
    # events of one instant: ends before starts, so the use never exceeds the machine
    assert tl["nodes"].max() <= run.platform.nodes
    assert tl["bb"].max() <= run.platform.bb * (1 + 1e-12)
    assert tl["queued"].min() >= 0 and tl["queued"].iloc[-1] == 0
    assert np.all(np.diff(tl["time"]) > 0)


def test_timeline_orders_ends_before_starts_at_one_instant():
    # job b starts exactly when a ends, on a 4-node machine where both need all nodes
    jobs = [bbopt.Job("a", 0, 100, 100, nodes=4), bbopt.Job("b", 0, 100, 100, nodes=4)]
    res = bbopt.simulate(jobs, bbopt.Platform(4, 0.0), "fcfs")
    tl = timeline(res)
    assert list(tl["time"]) == [0.0, 100.0, 200.0]
    assert list(tl["nodes"]) == [4, 4, 0]
    assert list(tl["queued"]) == [1, 0, 0]


def test_gantt_draws_one_patch_per_started_job_covering_its_nodes(run):
    fig = figures.gantt(run)
    coll = fig.axes[0].collections[0]
    paths = coll.get_paths()
    f = to_pandas(run)
    started = f[f["start"].notna()]
    assert len(paths) == len(started)
    area = 0.0
    for p, (_, job) in zip(paths, started.iterrows(), strict=True):
        v = p.vertices
        assert v[:, 0].min() == pytest.approx(job["start"] / figures.DAY)
        assert v[:, 0].max() == pytest.approx(job["end"] / figures.DAY)
        rects = v.reshape(-1, 5, 2)
        area += float(np.sum(rects[:, 2, 1] - rects[:, 0, 1])) * (job["end"] - job["start"])
    assert area == pytest.approx(float(np.sum(started["nodes"] * (started["end"] -
                                                                  started["start"]))))
    figures.close(fig)


def test_gantt_without_allocations_packs_jobs_in_free_nodes(run):
    f = to_pandas(run).assign(allocation="")
    fig = figures.gantt(f, run.platform.nodes)
    paths = fig.axes[0].collections[0].get_paths()
    assert len(paths) == f["start"].notna().sum()
    assert max(p.vertices[:, 1].max() for p in paths) <= run.platform.nodes
    figures.close(fig)


def test_intervals():
    x = np.array([0.5, 1.0, 2.0, 4.0])
    g, lo, hi = log_ratio_interval(x)
    m, tlo, thi = t_interval(np.log(x))
    assert (g, lo, hi) == pytest.approx((math.exp(m), math.exp(tlo), math.exp(thi)))
    assert g == pytest.approx(math.sqrt(2))  # geometric mean of 0.5, 1, 2, 4
    long = pd.DataFrame({"metric": "w", "policy": ["r"] * 4 + ["p"] * 4, "unit": list(range(4)) * 2,
                         "value": [1.0] * 4 + x.tolist(), "normalised": [1.0] * 4 + x.tolist()})
    t = interval_table(long).set_index("policy")
    assert t.loc["p", "mean"] == pytest.approx(1.875)
    assert t.loc["p", "boot_low"] <= 1.875 <= t.loc["p", "boot_high"]
    assert t.loc["p", "values"] == x.tolist()
    assert interval_table(long).equals(interval_table(long))  # seeded bootstrap


def test_forest_and_ecdf_and_utilisation_figures(run, tmp_path):
    long = pd.DataFrame({"metric": "w", "policy": ["r"] * 3 + ["p"] * 3, "unit": [0, 1, 2] * 2,
                         "value": 1.0, "normalised": [1, 1, 1, 0.8, 1.3, 1.1]})
    fig = figures.forest_plot(interval_table(long), reference="r", path=tmp_path / "f.png")
    assert len(fig.axes[0].get_yticklabels()) == 2
    fig2 = figures.wait_ecdf({"fcfs-bb": run}, path=tmp_path / "e.png")
    line = fig2.axes[0].get_lines()[0]
    assert line.get_ydata()[-1] == pytest.approx(1.0)
    assert len(line.get_xdata()) == int(to_pandas(run)["wait"].notna().sum())
    fig3 = figures.utilisation_plot({"fcfs-bb": run}, run.platform.nodes, run.platform.bb,
                                    path=tmp_path / "u.png")
    for name in ("f.png", "e.png", "u.png"):
        assert (tmp_path / name).stat().st_size > 10_000
    figures.close([fig, fig2, fig3])


def test_pareto_plot_marks_the_chosen_alternative():
    caught = []
    bbopt.simulate(kth_like(300, seed=1), bbopt.Platform.kopanski(), "bbsched",
                   on_decision=lambda s, d: caught.append(d) if len(d.alternatives) > 1
                   else None)
    assert caught, "no decision with several Pareto alternatives"
    d = max(caught, key=lambda d: len(d.alternatives))
    fig = figures.pareto_plot(d)
    ax = fig.axes[0]
    front, star = ax.collections
    chosen = [a for a in d.alternatives if a["chosen"]]
    assert len(chosen) == 1
    names = list(chosen[0]["objectives"])
    assert names[:2] == ["nodes", "bb"]  # drawn in nodes and GB, on axes from zero
    assert star.get_offsets().tolist() == [[chosen[0]["objectives"]["nodes"],
                                            chosen[0]["objectives"]["bb"] / 1e9]]
    assert ax.get_xlim()[0] == 0 and ax.get_ylim()[0] == 0
    assert ax.get_ylabel() == "BB started [GB]" and ax.get_xlabel() == "nodes started"
    assert len(front.get_offsets()) == len(d.alternatives) - 1
    figures.close(fig)


def test_result_to_pandas_is_the_frame_of_its_own_records(run, tmp_path):
    f = run.to_pandas()
    pd.testing.assert_frame_equal(f, to_pandas(run))
    assert f.attrs == to_pandas(run).attrs == {
        "policy": run.policy, "workload": run.workload_name,
        "platform_nodes": run.platform.nodes, "platform_bb": run.platform.bb}
    # the same numbers as the record's own jobs.csv (which writes -1 for rejected jobs)
    csv = pd.read_csv(run.to_csv(tmp_path / "j.csv"), dtype={"job_id": str})
    ran = f["start"].notna().to_numpy()
    assert (~ran).any() and ran.sum() > 300  # both kinds are compared
    np.testing.assert_allclose(f["bounded_slowdown"][ran], csv["bounded_slowdown"][ran],
                               rtol=1e-12)
    np.testing.assert_allclose(f["wait"][ran], csv["waiting_time"][ran], rtol=1e-12)
    assert (csv["final_state"][~ran] == "REJECTED").all()
    assert list(f["allocation"]) == list(csv["allocated_resources"].fillna(""))
    for k in range(0, len(run), 37):
        job = run.jobs[k]
        assert f.loc[k, "job_id"] == job.id and f.loc[k, "nodes"] == job.nodes
        assert f.loc[k, "start"] == run.start[k] and f.loc[k, "end"] == run.end[k]


def test_result_to_pandas_leaves_rejected_and_dropped_jobs_without_times():
    from bbopt.simulation.checkpoint import CheckpointRestart
    from bbopt.workloads.generators.catalog import apply

    jobs = apply("omfs-preemption", apply("omfs-entities", apply(
        "kth-like", None, 1, n_jobs=150, nodes=32, load=1.3), 2, by="random", n_entities=3,
        shares="equal"), 3, preemptable=1.0, checkpointable=0.0)
    res = bbopt.simulate(jobs, bbopt.Platform(nodes=32, bb=160e9), "omfs",
                         options={"shares": {"e0": 1 / 3, "e1": 1 / 3, "e2": 1 / 3},
                                  "quantum": 0},
                         execution=CheckpointRestart())
    f = res.to_pandas()
    dropped = f["state"] == "dropped"
    assert dropped.any()  # preempted jobs that cannot checkpoint are dropped (Algorithm 1)
    assert f.loc[dropped, ["start", "end", "wait"]].isna().all().all()
    ran = f["state"].isin(["finished", "killed"])
    assert f.loc[ran, "wait"].notna().all()
    assert f.loc[ran, "wait"].mean() == pytest.approx(bbopt.summarize(res)["mean_wait"])
