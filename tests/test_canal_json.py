"""The Canal-JSON codec against TiCDC's own facts and the rules of docs/canal-json.md.

Facts cases name the TiCDC test they are rebuilt from (pingcap/tiflow
``pkg/sink/codec/canal/type_test.go`` and ``canal_json_row_event_encoder_test.go``,
pingcap/ticdc ``pkg/sink/codec/canal/canal_json_test.go``); the values are restated here,
not copied.
"""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    DecodedDDL,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    EncodeError,
    IndexInfo,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    canal_json,
)
from ticdc_conformance.reference.canal_json._decode import DDL_KINDS
from ticdc_conformance.reference.canal_json._encode import DDL_TYPES
from ticdc_conformance.reference.canal_json.claim_check import read_claim_check

TS = 424_242_424_242_424_242
_ID = ColumnInfo(name="id", type="int", key="primary")


def _table(*columns: ColumnInfo, indexes: tuple[IndexInfo, ...] = ()) -> TableInfo:
    return TableInfo(schema="test", name="t", columns=(_ID, *columns), indexes=indexes)


def _insert(table: TableInfo, *values: Value) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=TS, table=table, op="insert", after=(1, *values))


def _document(message: Message) -> Any:
    assert message.key is None
    assert message.value is not None
    return json.loads(message.value)


def _encode_one(event: Any, **options: str) -> Message:
    profile = options.pop("profile", "tiflow")
    (message,) = canal_json.encode(
        [event], canal_json.config_from_options(options, profile=profile)
    )
    return message


