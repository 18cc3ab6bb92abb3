"""Bandwidths as the platform and topology files write them, read into bytes per second."""

from __future__ import annotations

import math

import pytest

from bbopt.errors import InputError
from bbopt.resources import format_bandwidth, parse_bandwidth, parse_bytes


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


def test_a_size_or_bandwidth_not_read_names_its_default_field_and_the_units():
    with pytest.raises(InputError) as caught:
        parse_bytes("fast")
    assert caught.value.field == "bytes"
    assert caught.value.reason == ("cannot read 'fast'; use a number with a unit among "
                                   "b, kb, mb, gb, tb, pb, kib, mib, gib, tib, pib")
    with pytest.raises(InputError) as caught:
        parse_bandwidth("fast")
    assert caught.value.field == "bandwidth"
    with pytest.raises(InputError) as caught:
        parse_bandwidth(True)
    assert caught.value.reason == "cannot read True as a bandwidth"
    with pytest.raises(InputError) as caught:
        parse_bandwidth("0 MB/s")
    assert caught.value.reason == "bandwidth must be positive, got '0 MB/s'"


def test_an_integer_past_every_float_is_refused_with_its_count_of_digits():
    """10^400 has 401 digits: its 1,329 bits times log10(2), floored, plus one."""
    for value, digits in ((10**400, 401), (2**1100, 332)):
        with pytest.raises(InputError) as caught:
            parse_bytes(value, "bb")
        assert caught.value.reason == f"is too large: an integer of about {digits} digits"
        assert len(str(value)) == digits
    assert parse_bytes(10**300) == 1e300  # (an integer a float holds is read)


def test_spaces_inside_a_bandwidth_and_every_name_of_no_limit():
    assert parse_bandwidth("18 M B / s") == 18e6
    assert parse_bandwidth(" 1 G i B/s ") == 1024.0**3
    for value in ("inf", "infinite", "INFINITE", "infinity", "unlimited", "un limited"):
        assert parse_bandwidth(value) == math.inf


@pytest.mark.parametrize(("x", "text"), [
    (2.16e11, "216 GB/s"), (1e9, "1 GB/s"), (999_999_999.0, "1000 MB/s"), (1e6, "1 MB/s"),
    (12_345_678.0, "12.35 MB/s"), (1e3, "1 kB/s"), (1500.0, "1.5 kB/s"), (999.0, "999 B/s"),
    (0.5, "0.5 B/s"), (-2e9, "-2 GB/s"), (math.inf, "inf"), (float("nan"), "inf"),
])
def test_a_bandwidth_in_messages_takes_the_largest_unit_it_reaches(x, text):
    """Thresholds at 1e9, 1e6, 1e3 B/s: at each the larger unit, just below it the smaller."""
    assert format_bandwidth(x) == text
