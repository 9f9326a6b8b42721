"""Per-type field schemas of TiCDC's Debezium JSON (ground truth §5.3).

``field_schema`` writes a column's field schema, members in TiCDC's order:
``[tidb_type], type, optional, [name, version, parameters], field, [default]``. It takes the
column's flag bits (§1.2; explicit ``flags`` win): UnsignedFlag widens SMALLINT and INT and
adds `` unsigned`` to ``tidb_type``, NullableFlag sets ``optional``. Two tables keyed by every
MySQL type drive it: ``SCHEMA_TYPES`` (the Kafka Connect type, logical name and parameters;
``None`` for a type TiCDC does not support, whose schema is a placeholder) and ``DEFAULTS``
(the schema ``default``, read from the text TiDB keeps for the column default; §5.3 "Schema
default"). The payload values are ``_payload``'s.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Callable, Sequence
from datetime import UTC
from typing import NamedTuple

from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle
from ticdc_conformance.reference.debezium._config import Config
from ticdc_conformance.reference.debezium._temporal import (
    BELOW_MIN_TIMESTAMP,
    write_date,
    write_datetime,
    write_time,
    write_timestamp,
)
from ticdc_conformance.reference.mysql import (
    INTEGER_TYPES,
    STRING_TYPES,
    MySQLType,
    type_to_str,
)
from ticdc_conformance.reference.tables import NULLABLE_FLAG, UNSIGNED_FLAG, ColumnInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "CURRENT_TIMESTAMP",
    "DEFAULTS",
    "SCHEMA_TYPES",
    "FieldType",
    "bit_bytes",
    "bit_value",
    "bit_width",
    "default_text",
    "enum_allowed",
    "escape_enum",
    "field_schema",
    "member_names",
    "tidb_type",
]

CURRENT_TIMESTAMP = "CURRENT_TIMESTAMP"
_NO_UNSIGNED_SUFFIX = frozenset({"year", "bit", "varchar", "char", "decimal"})
_ABSENT = object()
"""A ``DEFAULTS`` answer: the schema has no ``default`` member."""


class FieldType(NamedTuple):
    """The type members of a field schema."""

    type: str
    name: str | None = None
    """The logical type, with ``version`` 1 unless ``versioned`` is false."""
    parameters: dict[str, str] | None = None
    versioned: bool = True


def tidb_type(column: ColumnInfo, flags: int) -> str:
    """The ``tidb_type`` member (enable-tidb-extension): ``TypeToStr`` plus `` unsigned``."""
    name: str = type_to_str(column.type, column.effective_charset)
    text_name = type_to_str(column.type, "")
    if flags & UNSIGNED_FLAG and text_name not in _NO_UNSIGNED_SUFFIX:
        name += " unsigned"
    return name


def bit_bytes(value: int, width: int) -> bytes:
    """BIT(n>1) payload: the value little-endian in ⌈n/8⌉ bytes (§5.3)."""
    return value.to_bytes(8, "little")[: (width + 7) // 8]


def bit_width(column: ColumnInfo) -> int:
    """The n of BIT(n) (1 when the column does not say)."""
    return column.length if column.length is not None else 1


def bit_value(value: Value) -> int:
    """A BIT value as its uint64 (bytes: big-endian)."""
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    if isinstance(value, int) and 0 <= value < 2**64:
        return value
    raise ValueError(f"a BIT value is an unsigned 64-bit integer, got {value!r}")


def bits(column: ColumnInfo, value: Value) -> object:
    """BIT(1) as a boolean, BIT(n>1) as base64 of its little-endian bytes (§5.3)."""
    number, width = bit_value(value), bit_width(column)
    return number != 0 if width == 1 else base64.b64encode(bit_bytes(number, width)).decode()


def member_names(column: ColumnInfo, value: int) -> str | None:
    """ENUM index or SET bitmask → member text; ``None`` when it names no valid member."""
    elements = column.elements or ()
    if column.type != "set":
        return elements[value - 1] if 1 <= value <= len(elements) else None
    if value >> len(elements):
        return None
    return ",".join(e for i, e in enumerate(elements) if value >> i & 1)


def default_text(column: ColumnInfo) -> str | None:
    """The column default as the text TiDB keeps for it (``None``: no default)."""
    default = column.default
    if default is None:
        return None
    if isinstance(default, DecimalValue | TimestampValue):
        return default.text
    if isinstance(default, bytes):
        return default.decode("utf-8", "surrogateescape")
    if isinstance(default, float):
        return format_float(default, 64, JsonStyle.JSONITER)
    if isinstance(default, int) and column.type in ("enum", "set"):
        names = member_names(column, default)
        return str(default) if names is None else names
    return str(default)


def escape_enum(element: str) -> str:
    r"""Debezium's ENUM ``allowed`` escaping (§5.3): ``,`` → ``\\,``; ``\\'`` and ``''`` → ``'``.

    Backslashes are not escaped: a member ending in ``\\`` and a member holding a comma both
    put ``\\,`` into the list.
    """
    return element.replace(",", "\\,").replace("\\'", "'").replace("''", "'")


def enum_allowed(elements: Sequence[str]) -> str:
    """An ENUM's ``allowed`` parameter: its members escaped and joined by ``,`` (§5.3)."""
    return ",".join(escape_enum(e) for e in elements)


