"""Debezium DDL messages: ``tableChanges``, JDBC types and the DDL classes (ground truth §5.4).

Key ``{"payload":{"databaseName":…}}`` with the fixed ``SchemaChangeKey`` schema; value
payload ``source, ts_ms, databaseName, schemaName:null, ddl, tableChanges``. The TiDB
ActionType decides the class: CREATE, ALTER or DROP (``DDL_KINDS``); any other type makes
TiCDC drop the DDL without a message (logged as ErrDDLUnsupportType), and so does the
reference. ``tableChanges`` is empty when the DDL names no table or is TRUNCATE TABLE;
otherwise one change whose ``id`` is ``"db"."table"`` (RENAME TABLE: old then new; profile
``ticdc`` names the exchanged table for EXCHANGE PARTITION) and whose ``table`` describes the
table after the DDL (``null`` for DROP TABLE).

TiCDC re-parses the DDL query and clears the ``comment`` of every column the query defines
(``helper_test``, §7.2); the reference finds those columns as a name followed by a type
keyword. TiCDC also re-reads temporal defaults from the query; the reference takes every
default from the column metadata (the query is not parsed further).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from ticdc_conformance.reference._gojson import to_bytes
from ticdc_conformance.reference.debezium._config import Config
from ticdc_conformance.reference.debezium._envelope import source_payload, source_schema
from ticdc_conformance.reference.debezium._json import dump
from ticdc_conformance.reference.debezium._types import default_text
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import DDLEvent
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.mysql import INTEGER_TYPES, MySQLType, type_to_str
from ticdc_conformance.reference.tables import NULLABLE_FLAG, ColumnInfo, TableInfo

__all__ = ["DDL_KINDS", "SCHEMA_CHANGE_VALUE", "encode_ddl", "jdbc_type"]

DDL_KINDS: Final[dict[int, str]] = {
    **dict.fromkeys((1, 3, 21, 60), "CREATE"),
    **dict.fromkeys(
        (5, 6, 7, 12, 13, 14, 15, 17, 18, 19, 20, 22, 23, 26, 32, 33, 41, 42, 47, 61, 64, 71, 72),
        "ALTER",
    ),
    **dict.fromkeys((2, 4, 8, 11, 24), "DROP"),
}
"""TiDB ActionType → ``tableChanges`` type (§1.7, §5.4); absent types are dropped."""
_DROP_TABLE, _TRUNCATE_TABLE, _RENAME_TABLE, _RENAME_TABLES, _EXCHANGE = 4, 11, 14, 47, 42
_SCHEMA_LEVEL = frozenset({1, 2, 26})
"""CREATE/DROP DATABASE, ALTER DATABASE charset: TiCDC's table info names no table."""

_JDBC = {
    "tinyint": 5,
    "smallint": 5,
    "int": 4,
    "mediumint": 4,
    "year": 4,
    "float": 6,
    "double": 8,
    "null": 0,
    "decimal": 3,
    "timestamp": 2014,
    "datetime": 93,
    "bigint": -5,
    "date": 91,
    "time": 92,
    "enum": 1,
    "set": 1,
    "bit": -7,
    "json": 1111,
    "geometry": 1111,
}
_BLOB_TYPES = frozenset(
    {"tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob"}
)
_DEFAULT_LENGTH: dict[MySQLType, int] = {
    "bit": 1,
    "tinyint": 4,
    "smallint": 6,
    "mediumint": 9,
    "int": 11,
    "bigint": 20,
    "float": 12,
    "double": 22,
    "decimal": 10,
    "year": 4,
    "char": 1,
    "binary": 1,
    "varchar": 5,
    "varbinary": 5,
}
_CHARSET_TYPES = (
    frozenset(
        {"timestamp", "time", "decimal", "char", "binary", "varchar", "varbinary", "enum", "set"}
    )
    | _BLOB_TYPES
)
_TYPE_WORDS = (
    r"(?:tinyint|smallint|mediumint|int|integer|bigint|float|double|real|decimal|"
    r"numeric|date|datetime|timestamp|time|year|bit|char|varchar|binary|varbinary|"
    r"tinytext|text|mediumtext|longtext|tinyblob|blob|mediumblob|longblob|enum|set|"
    r"json|vector|bool|boolean|geometry)\b"
)


def jdbc_type(column: ColumnInfo) -> int:
    """``MySQLType2JdbcType`` (§5.4): the binary variants of string types differ."""
    binary = column.effective_charset == "binary"
    kind = column.type
    if kind in _BLOB_TYPES:
        return 2004 if binary else 12
    if kind in ("varchar", "varbinary"):
        return -3 if binary else 12
    if kind in ("char", "binary"):
        return -2 if binary else 1
    return _JDBC.get(kind, 12)


