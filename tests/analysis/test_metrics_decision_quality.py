"""The decision-quality rows of a run's metrics (:func:`bbopt.analysis.metrics.decision_quality`,
read with C-level maps over tens of thousands of decision statistics) count what a plain loop
over the decisions counts."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from bbopt.analysis.metrics import decision_quality
from bbopt.core import SolveStats, Status


class _Run:
    """The part of a simulation result that decision_quality reads."""

    def __init__(self, stats: list[SolveStats]) -> None:
        self.decision_stats = stats


stats_of = st.builds(
    SolveStats, backend=st.just("rule"), status=st.sampled_from(list(Status)),
    gap=st.one_of(st.none(), st.floats(0, 1)), audited=st.booleans())


@settings(max_examples=200, deadline=None)
@given(st.lists(stats_of, max_size=40))
def test_counts_what_a_loop_counts(stats):
    got = decision_quality(_Run(stats))
    assert got["decisions_fallback"] == sum(1 for s in stats if s.status is Status.FALLBACK)
    gaps = [s.gap for s in stats if s.audited and s.gap is not None]
    assert got["decisions_audited"] == len(gaps)
    if gaps:
        assert got["decision_gap_mean"] == float(np.mean(gaps))
        assert got["decision_gap_max"] == max(gaps)
        assert got["decisions_optimal_share"] == float(np.mean(np.asarray(gaps) <= 1e-9))
    else:
        assert "decision_gap_mean" not in got


def test_fallbacks_and_audits_of_a_known_run():
    fell = SolveStats("cpsat", Status.FALLBACK, audited=True, gap=0.25)
    exact = SolveStats("cpsat", Status.OPTIMAL, audited=True, gap=0.0)
    own_gap = SolveStats("anneal", Status.FEASIBLE, gap=0.5)  # not an audit: not counted
    got = decision_quality(_Run([fell, exact, own_gap, fell]))
    assert got["decisions_fallback"] == 2
    assert got["decisions_audited"] == 3
    assert got["decision_gap_max"] == 0.25
    assert got["decisions_optimal_share"] == 1 / 3