# (column, value, mysqlType, mysqlType with content-compatible, sqlType)
TYPE_FACTS: list[tuple[str, ColumnInfo, Value, str, str, int]] = [
    # TestGetMySQLType4IntTypes
    ("int", ColumnInfo(name="c", type="int"), 2147483647, "int", "int(11)", 4),
    ("tinyint", ColumnInfo(name="c", type="tinyint"), 127, "tinyint", "tinyint(4)", -6),
    ("smallint", ColumnInfo(name="c", type="smallint"), 32767, "smallint", "smallint(6)", 5),
    ("mediumint", ColumnInfo(name="c", type="mediumint"), 8388607, "mediumint", "mediumint(9)", 4),
    ("bigint", ColumnInfo(name="c", type="bigint"), 2**63 - 1, "bigint", "bigint(20)", -5),
    (
        "int unsigned fits",
        ColumnInfo(name="c", type="int", unsigned=True),
        2**31 - 1,
        "int unsigned",
        "int(10) unsigned",
        4,
    ),
    (
        "int unsigned over",
        ColumnInfo(name="c", type="int", unsigned=True),
        2**31,
        "int unsigned",
        "int(10) unsigned",
        -5,
    ),
    (
        "int unsigned null",
        ColumnInfo(name="c", type="int", unsigned=True),
        None,
        "int unsigned",
        "int(10) unsigned",
        4,
    ),
    (
        "tinyint unsigned over",
        ColumnInfo(name="c", type="tinyint", unsigned=True),
        128,
        "tinyint unsigned",
        "tinyint(3) unsigned",
        5,
    ),
    (
        "smallint unsigned over",
        ColumnInfo(name="c", type="smallint", unsigned=True),
        32768,
        "smallint unsigned",
        "smallint(5) unsigned",
        4,
    ),
    (
        "mediumint unsigned over",
        ColumnInfo(name="c", type="mediumint", unsigned=True),
        8388608,
        "mediumint unsigned",
        "mediumint(8) unsigned",
        4,
    ),
    (
        "bigint unsigned fits",
        ColumnInfo(name="c", type="bigint", unsigned=True),
        2**63 - 1,
        "bigint unsigned",
        "bigint(20) unsigned",
        -5,
    ),
    (
        "bigint unsigned over",
        ColumnInfo(name="c", type="bigint", unsigned=True),
        2**63,
        "bigint unsigned",
        "bigint(20) unsigned",
        3,
    ),
    ("int(10)", ColumnInfo(name="c", type="int", length=10), 1, "int", "int(10)", 4),
    (
        "bigint(19) unsigned",
        ColumnInfo(name="c", type="bigint", length=19, unsigned=True),
        1,
        "bigint unsigned",
        "bigint(19) unsigned",
        -5,
    ),
    (
        "int zerofill",
        ColumnInfo(name="c", type="int", unsigned=True, zerofill=True),
        1,
        "int unsigned zerofill",
        "int(10) unsigned zerofill",
        4,
    ),
    ("bit", ColumnInfo(name="c", type="bit"), 1, "bit", "bit(1)", -7),
    ("bit(3)", ColumnInfo(name="c", type="bit", length=3), 5, "bit", "bit(3)", -7),
    ("tinyint(1)", ColumnInfo(name="c", type="tinyint", length=1), 1, "tinyint", "tinyint(1)", -6),
    # TestGetMySQLType4FloatType
    ("float", ColumnInfo(name="c", type="float"), 3.14, "float", "float", 7),
    ("double", ColumnInfo(name="c", type="double"), 2.71, "double", "double", 8),
    (
        "float(10,3)",
        ColumnInfo(name="c", type="float", length=10, decimal=3),
        1.5,
        "float",
        "float(10,3)",
        7,
    ),
    (
        "double(20,3)",
        ColumnInfo(name="c", type="double", length=20, decimal=3),
        1.5,
        "double",
        "double(20,3)",
        8,
    ),
    (
        "float unsigned",
        ColumnInfo(name="c", type="float", unsigned=True),
        3.14,
        "float unsigned",
        "float unsigned",
        7,
    ),
    (
        "double zerofill",
        ColumnInfo(name="c", type="double", unsigned=True, zerofill=True),
        2.5,
        "double unsigned zerofill",
        "double unsigned zerofill",
        8,
    ),
    # TestGetMySQLType4Decimal
    (
        "decimal",
        ColumnInfo(name="c", type="decimal"),
        DecimalValue("2333"),
        "decimal",
        "decimal(10,0)",
        3,
    ),
    (
        "decimal(5,2)",
        ColumnInfo(name="c", type="decimal", length=5, decimal=2),
        DecimalValue("2.33"),
        "decimal",
        "decimal(5,2)",
        3,
    ),
    (
        "decimal unsigned",
        ColumnInfo(name="c", type="decimal", unsigned=True),
        DecimalValue("2333"),
        "decimal unsigned",
        "decimal(10,0) unsigned",
        3,
    ),
    # TestGetMySQLType4TimeTypes
    (
        "time(3)",
        ColumnInfo(name="c", type="time", decimal=3),
        "02:20:20.000",
        "time",
        "time(3)",
        92,
    ),
    (
        "datetime",
        ColumnInfo(name="c", type="datetime"),
        "2020-02-20 02:20:20",
        "datetime",
        "datetime",
        93,
    ),
    (
        "timestamp(3)",
        ColumnInfo(name="c", type="timestamp", decimal=3),
        TimestampValue("2020-02-20 02:20:20.020"),
        "timestamp",
        "timestamp(3)",
        93,
    ),
    ("date", ColumnInfo(name="c", type="date"), "2020-02-20", "date", "date", 91),
    ("year", ColumnInfo(name="c", type="year"), 2020, "year", "year(4)", 12),
    # TestGetMySQLType4Char, TestGetMySQLType4TextTypes
    ("char", ColumnInfo(name="c", type="char"), "a", "char", "char(1)", 1),
    ("char(123)", ColumnInfo(name="c", type="char", length=123), "a", "char", "char(123)", 1),
    (
        "varchar(123)",
        ColumnInfo(name="c", type="varchar", length=123),
        "a",
        "varchar",
        "varchar(123)",
        12,
    ),
    ("text", ColumnInfo(name="c", type="text"), "a", "text", "text", 2005),
    ("longtext", ColumnInfo(name="c", type="longtext"), "a", "longtext", "longtext", 2005),
    # TestGetMySQLType4BinaryType, TestGetMySQLType4BlobType
    (
        "binary(10)",
        ColumnInfo(name="c", type="binary", length=10),
        b"\x01",
        "binary",
        "binary(10)",
        2004,
    ),
    (
        "varbinary(23)",
        ColumnInfo(name="c", type="varbinary", length=23),
        b"\x01",
        "varbinary",
        "varbinary(23)",
        2004,
    ),
    ("blob", ColumnInfo(name="c", type="blob"), b"\x01", "blob", "blob", 2004),
    (
        "mediumblob",
        ColumnInfo(name="c", type="mediumblob"),
        b"\x01",
        "mediumblob",
        "mediumblob",
        2004,
    ),
    # TestGetMySQLType4EnumAndSet, TestGetMySQLType4JSON
    (
        "enum",
        ColumnInfo(name="c", type="enum", elements=("a", "b", "c")),
        2,
        "enum",
        "enum('a','b','c')",
        4,
    ),
    (
        "set",
        ColumnInfo(name="c", type="set", elements=("a", "b", "c")),
        5,
        "set",
        "set('a','b','c')",
        -7,
    ),
    ("json", ColumnInfo(name="c", type="json"), '{"a": 1}', "json", "json", 12),
]


