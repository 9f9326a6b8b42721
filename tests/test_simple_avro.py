"""Simple-Avro: byte-level facts, every value branch, and the schema against TiCDC's (§4.8).

Expected bytes are assembled here from the Avro specification (zigzag longs, length-prefixed
strings, union branch indexes), not by the codec under test. A consumer reads every value
back typed through ``SimpleDecoder``.
"""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path
from typing import Any

import fastavro
import pytest
from simple_helpers import (
    TS,
    VERSION,
    avro_str,
    config,
    feed_all,
    insert,
    table,
    with_bootstrap,
    zz,
)

from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    DecodedBootstrap,
    DecodedColumn,
    DecodedRow,
    DecodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TimestampValue,
    simple,
    simple_avro,
)
from ticdc_conformance.reference.simple._avro import schema_text

C = ColumnInfo
UPSTREAM = "upstream/pingcap+tiflow/pkg/sink/codec/simple/message.json"
RAW = "surrogateescape"  # Go strings may hold bytes that are not UTF-8
UPSTREAM_TC = "upstream/pingcap+ticdc/pkg/sink/codec/simple/message.json"


def long_(n: int) -> bytes:
    return b"\x02" + zz(n)


def string(s: str | bytes) -> bytes:
    return b"\x08" + avro_str(s)


# map value union (§4.8): 0 null, 1 long, 2 float, 3 double, 4 string, 5 bytes, 6 Timestamp, 7 UnsignedBigint
VALUES: list[tuple[str, ColumnInfo, Any, bytes, Any]] = [
    ("null", C(name="c", type="int"), None, b"\x00", None),
    ("tinyint", C(name="c", type="tinyint"), -128, long_(-128), -128),
    (
        "int-unsigned",
        C(name="c", type="int", unsigned=True),
        4294967295,
        long_(4294967295),
        4294967295,
    ),
    ("bigint", C(name="c", type="bigint"), 2**63 - 1, long_(2**63 - 1), 2**63 - 1),
    # §4.11 S2: always the UnsignedBigint record; from 2^63 on the long wraps negative
    ("bigint-unsigned-small", C(name="c", type="bigint", unsigned=True), 5, b"\x0e" + zz(5), 5),
    (
        "bigint-unsigned-2^63",
        C(name="c", type="bigint", unsigned=True),
        2**63,
        b"\x0e" + zz(-(2**63)),
        2**63,
    ),
    (
        "bigint-unsigned-max",
        C(name="c", type="bigint", unsigned=True),
        2**64 - 1,
        b"\x0e\x01",
        2**64 - 1,
    ),
    ("year", C(name="c", type="year"), 2023, long_(2023), 2023),
    ("enum", C(name="c", type="enum", elements=("a",)), 1, long_(1), 1),
    (
        "set-64-members",
        C(name="c", type="set", elements=tuple(map(str, range(64)))),
        2**64 - 1,
        long_(-1),
        2**64 - 1,
    ),
    ("float", C(name="c", type="float"), 153.123, b"\x04" + struct.pack("<f", 153.123), 153.123),
    ("double", C(name="c", type="double"), 0.1, b"\x06" + struct.pack("<d", 0.1), 0.1),
    (
        "decimal",
        C(name="c", type="decimal", decimal=2),
        DecimalValue("-1.50"),
        string("-1.50"),
        DecimalValue("-1.50"),
    ),
    ("date", C(name="c", type="date"), "0000-00-00", string("0000-00-00"), "0000-00-00"),
    (
        "datetime",
        C(name="c", type="datetime"),
        "2021-01-02 00:00:00",
        string("2021-01-02 00:00:00"),
        "2021-01-02 00:00:00",
    ),
    ("time", C(name="c", type="time", decimal=1), "12:34:56.1", string("12:34:56.1"), "12:34:56.1"),
    (
        "timestamp",
        C(name="c", type="timestamp"),
        TimestampValue("2021-01-02 00:00:00"),
        b"\x0c" + avro_str("UTC") + avro_str("2021-01-02 00:00:00"),
        TimestampValue("2021-01-02 00:00:00", "UTC"),
    ),
    ("json", C(name="c", type="json"), "[1, 2]", string("[1, 2]"), "[1, 2]"),
    ("vector", C(name="c", type="vector"), "[1,2]", string("[1,2]"), "[1,2]"),
    ("varchar", C(name="c", type="varchar"), "<测>", string("<测>"), "<测>"),
    # Go strings are bytes: goavro writes invalid UTF-8 raw, and it survives (unlike JSON)
    ("text-invalid-utf8", C(name="c", type="text"), b"a\xff", string(b"a\xff"), b"a\xff"),
    (
        "varbinary",
        C(name="c", type="varbinary"),
        b"\x89PNG",
        b"\x0a" + avro_str(b"\x89PNG"),
        b"\x89PNG",
    ),
    ("blob-empty", C(name="c", type="blob"), b"", b"\x0a\x00", b""),
]
BIT_BY_PROFILE = {
    # §4.10 item 1: BIT is a long in tiflow (wrapping like any uint64), a decimal string in ticdc
    "tiflow": [(341, long_(341)), (2**64 - 1, long_(-1))],
    "ticdc": [(341, string("341")), (2**64 - 1, string("18446744073709551615"))],
}


