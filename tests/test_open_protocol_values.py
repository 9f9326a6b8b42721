"""Every column type both ways, both profiles: value → exact ``v`` bytes → decoded value.

The table is ground truth §2.5 (per-type encoding) with §1.4 (each profile's JSON writer).
Each case puts one column ``c`` next to an integer primary key ``id``; tiflow sorts the two by
name (``c`` first), ticdc keeps table order (``id`` first).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from types import EllipsisType
from typing import Any

import pytest
from helpers import frame
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    DecodedColumn,
    DecodedRow,
    EncodeError,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    open_protocol,
)
from ticdc_conformance.reference._gojson import JsonStyle
from ticdc_conformance.reference.mysql import TYPE_CODES, MySQLType
from ticdc_conformance.reference.open_protocol._columns import write_value
from ticdc_conformance.reference.tables import UNSIGNED_FLAG


def f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


@dataclass(frozen=True)
class Case:
    id: str
    column: dict[str, Any]
    value: Value
    flags: int
    wire: str
    """JSON text of ``v`` for profile tiflow."""
    wire_ticdc: str | None = None
    """JSON text of ``v`` for profile ticdc when it differs."""
    decoded: Value | EllipsisType = ...
    """Decoded value when it differs from ``value`` (for tiflow)."""
    decoded_ticdc: Value | EllipsisType = ...


PNG = b"\x89PNG\r\n\x1a\n"
CASES = [
    Case("tinyint-min", {"type": "tinyint"}, -128, 65, "-128"),
    Case("tinyint-unsigned-max", {"type": "tinyint", "unsigned": True}, 255, 193, "255"),
    Case("smallint-min", {"type": "smallint"}, -32768, 65, "-32768"),
    Case("mediumint-min", {"type": "mediumint"}, -8388608, 65, "-8388608"),
    Case("int-min", {"type": "int"}, -2147483648, 65, "-2147483648"),
    Case("bigint-min", {"type": "bigint"}, -(2**63), 65, "-9223372036854775808"),
    Case(
        "bigint-unsigned-max",
        {"type": "bigint", "unsigned": True},
        2**64 - 1,
        193,
        "18446744073709551615",
    ),
    Case(
        "bigint-unsigned-2-63",
        {"type": "bigint", "unsigned": True},
        2**63,
        193,
        "9223372036854775808",
    ),
    # FLOAT is printed with 32-bit shortest digits; decoders read the text back as float64,
    # as TiCDC's own decoder does, so a consumer sees 153.123, not 153.1230010986328.
    Case(
        "float-32-bit-shortest",
        {"type": "float"},
        f32(153.123),
        65,
        "153.123",
        decoded=153.123,
        decoded_ticdc=153.123,
    ),
    Case("float-whole-number", {"type": "float"}, 2.0, 65, "2"),
    Case("float-exponent-cleanup", {"type": "float"}, 1e-7, 65, "1e-7", "1e-07"),
    Case("double-1e21", {"type": "double"}, 1e21, 65, "1e+21"),
    Case(
        "double-below-1e21", {"type": "double"}, 1.2345678901234568e20, 65, "123456789012345680000"
    ),
    Case("double-negative-zero", {"type": "double"}, -0.0, 65, "-0"),
    Case("double-tenth", {"type": "double"}, 0.1, 65, "0.1"),
    Case(
        "decimal-keeps-scale",
        {"type": "decimal", "decimal": 7},
        DecimalValue("129012.1230000"),
        65,
        '"129012.1230000"',
    ),
    Case("bit", {"type": "bit", "length": 10}, 341, 65, "341"),
    # BIT is a uint64 in TiCDC's value model (§1.1) although TiDB sets no UNSIGNED flag
    Case("bit-64-max", {"type": "bit", "length": 64}, 2**64 - 1, 65, "18446744073709551615"),
    Case("enum-index", {"type": "enum", "elements": ("a", "b", "c")}, 1, 64, "1"),
    Case("set-bitmask", {"type": "set", "elements": ("a", "b", "c")}, 3, 64, "3"),
    Case("year", {"type": "year"}, 2000, 65, "2000"),
    Case("date", {"type": "date"}, "2000-01-01", 65, '"2000-01-01"'),
    Case(
        "datetime-fsp",
        {"type": "datetime", "decimal": 3},
        "2020-01-01 12:00:00.123",
        65,
        '"2020-01-01 12:00:00.123"',
    ),
    Case(
        "timestamp-zone-not-carried",
        {"type": "timestamp"},
        TimestampValue("1973-12-30 15:30:00", "Asia/Shanghai"),
        65,
        '"1973-12-30 15:30:00"',
        decoded=TimestampValue("1973-12-30 15:30:00", None),
        decoded_ticdc=TimestampValue("1973-12-30 15:30:00", None),
    ),
    Case("time-negative-over-24h", {"type": "time"}, "-838:59:59", 65, '"-838:59:59"'),
    Case("json-as-string", {"type": "json"}, '{"key1": "value1"}', 65, r'"{\"key1\": \"value1\"}"'),
    Case("varchar-plain-utf8", {"type": "varchar"}, "aa", 64, '"aa"'),
    Case("varchar-html", {"type": "varchar"}, "<a&b>", 64, r'"\u003ca\u0026b\u003e"', '"<a&b>"'),
    Case("varchar-line-separator", {"type": "varchar"}, "\u2028", 64, r'"\u2028"', '"\u2028"'),
    Case(
        "varchar-control",
        {"type": "varchar"},
        "\b\f\x01\t\x7f",
        64,
        '"\\b\\f\\u0001\\t\x7f"',
        '"\\u0008\\u000c\\u0001\\t\x7f"',
    ),
    Case("char-cjk", {"type": "char"}, "测", 64, '"测"'),
    Case(
        "varchar-invalid-utf8",
        {"type": "varchar"},
        b"a\xffb",
        64,
        r'"a\ufffdb"',
        '"a\udcffb"',
        decoded="a\ufffdb",
        decoded_ticdc=b"a\xffb",
    ),
    Case("binary-go-quoted", {"type": "binary"}, PNG, 65, r'"\\x89PNG\\r\\n\\x1a\\n"'),
    Case("varbinary-quote-backslash", {"type": "varbinary"}, b'"\\', 65, r'"\\\"\\\\"'),
    Case("varbinary-html", {"type": "varbinary"}, b"<&>", 65, r'"\u003c\u0026\u003e"', '"<&>"'),
    Case("varbinary-printable-rune", {"type": "varbinary"}, "é".encode(), 65, '"é"'),
    Case("varbinary-nonprintable-rune", {"type": "varbinary"}, "\u00a0".encode(), 65, r'"\\u00a0"'),
    Case("text-is-base64", {"type": "text"}, "测试text", 64, '"5rWL6K+VdGV4dA=="'),
    Case("blob-base64", {"type": "blob"}, b"\x00\xff", 65, '"AP8="'),
    Case("longtext-base64", {"type": "longtext"}, "", 64, '""'),
    Case("vector-as-string", {"type": "vector"}, "[1,2,3,4,5]", 65, '"[1,2,3,4,5]"'),
    Case("null", {"type": "int"}, None, 65, "null"),
    Case("null-type", {"type": "null"}, None, 65, "null"),
]

ID = ColumnInfo(name="id", type="int", key="primary")
ID_WIRE = '"id":{"t":3,"h":true,"f":11,"v":1}'


def _table(case: Case) -> TableInfo:
    return TableInfo(schema="test", name="t", columns=(ID, ColumnInfo(name="c", **case.column)))


def _wire(case: Case, profile: str) -> tuple[bytes, bytes]:
    column = ColumnInfo(name="c", **case.column)
    v = case.wire_ticdc if profile == "ticdc" and case.wire_ticdc is not None else case.wire
    c_wire = f'"c":{{"t":{column.effective_type_code},"f":{case.flags},"v":{v}}}'
    if profile == "tiflow":
        key = '{"ts":1,"scm":"test","tbl":"t","rid":1,"t":1}'
        value = f'{{"u":{{{c_wire},{ID_WIRE}}}}}'
    else:
        key = '{"ts":1,"scm":"test","tbl":"t","t":1}'
        value = f'{{"u":{{{ID_WIRE},{c_wire}}}}}'
    return key.encode(), value.encode("utf-8", "surrogateescape")


def _decoded(case: Case, profile: str) -> DecodedRow:
    expected = case.decoded_ticdc if profile == "ticdc" else case.decoded
    value = case.value if isinstance(expected, EllipsisType) else expected
    table = _table(case)
    c = DecodedColumn(
        name="c",
        value=value,
        type_code=table.columns[1].effective_type_code,
        flags=case.flags,
        handle_key=False,
    )
    id_ = DecodedColumn(name="id", value=1, type_code=3, flags=11, handle_key=True)
    return DecodedRow(
        commit_ts=1,
        schema="test",
        table="t",
        op="insert",
        before=None,
        after=(c, id_) if profile == "tiflow" else (id_, c),
        row_id=1 if profile == "tiflow" else None,
    )


PARAMS = [
    pytest.param(case, profile, id=f"{case.id}-{profile}")
    for case in CASES
    for profile in ("tiflow", "ticdc")
]


@pytest.mark.parametrize(("case", "profile"), PARAMS)
def test_encode_writes_exact_bytes(case: Case, profile: str) -> None:
    event = RowChangedEvent(commit_ts=1, table=_table(case), op="insert", after=(1, case.value))
    config = open_protocol.Config(profile=profile)  # type: ignore[arg-type]
    key, value = _wire(case, profile)
    assert open_protocol.encode([event], config) == [frame([key], [value])]


@pytest.mark.parametrize(("case", "profile"), PARAMS)
def test_decode_reads_exact_value(case: Case, profile: str) -> None:
    key, value = _wire(case, profile)
    assert open_protocol.decode(frame([key], [value])) == [_decoded(case, profile)]


@pytest.mark.parametrize(
    ("column", "value"),
    [
        ({"type": "int"}, "1"),
        ({"type": "tinyint", "unsigned": True}, -1),
        ({"type": "bigint"}, 2**63),
        ({"type": "decimal"}, "1.5"),
        ({"type": "float"}, "x"),
        ({"type": "null"}, 1),
        ({"type": "geometry"}, b"\x00"),
        ({"type": "date"}, 20200101),
        ({"type": "blob"}, 1),
    ],
    ids=repr,
)
def test_encode_rejects_values_that_do_not_fit(column: dict[str, Any], value: Value) -> None:
    table = TableInfo(schema="s", name="t", columns=(ColumnInfo(name="c", **column),))
    event = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(value,))
    with pytest.raises(EncodeError, match=r"open: event 0: column 'c': "):
        open_protocol.encode([event])


@given(
    st.integers(min_value=-(2**65), max_value=2**65) | st.sampled_from([0, 2**63 - 1, 2**63]),
    st.sampled_from([0, UNSIGNED_FLAG, 65, 193]),
    st.sampled_from(["bigint", "int", "year", "bit", "enum", "set"]),
)
def test_an_integer_is_written_as_its_digits_when_it_fits(
    value: int, flags: int, mysql_type: MySQLType
) -> None:
    # the writer's shortcut for 0 <= value < 2**63 must give what the range check gives
    unsigned = bool(flags & UNSIGNED_FLAG) or mysql_type in ("bit", "enum", "set")
    fits = value in (range(2**64) if unsigned else range(-(2**63), 2**63))
    code = TYPE_CODES[mysql_type]
    if fits:
        assert write_value(code, value, flags, JsonStyle.GO_STD) == str(value)
    else:
        with pytest.raises(ValueError, match="does not fit"):
            write_value(code, value, flags, JsonStyle.GO_STD)
