"""Go JSON text: strings and floats as encoding/json and jsoniter write them (§1.4)."""

from __future__ import annotations

import json
import math
import struct
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference._gojson import (
    GoJsonReader,
    JsonStyle,
    _shortest_float32,
    _shortest_float32_exact,
    format_float,
    format_float_positional,
    from_json_text,
    quote,
    to_bytes,
)

GO, ITER = JsonStyle.GO_STD, JsonStyle.JSONITER


@pytest.mark.parametrize(
    ("data", "go", "jsoniter"),
    [
        ("plain", '"plain"', '"plain"'),
        ('"\\', r'"\"\\"', r'"\"\\"'),
        ("\n\r\t", r'"\n\r\t"', r'"\n\r\t"'),
        ("\b\f", r'"\b\f"', r'"\u0008\u000c"'),
        ("\x00\x1f", r'"\u0000\u001f"', r'"\u0000\u001f"'),
        ("\x7f", '"\x7f"', '"\x7f"'),
        ("<>&", r'"\u003c\u003e\u0026"', '"<>&"'),
        ("\u2028\u2029", r'"\u2028\u2029"', '"\u2028\u2029"'),
        ("é测😀", '"é测😀"', '"é测😀"'),
        (b"a\xffb", r'"a\ufffdb"', '"a\udcffb"'),
        (b"\xe2\x82A", r'"\ufffd\ufffdA"', '"\udce2\udc82A"'),  # one U+FFFD per invalid byte
        ("\ud800", r'"\ufffd\ufffd\ufffd"', '"\udced\udca0\udc80"'),
    ],
)
def test_quote(data: str | bytes, go: str, jsoniter: str) -> None:
    assert quote(data, GO) == go
    assert quote(data, ITER) == jsoniter


def test_jsoniter_keeps_invalid_bytes_raw() -> None:
    assert to_bytes(quote(b"\xff", ITER)) == b'"\xff"'


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


def _same(a: object, b: object) -> bool:
    """Equal, and of the same type and sign all the way down (``0 == -0.0`` is not enough)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(
    ("text", "document"),
    [
        ("-0", -0.0),
        ("[-0, 0, -0.0, -0e0, -1, -10]", [-0.0, 0, -0.0, -0.0, -1, -10]),
        ('{"v": -0}', {"v": -0.0}),
        ('{"v":-0,"w":"a-0"}', {"v": -0.0, "w": "a-0"}),
        ('["2021-01-02", -0.5, 10]', ["2021-01-02", -0.5, 10]),  # no number -0: plain scan
        ('"-0"', "-0"),
        ("18446744073709551615", 2**64 - 1),
    ],
)
def test_reader_keeps_the_sign_of_negative_zero(text: str, document: object) -> None:
    assert _same(GoJsonReader().decode(text), document)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "-Infinity", '{"v": -0, "w": NaN}'])
def test_reader_refuses_what_go_never_writes(text: str) -> None:
    with pytest.raises(ValueError, match="is not a JSON value"):
        GoJsonReader().decode(text)


@pytest.mark.parametrize("text", ["-01", "-", "[-0,]", "--0"])
def test_reader_raises_json_errors(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        GoJsonReader().decode(text)


@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([GO, ITER]))
def test_reader_reads_back_every_float_it_is_given(x: float, style: JsonStyle) -> None:
    text = f"[{format_float(x, 64, style)}]"
    document = GoJsonReader().decode(text)
    assert isinstance(document, list)
    assert isinstance(document[0], int | float)
    assert _same(float(document[0]), x)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("plain", "plain"),
        ("caf\u00e9", "caf\u00e9"),
        (b"\xff\xfe".decode("utf-8", "surrogateescape"), b"\xff\xfe"),  # raw bytes, kept
        ("\ud800", b"\xed\xa0\x80"),  # an escaped lone surrogate: its surrogatepass bytes
        ("a\udfffb", b"a\xed\xbf\xbfb"),
    ],
)
def test_json_text_that_is_not_unicode_becomes_bytes(text: str, value: str | bytes) -> None:
    assert from_json_text(text) == value