SchemaTypeOf = Callable[[ColumnInfo, int], FieldType]
"""(column, flag bits) → the field type."""


def _fixed(schema_type: str, name: str | None = None, *, versioned: bool = True) -> SchemaTypeOf:
    field_type = FieldType(schema_type, name, versioned=versioned)

    def of(column: ColumnInfo, flags: int) -> FieldType:
        del column, flags
        return field_type

    return of


def _bit_type(column: ColumnInfo, flags: int) -> FieldType:
    del flags
    width = bit_width(column)
    if width == 1:
        return FieldType("boolean")
    return FieldType("bytes", "io.debezium.data.Bits", {"length": str(width)})


def _enum_type(column: ColumnInfo, flags: int) -> FieldType:
    del flags
    allowed = enum_allowed(column.elements or ())
    return FieldType("string", "io.debezium.data.Enum", {"allowed": allowed})


def _set_type(column: ColumnInfo, flags: int) -> FieldType:
    del flags
    return FieldType(
        "string", "io.debezium.data.EnumSet", {"allowed": ",".join(column.elements or ())}
    )


def _datetime_type(column: ColumnInfo, flags: int) -> FieldType:
    del flags
    micro = (column.decimal or 0) > 3
    return FieldType("int64", f"io.debezium.time.{'MicroTimestamp' if micro else 'Timestamp'}")


def _widened(signed: str, unsigned: str) -> SchemaTypeOf:
    """SMALLINT and INT: the next wider integer when unsigned."""

    def of(column: ColumnInfo, flags: int) -> FieldType:
        del column
        return FieldType(unsigned if flags & UNSIGNED_FLAG else signed)

    return of


def _float_type(column: ColumnInfo, flags: int) -> FieldType:
    del flags
    # FLOAT(M,D) has a decimal count; plain FLOAT has TiDB's -1 (None here)
    return FieldType("float" if column.decimal is None else "double")