def _fsp(column: ColumnInfo) -> int | None:
    return column.decimal or 0


def _members(column: ColumnInfo) -> int | None:
    return 2 * len(column.elements or ()) - 1 if column.type == "set" else 1


def _declared(column: ColumnInfo) -> int | None:
    return column.length if column.length is not None else _DEFAULT_LENGTH[column.type]


def _unless_default(column: ColumnInfo) -> int | None:
    """The column's length where it differs from the type's default, else null."""
    if column.length is None:
        return None
    default = _DEFAULT_LENGTH.get(column.type, -1)
    if column.type in INTEGER_TYPES and column.type != "bigint":
        default -= 1 if column.unsigned else 0
        default += 1 if column.type == "tinyint" and column.zerofill else 0
    return column.length if column.length != default else None


_LENGTHS: dict[MySQLType, Callable[[ColumnInfo], int | None]] = {
    **dict.fromkeys(("timestamp", "time", "datetime"), _fsp),
    "set": _members,
    "enum": _members,
    "year": _declared,
    "decimal": _declared,
    **dict.fromkeys((*(_DEFAULT_LENGTH.keys() - {"year", "decimal"}), "vector"), _unless_default),
}
"""``getLen`` by type: the length Debezium shows; types not listed have none (null)."""


def _length(column: ColumnInfo) -> int | None:
    length = _LENGTHS.get(column.type)
    return None if length is None else length(column)


def _type_name_and_expression(column: ColumnInfo) -> tuple[str, str]:
    """``getExpressionAndName``: (typeName, typeExpression)."""
    prefix = type_to_str(column.type, column.effective_charset).upper()
    if column.type in ("year", "bit", "varchar", "varbinary", "char", "binary", "decimal"):
        return prefix, prefix
    suffix = ""
    if column.type == "double" and column.decimal not in (None, 0):
        length = column.length if column.length is not None else 22
        suffix = f"({length},{column.decimal})"
    elif column.type == "vector" and column.length is not None:
        suffix = f"({column.length})"
    elif column.type == "null":
        suffix = "(0)"
    sign = " UNSIGNED ZEROFILL" if column.zerofill else " UNSIGNED" if column.unsigned else ""
    return prefix + sign, prefix + suffix + sign


