"""Every column type both ways (ground truth §5.3): field schema, payload text, decoded value.

Each case is a column, a value, the field schema TiCDC writes for it (with
enable-tidb-extension, so that ``tidb_type`` is pinned too), the payload value's JSON text
and what the decoder gives back. Expected texts are worked out by hand from the rules of §5.3
and Go's time functions, not taken from the encoder.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field

import pytest

from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    DecodedRow,
    IndexInfo,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    debezium,
)
from ticdc_conformance.reference.validation import unchecked_values


@dataclass(frozen=True)
class Case:
    name: str
    column: ColumnInfo
    value: Value
    schema: dict[str, object]
    """The field schema after tidb_type, without ``field`` and ``default``."""
    text: str
    """The payload value's JSON text."""
    decoded: Value
    ambiguity: str | None = None
    zone: str = "UTC"
    tidb_type: str = ""
    """Expected ``tidb_type`` (the column type name when empty)."""
    options: dict[str, object] = field(default_factory=dict)


def c(mysql_type: str, **metadata: object) -> ColumnInfo:
    return ColumnInfo(name="c", type=mysql_type, **metadata)  # type: ignore[arg-type]


def t(schema_type: str, name: str | None = None, **more: object) -> dict[str, object]:
    out: dict[str, object] = {"type": schema_type, "optional": True}
    if name is not None:
        out.update(name=name, version=1)
    return {**out, **more}


BITS = "io.debezium.data.Bits"
DATE, TS, MTS = (
    "io.debezium.time.Date",
    "io.debezium.time.Timestamp",
    "io.debezium.time.MicroTimestamp",
)
ZONED, MTIME = "io.debezium.time.ZonedTimestamp", "io.debezium.time.MicroTime"
DT = "2023-11-30 12:34:56"

