"""Fixtures shared by the policies' tests."""

from __future__ import annotations

import pytest

from bbopt.solvers.base import register_backend, unregister_backend


@pytest.fixture
def recording_backend():
    """``install(model_type, reply)``: registers a backend ``records`` for ``model_type`` that
    keeps what a policy gives it (``budget``, ``seed``, ``options``, the model's ``size``) in
    the dict returned, and answers ``reply(model)``; unregistered after the test."""
    installed: list[type] = []
    seen: dict = {}

    def install(model_type: type, reply) -> dict:
        @register_backend(model_type, "records")
        def _records(model, budget, seed, **options):
            seen.update(budget=budget, seed=seed, options=options, size=model.size)
            return reply(model)

        installed.append(model_type)
        return seen

    yield install
    for model_type in installed:
        unregister_backend(model_type, "records")
