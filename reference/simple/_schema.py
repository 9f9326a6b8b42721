"""TableSchema ⇄ ``TableInfo`` and the DDL kind mapping (ground truth §4.4, §4.5, §4.8).

TableSchema describes a table in BOOTSTRAP and DDL messages. JSON and Avro differ (§4.11 S4):

* JSON names the database ``schema``; Avro names it ``database``.
* JSON ``dataType`` omits ``length``/``decimal`` when 0 (``decimal`` never for FLOAT/DOUBLE),
  ``elements`` when empty, ``unsigned``/``zerofill`` unless true. Avro always has ``length``;
  ``decimal`` only for DECIMAL (its scale) and, under profile ``ticdc``, TIMESTAMP (its fsp:
  ticdc ``pkg/sink/codec/simple/avro.go`` has a TIMESTAMP case tiflow's lacks); ``elements``
  only for ENUM/SET; ``unsigned``/``zerofill`` only for the integer types, FLOAT, DOUBLE, BIT,
  YEAR and DECIMAL, and then always.
* ``default`` is TiDB's default text or null; JSON turns a BIT default into an integer, Avro
  keeps TiDB's raw binary literal (the value's big-endian bytes) as its string.
* Indexes keep TiDB's order; a primary key that is not one of TiDB's indexes (an integer
  primary key is the row handle) is appended last as ``primary`` (unique, not nullable).
* Columns: profile ``tiflow`` orders them by column id, ``ticdc`` keeps table order (§4.4).

``mysqlType`` is TiDB's ``TypeToStr``: the base name of the type code, with ``text``→``blob``
and ``char``→``binary`` when the charset is ``binary`` (§4.11 S5). The decoder rebuilds a
``TableInfo`` from what the message carries: names, types, charsets, collations, lengths,
scales, elements, defaults (as text; BIT as an integer), nullability, unsigned, zerofill and
the indexes. Column ids, keys, comments and generation are not carried.
"""

from __future__ import annotations

from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle, quote
from ticdc_conformance.reference.jsondoc import Fail, Json, Members, Path, Wording
from ticdc_conformance.reference.mysql import (
    ANY_INT,
    INT64,
    INTEGER_TYPES,
    TYPE_OF_CODE,
    UINT64,
    MySQLType,
    codes_of,
    type_named,
    type_to_str,
    wrap_int64,
)
from ticdc_conformance.reference.simple._text import avro_text
from ticdc_conformance.reference.tables import ColumnInfo, IndexInfo, Profile, TableInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "DDL_KINDS",
    "ddl_kind",
    "mysql_type",
    "read_table_schema",
    "schema_columns",
    "table_schema_avro",
    "table_schema_json",
]

DDL_KINDS = ("CREATE", "ALTER", "ERASE", "RENAME", "TRUNCATE", "CINDEX", "DINDEX", "QUERY")
"""Simple's DDL types, in the order of the Avro enum ``DDLType`` (§4.8)."""

_KIND_BY_ACTION = {
    3: "CREATE",  # CreateTable
    14: "RENAME",
    47: "RENAME",  # RenameTable, RenameTables
    7: "CINDEX",
    9: "CINDEX",
    32: "CINDEX",  # AddIndex, AddForeignKey, AddPrimaryKey
    8: "DINDEX",
    10: "DINDEX",
    33: "DINDEX",  # DropIndex, DropForeignKey, DropPrimaryKey
    4: "ERASE",  # DropTable
    11: "TRUNCATE",  # TruncateTable
    # AddColumn, DropColumn, ModifyColumn, RebaseAutoID, SetDefaultValue, ModifyTableComment,
    # RenameIndex, Add/DropTablePartition, ModifyTableCharsetAndCollate,
    # TruncateTablePartition, AlterIndexVisibility, MultiSchemaChange, ReorganizePartition,
    # AlterTablePartitioning, RemovePartitioning
    **dict.fromkeys((5, 6, 12, 13, 15, 17, 18, 19, 20, 22, 23, 41, 61, 64, 71, 72), "ALTER"),
}
_EXCHANGE_PARTITION = 42