CASES = [
    Case("bit1-true", c("bit", length=1), 1, t("boolean"), "true", 1),
    Case("bit1-false", c("bit", length=1), 0, t("boolean"), "false", 0),
    Case(
        "bit5", c("bit", length=5), 16, t("bytes", BITS, parameters={"length": "5"}), '"EA=="', 16
    ),
    Case(
        "bit9-little-endian",
        c("bit", length=9),
        0x1FF,
        t("bytes", BITS, parameters={"length": "9"}),
        '"/wE="',
        0x1FF,
    ),
    Case(
        "bit64-max",
        c("bit", length=64),
        2**64 - 1,
        t("bytes", BITS, parameters={"length": "64"}),
        '"//////////8="',
        2**64 - 1,
    ),
    Case("tinyint", c("tinyint"), -128, t("int16"), "-128", -128),
    Case(
        "tinyint-unsigned",
        c("tinyint", unsigned=True),
        255,
        t("int16"),
        "255",
        255,
        tidb_type="tinyint unsigned",
    ),
    Case(
        "smallint-unsigned",
        c("smallint", unsigned=True),
        65535,
        t("int32"),
        "65535",
        65535,
        tidb_type="smallint unsigned",
    ),
    Case("mediumint", c("mediumint"), -8388608, t("int32"), "-8388608", -8388608),
    Case(
        "int-unsigned",
        c("int", unsigned=True),
        4294967295,
        t("int64"),
        "4294967295",
        4294967295,
        tidb_type="int unsigned",
    ),
    Case("bigint-min", c("bigint"), -(2**63), t("int64"), str(-(2**63)), -(2**63)),
    Case(
        "bigint-unsigned-max",
        c("bigint", unsigned=True),
        2**64 - 1,
        t("int64"),
        "-1",
        2**64 - 1,
        tidb_type="bigint unsigned",
    ),
    Case(
        "bigint-unsigned-wraps",
        c("bigint", unsigned=True),
        2**63,
        t("int64"),
        str(-(2**63)),
        2**63,
        tidb_type="bigint unsigned",
    ),
    Case(
        "bigint-unsigned-int64-max",
        c("bigint", unsigned=True),
        2**63 - 1,
        t("int64"),
        str(2**63 - 1),
        2**63 - 1,
        tidb_type="bigint unsigned",
    ),
    Case("float-32-bit-digits", c("float"), 12345.12345, t("float"), "12345.123", 12345.123),
    Case("float-m-d-is-double", c("float", length=10, decimal=2), 1.5, t("double"), "1.5", 1.5),
    Case("double", c("double"), 0.1, t("double"), "0.1", 0.1),
    Case("double-exponent-not-cleaned", c("double"), 1e-7, t("double"), "1e-07", 1e-7),
    Case(
        "decimal-as-double",
        c("decimal", length=13, decimal=7),
        DecimalValue("129012.1230000"),
        t("double"),
        "129012.123",
        129012.123,
        "decimal-as-double",
    ),
    Case("date", c("date"), "2023-11-30", t("int32", DATE), "19691", "2023-11-30"),
    Case("date-before-epoch", c("date"), "1000-01-01", t("int32", DATE), "-354285", "1000-01-01"),
    # two-digit years: 0018 is written as 2018 (§5.3), which the decoder cannot undo
    Case("date-year-18", c("date"), "0018-01-01", t("int32", DATE), "17532", "2018-01-01"),
    Case("date-year-99", c("date"), "0099-12-31", t("int32", DATE), "10956", "1999-12-31"),
    Case("date-zero-nullable", c("date"), "0000-00-00", t("int32", DATE), "null", None),
    Case(
        "date-zero-not-null",
        c("date", nullable=False),
        "0000-00-00",
        {**t("int32", DATE), "optional": False},
        "0",
        "1970-01-01",
    ),
    Case("date-month-zero", c("date"), "2023-00-10", t("int32", DATE), "null", None),
    Case("datetime-ms", c("datetime", decimal=0), DT, t("int64", TS), "1701347696000", DT),
    Case(
        "datetime-fsp3-before-epoch",
        c("datetime", decimal=3),
        "1969-12-31 23:59:59.999",
        t("int64", TS),
        "-1",
        "1969-12-31 23:59:59.999",
    ),
    Case(
        "datetime-fsp4-micro",
        c("datetime", decimal=4),
        DT + ".1235",
        t("int64", MTS),
        "1701347696123500",
        DT + ".123500",
    ),
    Case(
        "datetime-zero",
        c("datetime", decimal=6),
        "0000-00-00 00:00:00.000000",
        t("int64", MTS),
        "null",
        None,
    ),
    Case(
        "datetime-year-69",
        c("datetime", decimal=0),
        "0069-01-01 00:00:00",
        t("int64", TS),
        "3124224000000",
        "2069-01-01 00:00:00",
    ),
    Case(
        "timestamp-utc",
        c("timestamp", decimal=5),
        TimestampValue(DT + ".12346", "UTC"),
        t("string", ZONED),
        '"2023-11-30T12:34:56.12346Z"',
        TimestampValue(DT + ".12346", "UTC"),
    ),
    Case(
        "timestamp-zone",
        c("timestamp", decimal=0),
        TimestampValue("2023-11-30 20:34:56"),
        t("string", ZONED),
        '"2023-11-30T12:34:56Z"',
        TimestampValue(DT, "UTC"),
        zone="Asia/Shanghai",
    ),
    # Go's time.Date: a wall time in the spring-forward gap takes the later offset (EDT)
    Case(
        "timestamp-dst-gap",
        c("timestamp", decimal=0),
        TimestampValue("2023-03-12 02:30:00"),
        t("string", ZONED),
        '"2023-03-12T06:30:00Z"',
        TimestampValue("2023-03-12 06:30:00", "UTC"),
        zone="America/New_York",
    ),
    # ... and a wall time in the fall-back fold the first one (still EDT)
    Case(
        "timestamp-dst-fold",
        c("timestamp", decimal=0),
        TimestampValue("2023-11-05 01:30:00"),
        t("string", ZONED),
        '"2023-11-05T05:30:00Z"',
        TimestampValue("2023-11-05 05:30:00", "UTC"),
        zone="America/New_York",
    ),
    Case(
        "timestamp-zero",
        c("timestamp", decimal=0),
        TimestampValue("0000-00-00 00:00:00"),
        t("string", ZONED),
        '"1970-01-01T00:00:00Z"',
        TimestampValue("1970-01-01 00:00:00", "UTC"),
    ),
    Case(
        "timestamp-below-min",
        c("timestamp", decimal=3),
        TimestampValue("1970-01-01 00:00:00.999"),
        t("string", ZONED),
        '"1970-01-01T00:00:00Z"',
        TimestampValue("1970-01-01 00:00:00", "UTC"),
    ),
    Case(
        "time-max",
        c("time", decimal=0),
        "838:59:59",
        t("int64", MTIME),
        "3020399000000",
        "838:59:59",
    ),
    Case(
        "time-negative",
        c("time", decimal=6),
        "-12:34:56.123456",
        t("int64", MTIME),
        "-45296123456",
        "-12:34:56.123456",
    ),
    Case(
        "time-half-second",
        c("time", decimal=1),
        "-00:00:00.5",
        t("int64", MTIME),
        "-500000",
        "-00:00:00.500000",
    ),
    Case("year", c("year"), 2023, t("int32", "io.debezium.time.Year"), "2023", 2023),
    Case("year-zero", c("year"), 0, t("int32", "io.debezium.time.Year"), "0", 0),
    Case("char", c("char", length=10), "foo", t("string"), '"foo"', "foo"),
    Case("varchar-utf8", c("varchar", length=10), "测试<&>", t("string"), '"测试<&>"', "测试<&>"),
    Case("text", c("text"), "a\nb", t("string"), '"a\\nb"', "a\nb"),
    Case("binary-base64", c("binary", length=2), b"\x00\xff", t("string"), '"AP8="', b"\x00\xff"),
    Case("varbinary", c("varbinary", length=8), b"foo", t("string"), '"Zm9v"', b"foo"),
    Case("blob", c("blob"), b"foo", t("string"), '"Zm9v"', b"foo"),
    Case(
        "longtext-binary-charset",
        c("longtext", charset="binary"),
        b"\x01",
        t("string"),
        '"AQ=="',
        b"\x01",
        tidb_type="longblob",
    ),
    Case(
        "enum-escaped",
        c("enum", elements=("a", "b,c", "it''s")),
        2,
        t("string", "io.debezium.data.Enum", parameters={"allowed": "a,b\\,c,it's"}),
        '"b,c"',
        2,
    ),
    Case(
        "enum-trailing-backslash",  # \, separates here: a single member ',0' holds no '0'
        c("enum", elements=("\\", "0")),
        2,
        t("string", "io.debezium.data.Enum", parameters={"allowed": "\\,0"}),
        '"0"',
        2,
    ),
    Case(
        "enum-unplaceable",  # a\,b,c is also ('a\\', 'b', 'c'): c is the 2nd or the 3rd
        c("enum", elements=("a,b", "c")),
        2,
        t("string", "io.debezium.data.Enum", parameters={"allowed": "a\\,b,c"}),
        '"c"',
        "c",
        "members-unresolved",
    ),
    Case(
        "enum-folded-quotes",  # both written it's
        c("enum", elements=("it's", "it''s")),
        2,
        t("string", "io.debezium.data.Enum", parameters={"allowed": "it's,it's"}),
        "\"it''s\"",
        "it''s",
        "members-unresolved",
    ),
    Case(
        "enum-invalid",
        c("enum", elements=("a", "b")),
        0,
        t("string", "io.debezium.data.Enum", parameters={"allowed": "a,b"}),
        '""',
        0,
    ),
    Case(
        "set",
        c("set", elements=("a", "b", "c")),
        0b101,
        t("string", "io.debezium.data.EnumSet", parameters={"allowed": "a,b,c"}),
        '"a,c"',
        5,
    ),
    # a bitmask naming no member: TiCDC writes "" (the bits are lost)
    Case(
        "set-invalid",
        c("set", elements=("a", "b")),
        0b100,
        t("string", "io.debezium.data.EnumSet", parameters={"allowed": "a,b"}),
        '""',
        0,
    ),
    Case(
        "json",
        c("json"),
        '{"k": "v"}',
        t("string", "io.debezium.data.Json"),
        '"{\\"k\\": \\"v\\"}"',
        '{"k": "v"}',
    ),
    Case(
        "vector",
        c("vector"),
        "[1,2,3]",
        {"type": "string", "optional": True, "name": "io.debezium.data.TiDBVectorFloat32"},
        '"[1,2,3]"',
        "[1,2,3]",
    ),
]


