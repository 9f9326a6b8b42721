"""Go's float text: encoding/json and jsoniter's floats, strconv's 'f' (reference/_gofloat.py)."""

from __future__ import annotations

import json
import math
import struct
from decimal import Decimal

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ticdc_conformance.reference._gofloat import (
    _digits,
    _positional,
    _shortest_float32,
    _shortest_float32_exact,
    format_float,
    format_float_positional,
)
from ticdc_conformance.reference._gojson import JsonStyle

GO, ITER = JsonStyle.GO_STD, JsonStyle.JSONITER


@pytest.mark.parametrize(
    ("x", "bits", "go", "jsoniter"),
    [
        (2.0, 64, "2", "2"),
        (0.1, 64, "0.1", "0.1"),
        (-0.0, 64, "-0", "-0"),
        (1e21, 64, "1e+21", "1e+21"),
        (1e20, 64, "100000000000000000000", None),
        (1e-6, 64, "0.000001", None),
        (1e-7, 64, "1e-7", "1e-07"),
        (1.5e-10, 64, "1.5e-10", None),
        (5e-324, 64, "5e-324", None),
        (1.7976931348623157e308, 64, "1.7976931348623157e+308", None),
        (153.123, 32, "153.123", None),
        (0.1, 32, "0.1", None),
        (16777217.0, 32, "16777216", None),
        (123456789.0, 32, "123456790", None),
        (3.4028234663852886e38, 32, "3.4028235e+38", None),
        (1.401298464324817e-45, 32, "1e-45", None),
        # float32(1e-6) is just below 1e-6, yet Go compares in float32 and prints 'f'
        (1e-6, 32, "0.000001", None),
        (1e21, 32, "1e+21", None),
    ],
)
def test_format_float(x: float, bits: int, go: str, jsoniter: str | None) -> None:
    assert format_float(x, bits, GO) == go
    assert format_float(x, bits, ITER) == (jsoniter or go)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float64_reads_back(x: float) -> None:
    text = format_float(x, 64, GO)
    # large magnitudes print as digits without a point, which JSON reads as an integer
    assert float(json.loads(text)) == x
    assert math.copysign(1, float(text)) == math.copysign(1, x)


def _f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


@given(st.floats(width=32, allow_nan=False, allow_infinity=False).filter(lambda x: x != 0))
def test_float32_is_shortest_that_reads_back(x: float) -> None:
    text = format_float(x, 32, GO)
    assert _f32(float(text)) == x
    digits = Decimal(text).normalize().as_tuple().digits
    if len(digits) > 1:  # one digit fewer, correctly rounded, must not read back
        shorter = float(f"{Decimal(x):.{len(digits) - 2}e}")
        assert _f32(shorter) != x or abs(shorter - x) > abs(float(text) - x)


@given(st.floats(width=32, min_value=0, exclude_min=True, allow_infinity=False))
def test_float32_fast_path_agrees_with_the_exact_one(x: float) -> None:
    assert _shortest_float32(x) == _shortest_float32_exact(x)


@example(1e-4)
@example(9.999999999999999e-5)
@example(1e16)
@example(9999999999999998.0)
@example(-2.0)
@given(st.floats(min_value=1e-5, max_value=1e17) | st.floats(min_value=-1e17, max_value=-1e-5))
def test_a_double_near_one_prints_as_the_digit_path_does(x: float) -> None:
    # between 1e-6 and 1e21 Go writes the shortest digits without an exponent
    expected = ("-" if x < 0 else "") + _positional(*_digits(x, 64))
    for style in JsonStyle:
        assert format_float(x, 64, style) == expected


@given(st.integers(min_value=1, max_value=2**24 - 1))
def test_float32_whole_numbers_agree_with_the_exact_path(n: int) -> None:
    assert _shortest_float32(float(n)) == _shortest_float32_exact(float(n))


@pytest.mark.parametrize("n", [1, 2, 3, 10, 1000, 1024, 2**23 - 1, 2**23, 2**23 + 1, 2**24 - 1])
def test_float32_whole_numbers_and_powers_of_two(n: int) -> None:
    assert _shortest_float32(float(n)) == _shortest_float32_exact(float(n)) == n


@pytest.mark.parametrize(
    ("value", "bits", "text"),
    [
        (1e21, 64, "1000000000000000000000"),
        (1e-7, 64, "0.0000001"),
        (90.5, 32, "90.5"),
        (153.123, 32, "153.123"),
        (0.1, 32, "0.1"),
        (-0.0, 64, "-0"),
        (2.5e-5, 64, "0.000025"),
        (float("nan"), 64, "NaN"),
        (float("-inf"), 32, "-Inf"),
        (3.4028234663852886e38, 32, "340282350000000000000000000000000000000"),
    ],
)
def test_format_float_positional_is_go_f_minus_one(value: float, bits: int, text: str) -> None:
    assert format_float_positional(value, bits) == text


@example(1)
@example(-16777215)
@given(st.integers(min_value=-(2**24) + 1, max_value=2**24 - 1).filter(bool))
def test_a_whole_float32_prints_as_the_digit_path_does(n: int) -> None:
    expected = ("-" if n < 0 else "") + _positional(*_digits(float(abs(n)), 32))
    for style in JsonStyle:
        assert format_float(float(n), 32, style) == expected == str(n)