def _default_expression(column: ColumnInfo) -> str | None:
    text = default_text(column)
    if text is None or text == "<nil>":
        return None
    if text.upper() == "CURRENT_TIMESTAMP":
        return "1970-01-01 00:00:00"
    if column.type == "bit" and isinstance(column.default, int):
        # TiCDC's parseBit over TiDB's big-endian default bytes (§5.4)
        width = column.length if column.length is not None else 1
        data = column.default.to_bytes((width + 7) // 8, "big")
        return f"{data[0]:0{width % 8}b}" + "".join(f"{b:08b}" for b in data[1:])
    return text


def _defined_in(query: str, name: str) -> bool:
    quoted = re.escape(name)
    return re.search(rf"(?i)(?:`{quoted}`|\b{quoted})\s+{_TYPE_WORDS}", query) is not None


def _column_change(
    table: TableInfo, position: int, flags: tuple[int, ...], query: str
) -> dict[str, object]:
    column = table.columns[position]
    jdbc = jdbc_type(column)
    name, expression = _type_name_and_expression(column)
    comment = None if not column.comment or _defined_in(query, column.name) else column.comment
    # getScale: DECIMAL's scale (TiDB's default 0), FLOAT/DOUBLE's when TiDB has one
    scale = None
    if column.type == "decimal":
        scale = float(column.decimal or 0)
    elif column.type in ("float", "double") and column.decimal is not None:
        scale = float(column.decimal)
    charset = column.effective_charset
    automatic = column.auto_increment or (column.on_update_now and jdbc == 2014)
    return {
        "name": column.name,
        "jdbcType": jdbc,
        "nativeType": None,
        "comment": comment,
        "defaultValueExpression": _default_expression(column),
        "enumValues": [f"'{e}'" for e in column.elements] if column.elements else None,
        "typeName": name,
        "typeExpression": expression,
        "charsetName": charset if charset != "binary" and column.type in _CHARSET_TYPES else None,
        "length": _length(column),
        "scale": scale,
        "position": position + 1,
        "optional": bool(flags[position] & NULLABLE_FLAG),
        "autoIncremented": automatic,
        "generated": automatic,
    }


def _f(
    field: str, schema_type: str, *, optional: bool = False, **more: object
) -> dict[str, object]:
    return {"field": field, "optional": optional, "type": schema_type, **more}


_STRINGS = {"type": "string", "optional": False}
_COLUMN_FIELDS = [
    _f("name", "string"),
    _f("jdbcType", "int32"),
    _f("nativeType", "int32", optional=True),
    _f("typeName", "string"),
    _f("typeExpression", "string", optional=True),
    _f("charsetName", "string", optional=True),
    _f("length", "int32", optional=True),
    _f("scale", "int32", optional=True),
    _f("position", "int32"),
    _f("optional", "boolean", optional=True),
    _f("autoIncremented", "boolean", optional=True),
    _f("generated", "boolean", optional=True),
    _f("comment", "string", optional=True),
    _f("defaultValueExpression", "string", optional=True),
    _f("enumValues", "array", optional=True, items=_STRINGS),
]
_TABLE_FIELDS = [
    _f("defaultCharsetName", "string", optional=True),
    _f("primaryKeyColumnNames", "array", optional=True, items=_STRINGS),
    _f(
        "columns",
        "array",
        items={
            "name": "io.debezium.connector.schema.Column",
            "optional": False,
            "type": "struct",
            "version": 1,
            "fields": _COLUMN_FIELDS,
        },
    ),
    _f("comment", "string", optional=True),
]
_CHANGE_FIELDS = [
    _f("type", "string"),
    _f("id", "string"),
    _f(
        "table",
        "struct",
        optional=True,
        name="io.debezium.connector.schema.Table",
        version=1,
        fields=_TABLE_FIELDS,
    ),
]
_KEY_SCHEMA = {
    "type": "struct",
    "name": "io.debezium.connector.mysql.SchemaChangeKey",
    "optional": False,
    "version": 1,
    "fields": [_f("databaseName", "string")],
}
SCHEMA_CHANGE_VALUE = "io.debezium.connector.mysql.SchemaChangeValue"


def _value_schema(config: Config) -> dict[str, object]:
    return {
        "optional": False,
        "type": "struct",
        "version": 1,
        "name": SCHEMA_CHANGE_VALUE,
        "fields": [
            source_schema(config),
            _f("ts_ms", "int64"),
            _f("databaseName", "string", optional=True),
            _f("schemaName", "string", optional=True),
            _f("ddl", "string", optional=True),
            _f(
                "tableChanges",
                "array",
                items={
                    "name": "io.debezium.connector.schema.Change",
                    "optional": False,
                    "type": "struct",
                    "version": 1,
                    "fields": _CHANGE_FIELDS,
                },
            ),
        ],
    }


def _table(event: DDLEvent, config: Config) -> dict[str, object]:
    table = event.table_info
    if table is None:
        raise EncodeError("a table DDL needs table_info for tableChanges", protocol="debezium")
    flags = table.column_flags(config.profile)
    return {
        "defaultCharsetName": table.charset or "",
        "primaryKeyColumnNames": [table.columns[i].name for i in sorted(table.primary_key())],
        "columns": [
            _column_change(table, i, flags, event.query) for i in range(len(table.columns))
        ],
        "comment": None,
    }


def _quoted(schema: str, table: str) -> str:
    return f'"{schema}"."{table}"'


def _table_changes(event: DDLEvent, kind: str, config: Config) -> list[object]:
    if not event.table or event.ddl_type == _TRUNCATE_TABLE or event.ddl_type in _SCHEMA_LEVEL:
        return []
    pre = event.pre_table_info
    change_id = _quoted(event.schema, event.table)
    if event.ddl_type in (_RENAME_TABLE, _RENAME_TABLES) and pre is not None:
        change_id = f"{_quoted(pre.schema, pre.name)},{change_id}"
    elif event.ddl_type == _EXCHANGE and pre is not None and config.profile == "ticdc":
        change_id = _quoted(pre.schema, pre.name)
    table = None if event.ddl_type == _DROP_TABLE else _table(event, config)
    return [{"type": kind, "id": change_id, "table": table}]


def encode_ddl(event: DDLEvent, config: Config) -> list[Message]:
    """The DDL's message, or none when TiCDC drops its kind (§5.4)."""
    kind = DDL_KINDS.get(event.ddl_type)
    if kind is None:
        return []
    database = event.schema
    table = "" if event.ddl_type in _SCHEMA_LEVEL else event.table
    if event.ddl_type == _DROP_TABLE and config.profile == "tiflow" and event.pre_table_info:
        database = event.pre_table_info.schema  # classic names the dropped table's database
    key: dict[str, object] = {"payload": {"databaseName": database}}
    value: dict[str, object] = {
        "payload": {
            "source": source_payload(config, event.schema, table, event.commit_ts),
            "ts_ms": config.now_ms(),
            "databaseName": database,
            "schemaName": None,
            "ddl": event.query,
            "tableChanges": _table_changes(event, kind, config),
        }
    }
    if not config.debezium_disable_schema:
        key["schema"] = _KEY_SCHEMA
        value["schema"] = _value_schema(config)
    return [Message(key=to_bytes(dump(key)), value=to_bytes(dump(value)))]
