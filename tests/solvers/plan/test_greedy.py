"""The plan model's ``greedy`` backend: the submission-order plan (Kopanski & Rzadca, Section
3.3), called directly, so that what it answers is seen before the solver contract fills in
the backend's name and the wall time."""

from bbopt.core import Job, Status
from bbopt.models.plan import Plan, PlanModel
from bbopt.solvers import Budget
from bbopt.solvers.plan import greedy


class _Clock:
    """A clock that advances 0.25 s at each look."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        self.now += 0.25
        return self.now


def test_greedy_answers_the_submission_order_plan_with_one_evaluation(monkeypatch):
    """4 nodes, one job on 2 of them until t=100: in submission order the 4-node job ``w``
    waits 100 s and holds back both 1-node jobs until 200 (100**2 + 2 * 200**2); the search
    order that puts ``w`` last would score 150**2, but greedy does not search."""
    jobs = [Job("w", 0, walltime=100, nodes=4), Job("a", 0, walltime=150, nodes=1),
            Job("b", 0, walltime=150, nodes=1)]
    model = PlanModel(0.0, (4, 0.0), [(100.0, 2, 0.0)], jobs, alpha=2)
    monkeypatch.setattr(greedy, "_time", _Clock())
    res = greedy.solve_greedy(model, Budget(5))
    assert res.status is Status.FEASIBLE
    assert res.solution == Plan((100.0, 200.0, 200.0), (0, 1, 2))
    assert res.objective == 100.0**2 + 2 * 200.0**2 == 90_000.0
    assert res.backend == "greedy"
    assert res.info == {"evaluations": 1}
    # (one look at the clock before the plan, one after: 0.25 s between them)
    assert res.wall_time == 0.25