def row_tail(value_bytes: bytes) -> bytes:
    """The end of an INSERT of (id=1, c): data = [null, map] branch 1, map sorted, old null."""
    return (
        b"\x02"
        + zz(2)
        + avro_str("c")
        + value_bytes
        + avro_str("id")
        + long_(1)
        + b"\x00"
        + b"\x00"
    )


def roundtrip(profile: str, column: ColumnInfo, value: Any, wire: bytes, typed: Any) -> None:
    bootstrap, row = with_bootstrap("avro", [insert(table(column), value)], config(profile))
    assert row.key is None
    assert (row.value or b"").endswith(row_tail(wire))
    _, decoded = feed_all("avro", [bootstrap, row])
    assert isinstance(decoded, DecodedRow)
    assert decoded.after == (
        DecodedColumn("id", 1, mysql_type="int"),
        DecodedColumn("c", typed, mysql_type=simple.mysql_type(column)),
    )
    assert type(decoded.after[1].value) is type(typed)


@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
@pytest.mark.parametrize(
    ("column", "value", "wire", "typed"), [c[1:] for c in VALUES], ids=[c[0] for c in VALUES]
)
def test_value_branches_both_ways(
    profile: str, column: ColumnInfo, value: Any, wire: bytes, typed: Any
) -> None:
    roundtrip(profile, column, value, wire, typed)


@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
def test_bit_differs_by_profile(profile: str) -> None:
    for value, wire in BIT_BY_PROFILE[profile]:
        roundtrip(profile, C(name="c", type="bit", length=64), value, wire, value)


def test_unsigned_bigint_wrap_is_undone_even_without_a_schema() -> None:
    """The record type alone says the long is a uint64: the stateless decode unwraps it."""
    [row] = simple_avro.encode(
        [insert(table(C(name="c", type="bigint", unsigned=True)), 2**63 + 5)]
    )
    [decoded] = simple_avro.decode(row)
    assert isinstance(decoded, DecodedRow)
    assert decoded.after is not None
    assert decoded.after[0] == DecodedColumn("c", 2**63 + 5, ambiguity=simple.UNTYPED)


def test_every_message_starts_with_the_union_byte_and_enum_indexes() -> None:
    """§4.8: branch 11 → 0x16; Message.type and payload branch WATERMARK 0 … DML 3."""
    t = table()
    messages = [
        *simple_avro.encode([ResolvedEvent(commit_ts=1)]),
        simple_avro.encode_bootstrap(t),
        *simple_avro.encode(
            [insert(t), DDLEvent(commit_ts=2, schema="", table="", query="q", ddl_type=2)]
        ),
    ]
    heads = [(m.value or b"")[:3] for m in messages]
    assert heads == [b"\x16\x00\x00", b"\x16\x02\x02", b"\x16\x06\x06", b"\x16\x04\x04"]


def test_watermark_bytes() -> None:
    [message] = simple_avro.encode(
        [ResolvedEvent(commit_ts=2**64 - 1)], config(build_ts=lambda: 1708923816911)
    )
    # commitTs is the uint64 cast to a long: 2^64-1 → -1
    assert message.value == b"\x16\x00\x00" + zz(1) + zz(-1) + zz(1708923816911)


