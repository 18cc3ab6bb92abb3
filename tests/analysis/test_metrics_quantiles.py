"""The run metrics' median and percentiles (written out so that a summary does not import
``numpy.ma``) are numpy's, bit for bit."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bbopt.analysis.metrics import _median, _percentile

samples = st.lists(st.one_of(st.floats(-1e12, 1e12, allow_nan=False),
                             st.sampled_from([0.0, 1.0, 2.5, 3600.0])), min_size=1, max_size=60)


@settings(max_examples=500, deadline=None)
@given(samples, st.sampled_from([0, 1, 5, 25, 50, 95, 99, 99.9, 100]))
@example([0.0, -0.0, 0.0, 0.0, -0.0], 95)  # which zero lands at an index: numpy's partition
def test_percentile_is_numpys(values, q):
    v = np.array(values)
    assert _percentile(v, q) == float(np.percentile(v, q))
    assert np.signbit(_percentile(v, q)) == np.signbit(np.percentile(v, q))


@settings(max_examples=300, deadline=None)
@given(samples)
@example([0.0, -0.0, 0.0, 0.0, -0.0, -0.0])
@example([-0.0, 0.0, -0.0])
def test_median_is_numpys(values):
    v = np.array(values)
    assert _median(v) == float(np.median(v))
    assert np.signbit(_median(v)) == np.signbit(np.median(v))


def test_large_arrays():
    rng = np.random.default_rng(3)
    for n in (1000, 1001, 28453):
        v = rng.lognormal(8, 2, n)
        for q in (50, 95):
            assert _percentile(v, q) == float(np.percentile(v, q))
        assert _median(v) == float(np.median(v))
