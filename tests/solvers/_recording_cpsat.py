"""A CP-SAT solver that keeps a copy of the model and the parameters of each solve, for tests
that read back the program a backend hands to CP-SAT (its variables' bounds, its constraints,
its workers, seed and limits)."""

from __future__ import annotations

from ortools.sat.python import cp_model


class RecordingCpSolver(cp_model.CpSolver):
    """``models`` and ``params``: a copy of each solve's model and parameters, in order;
    :meth:`record` takes them (a subclass's ``Solve`` calls it first)."""

    def __init__(self) -> None:
        super().__init__()
        self.models: list = []
        self.params: list = []

    def record(self, model: cp_model.CpModel) -> None:
        proto = type(model.Proto())()
        proto.copy_from(model.Proto())
        params = type(self.parameters)()
        params.copy_from(self.parameters)
        self.models.append(proto)
        self.params.append(params)
