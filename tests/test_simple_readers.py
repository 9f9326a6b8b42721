"""Simple's column readers agree with ``read_value`` plus the validity check, value by value.

Each reader's fast test may only ever accept what the two together accept, with the same value;
everything else must come out as they decide (the same value, error text or invalid finding).
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import AbstractContextManager, nullcontext

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference._gojson import orjson_active, plain_json_only
from ticdc_conformance.reference.mysql import TYPE_CODES
from ticdc_conformance.reference.simple._readers import Invalid, column_reader
from ticdc_conformance.reference.simple._values import Raw, Unsigned, read_value
from ticdc_conformance.reference.tables import ColumnInfo
from ticdc_conformance.reference.validation import info_type
from ticdc_conformance.reference.validity import problem
from ticdc_conformance.reference.values import TimestampValue

Outcome = tuple[str, str]

_COLUMNS = [
    *(ColumnInfo(name="c", type=name) for name in TYPE_CODES),
    *(ColumnInfo(name="c", type=name, unsigned=True) for name in ("tinyint", "int", "bigint")),
    ColumnInfo(name="c", type="year", unsigned=True),
    *(ColumnInfo(name="c", type="bit", length=width) for width in (1, 8, 64)),
    ColumnInfo(name="c", type="enum", elements=("a", "b")),
    ColumnInfo(name="c", type="set", elements=("a", "b", "c")),
    ColumnInfo(name="c", type="enum", elements=()),
    *(ColumnInfo(name="c", type="decimal", length=5, decimal=scale) for scale in (0, 2)),
    *(ColumnInfo(name="c", type="decimal", length=length, decimal=2) for length in (2, 3)),
    ColumnInfo(name="c", type="decimal", length=1),
    ColumnInfo(name="c", type="decimal", decimal=3),
    *(
        ColumnInfo(name="c", type=name, decimal=fsp)
        for name in ("datetime", "timestamp")
        for fsp in (0, 3, 6, 7)
    ),
    ColumnInfo(name="c", type="date", decimal=0),
    *(ColumnInfo(name="c", type=name, length=3) for name in ("char", "varchar", "binary")),
    *(
        ColumnInfo(name="c", type=name, charset="binary", length=length)
        for name in ("varchar", "char", "text", "blob")
        for length in (None, 4)
    ),
    ColumnInfo(name="c", type="blob", charset="utf8mb4"),
    ColumnInfo(name="c", type="varchar", type_code=TYPE_CODES["int"]),
    ColumnInfo(name="c", type="int", type_code=TYPE_CODES["varchar"]),
]


def expected(column: ColumnInfo, raw: Raw, *, avro: bool) -> Outcome:
    """What ``read_value`` and the validity check make of ``raw``."""
    try:
        value = read_value(column, raw, avro=avro)
    except ValueError as error:
        return "error", str(error)
    invalid = problem(value, info_type(column, raw_text=avro)) is not None
    return ("invalid" if invalid else "value"), f"{type(value).__name__} {value!r}"


def actual(column: ColumnInfo, raw: Raw, *, avro: bool) -> Outcome:
    read = column_reader(column, info_type(column, raw_text=avro), avro=avro)
    try:
        value = read(raw)
    except ValueError as error:
        return "error", str(error)
    except Invalid as invalid:
        return "invalid", f"{type(invalid.value).__name__} {invalid.value!r}"
    return "value", f"{type(value).__name__} {value!r}"


def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text("0123456789", min_size=count, max_size=count)


_dates = st.builds(
    "{}-{}-{}".format,
    st.sampled_from(["0000", "1900", "1969", "1970", "2000", "2024", "2037", "2038"]) | _digits(4),
    st.sampled_from(["00", "01", "02", "04", "12", "13"]) | _digits(2),
    st.sampled_from(["00", "28", "29", "30", "31", "32"]) | _digits(2),
)
_clocks = st.builds(
    "{}:{}:{}{}".format,
    st.sampled_from(["00", "23", "24", "99", "838"]) | _digits(2),
    st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["00", "59", "60"]),
    st.sampled_from(["", ".", ".1", ".123", ".123456", ".1234567", "Z", "+01:00", ".1+01", " "]),
)
_datetimes = st.builds("{}{}{}".format, _dates, st.sampled_from([" ", "T"]), _clocks)
_texts = st.one_of(
    _dates,
    _datetimes,
    _clocks,
    st.from_regex(r"-?[0-9]{1,40}(\.[0-9]{0,35})?", fullmatch=True),
    st.sampled_from(["0", "-0", "255", "256", "-129", "1901", "2155", "2156", "65535", "3"]),
    st.sampled_from(["340282346638528859811704183484516925440", "1" + "0" * 309, "1e5", "+1"]),
    st.binary(max_size=8).map(lambda b: base64.b64encode(b).decode()),
    st.text("AB+/=a \n-_", max_size=10),
    st.sampled_from(['{"k": [1, 2]}', "[1e999]", "[NaN]", "{", "[[[[1]]]]", '"\\ud800"']),
    st.text(max_size=8),
    st.text("٣²a-0", max_size=4),
)
_raws: st.SearchStrategy[Raw] = st.one_of(
    _texts,
    st.sampled_from(
        [
            TimestampValue("2024-02-29 12:00:00", "UTC"),
            TimestampValue("2024-02-29 12:00:00.123", "UTC"),
            TimestampValue("1969-12-31 23:00:00", "UTC"),
            TimestampValue("2038-01-19 03:14:07.5", None),
            TimestampValue("2023-02-29 12:00:00", "UTC"),
            TimestampValue("0000-00-00 00:00:00", "UTC"),
        ]
    ),
    st.builds(
        lambda day, clock: TimestampValue(f"{day} {clock}", "UTC"),
        st.from_regex(r"(19[67]|20[0-4])[0-9]-[0-2][0-9]-[0-3][0-9]", fullmatch=True),
        st.from_regex(r"[0-2][0-9]:[0-6][0-9]:[0-6][0-9](\.[0-9]{1,6})?", fullmatch=True),
    ),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.floats(),
    st.binary(max_size=8),
    st.builds(Unsigned, st.integers(min_value=0, max_value=2**64)),
)


@settings(max_examples=2000)
@given(st.sampled_from(_COLUMNS), _raws, st.booleans())
def test_reader_agrees_with_read_value_and_the_check(
    column: ColumnInfo, raw: Raw, avro: bool
) -> None:
    assert actual(column, raw, avro=avro) == expected(column, raw, avro=avro)


def _accelerators() -> Iterator[AbstractContextManager[None]]:
    yield nullcontext()
    if orjson_active():
        yield plain_json_only()


@pytest.mark.parametrize("raw", ['{"k": [1, 2]}', "[1e999]", "[NaN]", "{", '"\\ud800"', "[" * 70])
def test_json_text_is_judged_alike_with_and_without_orjson(raw: str) -> None:
    column = ColumnInfo(name="c", type="json")
    outcomes = set()
    for block in _accelerators():
        with block:
            outcomes.add(actual(column, raw, avro=False))
    assert outcomes == {expected(column, raw, avro=False)}


def _column(name: str, **members: object) -> ColumnInfo:
    return ColumnInfo(name="c", type=name, **members)  # type: ignore[arg-type]


def _b64(size: int) -> str:
    return base64.b64encode(b"x" * size).decode()


_EDGES: list[tuple[ColumnInfo, Raw]] = [
    *((_column("tinyint"), raw) for raw in ("127", "128", "-128", "-129", "-", "")),
    *((_column("tinyint", unsigned=True), raw) for raw in ("255", "256", "-1", "-0")),
    *((_column("bit", length=8), raw) for raw in ("255", "256")),
    *((_column("enum", elements=("a", "b")), raw) for raw in ("2", "3")),
    *((_column("set", elements=("a", "b", "c")), raw) for raw in ("7", "8")),
    *((_column("year"), raw) for raw in ("0", "1900", "1901", "2155", "2156")),
    *(
        (_column("float"), raw)
        for raw in ("340282346638528859811704183484516925440", "1" + "0" * 39)
    ),
    *((_column("double"), raw) for raw in ("1" + "0" * 308, "1" + "0" * 309, "-" + "1" * 309)),
    *((_column("decimal", length=5, decimal=2), raw) for raw in ("123.45", "123.456", "1234.5")),
    *((_column("decimal", length=5, decimal=2), raw) for raw in ("0.125", "-123.45", "0123.4")),
    *((_column("decimal", length=5, decimal=2), raw) for raw in ("1.", "-1.", ".5", "--1", "1.2.")),
    *((_column("decimal", length=3, decimal=2), raw) for raw in ("1.25", "0.5", "10.5", "1")),
    *((_column("decimal", decimal=3), raw) for raw in ("1.234", "1.2345", "1" * 31, "1" * 32)),
    *((_column("decimal"), raw) for raw in ("1." + "1" * 29, "0." + "1" * 30, "1." + "1" * 31)),
    *((_column("varchar", length=3), raw) for raw in ("abc", "abcd", "ab\u00e9", "a\ufffdb")),
    *((_column("binary", length=3), raw) for raw in (_b64(3), _b64(4), "YWJj\n", "YQ")),
    *((_column("varchar", charset="binary", length=4), raw) for raw in (_b64(4), _b64(5))),
    *((_column("blob"), raw) for raw in (_b64(70), "YQ=", "=YWJj")),
    *(
        (_column("datetime", decimal=3), raw)
        for raw in ("2024-02-29 12:00:00.123", "2024-02-29 12:00:00.12")
    ),
    *(
        (_column("datetime", decimal=3), raw)
        for raw in ("2024-02-29 12:00:00", "2023-02-29 12:00:00.123", "2024-02-29 12:00:00.1234")
    ),
    *(
        (_column("datetime", decimal=0), raw)
        for raw in ("2024-02-29 23:59:59", "2024-02-29 12:00:00.1")
    ),
    *(
        (_column("datetime"), raw)
        for raw in ("2024-02-29 24:00:00", "0000-00-00 00:00:00", "2024-02-29 12:00:00.1234567")
    ),
    *((_column("datetime", decimal=7), raw) for raw in ("2024-02-29 12:00:00.1234567",)),
    *(
        (_column("date"), raw)
        for raw in ("2024-02-29", "2023-02-29", "2024-00-00", "20240229", "2024-W01")
    ),
    *(
        (_column("timestamp", decimal=fsp), TimestampValue(text, "UTC"))
        for fsp in (None, 0, 2)
        for text in (
            "1969-12-30 12:00:00",
            "2038-01-21 00:00:00",
            "1969-12-31 23:59:59",
            "1970-01-01 00:00:01",
            "2037-12-31 23:59:59.50",
            "2038-01-19 03:14:07",
        )
    ),
    *((_column("timestamp"), raw) for raw in ("2024-02-29 12:00:00", 5)),
]


@pytest.mark.parametrize(("column", "raw"), _EDGES)
def test_edges_of_the_fast_tests(column: ColumnInfo, raw: Raw) -> None:
    for avro in (False, True):
        assert actual(column, raw, avro=avro) == expected(column, raw, avro=avro)
