"""Reading an SWF with Kopanski's BB model drawn on the reader's columns (the jobs built once)
gives the jobs of drawing on the jobs read (read, then copied with their BB), for every way
``read_workload`` draws: auto or lognormal, with or without the generator's rules, any seed."""

import pytest

from bbopt.core import Platform
from bbopt.loading import read_workload
from bbopt.workloads import bb as bb_module
from bbopt.workloads import swf
from bbopt.workloads.bb import KopanskiRules

LINE = "{id} {submit} -1 {run} {n} -1 -1 {n} {wall} -1 1 3 1 -1 -1 -1 -1 -1\n"


def _both(path, monkeypatch, **kw):
    fast = read_workload(path, **kw)
    with monkeypatch.context() as m:  # no draw on the columns: the jobs read, then copied
        m.setattr(swf, "read_swf", lambda p, draw_bb=None, _real=swf.read_swf, **k: _real(p, **k))
        slow = read_workload(path, **kw)
    assert fast.jobs is not slow.jobs
    return fast, slow


@pytest.mark.parametrize("bb", ["auto", "lognormal", "none"])
@pytest.mark.parametrize("rules", [True, False])
@pytest.mark.parametrize("seed", [0, 7])
def test_kth_same_jobs(kth_swf, monkeypatch, bb, rules, seed):
    fast, slow = _both(kth_swf, monkeypatch, bb=bb, bb_rules=rules, seed=seed,
                       platform=Platform.kopanski())
    assert fast.jobs == slow.jobs
    assert [j.bb for j in fast.jobs] == [j.bb for j in slow.jobs]
    assert fast.skipped == slow.skipped
    assert (bb == "none") == all(j.bb == 0 for j in fast.jobs)


def test_file_with_bb_and_named_rules(tmp_path, monkeypatch):
    """A CQSim file's own BB is kept under auto and replaced under lognormal; the rules of named
    BB nodes, and a short job (walltime <= 120 s), as when drawn on the jobs."""
    rows = "".join(LINE.format(id=k, submit=k, run=50, n=1 + k % 7, wall=60 + 40 * k)
                   for k in range(1, 30))
    plain = tmp_path / "plain.swf"
    plain.write_text("; MaxNodes: 96\n" + rows)
    with_bb = tmp_path / "bb.swf"
    with_bb.write_text("; MaxNodes: 96\n; BurstBuffer: 480\n" + "".join(
        line + f" {k % 3}\n" for k, line in enumerate(rows.splitlines())))
    named = Platform.kopanski(named_bb=True)
    for path, bb in ((plain, "auto"), (with_bb, "auto"), (with_bb, "lognormal")):
        fast, slow = _both(path, monkeypatch, bb=bb, platform=named)
        assert [(j.id, j.bb) for j in fast.jobs] == [(j.id, j.bb) for j in slow.jobs]
    assert [j.bb for j in read_workload(with_bb, bb="auto").jobs][:3] == [0.0, 1e9, 2e9]


def test_rules_of_a_subclass_see_whole_jobs(kth_swf):
    class Doubled(KopanskiRules):
        def per_node(self, job, drawn):
            return 2 * super().per_node(job, drawn)

    assert bb_module.lognormal_bb_column([1, 2], [60.0, 600.0], 0, rules=Doubled()) is None
