"""Bandwidths as the platform and topology files write them, read into bytes per second."""

from __future__ import annotations

import math

import pytest

from bbopt.errors import InputError
from bbopt.topology import parse_bandwidth


def test_bandwidths_with_units_in_bytes_per_second():
    assert parse_bandwidth("216 GB/s") == 216e9
    assert parse_bandwidth("18MB/s") == 18e6
    assert parse_bandwidth("1 GiB/s") == 1024.0 ** 3
    assert parse_bandwidth(5) == 5.0 and parse_bandwidth(2.5) == 2.5
    assert parse_bandwidth(1e-9) == 1e-9  # just above the bound of 0, which is refused


def test_no_bandwidth_is_unbounded():
    for value in (None, "inf", "unlimited", "Infinity"):
        assert parse_bandwidth(value) == math.inf


@pytest.mark.parametrize("value", [0, -1.0, "0 MB/s", float("nan"), True, "fast"])
def test_a_bandwidth_must_be_a_positive_quantity(value):
    with pytest.raises(InputError) as caught:
        parse_bandwidth(value, "pfs")
    assert caught.value.field == "pfs"