DDL_ENUM = ["CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY"]


@pytest.mark.parametrize(
    ("action", "kind"),
    [
        (3, "CREATE"),
        (5, "ALTER"),
        (4, "ERASE"),
        (14, "RENAME"),
        (11, "TRUNCATE"),
        (7, "CINDEX"),
        (8, "DINDEX"),
        (1, "QUERY"),
    ],
)
def test_ddl_type_enum_index(action: int, kind: str) -> None:
    ddl = DDLEvent(commit_ts=9, schema="", table="", query="q", ddl_type=action)
    [message] = simple_avro.encode([ddl])
    # version, DDLType, sql, commitTs, buildTs, tableSchema null, preTableSchema null
    assert (
        message.value
        == b"\x16\x04\x04"
        + zz(1)
        + zz(DDL_ENUM.index(kind))
        + avro_str("q")
        + zz(9)
        + zz(0)
        + b"\x00\x00"
    )


def test_dml_type_enum_and_envelope() -> None:
    t = table(partition_id=77)
    for op, index in (("insert", 0), ("update", 1), ("delete", 2)):
        before = None if op == "insert" else (1,)
        after = None if op == "delete" else (1,)
        event = RowChangedEvent(commit_ts=TS, table=t, op=op, before=before, after=after)  # type: ignore[arg-type]
        [message] = simple_avro.encode([event], config())
        head = (
            b"\x16\x06\x06"
            + zz(1)
            + avro_str("test")
            + avro_str("t")
            + zz(77)
            + zz(index)
            + zz(TS)
            + zz(0)
            + zz(VERSION)
        )
        # claimCheckLocation, handleKeyOnly and checksum are null without the options (§4.7)
        assert (message.value or b"").startswith(head + b"\x00\x00\x00")


def test_handle_key_only_is_flagged_only_with_large_message_handling() -> None:
    big = insert(table(C(name="v", type="varchar")), "x" * 300)
    [message] = simple_avro.encode(
        [big],
        config(
            max_message_bytes=200,
            large_message_handle_option="handle-key-only",
        ),
    )
    tail = (
        b"\x00" + b"\x02\x01" + b"\x00" + b"\x02" + zz(1) + avro_str("id") + long_(1) + b"\x00\x00"
    )
    assert (message.value or b"").endswith(tail)
    [decoded] = simple_avro.decode(message)
    assert isinstance(decoded, DecodedRow)
    assert decoded.handle_key_only


def corpus() -> list[Message]:
    """Messages of every kind and value type, both profiles."""
    out = []
    for profile in ("tiflow", "ticdc"):
        cfg = config(profile, enable_row_checksum=True)
        for _, column, value, _, _ in VALUES:
            t = table(column)
            ddl = DDLEvent(
                commit_ts=3,
                schema="test",
                table="t",
                query="alter",
                ddl_type=5,
                table_info=t,
                pre_table_info=t,
            )
            out += simple_avro.encode([insert(t, value), ddl, ResolvedEvent(commit_ts=4)], cfg)
    return out


def test_upstream_schema_reads_every_message_the_project_writes(shared: Path) -> None:
    """Each message decodes with TiCDC's own schema file, to the same record as with ours."""
    theirs = fastavro.parse_schema(json.loads((shared / UPSTREAM).read_text()))
    ours = fastavro.parse_schema(json.loads(schema_text()))
    for message in corpus():
        value = message.value or b""
        stream = io.BytesIO(value)
        record = fastavro.schemaless_reader(
            stream, theirs, None, return_record_name=True, handle_unicode_errors=RAW
        )
        assert stream.tell() == len(value)
        assert record == fastavro.schemaless_reader(
            io.BytesIO(value), ours, None, return_record_name=True, handle_unicode_errors=RAW
        )


