"""``tableChanges[].table`` back to a ``TableInfo`` (the decoder side of ``_ddl``).

What the description carries comes back: type name, UNSIGNED/ZEROFILL, nullability, charset,
length or fsp, scale, ENUM/SET members, default, comment, AUTO_INCREMENT (or, on TIMESTAMP,
ON UPDATE CURRENT_TIMESTAMP) and the primary key. TiCDC writes a length only where it differs
from the type's default and clears comments of columns the query defines, so those come back
as ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

from ticdc_conformance.reference.jsondoc import Json, JsonObject
from ticdc_conformance.reference.mysql import INTEGER_TYPES, MySQLType, type_named
from ticdc_conformance.reference.tables import ColumnInfo, IndexInfo, TableInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["read_table_change"]

T = TypeVar("T")

_INTEGER = re.compile(r"-?[0-9]+")
_DECIMAL = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?")
_INTEGERS: frozenset[MySQLType] = INTEGER_TYPES | {"year"}


def _get(raw: JsonObject, name: str, kind: type[T]) -> T | None:
    value = raw.get(name)
    if value is not None and type(value) is not kind:
        raise ValueError(f"{name} must be a {kind.__name__} or null")
    return value


def _integer(text: str) -> Value:
    return int(text) if _INTEGER.fullmatch(text) else text


def _bits(text: str) -> Value:
    return int(text, 2) if text and set(text) <= {"0", "1"} else text


def _decimal(text: str) -> Value:
    return DecimalValue(text) if _DECIMAL.fullmatch(text) else text


def _timestamp(text: str) -> Value:
    return TimestampValue(text, None) if _TIMESTAMP.fullmatch(text) else text


_DEFAULTS: dict[MySQLType, Callable[[str], Value]] = {
    **dict.fromkeys(_INTEGERS, _integer),
    "bit": _bits,
    "decimal": _decimal,
    "timestamp": _timestamp,
}
"""``defaultValueExpression`` by type; other types, and text these do not read, keep the text."""


def _default(kind: MySQLType, text: str | None) -> Value:
    if text is None:
        return None
    read = _DEFAULTS.get(kind)
    return text if read is None else read(text)


def _column(raw: Json) -> ColumnInfo:
    if type(raw) is not dict:
        raise ValueError("a column must be an object")
    type_name = _get(raw, "typeName", str)
    name = _get(raw, "name", str)
    if not isinstance(type_name, str) or not isinstance(name, str):
        raise ValueError("a column needs name and typeName")
    words = type_name.lower().split()
    kind = type_named(words[0]) if words else None
    if kind is None:
        raise ValueError(f"unknown typeName {type_name!r}")
    length = _get(raw, "length", int)
    # Go prints a whole float64 scale as an integer
    scale = _get(raw, "scale", int) if type(raw.get("scale")) is int else _get(raw, "scale", float)
    if isinstance(scale, float) and not scale.is_integer():  # 1.5, or 1e400 read as infinity
        raise ValueError(f"scale {scale!r} is not a whole number")
    temporal = kind in ("datetime", "timestamp", "time")
    elements = _get(raw, "enumValues", list)
    automatic = _get(raw, "autoIncremented", bool) is True
    return ColumnInfo(
        name=name,
        type=kind,
        unsigned="unsigned" in words,
        zerofill="zerofill" in words,
        nullable=_get(raw, "optional", bool) is not False,
        charset=_get(raw, "charsetName", str),
        length=None if temporal or kind in ("enum", "set") else length,
        decimal=length if temporal else None if scale is None else int(scale),
        elements=None if elements is None else tuple(str(e).strip("'") for e in elements),
        default=_default(kind, _get(raw, "defaultValueExpression", str)),
        comment=_get(raw, "comment", str),
        auto_increment=automatic and kind != "timestamp",
        on_update_now=automatic and kind == "timestamp",
    )


def read_table_change(raw: JsonObject | None, schema: str, table: str) -> TableInfo | None:
    """The table of one ``tableChanges`` element (``None`` for DROP's null table)."""
    if raw is None:
        return None
    columns = _get(raw, "columns", list) or []
    primary = _get(raw, "primaryKeyColumnNames", list) or []
    if not all(isinstance(name, str) for name in primary):
        raise ValueError("primaryKeyColumnNames must be strings")
    indexes = (IndexInfo(name="PRIMARY", columns=tuple(primary), primary=True, unique=True),)
    charset = _get(raw, "defaultCharsetName", str)
    return TableInfo(
        schema=schema,
        name=table,
        columns=tuple(_column(c) for c in columns),
        indexes=indexes if primary else (),
        charset=charset or None,
    )
