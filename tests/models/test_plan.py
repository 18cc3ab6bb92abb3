"""Kopanski & Rzadca's plan score (Section 3.3, Eq. 1): the sum over the waiting jobs of
``wait ** alpha``, each wait counted from the job's submission (not from the decision), on
values that separate it from the square of the sum, a wait counted from now, or another
exponent."""

from __future__ import annotations

import pytest

from bbopt.core import Job
from bbopt.models.plan import PlanModel


def _model(alpha: float) -> PlanModel:
    # now = 100; one node, busy until 110; a (submitted at 90) and b (at 60), 10 s each
    jobs = [Job("a", 90.0, 10.0, nodes=1), Job("b", 60.0, 10.0, nodes=1)]
    return PlanModel(100.0, (1, 0.0), [(110.0, 1, 0.0)], jobs, alpha=alpha)


@pytest.mark.parametrize("alpha,a_first,b_first", [
    # a first: a starts at 110 (waits 20), b at 120 (waits 60); b first: b waits 50, a 30
    (1, 20 + 60, 50 + 30),
    (2, 20**2 + 60**2, 50**2 + 30**2),
    (3, 20**3 + 60**3, 50**3 + 30**3),
    (1.5, 20**1.5 + 60**1.5, 50**1.5 + 30**1.5),
])
def test_score_is_the_sum_of_waits_since_submission_to_the_power_alpha(alpha, a_first, b_first):
    model = _model(alpha)
    assert model.evaluate([0, 1]) == pytest.approx(a_first, rel=1e-12)
    assert model.evaluate([1, 0]) == pytest.approx(b_first, rel=1e-12)


def test_the_order_that_minimises_the_score_depends_on_alpha():
    # alpha = 1: both orders wait 80 s in total; a higher alpha serves the older b first
    assert _model(1).evaluate([0, 1]) == _model(1).evaluate([1, 0]) == 80.0
    assert _model(2).evaluate([1, 0]) < _model(2).evaluate([0, 1])


def test_a_job_that_starts_at_its_submission_adds_nothing():
    jobs = [Job("a", 100.0, 10.0, nodes=1)]
    assert PlanModel(100.0, (1, 0.0), [], jobs, alpha=2).evaluate([0]) == 0.0