@pytest.mark.parametrize(
    ("column", "value", "short", "full", "sql_type"),
    [case[1:] for case in TYPE_FACTS],
    ids=[case[0] for case in TYPE_FACTS],
)
@pytest.mark.parametrize("profile", canal_json.PROFILES)
def test_type_facts_from_tiflow_type_test(
    column: ColumnInfo, value: Value, short: str, full: str, sql_type: int, profile: str
) -> None:
    """pingcap/tiflow pkg/sink/codec/canal/type_test.go (TestGetMySQLType4*)."""
    event = _insert(_table(column), value)
    for compatible, expected in (("false", short), ("true", full)):
        message = _encode_one(event, profile=profile, **{"content-compatible": compatible})
        document = _document(message)
        assert document["mysqlType"]["c"] == expected
        assert document["sqlType"]["c"] == sql_type
        (row,) = canal_json.decode(message)
        assert isinstance(row, DecodedRow)
        assert row.after is not None
        assert row.after[1].value == value
        assert row.after[1].mysql_type == expected


# (value, column, the text in data)
VALUE_TEXTS: list[tuple[str, ColumnInfo, Value, str]] = [
    ("float 32-bit shortest", ColumnInfo(name="c", type="float"), 153.123, "153.123"),
    ("double no exponent", ColumnInfo(name="c", type="double"), 1e-7, "0.0000001"),
    ("double large", ColumnInfo(name="c", type="double"), 1e21, "1000000000000000000000"),
    ("double minus zero", ColumnInfo(name="c", type="double"), -0.0, "-0"),
    (
        "decimal keeps scale",
        ColumnInfo(name="c", type="decimal", length=13, decimal=7),
        DecimalValue("129012.1230000"),
        "129012.1230000",
    ),
    (
        "binary as ISO-8859-1",
        ColumnInfo(name="c", type="varbinary", length=4),
        b"\x00\xe9\xff",
        "\x00\xe9\xff",
    ),
    ("text raw", ColumnInfo(name="c", type="varchar", length=8), "é<&>", "é<&>"),
    (
        "bit as integer",
        ColumnInfo(name="c", type="bit", length=64),
        2**64 - 1,
        "18446744073709551615",
    ),
    ("vector", ColumnInfo(name="c", type="vector"), "[1,2.5]", "[1,2.5]"),
]


@pytest.mark.parametrize(
    ("column", "value", "text"), [c[1:] for c in VALUE_TEXTS], ids=[c[0] for c in VALUE_TEXTS]
)
def test_values_are_strings_and_round_trip(column: ColumnInfo, value: Value, text: str) -> None:
    message = _encode_one(_insert(_table(column), value))
    assert _document(message)["data"][0]["c"] == text
    (row,) = canal_json.decode(message)
    assert isinstance(row, DecodedRow)
    assert row.after is not None
    assert repr(row.after[1].value) == repr(value)


def test_insert_bytes_are_exact() -> None:
    """Member order, HTML escaping and binary text of a row (canal_json_row_event_encoder.go)."""
    table = _table(
        ColumnInfo(name="s", type="varchar", length=8), ColumnInfo(name="b", type="blob")
    )
    message = _encode_one(_insert(table, "a<b\b", b"\x00\xff"), **{"enable-tidb-extension": "true"})
    assert message.value == (
        b'{"id":0,"database":"test","table":"t","pkNames":["id"],"isDdl":false,"type":"INSERT",'
        b'"es":1618356415719,"ts":0,"sql":"","sqlType":{"id":4,"s":12,"b":2004},'
        b'"mysqlType":{"id":"int","s":"varchar","b":"blob"},"old":null,'
        b'"data":[{"id":"1","s":"a\\u003cb\\u0008","b":"\\u0000\xc3\xbf"}],'
        b'"_tidb":{"commitTs":424242424242424242}}'
    )


