"""Simple-JSON: every value form, the envelope, large messages (ground truth §4.1–§4.7).

Each value case runs both ways under both profiles: the encoder writes exactly the JSON text
of the case, and a consumer (``SimpleDecoder`` after the BOOTSTRAP) reads back exactly the
typed value of the case. The stateless ``decode`` keeps the wire's text.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from simple_helpers import TS, VERSION, config, feed_all, insert, table, with_bootstrap

from ticdc_conformance.reference import (
    ChangeEvent,
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    DecodedColumn,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    EncodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TimestampValue,
    simple,
    simple_avro,
    simple_json,
)

C = ColumnInfo
# (column c, value, JSON text of data.c, the value a consumer reads back)
VALUES: list[tuple[str, ColumnInfo, Any, str, Any]] = [
    ("tinyint", C(name="c", type="tinyint"), -128, '"-128"', -128),
    ("tinyint-unsigned", C(name="c", type="tinyint", unsigned=True), 255, '"255"', 255),
    ("smallint", C(name="c", type="smallint"), 32767, '"32767"', 32767),
    (
        "mediumint-unsigned",
        C(name="c", type="mediumint", unsigned=True),
        16777215,
        '"16777215"',
        16777215,
    ),
    ("int", C(name="c", type="int"), -2147483648, '"-2147483648"', -2147483648),
    ("bigint", C(name="c", type="bigint"), -(2**63), '"-9223372036854775808"', -(2**63)),
    (
        "bigint-unsigned-max",
        C(name="c", type="bigint", unsigned=True),
        2**64 - 1,
        '"18446744073709551615"',
        2**64 - 1,
    ),
    ("year", C(name="c", type="year"), 2000, '"2000"', 2000),
    # §4.3: FLOAT is FormatFloat(v,'f',-1,32): 32-bit shortest digits, never an exponent
    ("float", C(name="c", type="float"), 90.5, '"90.5"', 90.5),
    ("float-32-bit-digits", C(name="c", type="float"), 153.123, '"153.123"', 153.123),
    ("float-large", C(name="c", type="float"), 1e21, '"1000000000000000000000"', 1e21),
    ("float-small", C(name="c", type="float"), 1e-7, '"0.0000001"', 1e-7),
    ("float-negative-zero", C(name="c", type="float"), -0.0, '"-0"', -0.0),
    ("double", C(name="c", type="double"), 0.1, '"0.1"', 0.1),
    ("double-large", C(name="c", type="double"), 1.5e22, '"15000000000000000000000"', 1.5e22),
    (
        "decimal-scale-kept",
        C(name="c", type="decimal", decimal=7),
        DecimalValue("129012.1230000"),
        '"129012.1230000"',
        DecimalValue("129012.1230000"),
    ),
    ("date", C(name="c", type="date"), "2021-01-02", '"2021-01-02"', "2021-01-02"),
    (
        "datetime-fsp",
        C(name="c", type="datetime", decimal=3),
        "2021-01-02 03:04:05.123",
        '"2021-01-02 03:04:05.123"',
        "2021-01-02 03:04:05.123",
    ),
    ("time-negative", C(name="c", type="time"), "-838:59:59", '"-838:59:59"', "-838:59:59"),
    # §4.3 / §4.11 S1: TIMESTAMP is an object naming the server zone, not a string
    (
        "timestamp",
        C(name="c", type="timestamp"),
        TimestampValue("2021-01-02 00:00:00"),
        '{"location":"UTC","value":"2021-01-02 00:00:00"}',
        TimestampValue("2021-01-02 00:00:00", "UTC"),
    ),
    ("enum-index", C(name="c", type="enum", elements=("a", "b")), 2, '"2"', 2),
    ("set-bitmask", C(name="c", type="set", elements=("a", "b")), 3, '"3"', 3),
    ("bit", C(name="c", type="bit", length=10), 341, '"341"', 341),
    ("bit-64", C(name="c", type="bit", length=64), 2**64 - 1, '"18446744073709551615"', 2**64 - 1),
    (
        "json",
        C(name="c", type="json"),
        '{"key1": "value1"}',
        r'"{\"key1\": \"value1\"}"',
        '{"key1": "value1"}',
    ),
    ("vector", C(name="c", type="vector"), "[1,2,3]", '"[1,2,3]"', "[1,2,3]"),
    # §1.4: encoding/json escapes HTML characters and U+2028
    (
        "varchar-html",
        C(name="c", type="varchar"),
        "<a&b>\u2028",
        r'"\u003ca\u0026b\u003e\u2028"',
        "<a&b>\u2028",
    ),
    ("char-utf8", C(name="c", type="char"), "测", '"测"', "测"),
    ("text-plain", C(name="c", type="text"), "abc", '"abc"', "abc"),
    # invalid UTF-8 in text becomes U+FFFD: the original bytes are lost
    ("text-invalid-utf8", C(name="c", type="mediumtext"), b"a\xff", '"a\\ufffd"', "a\ufffd"),
    # §4.3 / §4.11 S9: binary strings are standard base64
    ("varbinary", C(name="c", type="varbinary"), b"\x89PNG", '"iVBORw=="', b"\x89PNG"),
    ("binary", C(name="c", type="binary"), b"\x00", '"AA=="', b"\x00"),
    ("blob", C(name="c", type="blob"), b"\x00\xff", '"AP8="', b"\x00\xff"),
    ("longblob-text-value", C(name="c", type="longblob"), "测", '"5rWL"', "测".encode()),
    (
        "varchar-charset-binary",
        C(name="c", type="varchar", charset="binary"),
        b"\x01",
        '"AQ=="',
        b"\x01",
    ),
    ("null", C(name="c", type="int"), None, "null", None),
]


@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
@pytest.mark.parametrize(
    ("column", "value", "text", "typed"), [c[1:] for c in VALUES], ids=[c[0] for c in VALUES]
)
def test_value_forms_both_ways(
    profile: str, column: ColumnInfo, value: Any, text: str, typed: Any
) -> None:
    t = table(column)
    bootstrap, row = with_bootstrap("json", [insert(t, value)], config(profile))
    assert bootstrap.key is None
    assert row.key is None
    assert (
        row.value
        == (
            f'{{"version":1,"database":"test","table":"t","tableID":20,"type":"INSERT",'
            f'"commitTs":{TS},"buildTs":0,"schemaVersion":{VERSION},"data":{{"c":{text},"id":"1"}}}}'
        ).encode()
    )
    _, decoded = feed_all("json", [bootstrap, row])
    assert isinstance(decoded, DecodedRow)
    assert decoded.after == (
        DecodedColumn("id", 1, mysql_type="int"),
        DecodedColumn("c", typed, mysql_type=simple.mysql_type(column)),
    )
    assert type(decoded.after[1].value) is type(typed)


def test_stateless_decode_keeps_the_wire_text() -> None:
    t = table(C(name="b", type="blob"), C(name="s", type="timestamp"))
    [row] = simple_json.encode([insert(t, b"\x00", TimestampValue("2021-01-02 00:00:00"))])
    [decoded] = simple_json.decode(row)
    assert isinstance(decoded, DecodedRow)
    assert decoded.after == (
        DecodedColumn("b", "AA==", ambiguity=simple.UNTYPED),
        DecodedColumn("id", "1", ambiguity=simple.UNTYPED),
        DecodedColumn("s", TimestampValue("2021-01-02 00:00:00", "UTC"), ambiguity=simple.UNTYPED),
    )


@pytest.mark.parametrize(
    ("column", "value", "problem"),
    [
        (C(name="c", type="tinyint"), 128, "outside -128..127"),
        (C(name="c", type="int", unsigned=True), -1, "outside 0..4294967295"),
        (C(name="c", type="decimal"), "1.5", "is not a decimal"),
        (
            C(name="c", type="timestamp"),
            TimestampValue("2021-01-02 00:00:00", "Asia/Shanghai"),
            "rendered in Asia/Shanghai",
        ),
        (C(name="c", type="geometry"), "POINT(1 1)", "cannot hold"),
        (C(name="c", type="null"), 1, "cannot hold"),
    ],
)
def test_values_that_do_not_fit_are_encode_errors(
    column: ColumnInfo, value: Any, problem: str
) -> None:
    with pytest.raises(EncodeError, match=problem) as caught:
        simple_json.encode([insert(table(column), value)])
    assert caught.value.event_index == 0
    assert "column 'c'" in str(caught.value)


def test_update_and_delete_members_and_order() -> None:
    """§4.2: member order, UPDATE has data and old, DELETE only old; physical tableID."""
    t = table(C(name="v", type="varchar"), partition_id=77)
    update = RowChangedEvent(commit_ts=5, table=t, op="update", before=(1, "a"), after=(1, "b"))
    delete = RowChangedEvent(commit_ts=6, table=t, op="delete", before=(1, "b"))
    up, de = simple_json.encode([update, delete])
    head = '{"version":1,"database":"test","table":"t","tableID":77,'
    assert (
        up.value
        == (
            head + f'"type":"UPDATE","commitTs":5,"buildTs":0,"schemaVersion":{VERSION},'
            '"data":{"id":"1","v":"b"},"old":{"id":"1","v":"a"}}'
        ).encode()
    )
    assert (
        de.value
        == (
            head + f'"type":"DELETE","commitTs":6,"buildTs":0,"schemaVersion":{VERSION},'
            '"old":{"id":"1","v":"b"}}'
        ).encode()
    )


def test_empty_members_are_omitted() -> None:
    """omitempty: empty names, zero tableID and schemaVersion, an empty data map vanish."""
    t = simple_json.encode(
        [
            RowChangedEvent(
                commit_ts=1,
                table=table().__class__(
                    schema="", name="", columns=(C(name="v", type="int", generated="virtual"),)
                ),
                op="insert",
                after=(None,),
            )
        ],
        config(),
    )
    assert [m.value for m in t] == [b'{"version":1,"type":"INSERT","commitTs":1,"buildTs":0}']
    [decoded] = simple_json.decode(t[0])
    assert isinstance(decoded, DecodedRow)
    assert (decoded.op, decoded.after, decoded.schema, decoded.table_id) == ("insert", (), "", 0)


def test_watermark_ddl_and_injected_clock() -> None:
    ticks = iter([1708923816911, 1708936343598])
    cfg = config(build_ts=lambda: next(ticks))
    ddl = DDLEvent(commit_ts=7, schema="test", table="", query="CREATE DATABASE test", ddl_type=1)
    watermark, query = simple_json.encode([ResolvedEvent(commit_ts=447984124732375041), ddl], cfg)
    assert (
        watermark.value
        == b'{"version":1,"type":"WATERMARK","commitTs":447984124732375041,"buildTs":1708923816911}'
    )
    # §4.2: DDL messages carry no database/table; database-level DDLs no tableSchema
    assert (
        query.value
        == b'{"version":1,"type":"QUERY","sql":"CREATE DATABASE test","commitTs":7,"buildTs":1708936343598}'
    )
    assert simple_json.decode(watermark) == [DecodedResolved(commit_ts=447984124732375041)]


def test_config_equality_ignores_the_clock() -> None:
    assert config(build_ts=lambda: 5) == config()


def test_one_message_per_event_and_no_bootstrap_of_its_own() -> None:
    """When TiCDC sends BOOTSTRAP is a stream rule (§6.6); encode writes what it is given."""
    a, b = table(name="a"), table(name="b", partition_id=3)
    events: list[ChangeEvent] = [insert(a), insert(a), insert(b), ResolvedEvent(commit_ts=1)]
    kinds = [json.loads(m.value or b"")["type"] for m in simple_json.encode(events)]
    assert kinds == ["INSERT", "INSERT", "INSERT", "WATERMARK"]


def test_checksum_member() -> None:
    """§4.6: present only with the row checksum on; INSERT has previous 0."""
    t = table(C(name="v", type="int"))
    [row] = simple_json.encode([insert(t, 5)], config(enable_row_checksum=True))
    member = json.loads(row.value or b"")["checksum"]
    expected = simple.row_checksum(t, (1, 5))
    assert member == {"version": 1, "corrupted": False, "current": expected, "previous": 0}
    assert b'"schemaVersion":447984074911121426,"checksum":{"version":1,' in (row.value or b"")


LARGE = table(C(name="v", type="varchar"))
BIG_ROW = insert(LARGE, "x" * 300)


def test_row_too_large_is_an_error_without_large_message_handling() -> None:
    full = simple_json.encode([BIG_ROW], config())[0]
    limit = len(full.value or b"") + 36
    assert simple_json.encode([BIG_ROW], config(max_message_bytes=limit)) == [full]
    with pytest.raises(
        EncodeError, match=rf"row needs {limit} bytes, max-message-bytes is {limit - 1}"
    ):
        simple_json.encode([BIG_ROW], config(max_message_bytes=limit - 1))


def test_handle_key_only_and_claim_check() -> None:
    """§4.7: handle-key columns only; claim-check adds the location and stores the full value."""
    common: dict[str, Any] = {"max_message_bytes": 300}
    [hko] = simple_json.encode(
        [BIG_ROW], config(large_message_handle_option="handle-key-only", **common)
    )
    assert (
        hko.value
        == f'{{"version":1,"database":"test","table":"t","tableID":20,"type":"INSERT","commitTs":{TS},"buildTs":0,"schemaVersion":{VERSION},"handleKeyOnly":true,"data":{{"id":"1"}}}}'.encode()
    )
    [cc] = simple_json.encode(
        [BIG_ROW],
        config(
            large_message_handle_option="claim-check",
            claim_check_storage_uri="s3://b/cc/",
            **common,
        ),
    )
    [stored] = cc.claim_checks
    assert stored.location.startswith("s3://b/cc/")
    assert stored.location.endswith(".json")
    body = json.loads(cc.value or b"")
    assert (body["claimCheckLocation"], body["handleKeyOnly"], body["data"]) == (
        stored.location,
        True,
        {"id": "1"},
    )
    original = simple.read_claim_check(stored.content)
    assert original.key is None
    assert json.loads(original.value or b"")["data"]["v"] == "x" * 300
    [row] = simple_json.decode(cc)
    assert isinstance(row, DecodedRow)
    assert (row.handle_key_only, row.claim_check_location) == (True, stored.location)


def test_ddl_and_bootstrap_over_the_limit_are_errors() -> None:
    with pytest.raises(EncodeError, match="BOOTSTRAP needs"):
        simple_json.encode_bootstrap(LARGE, config(max_message_bytes=100))
    ddl = DDLEvent(commit_ts=1, schema="test", table="t", query="x" * 200, ddl_type=3)
    with pytest.raises(EncodeError, match="DDL needs"):
        simple_json.encode([ddl], config(max_message_bytes=100))


@pytest.mark.parametrize(
    ("value", "path", "problem"),
    [
        (b"\xff", None, "not JSON"),
        (b"[]", "/", "a message is a JSON object"),
        (b'{"version":1,"type":"NOPE","commitTs":1,"buildTs":0}', "/type", "unknown message type"),
        (
            b'{"version":2,"type":"WATERMARK","commitTs":1,"buildTs":0}',
            "/version",
            "version must be 1",
        ),
        (
            b'{"version":1,"type":"WATERMARK","commitTs":-1,"buildTs":0}',
            "/commitTs",
            "commitTs must be",
        ),
        (b'{"version":1,"type":"WATERMARK","commitTs":1}', "/", "missing member buildTs"),
        (
            b'{"version":1,"type":"WATERMARK","commitTs":1,"buildTs":0,"sql":"x"}',
            "/sql",
            "no such member",
        ),
        (b'{"version":1,"type":"BOOTSTRAP","commitTs":0,"buildTs":0}', "/", "has a tableSchema"),
        (b'{"version":1,"type":"INSERT","commitTs":1,"buildTs":0,"old":{}}', "/old", "has no old"),
        (
            b'{"version":1,"type":"INSERT","commitTs":1,"buildTs":0,"data":{"a":1}}',
            "/data/a",
            "a value is a string",
        ),
        (
            b'{"version":1,"type":"INSERT","commitTs":1,"buildTs":0,"data":{"a":{"location":"UTC","value":"x"}}}',
            "/data/a/value",
            "not a timestamp",
        ),
        (
            b'{"version":1,"type":"INSERT","commitTs":1,"buildTs":0,"checksum":{"version":1}}',
            "/checksum",
            "checksum has",
        ),
        (
            b'{"version":1,"type":"QUERY","commitTs":1,"buildTs":0,"tableSchema":{"database":"s"}}',
            "/tableSchema/database",
            "unknown member",
        ),
    ],
)
def test_invalid_messages_are_located_decode_errors(
    value: bytes, path: str | None, problem: str
) -> None:
    with pytest.raises(DecodeError, match=problem) as caught:
        simple_json.decode(Message(key=None, value=value), message_index=4)
    assert (caught.value.protocol, caught.value.part, caught.value.message_index) == (
        "simple-json",
        "value",
        4,
    )
    if path is not None:
        assert caught.value.pointer == ("" if path == "/" else path)


def test_a_key_or_no_value_is_rejected() -> None:
    with pytest.raises(DecodeError, match="nil key") as caught:
        simple_json.decode(Message(key=b"k", value=b"{}"))
    assert caught.value.part == "key"
    with pytest.raises(DecodeError, match="empty"):
        simple_json.decode(Message(key=None, value=None))


def test_options_by_tidb_names() -> None:
    cfg = simple_json.config_from_options(
        {
            "integrity-check-level": "correctness",
            "tz": "Asia/Shanghai",
            "max-message-bytes": "100",
            "large-message-handle-option": "claim-check",
            "claim-check-storage-uri": "file:///tmp/cc",
        },
        profile="ticdc",
    )
    assert cfg == simple.Config(
        profile="ticdc",
        enable_row_checksum=True,
        time_zone="Asia/Shanghai",
        max_message_bytes=100,
        large_message_handle_option="claim-check",
        claim_check_storage_uri="file:///tmp/cc",
    )
    for options, problem in (
        ({"nope": "1"}, "unknown option"),
        ({"integrity-check-level": "x"}, "none or correctness"),
        ({"max-message-bytes": "-1"}, "whole number"),
        ({"large-message-handle-option": "claim-check"}, "claim-check-storage-uri"),
        ({"large-message-handle-compression": "zstd"}, "none, snappy or lz4"),
    ):
        with pytest.raises(EncodeError, match=problem):
            simple_avro.config_from_options(options)
    # one Config serves both encodings: the codec is the encoding
    assert simple_avro.config_from_options({"tz": "Asia/Shanghai"}) == simple.Config(
        time_zone="Asia/Shanghai"
    )
