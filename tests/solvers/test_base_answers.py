"""Reading a MILP solver's 0-1 answer (:func:`bbopt.solvers.base.binary_answer`): values within
the integrality tolerance of 0 or 1 are a choice, a fractional point is no answer (CBC without
preprocessing once returned one as optimal: the pack stage read as an empty pack)."""

from __future__ import annotations

import pytest

from bbopt.solvers.base import INTEGRALITY, binary_answer


def test_values_near_zero_and_one_are_a_choice():
    assert binary_answer([1.0, 0.0, None, -0.0, 1 - INTEGRALITY, INTEGRALITY]).tolist() == [
        True, False, False, False, True, False]


@pytest.mark.parametrize("value", [0.45, 0.95, 2 * INTEGRALITY, 1 - 2 * INTEGRALITY, 0.5])
def test_a_fractional_value_is_no_answer(value):
    assert binary_answer([1.0, value]) is None