SCHEMA_TYPES: dict[MySQLType, SchemaTypeOf | None] = {
    "tinyint": _fixed("int16"),
    "smallint": _widened("int16", "int32"),
    "mediumint": _fixed("int32"),
    "int": _widened("int32", "int64"),
    "bigint": _fixed("int64"),
    "float": _float_type,
    "double": _fixed("double"),
    "decimal": _fixed("double"),
    "bit": _bit_type,
    "year": _fixed("int32", "io.debezium.time.Year"),
    "date": _fixed("int32", "io.debezium.time.Date"),
    "time": _fixed("int64", "io.debezium.time.MicroTime"),
    "datetime": _datetime_type,
    "timestamp": _fixed("string", "io.debezium.time.ZonedTimestamp"),
    **dict.fromkeys(STRING_TYPES, _fixed("string")),
    "enum": _enum_type,
    "set": _set_type,
    "json": _fixed("string", "io.debezium.data.Json"),
    # TiCDC writes no version for its own logical type
    "vector": _fixed("string", "io.debezium.data.TiDBVectorFloat32", versioned=False),
    # TiCDC logs "unsupported field type" and writes no type
    "geometry": None,
    "null": None,
}
"""MySQL type → its field type (``None``: not supported, a placeholder schema)."""


DefaultOf = Callable[[ColumnInfo, str, bool], object]
"""(column, default text, nullable) → the schema ``default``, or ``_ABSENT``."""


def _bit_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    del text, nullable
    return bits(column, column.default)


def _text_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    del nullable
    return column.default if isinstance(column.default, bytes) else text


def _date_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    del column
    days = write_date(text)
    return days if days is not None else _ABSENT if nullable else 0


def _datetime_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    try:
        epoch = write_datetime(text, column.decimal or 0) if text != CURRENT_TIMESTAMP else 0
    except ValueError:
        return 0
    return epoch if epoch is not None else _ABSENT if nullable else 0


def _timestamp_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    if text == CURRENT_TIMESTAMP:
        return _ABSENT if nullable else BELOW_MIN_TIMESTAMP
    try:
        # the schema reads the default as UTC, unlike payload values (TF codec.go)
        zoned = write_timestamp(text, column.decimal or 0, UTC)
    except ValueError:
        return 0
    return _ABSENT if zoned == BELOW_MIN_TIMESTAMP and nullable else zoned


def _time_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    del nullable
    try:
        return write_time(text, column.decimal or 0)
    except ValueError:
        return _ABSENT


def _number_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    del nullable
    try:
        number = float(text)
    except ValueError:
        return _ABSENT
    if not math.isfinite(number):
        return _ABSENT
    if column.type == "year" and number < 100:
        number += 2000 if number < 70 else 1900
    return number


def _no_default(column: ColumnInfo, text: str, nullable: bool) -> object:
    del column, text, nullable
    return _ABSENT


DEFAULTS: dict[MySQLType, DefaultOf] = {
    **dict.fromkeys(INTEGER_TYPES | {"float", "double", "decimal", "year"}, _number_default),
    "bit": _bit_default,
    **dict.fromkeys(STRING_TYPES | {"enum", "set", "json", "vector"}, _text_default),
    "date": _date_default,
    "datetime": _datetime_default,
    "timestamp": _timestamp_default,
    "time": _time_default,
    "geometry": _no_default,
    "null": _no_default,
}
"""MySQL type → the schema ``default`` of a column default (§5.3 "Schema default")."""


def field_schema(column: ColumnInfo, flags: int, config: Config) -> dict[str, object]:
    """The field schema object of ``column``; ``ValueError`` if its default cannot be."""
    out: dict[str, object] = {}
    if config.enable_tidb_extension:
        out["tidb_type"] = tidb_type(column, flags)
    schema_type = SCHEMA_TYPES[column.type]
    if schema_type is None:
        return out
    nullable = bool(flags & NULLABLE_FLAG)
    field_type = schema_type(column, flags)
    out.update(type=field_type.type, optional=nullable)
    if field_type.name is not None:
        out["name"] = field_type.name
        if field_type.versioned:
            out["version"] = 1
    if field_type.parameters is not None:
        out["parameters"] = field_type.parameters
    out["field"] = column.name
    text = default_text(column)
    default = _ABSENT if text is None else DEFAULTS[column.type](column, text, nullable)
    if default is not _ABSENT:
        out["default"] = default
    return out
