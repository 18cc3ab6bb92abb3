"""jobs.csv written while the run goes (:class:`bbopt.simulation.result.JobsCsvStream`): the
same bytes as ``SimulationResult.to_csv``, rows already on their way to the file before the
run ends, written whole at the end for a run with preemption columns, and ``bbopt simulate
--out`` writing it under a temporary name renamed when complete."""

from __future__ import annotations

import io

from bbopt import Job, Platform, simulate
from bbopt.cli import main
from bbopt.simulation.checkpoint import CheckpointRestart
from bbopt.simulation.result import JobsCsvStream
from bbopt.workloads.synthetic import kth_like


def _streamed(jobs, platform, policy, **kw):
    fh = io.StringIO(newline="")
    stream = JobsCsvStream(fh)
    progress = []
    res = simulate(jobs, platform, policy, on_job_end=stream.ended,
                   on_decision=lambda s, d: progress.append(stream.next), **kw)
    stream.close(res)
    return res, fh.getvalue(), progress


def test_streamed_rows_equal_to_csv_and_come_during_the_run(tmp_path):
    jobs = kth_like(400, seed=1)
    for policy in ("fcfs-bb", "conservative-bb"):
        res, text, progress = _streamed(jobs, Platform.kopanski(), policy)
        assert text.encode() == res.to_csv(tmp_path / "ref.csv").read_bytes()
        assert progress == sorted(progress)  # rows only ever added, in the jobs' order
        assert 0 < progress[len(progress) // 2] < len(jobs)  # half-way, some rows are out


def test_rejected_jobs_and_late_ends_keep_the_order(tmp_path):
    """Job 0 runs long, 1 is rejected at once, 2 ends early: rows wait for job 0."""
    jobs = [Job("0", 0, 100, 100, 1), Job("1", 1, 10, 10, 9), Job("2", 2, 5, 5, 1)]
    res, text, progress = _streamed(jobs, Platform(4), "fcfs")
    assert text.encode() == res.to_csv(tmp_path / "ref.csv").read_bytes()
    assert text.splitlines()[1].startswith("0,") and "REJECTED" in text.splitlines()[2]


def test_a_run_with_preemption_columns_is_written_whole(tmp_path):
    b = Job("b", 0.0, 3000.0, 5000.0, 4, user="B", preemptable=True, checkpointable=True)
    a = Job("a", 2000.0, 1000.0, 1000.0, 2, user="A", preemptable=True)
    model = CheckpointRestart(memory_per_node=1e9, pfs_bandwidth=1e7)
    res, text, _ = _streamed([b, a], Platform(nodes=4), "omfs", execution=model,
                             options={"shares": {"A": 0.5, "B": 0.0}, "quantum": 1000.0})
    assert res.preemption
    assert text.encode() == res.to_csv(tmp_path / "ref.csv").read_bytes()
    assert "lost_work" in text.splitlines()[0]


def test_simulate_out_writes_the_same_csv(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["simulate", "--jobs", "300", "--policy", "sjf-bb", "--out", str(out),
                 "--no-progress"]) == 0
    written = (out / "sjf-bb_jobs.csv").read_bytes()
    from bbopt.loading import read_workload

    w = read_workload(None, n_jobs=300, seed=0, bb="lognormal", platform=Platform.kopanski())
    res = simulate(w.jobs, Platform.kopanski(), "sjf-bb", workload_name=w.name)
    assert written == res.to_csv(tmp_path / "ref.csv").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == ["sjf-bb_jobs.csv", "summary.json"]