def test_project_reads_messages_written_with_the_upstream_schema(shared: Path) -> None:
    """A DML written by fastavro from TiCDC's schema file decodes with the project's."""
    theirs = fastavro.parse_schema(json.loads((shared / UPSTREAM).read_text()))
    ns = "com.pingcap.simple.avro."
    dml = {
        "version": 1,
        "database": "test",
        "table": "t",
        "tableID": 20,
        "type": "UPDATE",
        "commitTs": 5,
        "buildTs": 1708923662983,
        "schemaVersion": 6,
        "claimCheckLocation": None,
        "handleKeyOnly": None,
        "checksum": None,
        "data": {"id": ("long", 1), "u": (ns + "UnsignedBigint", {"value": -2})},
        "old": {"id": ("long", 1), "u": ("null", None)},
    }
    out = io.BytesIO()
    fastavro.schemaless_writer(
        out, theirs, (ns + "Message", {"type": "DML", "payload": (ns + "DML", dml)})
    )
    [row] = simple_avro.decode(Message(key=None, value=out.getvalue()))
    assert isinstance(row, DecodedRow)
    assert (row.op, row.commit_ts, row.schema_version) == ("update", 5, 6)
    assert row.after == (
        DecodedColumn("id", 1, ambiguity=simple.UNTYPED),
        DecodedColumn("u", 2**64 - 2, ambiguity=simple.UNTYPED),
    )


def test_schema_file_is_equivalent_to_both_upstream_copies(shared: Path) -> None:
    """Same Parsing Canonical Form as TiCDC's message.json (tiflow and ticdc copies)."""
    ours = fastavro.schema.to_parsing_canonical_form(json.loads(schema_text()))
    for path in (UPSTREAM, UPSTREAM_TC):
        if (shared / path).exists():
            assert (
                fastavro.schema.to_parsing_canonical_form(json.loads((shared / path).read_text()))
                == ours
            )


@pytest.mark.parametrize(
    ("value", "offset", "problem"),
    [
        (b"", 0, "empty"),
        (
            b"\x00" + b"\x02a" * 3 + b"\x00" * 5,
            None,
            "expected a Message record",
        ),  # branch 0: DataType
        (b"\x16", 1, "not a Simple Avro message"),
        (b"\x16\x00\x00\x02\x02\x00\xff", 6, "1 bytes after the message"),
        (
            b"\x16\x02\x00\x02\x02\x00",
            None,
            "expected a Bootstrap record",
        ),  # type BOOTSTRAP, payload Watermark
        (b"\x16\x00\x00\x04\x02\x00", None, "version must be 1"),
        (b"\x7f", 1, "not a Simple Avro message"),
    ],
)
def test_invalid_avro_is_a_located_decode_error(
    value: bytes, offset: int | None, problem: str
) -> None:
    with pytest.raises(DecodeError, match=problem) as caught:
        simple_avro.decode(Message(key=None, value=value), message_index=2)
    assert (caught.value.protocol, caught.value.message_index) == ("simple-avro", 2)
    if offset is not None:
        assert caught.value.offset == offset


@pytest.mark.parametrize(
    ("profile", "decimals"),
    [
        ("tiflow", {"ts0": None, "ts6": None, "dt6": None, "d": 2}),
        # ticdc pkg/sink/codec/simple/avro.go: a TIMESTAMP case writes the fsp, 0 included
        ("ticdc", {"ts0": 0, "ts6": 6, "dt6": None, "d": 2}),
    ],
)
def test_table_schema_decimal_of_timestamp_by_profile(
    profile: str, decimals: dict[str, int | None]
) -> None:
    t = table(
        C(name="ts0", type="timestamp"),
        C(name="ts6", type="timestamp", decimal=6),
        C(name="dt6", type="datetime", decimal=6),
        C(name="d", type="decimal", length=10, decimal=2),
    )
    message = simple_avro.encode_bootstrap(t, config(profile))
    ours = fastavro.parse_schema(json.loads(schema_text()))
    record: Any = fastavro.schemaless_reader(
        io.BytesIO(message.value or b""), ours, None, return_record_name=True
    )
    payload = record[1]["payload"][1]
    columns = payload["tableSchema"]["columns"]
    got = {c["name"]: c["dataType"]["decimal"] for c in columns if c["name"] != "id"}
    assert got == decimals
    [decoded] = simple_avro.decode(message)
    assert isinstance(decoded, DecodedBootstrap)
    assert {c.name: c.decimal for c in decoded.table_info.columns}["ts6"] == decimals["ts6"]
