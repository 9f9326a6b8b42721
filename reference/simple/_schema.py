"""TableSchema ⇄ ``TableInfo`` and the DDL kind mapping (ground truth §4.4, §4.5, §4.8).

TableSchema describes a table in BOOTSTRAP and DDL messages. JSON and Avro differ (§4.11 S4):

* JSON names the database ``schema``; Avro names it ``database``.
* JSON ``dataType`` omits ``length``/``decimal`` when 0 (``decimal`` never for FLOAT/DOUBLE),
  ``elements`` when empty, ``unsigned``/``zerofill`` unless true. Avro always has ``length``;
  ``decimal`` only for DECIMAL; ``elements`` only for ENUM/SET; ``unsigned``/``zerofill``
  only for the integer types, FLOAT, DOUBLE, BIT, YEAR and DECIMAL, and then always.
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

from collections.abc import Callable
from typing import NoReturn

from ticdc_conformance.reference._gojson import JsonStyle, format_float, quote
from ticdc_conformance.reference.simple._text import avro_text, to_int64
from ticdc_conformance.reference.tables import TYPE_CODES, ColumnInfo, IndexInfo, Profile, TableInfo
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
    14: "RENAME", 47: "RENAME",  # RenameTable, RenameTables
    7: "CINDEX", 9: "CINDEX", 32: "CINDEX",  # AddIndex, AddForeignKey, AddPrimaryKey
    8: "DINDEX", 10: "DINDEX", 33: "DINDEX",  # DropIndex, DropForeignKey, DropPrimaryKey
    4: "ERASE",  # DropTable
    11: "TRUNCATE",  # TruncateTable
    # AddColumn, DropColumn, ModifyColumn, RebaseAutoID, SetDefaultValue, ModifyTableComment,
    # RenameIndex, Add/DropTablePartition, ModifyTableCharsetAndCollate,
    # TruncateTablePartition, AlterIndexVisibility, MultiSchemaChange, ReorganizePartition,
    # AlterTablePartitioning, RemovePartitioning
    **dict.fromkeys((5, 6, 12, 13, 15, 17, 18, 19, 20, 22, 23, 41, 61, 64, 71, 72), "ALTER"),
}  # fmt: skip
_EXCHANGE_PARTITION = 42


def ddl_kind(action_type: int, profile: Profile) -> str:
    """Simple's DDL type for a TiDB ActionType (§4.5); everything unlisted is ``QUERY``."""
    if action_type == _EXCHANGE_PARTITION:
        return "ALTER" if profile == "ticdc" else "QUERY"  # §4.10 item 3
    return _KIND_BY_ACTION.get(action_type, "QUERY")


_BASE_NAMES = {
    1: "tinyint", 2: "smallint", 3: "int", 4: "float", 5: "double", 6: "null",
    7: "timestamp", 8: "bigint", 9: "mediumint", 10: "date", 11: "time", 12: "datetime",
    13: "year", 15: "varchar", 16: "bit", 225: "vector", 245: "json", 246: "decimal",
    247: "enum", 248: "set", 249: "tinytext", 250: "mediumtext", 251: "longtext",
    252: "text", 254: "char", 255: "geometry",
}  # fmt: skip
_NUMERIC_CODES = frozenset({1, 2, 3, 8, 9, 4, 5, 16, 13})
"""Types whose Avro ``dataType`` always carries unsigned and zerofill (with DECIMAL)."""


def mysql_type(column: ColumnInfo) -> str:
    """TiDB's ``TypeToStr(type, charset)`` for the column (§4.4)."""
    code = column.effective_type_code
    if code not in _BASE_NAMES:
        raise ValueError(f"type code {code} has no TiDB type name")
    name = _BASE_NAMES[code]
    if column.effective_charset == "binary":
        if code in (249, 250, 251, 252):
            return name.replace("text", "blob")
        if code in (15, 254):
            return name.replace("char", "binary")
    return name


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
        out.append((index.name, index.unique or index.primary, index.primary, nullable,
                    index.columns))  # fmt: skip
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
    if not isinstance(value, int) or not 0 <= value < 2**64:
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