def test_ddl_and_watermark_bytes_are_exact() -> None:
    """TestNewCanalJSONMessageFromDDL, TestCheckpointEventValueMarshal (pingcap/tiflow)."""
    ddl = DDLEvent(
        commit_ts=TS,
        schema="test",
        table="person",
        ddl_type=3,
        query="create table test.person(id int primary key)",
    )
    assert _encode_one(ddl).value == (
        b'{"id":0,"database":"test","table":"person","pkNames":null,"isDdl":true,'
        b'"type":"CREATE","es":1618356415719,"ts":0,'
        b'"sql":"create table test.person(id int primary key)","sqlType":null,'
        b'"mysqlType":null,"data":null,"old":null}'
    )
    watermark = _encode_one(ResolvedEvent(commit_ts=1024), **{"enable-tidb-extension": "true"})
    assert watermark.value == (
        b'{"id":0,"database":"","table":"","pkNames":null,"isDdl":false,'
        b'"type":"TIDB_WATERMARK","es":0,"ts":0,"sql":"","sqlType":null,"mysqlType":null,'
        b'"data":null,"old":null,"_tidb":{"watermarkTs":1024}}'
    )
    assert canal_json.decode(watermark) == [DecodedResolved(commit_ts=1024)]
    # TestEncodeCheckpointEvent: no watermark without the TiDB extension
    assert canal_json.encode([ResolvedEvent(commit_ts=1024)]) == []


# TiDB ActionType → Canal type (convertDdlEventType, pkg/sink/codec/canal/canal_entry.go)
DDL_FACTS = [
    (1, "QUERY"),
    (2, "QUERY"),
    (3, "CREATE"),
    (4, "ERASE"),
    (5, "ALTER"),
    (7, "CINDEX"),
    (8, "DINDEX"),
    (11, "TRUNCATE"),
    (14, "RENAME"),
    (15, "ALTER"),
    (18, "ALTER"),
    (21, "QUERY"),
    (32, "CINDEX"),
    (33, "DINDEX"),
    (47, "RENAME"),
    (60, "QUERY"),
    (61, "ALTER"),
    (255, "QUERY"),
]


@pytest.mark.parametrize(("action", "kind"), DDL_FACTS)
def test_ddl_type_mapping(action: int, kind: str) -> None:
    ddl = DDLEvent(commit_ts=TS, schema="s", table="t", query="q", ddl_type=action)
    message = _encode_one(ddl, **{"enable-tidb-extension": "true"})
    assert _document(message)["type"] == kind
    assert canal_json.decode(message) == [
        DecodedDDL(commit_ts=TS, schema="s", table="t", query="q", ddl_kind=kind)
    ]
    assert kind in DDL_KINDS
    assert DDL_TYPES.get(action, "QUERY") == kind


_NAME = ColumnInfo(name="name", type="varchar", length=64)
_NOTE = ColumnInfo(name="note", type="text")


def _update(
    before: tuple[Value, ...], after: tuple[Value, ...], table: TableInfo
) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=TS, table=table, op="update", before=before, after=after)


@pytest.mark.parametrize("option", ["only-output-updated-columns", "content-compatible"])
def test_only_updated_columns_keep_old_small(option: str) -> None:
    """TestCanalJSONContentCompatibleE2E: old holds the changed columns, decode fills the rest."""
    table = _table(_NAME, _NOTE)
    event = _update((1, "a", "x"), (1, "b", "x"), table)
    message = _encode_one(event, **{option: "true", "enable-tidb-extension": "true"})
    assert _document(message)["old"] == [{"name": "a"}]
    (row,) = canal_json.decode(message)
    assert isinstance(row, DecodedRow)
    assert row.before is not None
    assert [(c.name, c.value) for c in row.before] == [("id", 1), ("name", "a"), ("note", "x")]
    assert _document(_encode_one(event))["old"] == [{"id": "1", "name": "a", "note": "x"}]


def test_profiles_compare_updated_columns_differently() -> None:
    """tiflow compares values (0.0 == -0.0), ticdc compares the texts ("0" != "-0")."""
    table = _table(ColumnInfo(name="d", type="double"))
    event = _update((1, 0.0), (1, -0.0), table)
    options = {"only-output-updated-columns": "true"}
    assert _document(_encode_one(event, profile="tiflow", **options))["old"] == [{}]
    assert _document(_encode_one(event, profile="ticdc", **options))["old"] == [{"d": "0"}]


