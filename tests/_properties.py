"""Example budgets of the property tests: the cheap properties (pure functions, microseconds per
example) search more examples than Hypothesis's default, and more again under the ``slow``
profile (tests/conftest.py)."""

from __future__ import annotations

from hypothesis import settings

#: For properties whose example costs well under a millisecond.
CHEAP = settings(max_examples=max(500, settings.default.max_examples), deadline=None)