def encode_one(case: Case, *, extension: bool = True) -> tuple[dict[str, object], bytes, object]:
    table = TableInfo(
        schema="s",
        name="t",
        columns=(ColumnInfo(name="k", type="int"), case.column),
        indexes=(IndexInfo(name="PRIMARY", columns=("k",), primary=True, unique=True),),
    )
    config = debezium.Config(enable_tidb_extension=extension, time_zone=case.zone, **case.options)  # type: ignore[arg-type]
    insert = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(1, case.value))
    [message] = debezium.encode([insert], config)
    assert message.value is not None
    value = json.loads(message.value)
    [row] = debezium.decode(message)
    assert isinstance(row, DecodedRow)
    assert row.after is not None
    return value["schema"]["fields"][1]["fields"][1], message.value, row.after[1]


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_type(case: Case) -> None:
    # a bitmask naming no member is no value TiDB holds: the encoder must be told to write it
    with unchecked_values() if case.name == "set-invalid" else contextlib.nullcontext():
        schema, value, decoded = encode_one(case)
    tidb_type = case.tidb_type or case.column.type
    expected = {"tidb_type": tidb_type, **case.schema, "field": "c"}
    assert list(schema.items()) == list(expected.items())  # member order too
    assert b'"after":{"k":1,"c":' + case.text.encode() + b"}" in value
    assert (decoded.value, decoded.ambiguity) == (case.decoded, case.ambiguity)  # type: ignore[attr-defined]
    assert decoded.mysql_type == tidb_type  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("name", "ambiguity", "value"),
    [
        ("bigint-unsigned-max", "unsigned-unknown", -1),
        ("bigint-min", "unsigned-unknown", -(2**63)),
        ("varbinary", "binary-unknown", "Zm9v"),
        ("decimal-as-double", "double-or-decimal", 129012.123),
        ("double", "double-or-decimal", 0.1),
        ("int-unsigned", None, 4294967295),
        ("date", None, "2023-11-30"),
    ],
)
def test_without_tidb_type_the_decoder_marks_what_it_cannot_know(
    name: str, ambiguity: str | None, value: Value
) -> None:
    [case] = [case for case in CASES if case.name == name]
    _, _, decoded = encode_one(case, extension=False)
    assert (decoded.value, decoded.ambiguity) == (value, ambiguity)  # type: ignore[attr-defined]