def test_delete_only_handle_key_columns() -> None:
    table = _table(_NAME)
    event = RowChangedEvent(commit_ts=TS, table=table, op="delete", before=(7, "gone"))
    document = _document(_encode_one(event, **{"delete-only-output-handle-key-columns": "true"}))
    assert document["data"] == [{"id": "7"}]
    assert document["sqlType"] == {"id": 4}
    assert document["mysqlType"] == {"id": "int"}


def test_keyless_table_differs_between_profiles() -> None:
    """No handle key and only handle-key columns asked: mysqlType {} (tiflow) or null (ticdc)."""
    table = TableInfo(schema="test", name="t", columns=(_NAME,))
    event = RowChangedEvent(commit_ts=TS, table=table, op="delete", before=("gone",))
    options = {"delete-only-output-handle-key-columns": "true"}
    tiflow = _document(_encode_one(event, profile="tiflow", **options))
    ticdc = _document(_encode_one(event, profile="ticdc", **options))
    assert (tiflow["pkNames"], tiflow["sqlType"], tiflow["mysqlType"]) == ([], None, {})
    assert (ticdc["sqlType"], ticdc["mysqlType"], ticdc["data"]) == (None, None, [{}])


def test_geometry_sql_type_differs_between_profiles() -> None:
    table = _table(ColumnInfo(name="g", type="geometry"))
    event = _insert(table, None)
    assert _document(_encode_one(event, profile="tiflow"))["sqlType"]["g"] == -2
    assert _document(_encode_one(event, profile="ticdc"))["sqlType"]["g"] == 12


_BIG = ColumnInfo(name="big", type="longtext")
_LARGE = {"enable-tidb-extension": "true", "max-message-bytes": "400"}


def test_handle_key_only_for_large_messages() -> None:
    """TestNewCanalJSONMessageHandleKeyOnly4LargeMessage: only handle-key columns remain."""
    event = _insert(_table(_BIG), "x" * 1000)
    message = _encode_one(event, **_LARGE, **{"large-message-handle-option": "handle-key-only"})
    document = _document(message)
    assert document["data"] == [{"id": "1"}]
    assert set(document["sqlType"]) == set(document["mysqlType"]) == {"id"}
    assert document["_tidb"] == {"commitTs": TS, "onlyHandleKey": True}
    (row,) = canal_json.decode(message)
    assert isinstance(row, DecodedRow)
    assert row.handle_key_only


@pytest.mark.parametrize("raw", ["false", "true"])
def test_claim_check_stores_the_full_value(raw: str) -> None:
    """TestCanalJSONClaimCheckE2E: the file holds the whole message, the row names it."""
    event = _insert(_table(_BIG), "x" * 1000)
    options = {
        **_LARGE,
        "large-message-handle-option": "claim-check",
        "claim-check-storage-uri": "file:///tmp/cc/",
        "claim-check-raw-value": raw,
    }
    message = _encode_one(event, **options)
    (stored,) = message.claim_checks
    assert stored.location.startswith("file:///tmp/cc/")
    assert stored.location.endswith(".json")
    document = _document(message)
    assert document["_tidb"] == {"commitTs": TS, "claimCheckLocation": stored.location}
    assert document["data"] == [{"id": "1"}]
    value = (
        stored.content if raw == "true" else base64.b64decode(json.loads(stored.content)["value"])
    )
    assert read_claim_check(stored.content, raw_value=raw == "true").value == value
    full = canal_json.decode(Message(key=None, value=value))
    assert full == canal_json.decode(_encode_one(event, **{"enable-tidb-extension": "true"}))
    (row,) = canal_json.decode(message)
    assert isinstance(row, DecodedRow)
    assert row.claim_check_location == stored.location


def test_too_large_without_an_option_is_refused() -> None:
    """TestMaxMessageBytes: a row over max-message-bytes is an error."""
    with pytest.raises(EncodeError, match="max-message-bytes"):
        canal_json.encode(
            [_insert(_table(_BIG), "x" * 1000)],
            canal_json.config_from_options({"max-message-bytes": "400"}),
        )


@pytest.mark.parametrize(
    "options",
    [
        {"large-message-handle-option": "handle-key-only"},  # needs enable-tidb-extension
        {"large-message-handle-option": "claim-check", "enable-tidb-extension": "true"},
        {"unknown": "x"},
        {"content-compatible": "yes"},
    ],
)
def test_invalid_options_are_refused(options: dict[str, str]) -> None:
    with pytest.raises(EncodeError):
        canal_json.config_from_options(options)


