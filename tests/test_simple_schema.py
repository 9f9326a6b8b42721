"""TableSchema, mysqlType names and the DDL type mapping (ground truth §4.4, §4.5, §4.8, §7.2)."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pytest
from simple_helpers import codec, config

from ticdc_conformance.fixtures.builder._fact_events import T1

# TestNewTableSchema (§7.2): create table test.t1(id int primary key, name varchar(64) not null,
# age int, email varchar(255) not null, unique index idx_name(name), index idx_age_email(age,email))
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecodedBootstrap,
    DecodedDDL,
    DecodeError,
    IndexInfo,
    Message,
    TableInfo,
    simple,
    simple_avro,
    simple_json,
)
from ticdc_conformance.reference.simple._avro import schema_text

C = ColumnInfo
T1_JSON = (
    '{"schema":"test","table":"t1","tableID":104,"version":447984074911121426,"columns":['
    '{"name":"id","dataType":{"mysqlType":"int","charset":"binary","collate":"binary","length":11},"nullable":false,"default":null},'
    '{"name":"name","dataType":{"mysqlType":"varchar","charset":"utf8mb4","collate":"utf8mb4_bin","length":64},"nullable":false,"default":null},'
    '{"name":"age","dataType":{"mysqlType":"int","charset":"binary","collate":"binary","length":11},"nullable":true,"default":null},'
    '{"name":"email","dataType":{"mysqlType":"varchar","charset":"utf8mb4","collate":"utf8mb4_bin","length":255},"nullable":false,"default":null}],'
    '"indexes":[{"name":"idx_name","unique":true,"primary":false,"nullable":false,"columns":["name"]},'
    '{"name":"idx_age_email","unique":false,"primary":false,"nullable":true,"columns":["age","email"]},'
    '{"name":"primary","unique":true,"primary":true,"nullable":false,"columns":["id"]}]}'
)
# what a consumer rebuilds: the synthetic primary index is an index like the others
T1_DECODED = TableInfo(
    schema="test",
    name="t1",
    table_id=104,
    schema_version=447984074911121426,
    columns=(
        C(name="id", type="int", length=11, nullable=False, charset="binary", collation="binary"),
        C(
            name="name",
            type="varchar",
            length=64,
            nullable=False,
            charset="utf8mb4",
            collation="utf8mb4_bin",
        ),
        C(name="age", type="int", length=11, nullable=True, charset="binary", collation="binary"),
        C(
            name="email",
            type="varchar",
            length=255,
            nullable=False,
            charset="utf8mb4",
            collation="utf8mb4_bin",
        ),
    ),
    indexes=(
        IndexInfo(name="idx_name", columns=("name",), unique=True),
        IndexInfo(name="idx_age_email", columns=("age", "email")),
        IndexInfo(name="primary", columns=("id",), primary=True, unique=True),
    ),
)


def bootstrap_json(table: TableInfo, profile: str = "tiflow") -> dict[str, Any]:
    message = simple_json.encode_bootstrap(table, config(profile))
    return json.loads(message.value or b"")  # type: ignore[no-any-return]


def bootstrap_avro_record(table: TableInfo, profile: str = "tiflow") -> dict[str, Any]:
    """The TableSchema record as fastavro reads it (the library, not the codec)."""
    message = simple_avro.encode_bootstrap(table, config(profile))
    parsed = fastavro.parse_schema(json.loads(schema_text()))
    result: Any = fastavro.schemaless_reader(
        io.BytesIO(message.value or b""), parsed, None, return_record_name=True
    )
    return result[1]["payload"][1]["tableSchema"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_new_table_schema_facts(encoding: str) -> None:
    """§7.2 TestNewTableSchema: columns, indexes in TiDB order, synthetic primary last."""
    message = codec(encoding).encode_bootstrap(T1, config())
    if encoding == "json":
        assert (
            message.value
            == b'{"version":1,"type":"BOOTSTRAP","commitTs":0,"buildTs":0,"tableSchema":'
            + T1_JSON.encode()
            + b"}"
        )
    assert codec(encoding).decode(message) == [
        DecodedBootstrap(commit_ts=0, schema="test", table="t1", table_info=T1_DECODED)
    ]


def test_primary_key_as_constraint_gives_the_same_schema() -> None:
    """Case 2 of TestNewTableSchema: `primary key(id)` on an int is still the row handle."""
    assert bootstrap_json(T1)["tableSchema"] == json.loads(T1_JSON)


def test_a_primary_index_keeps_its_place() -> None:
    t = TableInfo(
        schema="s",
        name="t",
        columns=(C(name="a", type="varchar"), C(name="b", type="int")),
        indexes=(
            IndexInfo(name="k", columns=("b",)),
            IndexInfo(name="PRIMARY", columns=("a",), primary=True),
        ),
    )
    indexes = bootstrap_json(t)["tableSchema"]["indexes"]
    assert [(i["name"], i["primary"], i["unique"], i["nullable"]) for i in indexes] == [
        ("k", False, False, True),
        ("PRIMARY", True, True, False),
    ]


@pytest.mark.parametrize(
    ("column", "name"),
    [
        (C(name="c", type="tinyint", unsigned=True), "tinyint"),  # §4.11 S5: unsigned is a flag
        (C(name="c", type="varbinary"), "varbinary"),
        (C(name="c", type="varchar", charset="binary"), "varbinary"),
        (C(name="c", type="char", charset="binary"), "binary"),
        (C(name="c", type="mediumtext", charset="binary"), "mediumblob"),
        (C(name="c", type="blob"), "blob"),
        (C(name="c", type="longblob"), "longblob"),
        (C(name="c", type="text", charset="latin1"), "text"),
        (C(name="c", type="bit", charset="binary"), "bit"),
        (C(name="c", type="json"), "json"),
    ],
)
def test_mysql_type_is_tidb_type_to_str(column: ColumnInfo, name: str) -> None:
    assert simple.mysql_type(column) == name


def test_json_data_type_omissions_and_defaults() -> None:
    t = TableInfo(
        schema="s",
        name="t",
        columns=(
            C(
                name="f",
                type="float",
                decimal=3,
                length=12,
                unsigned=True,
                zerofill=True,
                default=1.5,
            ),
            C(name="d", type="decimal", length=10, decimal=2, default="0.00"),
            C(name="e", type="enum", elements=("a", "<b>"), default="a"),
            C(name="b", type="bit", length=8, default=5),
            C(name="t", type="text", charset="latin1"),
        ),
    )
    columns = bootstrap_json(t)["tableSchema"]["columns"]
    assert [c["dataType"] for c in columns] == [
        # FLOAT/DOUBLE never carry decimal
        {
            "mysqlType": "float",
            "charset": "binary",
            "collate": "binary",
            "length": 12,
            "unsigned": True,
            "zerofill": True,
        },
        {
            "mysqlType": "decimal",
            "charset": "binary",
            "collate": "binary",
            "length": 10,
            "decimal": 2,
        },
        {
            "mysqlType": "enum",
            "charset": "utf8mb4",
            "collate": "utf8mb4_bin",
            "elements": ["a", "<b>"],
        },
        {"mysqlType": "bit", "charset": "binary", "collate": "binary", "length": 8},
        {"mysqlType": "text", "charset": "latin1", "collate": "latin1_bin"},
    ]
    # §4.11 S6: defaults are text, except BIT, which is a JSON integer
    assert [c["default"] for c in columns] == ["1.5", "0.00", "a", 5, None]


def test_avro_data_type_presence_rules_and_raw_bit_default() -> None:
    t = TableInfo(
        schema="s",
        name="t",
        columns=(
            C(name="i", type="int", unsigned=True),
            C(name="d", type="decimal", length=10, decimal=2),
            C(name="e", type="set", elements=("x",)),
            C(name="v", type="varchar", length=5, default="x"),
            C(name="b", type="bit", length=16, default=258),
        ),
    )
    record = bootstrap_avro_record(t)
    assert record["database"] == "s"  # §4.11 S4: database, not schema
    types = [c["dataType"] for c in record["columns"]]
    assert [
        (d["length"], d["decimal"], d["elements"], d["unsigned"], d["zerofill"]) for d in types
    ] == [
        (0, None, None, True, False),  # integers: unsigned/zerofill always there
        (10, 2, None, False, False),  # decimal only for DECIMAL
        (0, None, ["x"], None, None),
        (5, None, None, None, None),
        (16, None, None, False, False),
    ]
    # §4.8: the BIT default stays TiDB's raw binary literal, the value's big-endian bytes
    assert [c["default"] for c in record["columns"]] == [None, None, None, "x", "\x01\x02"]
    [decoded] = simple_avro.decode(simple_avro.encode_bootstrap(t))
    assert isinstance(decoded, DecodedBootstrap)
    assert decoded.table_info.columns[4].default == 258


def test_column_order_by_profile() -> None:
    """§4.4: tiflow sorts by column id (after MODIFY … FIRST), ticdc keeps table order."""
    t = TableInfo(
        schema="s",
        name="t",
        columns=(
            C(name="moved", type="int", column_id=3),
            C(name="a", type="int", column_id=1),
            C(name="b", type="int", column_id=2),
        ),
    )
    for encoding in ("json", "avro"):
        for profile, order in (("tiflow", ["a", "b", "moved"]), ("ticdc", ["moved", "a", "b"])):
            [decoded] = codec(encoding).decode(codec(encoding).encode_bootstrap(t, config(profile)))
            assert isinstance(decoded, DecodedBootstrap)
            assert [c.name for c in decoded.table_info.columns] == order


# TestEncodeDDLSequence (§7.2): statement, TiDB ActionType, Simple type
DDL_SEQUENCE = [
    ("DROP DATABASE IF EXISTS test", 2, "QUERY"),
    ("CREATE DATABASE IF NOT EXISTS test", 1, "QUERY"),
    ("CREATE TABLE `TBL1` (...)", 3, "CREATE"),
    ("ALTER TABLE `TBL1` ADD COLUMN `nn` INT", 5, "ALTER"),
    ("ALTER TABLE `TBL1` DROP COLUMN `nn`", 6, "ALTER"),
    ("ALTER TABLE `TBL1` CHANGE COLUMN `value` `value2` VARCHAR(512)", 12, "ALTER"),
    ("ALTER TABLE `TBL1` MODIFY COLUMN `value2` VARCHAR(512) FIRST", 12, "ALTER"),
    ("ALTER TABLE `TBL1` ALTER COLUMN `payload` SET DEFAULT _UTF8MB4'a'", 15, "ALTER"),
    ("ALTER TABLE `TBL1` ALTER COLUMN `payload` DROP DEFAULT", 15, "ALTER"),
    ("ALTER TABLE `TBL1` AUTO_INCREMENT = 5", 13, "ALTER"),
    ("ALTER TABLE `TBL1` MODIFY COLUMN `a` INT NULL", 12, "ALTER"),
    ("ALTER TABLE `TBL1` MODIFY COLUMN `a` INT NOT NULL", 12, "ALTER"),
    ("CREATE INDEX `idx_a` ON `TBL1` (`a`)", 7, "CINDEX"),
    ("ALTER TABLE `TBL1` RENAME INDEX `idx_a` TO `new_idx_a`", 18, "ALTER"),
    ("ALTER TABLE TBL1 ALTER INDEX `new_idx_a` INVISIBLE", 41, "ALTER"),
    ("DROP INDEX `new_idx_a` ON `TBL1`", 8, "DINDEX"),
    ("TRUNCATE TABLE TBL1", 11, "TRUNCATE"),
    ("ALTER TABLE TBL1 ADD COLUMN `new_col` INT, ADD INDEX `idx_new_col` (`a`)", 61, "ALTER"),
    ("ALTER TABLE TBL1 DROP COLUMN `new_col`, DROP INDEX `idx_new_col`", 61, "ALTER"),
    ("RENAME TABLE TBL1 TO TBL2", 14, "RENAME"),
    ("ALTER TABLE TBL2 CHANGE COLUMN `id` `id2` INT", 12, "ALTER"),
    ("ALTER TABLE TBL2 PARTITION BY RANGE (id2) (...)", 71, "ALTER"),
    ("ALTER TABLE TBL2 ADD PARTITION (PARTITION p2 VALUES LESS THAN (30))", 19, "ALTER"),
    ("ALTER TABLE TBL2 DROP PARTITION p2", 20, "ALTER"),
    ("ALTER TABLE TBL2 TRUNCATE PARTITION p1", 23, "ALTER"),
    ("ALTER TABLE TBL2 REORGANIZE PARTITION p1 INTO (...)", 64, "ALTER"),
    ("ALTER TABLE TBL2 REMOVE PARTITIONING", 72, "ALTER"),
    ("ALTER TABLE TBL2 CHARACTER SET = utf8mb4 COLLATE = utf8mb4_bin", 22, "ALTER"),
    ("DROP TABLE TBL2", 4, "ERASE"),
]
OTHER_MAPPINGS = [
    (47, "RENAME"),
    (9, "CINDEX"),
    (32, "CINDEX"),
    (10, "DINDEX"),
    (33, "DINDEX"),
    (17, "ALTER"),
    (21, "QUERY"),
    (255, "QUERY"),
]


@pytest.mark.parametrize("encoding", ["json", "avro"])
@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
def test_encode_ddl_sequence(encoding: str, profile: str) -> None:
    events = [
        DDLEvent(commit_ts=i + 1, schema="test", table="", query=q, ddl_type=a)
        for i, (q, a, _) in enumerate(DDL_SEQUENCE)
    ]
    events += [
        DDLEvent(commit_ts=100, schema="", table="", query="q", ddl_type=a)
        for a, _ in OTHER_MAPPINGS
    ]
    decoded = [
        e
        for m in codec(encoding).encode(events, config(profile))
        for e in codec(encoding).decode(m)
    ]
    assert [(e.ddl_kind, e.query) for e in decoded if isinstance(e, DecodedDDL)] == [
        *((kind, q) for q, _, kind in DDL_SEQUENCE),
        *((kind, "q") for _, kind in OTHER_MAPPINGS),
    ]


@pytest.mark.parametrize(("profile", "kind"), [("tiflow", "QUERY"), ("ticdc", "ALTER")])
def test_exchange_partition_differs_by_profile(profile: str, kind: str) -> None:
    """§4.10 item 3: ExchangeTablePartition (42)."""
    assert simple.ddl_kind(42, profile) == kind  # type: ignore[arg-type]


@pytest.mark.parametrize("encoding", ["json", "avro"])
def test_ddl_carries_table_and_pre_table_schema(encoding: str) -> None:
    before = TableInfo(
        schema="simple",
        name="user",
        table_id=148,
        schema_version=1,
        columns=(C(name="id", type="int", key="primary"),),
    )
    after = TableInfo(
        schema="simple",
        name="user",
        table_id=148,
        schema_version=2,
        columns=(*before.columns, C(name="createTime", type="timestamp")),
    )
    ddl = DDLEvent(
        commit_ts=9,
        schema="simple",
        table="user",
        query="ALTER TABLE `user` ADD COLUMN `createTime` TIMESTAMP",
        ddl_type=5,
        table_info=after,
        pre_table_info=before,
    )
    [message] = codec(encoding).encode([ddl], config())
    [decoded] = codec(encoding).decode(message)
    assert isinstance(decoded, DecodedDDL)
    assert (
        decoded.schema,
        decoded.table,
        decoded.ddl_kind,
        decoded.ddl_type,
        decoded.commit_ts,
    ) == ("simple", "user", "ALTER", None, 9)
    assert decoded.table_info is not None
    assert decoded.pre_table_info is not None
    assert [c.name for c in decoded.table_info.columns] == ["id", "createTime"]
    assert (decoded.table_info.schema_version, decoded.pre_table_info.schema_version) == (2, 1)
    if encoding == "json":
        text = (message.value or b"").decode()
        assert text.index('"tableSchema"') < text.index('"preTableSchema"')


def test_unknown_mysql_type_is_rejected() -> None:
    value = json.loads(simple_json.encode_bootstrap(T1).value or b"")
    value["tableSchema"]["columns"][0]["dataType"]["mysqlType"] = "int unsigned"
    with pytest.raises(DecodeError, match="unknown mysqlType") as caught:
        simple_json.decode(Message(key=None, value=json.dumps(value).encode()))
    assert caught.value.pointer == "/tableSchema/columns/0/dataType/mysqlType"