@dataclass(frozen=True)
class DefaultCase:
    name: str
    column: ColumnInfo
    schema_default: str | None
    """The schema ``default`` member's JSON text, ``None`` when absent."""
    tiflow: str
    """The payload for a NULL value, ``"c":`` members included (classic may write two)."""
    ticdc: str
    decoded: dict[str, tuple[Value, str | None]]
    """Decoded value and ambiguity per profile."""
    zone: str = "UTC"


def both(
    value: Value, ambiguity: str | None = "null-or-default"
) -> dict[str, tuple[Value, str | None]]:
    return {"tiflow": (value, ambiguity), "ticdc": (value, ambiguity)}


DEFAULT_CASES = [
    DefaultCase("int", c("int", default=10), "10", '"c":10', '"c":10', both(10)),
    # classic prints the default text's float64; new-arch converts it to float32 first
    DefaultCase(
        "float",
        c("float", default=16777217.0),
        "16777217",
        '"c":16777217',
        '"c":16777216',
        {"tiflow": (16777217.0, "null-or-default"), "ticdc": (16777216.0, None)},
    ),
    # classic writes a YEAR default as a JSON string; the schema shifts two-digit years
    DefaultCase(
        "year",
        c("year", default=5),
        "2005",
        '"c":"5"',
        '"c":5',
        {"tiflow": (5, "null-or-default"), "ticdc": (5, None)},
    ),
    # classic writes a binary default twice: base64, then the raw text under the same name
    DefaultCase(
        "varbinary",
        c("varbinary", default=b"abc"),
        '"abc"',
        '"c":"YWJj","c":"abc"',
        '"c":"YWJj"',
        both(b"abc", None),
    ),
    DefaultCase(
        "enum", c("enum", elements=("a", "b"), default=2), '"b"', '"c":"b"', '"c":"b"', both(2)
    ),
    DefaultCase(
        "set", c("set", elements=("a", "b"), default=3), '"a,b"', '"c":"a,b"', '"c":"a,b"', both(3)
    ),
    DefaultCase(
        "datetime-current-timestamp",
        c("datetime", default="CURRENT_TIMESTAMP"),
        "0",
        '"c":0',
        '"c":0',
        both("1970-01-01 00:00:00"),
    ),
    DefaultCase(
        "timestamp-current-timestamp",
        c("timestamp", default="CURRENT_TIMESTAMP"),
        None,
        '"c":null',
        '"c":null',
        both(None, None),
    ),
    # the schema reads a TIMESTAMP default as UTC, the payload in the server's zone
    DefaultCase(
        "timestamp",
        c("timestamp", default=TimestampValue("2020-01-01 00:00:00")),
        '"2020-01-01T00:00:00Z"',
        '"c":"2019-12-31T16:00:00Z"',
        '"c":"2019-12-31T16:00:00Z"',
        both(TimestampValue("2019-12-31 16:00:00", "UTC"), None),
        zone="Asia/Shanghai",
    ),
    DefaultCase(
        "date",
        c("date", default="2020-01-01"),
        "18262",
        '"c":18262',
        '"c":18262',
        both("2020-01-01"),
    ),
    DefaultCase(
        "time",
        c("time", default="01:00:00"),
        "3600000000",
        '"c":3600000000',
        '"c":3600000000',
        both("01:00:00"),
    ),
    DefaultCase("bit1", c("bit", length=1, default=1), "true", '"c":true', '"c":true', both(1)),
    DefaultCase(
        "bit4", c("bit", length=4, default=5), '"BQ=="', '"c":"BQ=="', '"c":"BQ=="', both(5)
    ),
    DefaultCase(
        "decimal",
        c("decimal", length=5, decimal=2, default=DecimalValue("1.50")),
        "1.5",
        '"c":1.5',
        '"c":1.5',
        both(1.5, "null-or-default"),
    ),
    DefaultCase("no-default", c("int"), None, '"c":null', '"c":null', both(None, None)),
]


@pytest.mark.parametrize("profile", debezium.PROFILES)
@pytest.mark.parametrize("case", DEFAULT_CASES, ids=[case.name for case in DEFAULT_CASES])
def test_null_becomes_the_default(profile: str, case: DefaultCase) -> None:
    table = TableInfo(schema="s", name="t", columns=(case.column,))
    config = debezium.Config(profile=profile, time_zone=case.zone, enable_tidb_extension=True)  # type: ignore[arg-type]
    insert = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(None,))
    [message] = debezium.encode([insert], config)
    assert message.value is not None
    payload = case.tiflow if profile == "tiflow" else case.ticdc
    assert b'"after":{' + payload.encode() + b"}" in message.value
    schema = json.loads(message.value)["schema"]["fields"][1]["fields"][0]
    expected_default = None if case.schema_default is None else json.loads(case.schema_default)
    assert schema.get("default") == expected_default
    assert ("default" in schema) == (case.schema_default is not None)
    [row] = debezium.decode(message)
    assert isinstance(row, DecodedRow)
    [column] = row.after or ()
    assert (column.value, column.ambiguity) == case.decoded[profile]