def test_decoder_reads_alibaba_canal_batches() -> None:
    """Alibaba Canal's flat message: several rows in data, old with changed columns only."""
    value = {
        "data": [{"id": "1", "v": "b"}, {"id": "2", "v": "c"}],
        "database": "db",
        "es": 1,
        "id": 3,
        "isDdl": False,
        "mysqlType": {"id": "int(11)", "v": "varchar(10)"},
        "old": [{"v": "a"}, {"v": "a"}],
        "pkNames": ["id"],
        "sql": "",
        "sqlType": {"id": 4, "v": 12},
        "table": "t",
        "ts": 2,
        "type": "UPDATE",
    }
    rows = canal_json.decode(Message(key=None, value=json.dumps(value).encode()))
    assert len(rows) == 2
    for row, key in zip(rows, (1, 2), strict=True):
        assert isinstance(row, DecodedRow)
        assert row.commit_ts is None
        assert row.before is not None
        assert [c.value for c in row.before] == [key, "a"]


_ROW = {
    "id": 0,
    "database": "d",
    "table": "t",
    "pkNames": ["id"],
    "isDdl": False,
    "type": "INSERT",
    "es": 0,
    "ts": 0,
    "sql": "",
    "sqlType": {"id": 4},
    "mysqlType": {"id": "int"},
    "old": None,
    "data": [{"id": "1"}],
}

# (name, the message value, JSON Pointer of the fault or None for a byte offset)
REJECTS: list[tuple[str, bytes, str | None]] = [
    ("not JSON", b'{"type":', None),
    ("not UTF-8", b'{"type":"\xff"}', None),
    ("array", b"[]", ""),
    ("no type", json.dumps({**_ROW, "type": None}).encode(), "/type"),
    ("unknown type", json.dumps({**_ROW, "type": "GTID"}).encode(), "/type"),
    ("value not a string", json.dumps({**_ROW, "data": [{"id": 1}]}).encode(), "/data/0/id"),
    ("no mysqlType", json.dumps({**_ROW, "mysqlType": {}}).encode(), "/data/0/id"),
    (
        "unknown mysqlType",
        json.dumps({**_ROW, "mysqlType": {"id": "money"}}).encode(),
        "/mysqlType/id",
    ),
    ("int out of range", json.dumps({**_ROW, "data": [{"id": str(2**64)}]}).encode(), "/data/0/id"),
    (
        "binary above U+00FF",
        json.dumps({**_ROW, "mysqlType": {"id": "blob"}, "data": [{"id": "\u0100"}]}).encode(),
        "/data/0/id",
    ),
    ("old on insert", json.dumps({**_ROW, "old": [{"id": "1"}]}).encode(), "/old"),
    (
        "old names another column",
        json.dumps({**_ROW, "type": "UPDATE", "old": [{"x": "1"}]}).encode(),
        "/old/0/x",
    ),
    ("empty data", json.dumps({**_ROW, "data": []}).encode(), "/data"),
    ("ddl with a row type", json.dumps({**_ROW, "isDdl": True}).encode(), "/type"),
    ("watermark without _tidb", json.dumps({**_ROW, "type": "TIDB_WATERMARK"}).encode(), ""),
    (
        "commitTs negative",
        json.dumps({**_ROW, "_tidb": {"commitTs": -1}}).encode(),
        "/_tidb/commitTs",
    ),
]


@pytest.mark.parametrize(("value", "where"), [c[1:] for c in REJECTS], ids=[c[0] for c in REJECTS])
def test_decoder_rejects_with_a_place(value: bytes, where: str | None) -> None:
    with pytest.raises(DecodeError) as caught:
        canal_json.decode(Message(key=None, value=value), message_index=4)
    assert caught.value.message_index == 4
    if where is None:
        assert caught.value.offset is not None
    else:
        assert caught.value.pointer == where


def test_null_value_is_rejected() -> None:
    with pytest.raises(DecodeError):
        canal_json.decode(Message(key=None, value=None))


@pytest.mark.parametrize(
    "content",
    [b"{", b"[]", b'{"key":null}', b'{"key":1,"value":null}', b'{"key":null,"value":"!!"}'],
)
def test_bad_claim_check_files_are_decode_errors(content: bytes) -> None:
    with pytest.raises(DecodeError):
        read_claim_check(content)
