"""The value-validity checks: one table of valid and one of invalid values per type family."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG, ColumnInfo
from ticdc_conformance.reference.validity import FLOAT32_MAX, ColumnType, describe, problem
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

T = ColumnType
ENUM = T("enum", elements=("a", "b", "c"))
SET = T("set", elements=("a", "b", "c"))

VALID: list[tuple[str, Value, ColumnType]] = [
    ("tinyint-min", -128, T("tinyint", unsigned=False)),
    ("tinyint-unsigned-max", 255, T("tinyint", unsigned=True)),
    ("int-either-sign", 4294967295, T("int")),
    ("bigint-unsigned-max", 2**64 - 1, T("bigint", unsigned=True)),
    ("mediumint-min", -(2**23), T("mediumint", unsigned=False)),
    ("year-zero", 0, T("year")),
    ("year-min", 1901, T("year")),
    ("year-max", 2155, T("year")),
    ("bit-1", 1, T("bit", length=1)),
    ("bit-64", 2**64 - 1, T("bit")),
    ("enum-invalid-member-zero", 0, ENUM),
    ("enum-last", 3, ENUM),
    ("enum-name", "b", ENUM),
    ("set-all", 7, SET),
    ("float-max", FLOAT32_MAX, T("float")),
    ("float-shortest-max", 3.4028235e38, T("float")),
    ("double-big", 1e300, T("double")),
    ("decimal-65", DecimalValue("9" * 35 + "." + "9" * 30), T("decimal")),
    ("decimal-declared", DecimalValue("-12345.67"), T("decimal", length=7, scale=2)),
    ("decimal-as-double", 1.5, T("decimal")),
    ("date-zero", "0000-00-00", T("date")),
    ("date-zero-in-date", "2020-00-15", T("date")),
    ("date-leap", "2024-02-29", T("date")),
    ("date-max", "9999-12-31", T("date")),
    ("datetime-fsp", "2020-01-01 23:59:59.123", T("datetime", scale=3)),
    ("datetime-zero", "0000-00-00 00:00:00", T("datetime")),
    ("timestamp-zero", TimestampValue("0000-00-00 00:00:00"), T("timestamp")),
    ("timestamp-debezium-zero", TimestampValue("1970-01-01 00:00:00", "UTC"), T("timestamp")),
    ("timestamp-max", TimestampValue("2038-01-19 03:14:07"), T("timestamp")),
    ("time-max", "838:59:59", T("time")),
    ("time-min", "-838:59:59.000000", T("time", scale=6)),
    ("text", "héllo", T("varchar")),
    ("text-raw-bytes", b"\xff\xfe", T("varchar", raw_text=True)),
    ("char-length", "ab", T("char", length=2)),
    # two bytes not UTF-8 in a VARCHAR(1), written by Go's JSON as a U+FFFD each
    ("varchar-replaced-bytes", "\x00\ufffd", T("varchar", length=1)),
    ("binary", b"\x00\xff", T("varbinary", length=2)),
    ("json", '{"a": [1, 2.5, null]}', T("json")),
    ("vector", "[1,2.5,-3]", T("vector")),
    ("null", None, T("tinyint", unsigned=True)),
]

INVALID: list[tuple[str, Value, ColumnType, str]] = [
    ("tinyint-300", 300, T("tinyint", unsigned=False), "outside -128..127"),
    ("tinyint-unsigned-negative", -1, T("tinyint", unsigned=True), "outside 0..255"),
    ("int-2-32", 2**32, T("int"), "both the signed and the unsigned"),
    ("bigint-2-64", 2**64, T("bigint", unsigned=True), "outside"),
    ("year-1900", 1900, T("year"), "1901..2155"),
    ("year-2156", 2156, T("year"), "1901..2155"),
    ("bit-width", 2, T("bit", length=1), "1 bits"),
    ("bit-negative", -1, T("bit"), "64 bits"),
    ("enum-index", 4, ENUM, "0..3"),
    ("enum-name", "d", ENUM, "not a member"),
    ("set-bits", 8, SET, "3 members"),
    ("float-inf", math.inf, T("float"), "not finite"),
    ("float-float32", 1e39, T("float"), "float32"),
    ("double-nan", math.nan, T("double"), "not finite"),
    ("decimal-40-decimals", DecimalValue("1." + "1" * 40), T("decimal"), "at most 65 and 30"),
    ("decimal-66-digits", DecimalValue("9" * 66), T("decimal"), "at most 65 and 30"),
    ("decimal-scale", DecimalValue("1.234"), T("decimal", length=10, scale=2), "decimals"),
    ("decimal-precision", DecimalValue("123.4"), T("decimal", length=3, scale=1), "integer"),
    ("date-month-13", "2024-13-01", T("date"), "date TiDB holds"),
    ("date-feb-30", "2020-02-30", T("date"), "date TiDB holds"),
    ("date-not-leap", "2023-02-29", T("date"), "date TiDB holds"),
    ("date-text", "2020-1-1", T("date"), "YYYY-MM-DD"),
    ("datetime-hour", "2020-01-01 24:00:00", T("datetime"), "time of day"),
    ("datetime-fsp", "2020-01-01 00:00:00.1", T("datetime", scale=3), "fsp is 3"),
    ("datetime-7-digits", "2020-01-01 00:00:00.1234567", T("datetime"), "6 fractional"),
    ("timestamp-2024-13-45", TimestampValue("2024-13-45 00:00:00"), T("timestamp"), "date"),
    ("timestamp-1960", TimestampValue("1960-01-01 00:00:00"), T("timestamp"), "range"),
    ("timestamp-2040", TimestampValue("2040-01-01 00:00:00"), T("timestamp"), "range"),
    ("time-839", "839:00:00", T("time"), "838:59:59"),
    ("time-fraction", "838:59:59.5", T("time"), "838:59:59"),
    ("time-minutes", "10:60:00", T("time"), "above 59"),
    ("text-surrogate", "\ud800", T("varchar"), "Unicode"),
    ("text-bytes", b"\xff", T("varchar"), "UTF-8"),
    ("varchar-length", "ab", T("varchar", length=1), "2 characters"),
    ("varchar-replaced-bytes", "\ufffd" * 5, T("varchar", length=1), "5 characters"),
    ("json-open", "{", T("json"), "not valid JSON"),
    ("json-nan", "NaN", T("json"), "not valid JSON"),
    ("vector-inf", "[1,inf]", T("vector"), "float32"),
    ("integer-as-text", "1", T("int"), "not an integer"),
]


@pytest.mark.parametrize(("value", "ctype"), [c[1:] for c in VALID], ids=[c[0] for c in VALID])
def test_valid_values_pass(value: Value, ctype: ColumnType) -> None:
    assert problem(value, ctype) is None


@pytest.mark.parametrize(
    ("value", "ctype", "why"), [c[1:] for c in INVALID], ids=[c[0] for c in INVALID]
)
def test_invalid_values_are_named(value: Value, ctype: ColumnType, why: str) -> None:
    reason = problem(value, ctype)
    assert reason is not None
    assert why in reason


@pytest.mark.parametrize(
    ("type_code", "flags", "expected"),
    [
        (1, UNSIGNED_FLAG | BINARY_FLAG, T("tinyint", unsigned=True, raw_text=True)),
        (3, BINARY_FLAG, T("int", unsigned=False, raw_text=True)),
        (3, None, T("int", raw_text=True)),
        (15, BINARY_FLAG, T("varbinary", unsigned=False, raw_text=True)),
        (15, 0, T("varchar", unsigned=False, raw_text=True)),
        (253, 0, T("varchar", unsigned=False, raw_text=True)),
        (14, 0, T("date", unsigned=False, raw_text=True)),
        (200, 0, None),
    ],
)
def test_type_from_code_and_flags(type_code: int, flags: int | None, expected: object) -> None:
    assert ColumnType.of_code(type_code, flags, raw_text=True) == expected


@pytest.mark.parametrize(
    ("column", "expected"),
    [
        (ColumnInfo(name="c", type="decimal", length=10, decimal=2), "decimal(10,2)"),
        (ColumnInfo(name="c", type="char", length=2, charset="binary"), "binary(2)"),
        (ColumnInfo(name="c", type="datetime", decimal=3), "datetime(3)"),
        (ColumnInfo(name="c", type="int", unsigned=True, length=10), "int unsigned"),
        (ColumnInfo(name="c", type="bit", length=5), "bit(5)"),
    ],
)
def test_type_from_a_table_schema(column: ColumnInfo, expected: str) -> None:
    assert str(ColumnType.of_column(column, raw_text=False)) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tinyint unsigned", T("tinyint", unsigned=True)),
        ("tinyint", T("tinyint")),
        ("year", T("year", unsigned=False)),
        ("geometry", T("geometry", unsigned=False)),
        ("nonsense", None),
    ],
)
def test_type_from_a_name(text: str, expected: object) -> None:
    assert ColumnType.of_name(text, raw_text=False) == expected


def test_describe_keeps_messages_short() -> None:
    assert describe(-(2**14300)) == "an integer of 14301 bits"
    assert describe(2**64) == "18446744073709551616"
    assert describe("x" * 200).endswith("...")
    assert len(describe("x" * 200)) == 80
    assert describe(DecimalValue("1.5")) == "'1.5'"


@given(st.integers(-(2**70), 2**70), st.sampled_from(["tinyint", "smallint", "int", "bigint"]))
def test_integer_check_agrees_with_the_width(value: int, name: str) -> None:
    bits = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}[name]
    signed = -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
    unsigned = 0 <= value < 2**bits
    assert (problem(value, T(name, unsigned=False)) is None) == signed  # type: ignore[arg-type]
    assert (problem(value, T(name, unsigned=True)) is None) == unsigned  # type: ignore[arg-type]
    assert (problem(value, T(name)) is None) == (signed or unsigned)  # type: ignore[arg-type]


@given(st.floats(width=32, allow_nan=False, allow_infinity=False))
def test_every_finite_float32_is_a_float(value: float) -> None:
    assert problem(value, T("float")) is None


@given(st.floats())
def test_float_check_is_the_float32_range(value: float) -> None:
    fits = math.isfinite(value) and abs(value) <= FLOAT32_MAX * (1 + 2**-24)
    assert (problem(value, T("float")) is None) == fits


@given(st.dates())
def test_every_calendar_date_is_valid(value: object) -> None:
    assert problem(str(value).rjust(10, "0"), T("date")) is None


@given(st.text())
def test_text_check_is_utf8_encodability(value: str) -> None:
    try:
        value.encode()
        encodable = True
    except UnicodeEncodeError:
        encodable = False
    assert (problem(value, T("text")) is None) == encodable


@given(st.integers(-(10**6), 10**6), st.integers(0, 10))
def test_decimal_check_counts_digits(units: int, scale: int) -> None:
    digits = str(abs(units)).rjust(scale + 1, "0")
    text = ("-" if units < 0 else "") + digits[: len(digits) - scale]
    if scale:
        text += "." + digits[len(digits) - scale :]
    whole = len(digits[: len(digits) - scale].lstrip("0"))
    fits = whole <= 4 and scale <= 4
    assert (problem(DecimalValue(text), T("decimal", length=8, scale=4)) is None) == fits