def _avro_column(table: TableInfo, position: int) -> dict[str, object]:
    column = table.columns[position]
    code = column.effective_type_code
    data: dict[str, object] = {
        "mysqlType": mysql_type(column),
        "charset": column.effective_charset,
        "collate": collation(column),
        "length": column.length or 0,
        "decimal": (column.decimal or 0) if code == 246 else None,
        "elements": list(column.elements or ()) if code in (247, 248) else None,
        "unsigned": column.unsigned if code in _NUMERIC_CODES or code == 246 else None,
        "zerofill": column.zerofill if code in _NUMERIC_CODES or code == 246 else None,
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
        "version": to_int64(table.schema_version or 0),
        "columns": [_avro_column(table, i) for i in schema_columns(table, profile)],
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


Fail = Callable[[str, tuple[str, ...]], NoReturn]
"""Reports a problem at a JSON Pointer path given as tokens (raises ``DecodeError``)."""


class _Reader:
    """Typed access to one parsed object, failing at the member's path."""

    def __init__(
        self, raw: object, path: tuple[str, ...], fail: Fail, allowed: frozenset[str]
    ) -> None:
        if type(raw) is not dict:
            fail("expected an object", path)
        unknown = raw.keys() - allowed
        if unknown:
            fail("unknown member", (*path, min(unknown)))
        self.raw, self.path, self.fail = raw, path, fail

    def get(self, name: str, kind: type, *, optional: bool = False) -> object:
        if name not in self.raw:
            if optional:
                return None
            self.fail(f"missing member {name}", self.path)
        value = self.raw[name]
        if optional and value is None:
            return None
        if type(value) is not kind:
            self.fail(f"expected {kind.__name__}", (*self.path, name))
        return value

    def names(self, name: str, *, optional: bool = False) -> tuple[str, ...] | None:
        value = self.get(name, list, optional=optional)
        if value is None:
            return None
        assert isinstance(value, list)
        if not all(type(item) is str for item in value):
            self.fail("expected a list of strings", (*self.path, name))
        return tuple(value)


_DATA_TYPE = frozenset(
    {"mysqlType", "charset", "collate", "length", "decimal", "elements", "unsigned", "zerofill"}
)
_COLUMN = frozenset({"name", "dataType", "nullable", "default"})
_INDEX = frozenset({"name", "unique", "primary", "nullable", "columns"})
_INT64 = range(-(2**63), 2**63)


def _read_default(raw: object, type_name: str, path: tuple[str, ...], fail: Fail) -> Value:
    if raw is None:
        return None
    if type_name == "bit":
        if type(raw) is int and 0 <= raw < 2**64:
            return raw  # JSON: the integer
        if isinstance(raw, str):  # Avro: TiDB's raw binary literal
            return int.from_bytes(raw.encode("utf-8", "surrogateescape"), "big")
        fail("a BIT default is an unsigned integer or a binary literal", path)
    if not isinstance(raw, str):
        fail("a default is text or null", path)
    return raw


def _read_column(raw: object, path: tuple[str, ...], fail: Fail, avro: bool) -> ColumnInfo:
    column = _Reader(raw, path, fail, _COLUMN)
    data = _Reader(column.raw.get("dataType"), (*path, "dataType"), fail, _DATA_TYPE)
    type_name = data.get("mysqlType", str)
    assert isinstance(type_name, str)
    if type_name not in TYPE_CODES:
        fail(f"unknown mysqlType {type_name!r}", (*path, "dataType", "mysqlType"))
    if "default" not in column.raw and not avro:
        fail("missing member default", path)
    length = data.get("length", int, optional=not avro)
    decimal = data.get("decimal", int, optional=True)
    for name, number in (("length", length), ("decimal", decimal)):
        if number is not None and number not in _INT64:
            fail("out of range", (*path, "dataType", name))
    try:
        return ColumnInfo(
            name=column.get("name", str),  # type: ignore[arg-type]
            type=type_name,
            charset=data.get("charset", str),  # type: ignore[arg-type]
            collation=data.get("collate", str),  # type: ignore[arg-type]
            length=length or None,  # type: ignore[arg-type]
            decimal=decimal or None,  # type: ignore[arg-type]
            elements=data.names("elements", optional=True),
            unsigned=data.get("unsigned", bool, optional=True) is True,
            zerofill=data.get("zerofill", bool, optional=True) is True,
            nullable=column.get("nullable", bool),  # type: ignore[arg-type]
            default=_read_default(column.raw.get("default"), type_name, (*path, "default"), fail),
        )
    except ValueError as error:
        fail(str(error), path)


def read_table_schema(raw: object, path: tuple[str, ...], fail: Fail, *, avro: bool) -> TableInfo:
    """The ``TableInfo`` a TableSchema (parsed JSON, or the fastavro record) describes."""
    database = "database" if avro else "schema"
    allowed = frozenset({database, "table", "tableID", "version", "columns", "indexes"})
    schema = _Reader(raw, path, fail, allowed)
    raw_columns = schema.get("columns", list)
    raw_indexes = schema.get("indexes", list)
    assert isinstance(raw_columns, list)
    assert isinstance(raw_indexes, list)
    columns = tuple(
        _read_column(item, (*path, "columns", str(i)), fail, avro)
        for i, item in enumerate(raw_columns)
    )
    indexes = []
    for i, item in enumerate(raw_indexes):
        at = (*path, "indexes", str(i))
        index = _Reader(item, at, fail, _INDEX)
        index.get("nullable", bool)  # derived from the columns; checked, not kept
        indexes.append(
            IndexInfo(
                name=index.get("name", str),  # type: ignore[arg-type]
                columns=index.names("columns") or (),
                primary=index.get("primary", bool) is True,
                unique=index.get("unique", bool) is True,
            )
        )
    table_id = schema.get("tableID", int)
    version = schema.get("version", int)
    assert isinstance(table_id, int)
    assert isinstance(version, int)
    if table_id not in _INT64:
        fail("tableID must be an int64", (*path, "tableID"))
    if not (-(2**63) if avro else 0) <= version < 2**64:
        fail("version must be a uint64", (*path, "version"))
    try:
        return TableInfo(
            schema=schema.get(database, str),  # type: ignore[arg-type]
            name=schema.get("table", str),  # type: ignore[arg-type]
            columns=columns,
            indexes=tuple(indexes),
            table_id=table_id,
            schema_version=version % 2**64,  # Avro carries the uint64 as a wrapped long
        )
    except ValueError as error:
        fail(str(error), path)
