"""Debezium envelopes, table-driven both ways: TiCDC's ``codec_test`` facts (ground truth §7.2)
for insert/update/delete with and without schema, DDL rename/create/drop and the checkpoint,
then the rules around them (§5.1, §5.2, §5.4, §5.5, §5.6).

Expected messages are written out here by hand, member order included, and compared byte for
byte; each is also decoded and compared with the decoded event written out by hand.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from debezium_cases import TABLE1

from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    DecodedColumn,
    DecodedDDL,
    DecodedResolved,
    DecodedRow,
    EncodeError,
    IndexInfo,
    Message,
    Profile,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    debezium,
)

NOW_MS = 1701326309000
CONFIG = debezium.Config(cluster_id="test_cluster", now_ms=lambda: NOW_MS)


def dumps(document: object) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode()


def field(schema_type: str, name: str, *, optional: bool = False) -> dict[str, object]:
    return {"type": schema_type, "optional": optional, "field": name}


SOURCE_SCHEMA = {
    "type": "struct",
    "fields": [
        field("string", "version"),
        field("string", "connector"),
        field("string", "name"),
        field("int64", "ts_ms"),
        {
            "type": "string",
            "optional": True,
            "name": "io.debezium.data.Enum",
            "version": 1,
            "parameters": {"allowed": "true,last,false,incremental"},
            "default": "false",
            "field": "snapshot",
        },
        field("string", "db"),
        field("string", "sequence", optional=True),
        field("string", "table", optional=True),
        field("int64", "server_id"),
        field("string", "gtid", optional=True),
        field("string", "file"),
        field("int64", "pos"),
        field("int32", "row"),
        field("int64", "thread", optional=True),
        field("string", "query", optional=True),
    ],
    "optional": False,
    "name": "io.debezium.connector.mysql.Source",
    "field": "source",
}
TRAILER = [
    field("string", "op"),
    field("int64", "ts_ms", optional=True),
    {
        "type": "struct",
        "fields": [
            field("string", "id"),
            field("int64", "total_order"),
            field("int64", "data_collection_order"),
        ],
        "optional": True,
        "name": "event.block",
        "version": 1,
        "field": "transaction",
    },
]
TINY_FIELD = field("int16", "tiny", optional=True)


def source(commit_ts: int, db: str = "test", table: str = "table1") -> dict[str, object]:
    return {
        "version": "2.4.0.Final",
        "connector": "TiCDC",
        "name": "test_cluster",
        "ts_ms": commit_ts >> 18,
        "snapshot": "false",
        "db": db,
        "table": table,
        "server_id": 0,
        "gtid": None,
        "file": "",
        "pos": 0,
        "row": 0,
        "thread": 0,
        "query": None,
        "commit_ts": commit_ts,
        "cluster_id": "test_cluster",
    }


def row_key(tiny: int, *, schema: bool) -> bytes:
    key: dict[str, object] = {"payload": {"tiny": tiny}}
    if schema:
        key["schema"] = {
            "type": "struct",
            "name": "test_cluster.test.table1.Key",
            "optional": False,
            "fields": [TINY_FIELD],
        }
    return dumps(key)


def row_value(op: str, images: dict[str, object], *, schema: bool) -> bytes:
    payload = {"source": source(1), "ts_ms": NOW_MS, "transaction": None, "op": op, **images}
    value: dict[str, object] = {"payload": payload}
    if schema:
        images_schema = [
            {
                "type": "struct",
                "optional": True,
                "name": "test_cluster.test.table1.Value",
                "field": image,
                "fields": [TINY_FIELD],
            }
            for image in ("before", "after")
        ]
        value["schema"] = {
            "type": "struct",
            "optional": False,
            "name": "test_cluster.test.table1.Envelope",
            "version": 1,
            "fields": [*images_schema, SOURCE_SCHEMA, *TRAILER],
        }
    return dumps(value)


def tiny(value: int, *, schema: bool) -> tuple[DecodedColumn, ...]:
    ambiguity = None if schema else "no-schema"
    return (DecodedColumn("tiny", value, handle_key=True, ambiguity=ambiguity),)


def decoded_row(op: str, before: int | None, after: int | None, *, schema: bool) -> DecodedRow:
    return DecodedRow(
        commit_ts=1,
        schema="test",
        table="table1",
        op=op,  # type: ignore[arg-type]
        before=None if before is None else tiny(before, schema=schema),
        after=None if after is None else tiny(after, schema=schema),
        cluster_id="test_cluster",
    )


def event(op: str, before: int | None, after: int | None) -> RowChangedEvent:
    return RowChangedEvent(
        commit_ts=1,
        table=TABLE1,
        op=op,  # type: ignore[arg-type]
        before=None if before is None else (before,),
        after=None if after is None else (after,),
    )


ROW_CASES = [
    # (case, event, options, key tiny, payload images, decoded before/after)
    ("insert", event("insert", None, 1), {}, 1, {"before": None, "after": {"tiny": 1}}, (None, 1)),
    ("update", event("update", 2, 1), {}, 1, {"before": {"tiny": 2}, "after": {"tiny": 1}}, (2, 1)),
    # output-old-value=false: the before member is absent, not null (§5.2)
    (
        "update-no-old-value",
        event("update", 2, 1),
        {"output_old_value": False},
        1,
        {"after": {"tiny": 1}},
        (None, 1),
    ),
    ("delete", event("delete", 2, None), {}, 2, {"after": None, "before": {"tiny": 2}}, (2, None)),
]
OPS = {"insert": "c", "update": "u", "delete": "d"}


@pytest.mark.parametrize("profile", debezium.PROFILES)
@pytest.mark.parametrize("schema", [True, False], ids=["schema", "no-schema"])
@pytest.mark.parametrize(
    ("case", "change", "options", "key", "images", "decoded"),
    ROW_CASES,
    ids=[c[0] for c in ROW_CASES],
)
def test_codec_test_rows(
    profile: Profile,
    schema: bool,
    case: str,
    change: RowChangedEvent,
    options: dict[str, object],
    key: int,
    images: dict[str, object],
    decoded: tuple[int | None, int | None],
) -> None:
    del case
    config = replace(CONFIG, profile=profile, debezium_disable_schema=not schema, **options)  # type: ignore[arg-type]
    [message] = debezium.encode([change], config)
    assert message.key == row_key(key, schema=schema)
    assert message.value == row_value(OPS[change.op], images, schema=schema)
    assert debezium.decode(message) == [decoded_row(change.op, *decoded, schema=schema)]


ID_COLUMN = ColumnInfo(name="id", type="int", key="primary", length=0)
TABLE1_ID = TableInfo(schema="test", name="table1", columns=(ID_COLUMN,))
TABLE2_ID = replace(TABLE1_ID, name="table2")
ID_CHANGE = {
    "defaultCharsetName": "",
    "primaryKeyColumnNames": ["id"],
    "columns": [
        {
            "name": "id",
            "jdbcType": 4,
            "nativeType": None,
            "comment": None,
            "defaultValueExpression": None,
            "enumValues": None,
            "typeName": "INT",
            "typeExpression": "INT",
            "charsetName": None,
            "length": 0,
            "scale": None,
            "position": 1,
            "optional": False,
            "autoIncremented": False,
            "generated": False,
        }
    ],
    "comment": None,
}
DDL_CASES = [
    # (case, event, tableChanges[0] or None, source table)
    (
        "rename",
        DDLEvent(
            commit_ts=1,
            schema="test",
            table="table1",
            ddl_type=14,
            query="RENAME TABLE test.table1 to test.table2",
            table_info=TABLE1_ID,
            pre_table_info=TABLE2_ID,
        ),
        {"type": "ALTER", "id": '"test"."table2","test"."table1"', "table": ID_CHANGE},
        "table1",
    ),
    (
        "create",
        DDLEvent(
            commit_ts=1,
            schema="test",
            table="table1",
            ddl_type=3,
            query="CREATE TABLE test.table1",
            table_info=TABLE1_ID,
        ),
        {"type": "CREATE", "id": '"test"."table1"', "table": ID_CHANGE},
        "table1",
    ),
    (
        "drop",
        DDLEvent(
            commit_ts=1,
            schema="test",
            table="table2",
            ddl_type=4,
            query="DROP TABLE test.table2",
            pre_table_info=TABLE2_ID,
        ),
        {"type": "DROP", "id": '"test"."table2"', "table": None},
        "table2",
    ),
    (
        "truncate",
        DDLEvent(
            commit_ts=1,
            schema="test",
            table="table1",
            ddl_type=11,
            query="TRUNCATE TABLE test.table1",
            table_info=TABLE1_ID,
        ),
        None,
        "table1",
    ),
    (
        "create-database",
        DDLEvent(commit_ts=1, schema="test", table="", ddl_type=1, query="CREATE DATABASE test"),
        None,
        "",
    ),
]


@pytest.mark.parametrize("profile", debezium.PROFILES)
@pytest.mark.parametrize(
    ("case", "ddl", "change", "table"), DDL_CASES, ids=[c[0] for c in DDL_CASES]
)
def test_codec_test_ddl(
    profile: Profile, case: str, ddl: DDLEvent, change: dict[str, object] | None, table: str
) -> None:
    del case
    config = replace(CONFIG, profile=profile, debezium_disable_schema=True)
    [message] = debezium.encode([ddl], config)
    assert message.key == dumps({"payload": {"databaseName": "test"}})
    assert message.value == dumps(
        {
            "payload": {
                "source": source(1, table=table),
                "ts_ms": NOW_MS,
                "databaseName": "test",
                "schemaName": None,
                "ddl": ddl.query,
                "tableChanges": [] if change is None else [change],
            }
        }
    )
    [decoded] = debezium.decode(message)
    assert isinstance(decoded, DecodedDDL)
    assert (
        decoded.commit_ts,
        decoded.schema,
        decoded.table,
        decoded.query,
        decoded.ddl_kind,
        decoded.cluster_id,
    ) == (1, "test", table, ddl.query, None if change is None else change["type"], "test_cluster")
    if change is not None and change["table"] is not None:
        assert decoded.table_info is not None
        [column] = decoded.table_info.columns
        assert (column.name, column.type, column.nullable, column.length) == ("id", "int", False, 0)
        assert decoded.table_info.primary_key() == (0,)


def test_ddl_schema_is_the_fixed_schema_change_schema() -> None:
    ddl = DDL_CASES[0][1]
    [message] = debezium.encode([ddl], CONFIG)
    assert message.key is not None
    assert json.loads(message.key)["schema"] == {
        "type": "struct",
        "name": "io.debezium.connector.mysql.SchemaChangeKey",
        "optional": False,
        "version": 1,
        "fields": [{"field": "databaseName", "optional": False, "type": "string"}],
    }
    schema = json.loads(message.value or b"")["schema"]
    # the fixed name, not the seed's "<cluster>.<db>.<table>.SchemaChangeValue" (§5.7 D2)
    assert schema["name"] == "io.debezium.connector.mysql.SchemaChangeValue"
    assert [f["field"] for f in schema["fields"]] == [
        "source",
        "ts_ms",
        "databaseName",
        "schemaName",
        "ddl",
        "tableChanges",
    ]
    change = schema["fields"][5]["items"]["fields"][2]["fields"][2]["items"]["fields"]
    assert [f["field"] for f in change] == [
        "name",
        "jdbcType",
        "nativeType",
        "typeName",
        "typeExpression",
        "charsetName",
        "length",
        "scale",
        "position",
        "optional",
        "autoIncremented",
        "generated",
        "comment",
        "defaultValueExpression",
        "enumValues",
    ]
    assert (
        debezium.decode(message)[0]
        == debezium.decode(
            debezium.encode([ddl], replace(CONFIG, debezium_disable_schema=True))[0]
        )[0]
    )


@pytest.mark.parametrize("ddl_type", [0, 9, 10, 16, 27, 28, 30, 34, 35, 36, 62, 255])
def test_unclassified_ddl_kinds_produce_no_message(ddl_type: int) -> None:
    """ActionNone, foreign keys, ShardRowID, LOCK/UNLOCK, TiFlash replicas, sequences, ...:
    TiCDC logs ErrDDLUnsupportType and sends nothing (§5.4, §5.7 D8)."""
    ddl = DDLEvent(
        commit_ts=1, schema="test", table="t", query="…", ddl_type=ddl_type, table_info=TABLE1_ID
    )
    assert debezium.encode([ddl], CONFIG) == []


@pytest.mark.parametrize(
    ("ddl_type", "kind"),
    [
        (1, "CREATE"),
        (3, "CREATE"),
        (21, "CREATE"),
        (60, "CREATE"),
        (5, "ALTER"),
        (7, "ALTER"),
        (12, "ALTER"),
        (14, "ALTER"),
        (42, "ALTER"),
        (47, "ALTER"),
        (61, "ALTER"),
        (72, "ALTER"),
        (2, "DROP"),
        (4, "DROP"),
        (8, "DROP"),
        (11, "DROP"),
        (24, "DROP"),
    ],
)
def test_ddl_classification(ddl_type: int, kind: str) -> None:
    ddl = DDLEvent(
        commit_ts=5,
        schema="test",
        table="table1",
        query="q",
        ddl_type=ddl_type,
        table_info=TABLE1_ID,
        pre_table_info=TABLE2_ID,
    )
    [message] = debezium.encode([ddl], CONFIG)
    changes = json.loads(message.value or b"")["payload"]["tableChanges"]
    assert [c["type"] for c in changes] == ([] if ddl_type in (1, 2, 11) else [kind])


@pytest.mark.parametrize(
    ("profile", "expected_id", "database"),
    [("tiflow", '"test"."table1"', "old_db"), ("ticdc", '"old_db"."table2"', "test")],
)
def test_profile_differences_in_ddl(profile: Profile, expected_id: str, database: str) -> None:
    """new-arch names the exchanged table (§5.6 item 4); classic takes DROP TABLE's database
    from the table before the DDL (§5.4)."""
    pre = replace(TABLE2_ID, schema="old_db")
    exchange = DDLEvent(
        commit_ts=1,
        schema="test",
        table="table1",
        ddl_type=42,
        query="q",
        table_info=TABLE1_ID,
        pre_table_info=pre,
    )
    drop = replace(exchange, ddl_type=4, table_info=None)
    config = replace(CONFIG, profile=profile)
    [exchanged, dropped] = debezium.encode([exchange, drop], config)
    assert json.loads(exchanged.value or b"")["payload"]["tableChanges"][0]["id"] == expected_id
    assert json.loads(dropped.key or b"")["payload"] == {"databaseName": database}


WATERMARK_KEY = {
    "payload": {},
    "schema": {
        "type": "struct",
        "name": "test_cluster.watermark.Key",
        "optional": False,
        "fields": [],
    },
}


@pytest.mark.parametrize("profile", debezium.PROFILES)
def test_codec_test_checkpoint(profile: Profile) -> None:
    config = replace(CONFIG, profile=profile, enable_tidb_extension=True)
    [message] = debezium.encode([ResolvedEvent(commit_ts=3)], config)
    assert message.key == dumps(WATERMARK_KEY)
    source_schema = dict(SOURCE_SCHEMA)
    if profile == "ticdc":  # declared with the extension on (§5.6 item 1)
        source_schema["fields"] = [
            *SOURCE_SCHEMA["fields"],
            field("int64", "commit_ts"),  # type: ignore[misc]
            field("string", "cluster_id"),
        ]
    assert message.value == dumps(
        {
            # ts_ms, transaction, then op: the seed's order (op first) is stale
            "payload": {
                "source": source(3, "", ""),
                "ts_ms": NOW_MS,
                "transaction": None,
                "op": "m",
            },
            "schema": {
                "type": "struct",
                "optional": False,
                "name": "test_cluster.watermark.Envelope",
                "version": 1,
                "fields": [source_schema, *TRAILER],
            },
        }
    )
    assert debezium.decode(message) == [DecodedResolved(commit_ts=3, cluster_id="test_cluster")]


def test_resolved_without_tidb_extension_produces_no_message() -> None:
    assert debezium.encode([ResolvedEvent(commit_ts=3)], CONFIG) == []


def test_schema_names_are_sanitised() -> None:
    """``helper_test``: ("default", "1A.B", "columnNameWith中文") → default._1A_B.columnNameWith__."""
    table = replace(TABLE1, schema="1A.B", name="columnNameWith中文")
    insert = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(1,))
    [message] = debezium.encode([insert], debezium.Config())
    assert json.loads(message.key or b"")["schema"]["name"] == "default._1A_B.columnNameWith__.Key"
    watermark_config = debezium.Config(cluster_id="9 lives", enable_tidb_extension=True)
    [watermark] = debezium.encode([ResolvedEvent(commit_ts=1)], watermark_config)
    assert json.loads(watermark.key or b"")["schema"]["name"] == "_9_lives.watermark.Key"


def test_key_of_a_table_without_handle_key_is_empty() -> None:
    table = TableInfo(schema="test", name="t", columns=(ColumnInfo(name="a", type="int"),))
    insert = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(7,))
    [message] = debezium.encode([insert], CONFIG)
    assert message.key == dumps(
        {
            "payload": {},
            "schema": {
                "type": "struct",
                "name": "test_cluster.test.t.Key",
                "optional": False,
                "fields": [],
            },
        }
    )
    [row] = debezium.decode(message)
    assert isinstance(row, DecodedRow)
    assert row.after == (DecodedColumn("a", 7, handle_key=False),)


GENERATED = TableInfo(
    schema="test",
    name="g",
    columns=(
        ColumnInfo(name="a", type="int", key="primary"),
        ColumnInfo(name="v", type="int", generated="virtual"),
        ColumnInfo(name="s", type="int", generated="stored"),
    ),
    indexes=(IndexInfo(name="PRIMARY", columns=("a",), primary=True, unique=True),),
)


@pytest.mark.parametrize(
    ("profile", "fields"),
    [
        ("tiflow", ["a", "s", "v"]),  # the row's columns, then the virtual ones (§5.2)
        ("ticdc", ["a", "v", "s", "v"]),  # every column, then the virtual ones again (§5.2)
    ],
)
def test_virtual_generated_columns(profile: Profile, fields: list[str]) -> None:
    insert = RowChangedEvent(commit_ts=1, table=GENERATED, op="insert", after=(1, None, 2))
    [message] = debezium.encode([insert], replace(CONFIG, profile=profile))
    value = json.loads(message.value or b"")
    assert value["payload"]["after"] == {"a": 1, "s": 2}  # never a virtual column
    for image in value["schema"]["fields"][:2]:
        assert [f["field"] for f in image["fields"]] == fields
    [row] = debezium.decode(message)
    assert isinstance(row, DecodedRow)
    assert [(c.name, c.value) for c in row.after or ()] == [("a", 1), ("s", 2)]


def test_text_is_written_as_jsoniter_does() -> None:
    """No HTML escaping, U+2028 and invalid UTF-8 copied raw, control characters escaped (§1.4)."""
    table = TableInfo(schema="db<&>", name="t", columns=(ColumnInfo(name="c", type="varchar"),))
    insert = RowChangedEvent(
        commit_ts=1, table=table, op="insert", after=(b"<&>\xe2\x80\xa8\xff\x01",)
    )
    [message] = debezium.encode([insert], replace(CONFIG, debezium_disable_schema=True))
    assert b'"db":"db<&>"' in (message.value or b"")
    assert b'"after":{"c":"<&>\xe2\x80\xa8\xff\\u0001"}' in (message.value or b"")
    [row] = debezium.decode(message)
    assert isinstance(row, DecodedRow)
    assert row.after == (
        DecodedColumn("c", b"<&>\xe2\x80\xa8\xff\x01", handle_key=False, ambiguity="no-schema"),
    )


def test_encode_errors_name_the_event() -> None:
    table = TableInfo(schema="test", name="t", columns=(ColumnInfo(name="d", type="datetime"),))
    bad = RowChangedEvent(commit_ts=1, table=table, op="insert", after=("yesterday",))
    with pytest.raises(
        EncodeError, match=r"debezium: event 1: column 'd': datetime value 'yesterday'"
    ):
        debezium.encode([ResolvedEvent(commit_ts=1), bad], CONFIG)
    bad_default = TableInfo(
        schema="test", name="t", columns=(ColumnInfo(name="b", type="bit", length=3, default="x"),)
    )
    with pytest.raises(EncodeError, match="column 'b' default: a BIT value"):
        debezium.encode([RowChangedEvent(commit_ts=1, table=bad_default, op="insert", after=(1,))])
    needs_table = DDLEvent(commit_ts=1, schema="test", table="t", query="q", ddl_type=5)
    with pytest.raises(EncodeError, match="needs table_info"):
        debezium.encode([needs_table], CONFIG)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"enable-tidb-extension": "yes"}, "takes true or false"),
        ({"max-batch-size": "3"}, "unknown option"),
        ({"tz": "Mars/Olympus"}, "unknown time zone"),
        ({"large-message-handle-compression": "zstd"}, "none, snappy or lz4"),
    ],
)
def test_config_from_options_rejects(options: dict[str, str], problem: str) -> None:
    with pytest.raises(EncodeError, match=problem):
        debezium.config_from_options(options)


def test_config_from_options() -> None:
    config = debezium.config_from_options(
        {
            "enable-tidb-extension": "true",
            "debezium-disable-schema": "true",
            "output-old-value": "false",
            "cluster-id": "c1",
            "tz": "Asia/Shanghai",
            "large-message-handle-compression": "none",
        },
        profile="ticdc",
    )
    assert config == debezium.Config(
        profile="ticdc",
        enable_tidb_extension=True,
        debezium_disable_schema=True,
        output_old_value=False,
        cluster_id="c1",
        time_zone="Asia/Shanghai",
    )


def test_real_debezium_shapes_decode() -> None:
    """Snapshot reads (op r) are inserts; a tombstone (null value) is no event."""
    value = {
        "payload": {
            "source": {"connector": "mysql", "db": "d", "table": "t"},
            "op": "r",
            "before": None,
            "after": {"a": 1},
            "ts_ms": 5,
        }
    }
    [row] = debezium.decode(Message(key=None, value=dumps(value)))
    assert row == DecodedRow(
        commit_ts=None,
        schema="d",
        table="t",
        op="insert",
        before=None,
        after=(DecodedColumn("a", 1, ambiguity="no-schema"),),
    )
    assert debezium.decode(Message(key=b'{"payload":{"a":1}}', value=None)) == []


def _described(name: str, jdbc: int, type_name: str, **more: object) -> dict[str, object]:
    """A tableChanges column as §5.4 describes it (members in TiCDC's order)."""
    out: dict[str, object] = {
        "name": name,
        "jdbcType": jdbc,
        "nativeType": None,
        "comment": None,
        "defaultValueExpression": None,
        "enumValues": None,
        "typeName": type_name,
        "typeExpression": type_name,
        "charsetName": None,
        "length": None,
        "scale": None,
        "position": 0,
        "optional": True,
        "autoIncremented": False,
        "generated": False,
    }
    for key, value in more.items():
        assert key in out
        out[key] = value
    return out


DESCRIBED = [
    (
        ColumnInfo(name="id", type="bigint", unsigned=True, auto_increment=True, key="primary"),
        _described(
            "id", -5, "BIGINT UNSIGNED", optional=False, autoIncremented=True, generated=True
        ),
    ),
    # defined by the query: TiCDC's parse clears its comment
    (
        ColumnInfo(name="name", type="varchar", length=64, comment="who"),
        _described("name", 12, "VARCHAR", charsetName="utf8mb4", length=64),
    ),
    (
        ColumnInfo(name="other", type="int", comment="kept"),
        _described("other", 4, "INT", comment="kept"),
    ),
    (
        ColumnInfo(
            name="price", type="decimal", length=10, decimal=2, default=DecimalValue("1.50")
        ),
        _described("price", 3, "DECIMAL", length=10, scale=2, defaultValueExpression="1.50"),
    ),
    (
        ColumnInfo(name="ratio", type="double", length=8, decimal=3),
        _described("ratio", 8, "DOUBLE", typeExpression="DOUBLE(8,3)", length=8, scale=3),
    ),
    (ColumnInfo(name="f", type="float"), _described("f", 6, "FLOAT")),
    (
        ColumnInfo(
            name="ts", type="timestamp", decimal=3, on_update_now=True, default="CURRENT_TIMESTAMP"
        ),
        _described(
            "ts",
            2014,
            "TIMESTAMP",
            length=3,
            autoIncremented=True,
            generated=True,
            defaultValueExpression="1970-01-01 00:00:00",
        ),
    ),
    (
        ColumnInfo(name="dt", type="datetime", on_update_now=True),
        _described("dt", 93, "DATETIME", length=0),
    ),  # ON UPDATE counts for TIMESTAMP only
    (
        ColumnInfo(name="e", type="enum", elements=("a", "b"), default=2),
        _described(
            "e",
            1,
            "ENUM",
            charsetName="utf8mb4",
            length=1,
            enumValues=["'a'", "'b'"],
            defaultValueExpression="b",
        ),
    ),
    (
        ColumnInfo(name="s", type="set", elements=("x", "y", "z")),
        _described(
            "s", 1, "SET", charsetName="utf8mb4", length=5, enumValues=["'x'", "'y'", "'z'"]
        ),
    ),
    (
        ColumnInfo(name="bin", type="varbinary", length=16),
        _described("bin", -3, "VARBINARY", length=16),
    ),
    (ColumnInfo(name="bl", type="blob"), _described("bl", 2004, "BLOB")),
    (
        ColumnInfo(name="tx", type="text", charset="latin1"),
        _described("tx", 12, "TEXT", charsetName="latin1"),
    ),
    (
        ColumnInfo(name="bits", type="bit", length=10, default=5),
        _described("bits", -7, "BIT", length=10, defaultValueExpression="0000000101"),
    ),
    (ColumnInfo(name="y", type="year"), _described("y", 4, "YEAR", length=4)),
    (ColumnInfo(name="tiny", type="tinyint", length=1), _described("tiny", 5, "TINYINT", length=1)),
    (
        ColumnInfo(name="ui", type="int", unsigned=True, zerofill=True, length=10),
        _described("ui", 4, "INT UNSIGNED ZEROFILL"),
    ),  # 10 is INT UNSIGNED's default length
    (ColumnInfo(name="js", type="json"), _described("js", 1111, "JSON")),
    (
        ColumnInfo(name="vec", type="vector", length=3),
        _described("vec", 12, "VECTOR", typeExpression="VECTOR(3)", length=3),
    ),
]


def test_table_changes_describe_every_column() -> None:
    table = TableInfo(
        schema="test", name="t", columns=tuple(c for c, _ in DESCRIBED), charset="utf8mb4"
    )
    query = "ALTER TABLE t ADD COLUMN name varchar(64) COMMENT 'who'"
    ddl = DDLEvent(commit_ts=1, schema="test", table="t", query=query, ddl_type=5, table_info=table)
    [message] = debezium.encode([ddl], CONFIG)
    change = json.loads(message.value or b"")["payload"]["tableChanges"][0]
    assert (change["type"], change["id"]) == ("ALTER", '"test"."t"')
    described = change["table"]
    assert (described["defaultCharsetName"], described["primaryKeyColumnNames"]) == (
        "utf8mb4",
        ["id"],
    )
    for position, (got, (_, want)) in enumerate(zip(described["columns"], DESCRIBED, strict=True)):
        assert list(got.items()) == list({**want, "position": position + 1}.items())
    assert b'"scale":2,' in (message.value or b"")  # Go prints the float64 scale as 2
    [decoded] = debezium.decode(message)
    assert isinstance(decoded, DecodedDDL)
    info = decoded.table_info
    assert info is not None
    assert info.charset == "utf8mb4"
    assert info.primary_key() == (0,)
    by_name = {c.name: c for c in info.columns}
    assert (by_name["id"].type, by_name["id"].unsigned, by_name["id"].auto_increment) == (
        "bigint",
        True,
        True,
    )
    assert (by_name["price"].length, by_name["price"].decimal) == (10, 2)
    assert by_name["price"].default == DecimalValue("1.50")
    assert (by_name["ts"].decimal, by_name["ts"].on_update_now) == (3, True)
    assert by_name["e"].elements == ("a", "b")
    assert by_name["bits"].default == 5
    assert by_name["ui"].zerofill
    assert (by_name["other"].comment, by_name["name"].comment) == ("kept", None)