def ddl_kind(action_type: int, profile: Profile) -> str:
    """Simple's DDL type for a TiDB ActionType (§4.5); everything unlisted is ``QUERY``."""
    if action_type == _EXCHANGE_PARTITION:
        return "ALTER" if profile == "ticdc" else "QUERY"  # §4.10 item 3
    return _KIND_BY_ACTION.get(action_type, "QUERY")


_NUMERIC = codes_of(INTEGER_TYPES | {"float", "double", "bit", "year", "decimal"})
"""Types whose Avro ``dataType`` always carries unsigned and zerofill."""


def mysql_type(column: ColumnInfo) -> str:
    """TiDB's ``TypeToStr(type, charset)`` for the column (§4.4)."""
    code = column.effective_type_code
    name = TYPE_OF_CODE.get(code)
    if name is None:
        raise ValueError(f"type code {code} has no TiDB type name")
    return type_to_str(name, column.effective_charset)


def collation(column: ColumnInfo) -> str:
    """The explicit collation, or TiDB's default ``<charset>_bin`` (``binary`` for binary)."""
    if column.collation is not None:
        return column.collation
    charset = column.effective_charset
    return "binary" if charset == "binary" else f"{charset}_bin"


def schema_columns(table: TableInfo, profile: Profile) -> list[int]:
    """Positions of the columns in TableSchema order: by column id for ``tiflow`` (§4.4)."""
    positions = list(range(len(table.columns)))
    if profile == "tiflow":
        positions.sort(key=lambda i: table.columns[i].column_id or i + 1)
    return positions


def _nullable(table: TableInfo, position: int) -> bool:
    column = table.columns[position]
    if column.nullable is not None:
        return column.nullable
    return position not in table.primary_key()


def _indexes(table: TableInfo) -> list[tuple[str, bool, bool, bool, tuple[str, ...]]]:
    """(name, unique, primary, nullable, columns) of every index, synthetic primary last."""
    out = []
    for index in table.indexes:
        nullable = any(
            _nullable(table, i) for i, c in enumerate(table.columns) if c.name in index.columns
        )
        out.append(
            (index.name, index.unique or index.primary, index.primary, nullable, index.columns)
        )
    if not any(index.primary for index in table.indexes):
        primary = table.primary_key()
        if primary:
            names = tuple(table.columns[i].name for i in primary)
            out.append(("primary", True, True, False, names))
    return out


def _default_text(column: ColumnInfo, value: Value) -> str:
    """TiDB keeps a default as text; the reference prints the ``Value`` the same way."""
    if isinstance(value, DecimalValue | TimestampValue):
        return value.text
    if isinstance(value, bytes):
        return value.decode("utf-8", "surrogateescape")
    if isinstance(value, float):
        return format_float(value, 32 if column.type == "float" else 64, JsonStyle.GO_STD)
    return str(value)


def _bit_default(value: Value) -> int:
    if not isinstance(value, int) or value not in UINT64:
        raise ValueError("a BIT default is an unsigned integer")
    return value


def _json_list(items: tuple[str, ...]) -> str:
    return "[" + ",".join(quote(item, JsonStyle.GO_STD) for item in items) + "]"


def _bool(flag: bool) -> str:
    return "true" if flag else "false"


def _json_column(table: TableInfo, position: int) -> str:
    column = table.columns[position]
    code = column.effective_type_code
    q = quote
    data = [
        f'"mysqlType":{q(mysql_type(column), JsonStyle.GO_STD)}',
        f'"charset":{q(column.effective_charset, JsonStyle.GO_STD)}',
        f'"collate":{q(collation(column), JsonStyle.GO_STD)}',
    ]
    if column.length:
        data.append(f'"length":{column.length}')
    if column.decimal and code not in (4, 5):  # FLOAT/DOUBLE decimal is never written
        data.append(f'"decimal":{column.decimal}')
    if column.elements:
        data.append(f'"elements":{_json_list(column.elements)}')
    if column.unsigned:
        data.append('"unsigned":true')
    if column.zerofill:
        data.append('"zerofill":true')
    if column.default is None:
        default = "null"
    elif code == 16:
        default = str(_bit_default(column.default))  # §4.4: a JSON integer
    else:
        default = q(_default_text(column, column.default), JsonStyle.GO_STD)
    return (
        f'{{"name":{q(column.name, JsonStyle.GO_STD)},"dataType":{{{",".join(data)}}},'
        f'"nullable":{_bool(_nullable(table, position))},"default":{default}}}'
    )


def table_schema_json(table: TableInfo, profile: Profile) -> str:
    """The JSON text of a TableSchema (§4.4)."""
    columns = ",".join(_json_column(table, i) for i in schema_columns(table, profile))
    indexes = ",".join(
        f'{{"name":{quote(name, JsonStyle.GO_STD)},"unique":{_bool(unique)},'
        f'"primary":{_bool(primary)},"nullable":{_bool(nullable)},"columns":{_json_list(names)}}}'
        for name, unique, primary, nullable, names in _indexes(table)
    )
    return (
        f'{{"schema":{quote(table.schema, JsonStyle.GO_STD)},'
        f'"table":{quote(table.name, JsonStyle.GO_STD)},"tableID":{table.table_id or 0},'
        f'"version":{table.schema_version or 0},"columns":[{columns}],"indexes":[{indexes}]}}'
    )


def _avro_column(table: TableInfo, position: int, profile: Profile) -> dict[str, object]:
    column = table.columns[position]
    code = column.effective_type_code
    with_decimal = (246, 7) if profile == "ticdc" else (246,)  # 7: TIMESTAMP's fsp (§4.10)
    data: dict[str, object] = {
        "mysqlType": mysql_type(column),
        "charset": column.effective_charset,
        "collate": collation(column),
        "length": column.length or 0,
        "decimal": (column.decimal or 0) if code in with_decimal else None,
        "elements": list(column.elements or ()) if code in (247, 248) else None,
        "unsigned": column.unsigned if code in _NUMERIC else None,
        "zerofill": column.zerofill if code in _NUMERIC else None,
    }
    default: str | None = None
    if column.default is not None:
        if code == 16:  # §4.8: TiDB's raw binary literal, not the integer
            size = ((column.length or 1) + 7) // 8
            value = _bit_default(column.default)
            default = avro_text(value.to_bytes(max(size, (value.bit_length() + 7) // 8), "big"))
        else:
            default = avro_text(_default_text(column, column.default))
    return {
        "name": avro_text(column.name),
        "dataType": data,
        "nullable": _nullable(table, position),
        "default": default,
    }


def table_schema_avro(table: TableInfo, profile: Profile) -> dict[str, object]:
    """The Avro TableSchema record of ``table`` as fastavro writes it (§4.8)."""
    return {
        "database": avro_text(table.schema),
        "table": avro_text(table.name),
        "tableID": table.table_id or 0,
        "version": wrap_int64(table.schema_version or 0),
        "columns": [_avro_column(table, i, profile) for i in schema_columns(table, profile)],
        "indexes": [
            {
                "name": avro_text(name),
                "unique": unique,
                "primary": primary,
                "nullable": nullable,
                "columns": [avro_text(n) for n in names],
            }
            for name, unique, primary, nullable, names in _indexes(table)
        ],
    }


_WORDING = Wording(
    missing="missing member {name}", not_list="expected list", unknown="unknown member"
)
_DATA_TYPE = frozenset(
    {"mysqlType", "charset", "collate", "length", "decimal", "elements", "unsigned", "zerofill"}
)
_COLUMN = frozenset({"name", "dataType", "nullable", "default"})
_INDEX = frozenset({"name", "unique", "primary", "nullable", "columns"})


def _read_default(raw: Json, type_name: MySQLType, path: Path, fail: Fail) -> Value:
    if raw is None:
        return None
    if type_name == "bit":
        if type(raw) is int and raw in UINT64:
            return raw  # JSON: the integer
        if isinstance(raw, str):  # Avro: TiDB's raw binary literal
            return int.from_bytes(raw.encode("utf-8", "surrogateescape"), "big")
        fail("a BIT default is an unsigned integer or a binary literal", path)
    if not isinstance(raw, str):
        fail("a default is text or null", path)
    return raw


def _read_column(raw: Json, path: Path, fail: Fail, avro: bool) -> ColumnInfo:
    column = Members(raw, path, fail, optional=_COLUMN, wording=_WORDING)
    data_path = column.at("dataType")
    data = Members(
        column.obj.get("dataType"), data_path, fail, optional=_DATA_TYPE, wording=_WORDING
    )
    type_name = type_named(data.get("mysqlType", str))
    if type_name is None:
        fail(f"unknown mysqlType {data.obj['mysqlType']!r}", (*data_path, "mysqlType"))
    if "default" not in column and not avro:
        fail("missing member default", path)
    length = data.get("length", int) if avro else data.optional("length", int)
    decimal = data.optional("decimal", int)
    for member, number in (("length", length), ("decimal", decimal)):
        if number is not None and number not in INT64:
            fail("out of range", (*data_path, member))
    name = column.get("name", str)
    charset, collation = data.get("charset", str), data.get("collate", str)
    elements = data.optional_strings("elements")
    unsigned, zerofill = data.optional("unsigned", bool), data.optional("zerofill", bool)
    nullable = column.get("nullable", bool)
    default = _read_default(column.obj.get("default"), type_name, column.at("default"), fail)
    try:
        return ColumnInfo(
            name=name,
            type=type_name,
            charset=charset,
            collation=collation,
            length=length or None,
            decimal=decimal or None,
            elements=elements,
            unsigned=unsigned is True,
            zerofill=zerofill is True,
            nullable=nullable,
            default=default,
        )
    except ValueError as error:
        fail(str(error), path)


def _read_index(raw: Json, path: Path, fail: Fail) -> IndexInfo:
    index = Members(raw, path, fail, optional=_INDEX, wording=_WORDING)
    index.get("nullable", bool)  # derived from the columns; checked, not kept
    return IndexInfo(
        name=index.get("name", str),
        columns=index.strings("columns"),
        primary=index.get("primary", bool),
        unique=index.get("unique", bool),
    )


def read_table_schema(raw: Json, path: Path, fail: Fail, *, avro: bool) -> TableInfo:
    """The ``TableInfo`` a TableSchema (parsed JSON, or the fastavro record) describes."""
    database = "database" if avro else "schema"
    allowed = (database, "table", "tableID", "version", "columns", "indexes")
    schema = Members(raw, path, fail, optional=allowed, wording=_WORDING)
    raw_columns, raw_indexes = schema.array("columns"), schema.array("indexes")
    columns = tuple(
        _read_column(item, (*path, "columns", i), fail, avro) for i, item in enumerate(raw_columns)
    )
    indexes = tuple(
        _read_index(item, (*path, "indexes", i), fail) for i, item in enumerate(raw_indexes)
    )
    table_id, version = schema.get("tableID", int), schema.get("version", int)
    if table_id not in INT64:
        fail("tableID must be an int64", schema.at("tableID"))
    if version not in (ANY_INT if avro else UINT64):
        fail("version must be a uint64", schema.at("version"))
    name, table = schema.get(database, str), schema.get("table", str)
    try:
        return TableInfo(
            schema=name,
            name=table,
            columns=columns,
            indexes=indexes,
            table_id=table_id,
            schema_version=version % 2**64,  # Avro carries the uint64 as a wrapped long
        )
    except ValueError as error:
        fail(str(error), path)
