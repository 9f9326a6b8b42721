"""Per-type field schemas and payload values of TiCDC's Debezium JSON (ground truth §5.3).

``field_schema`` writes a column's field schema, members in TiCDC's order:
``[tidb_type], type, optional, [name, version, parameters], field, [default]``.
``field_value`` writes a column's payload member(s). Both take the column's flag bits
(§1.2; explicit ``flags`` win): BinaryFlag picks base64 for string types, UnsignedFlag the
unsigned range, NullableFlag ``optional``.

NULL becomes the column DEFAULT when the column has one (§5.3). The two profiles differ in how
they read the default, which TiDB keeps as text: ``tiflow`` feeds that text through the value
writer's text branches, so a FLOAT default is printed with float64 digits, a YEAR default as a
JSON string, and a BINARY/VARBINARY/BLOB default as base64 *and then again* as raw text under
the same member name (two members ``"c":"YWJj","c":"abc"``); ``ticdc`` converts the text to
the column type first and writes it like any value (code reading, TF/TC ``codec.go``).
"""

from __future__ import annotations

import base64
import math
from datetime import UTC

from ticdc_conformance.reference._gojson import JsonStyle, format_float
from ticdc_conformance.reference.debezium._config import Config
from ticdc_conformance.reference.debezium._json import Float32, Pairs
from ticdc_conformance.reference.debezium._temporal import (
    BELOW_MIN_TIMESTAMP,
    write_date,
    write_datetime,
    write_time,
    write_timestamp,
)
from ticdc_conformance.reference.tables import (
    BINARY_FLAG,
    NULLABLE_FLAG,
    UNSIGNED_FLAG,
    ColumnInfo,
)
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "INTEGER_BITS",
    "STRING_TYPES",
    "bit_bytes",
    "default_text",
    "field_schema",
    "field_value",
    "tidb_type",
    "type_to_str",
]

INTEGER_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
STRING_TYPES = frozenset({"char", "varchar", "binary", "varbinary", "tinytext", "text",
                          "mediumtext", "longtext", "tinyblob", "blob", "mediumblob",
                          "longblob"})  # fmt: skip
_TEXT_NAME = {"binary": "char", "varbinary": "varchar", "tinyblob": "tinytext", "blob": "text",
              "mediumblob": "mediumtext", "longblob": "longtext"}  # fmt: skip
_BLOB_NAMES = frozenset({"tinytext", "text", "mediumtext", "longtext"})
_NO_UNSIGNED_SUFFIX = frozenset({"year", "bit", "varchar", "char", "decimal"})
_LOGICAL = {
    "date": ("int32", "io.debezium.time.Date"),
    "timestamp": ("string", "io.debezium.time.ZonedTimestamp"),
    "time": ("int64", "io.debezium.time.MicroTime"),
    "year": ("int32", "io.debezium.time.Year"),
    "json": ("string", "io.debezium.data.Json"),
}
_CURRENT_TIMESTAMP = "CURRENT_TIMESTAMP"
_ABSENT = object()


def type_to_str(column: ColumnInfo) -> str:
    """TiDB's ``TypeToStr``: the text type name, turned binary when the charset is binary."""
    name = _TEXT_NAME.get(column.type, column.type)
    if column.effective_charset != "binary":
        return name
    if name in _BLOB_NAMES:
        return name.replace("text", "blob")
    return name.replace("char", "binary") if name in ("char", "varchar") else name


def tidb_type(column: ColumnInfo, flags: int) -> str:
    """The ``tidb_type`` member (enable-tidb-extension): ``TypeToStr`` plus `` unsigned``."""
    name = type_to_str(column)
    if flags & UNSIGNED_FLAG and _TEXT_NAME.get(column.type, column.type) not in (
        _NO_UNSIGNED_SUFFIX
    ):
        name += " unsigned"
    return name


def bit_bytes(value: int, width: int) -> bytes:
    """BIT(n>1) payload: the value little-endian in ⌈n/8⌉ bytes (§5.3)."""
    return value.to_bytes(8, "little")[: (width + 7) // 8]


def _bit_width(column: ColumnInfo) -> int:
    return column.length if column.length is not None else 1


def _bit_value(value: Value) -> int:
    if isinstance(value, bytes):
        return int.from_bytes(value, "big")
    if isinstance(value, int) and 0 <= value < 2**64:
        return value
    raise ValueError(f"a BIT value is an unsigned 64-bit integer, got {value!r}")


def _member_names(column: ColumnInfo, value: int, *, is_set: bool) -> str | None:
    """ENUM index or SET bitmask → member text; ``None`` when it names no valid member."""
    elements = column.elements or ()
    if not is_set:
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
        names = _member_names(column, default, is_set=column.type == "set")
        return str(default) if names is None else names
    return str(default)


def _float_default(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def _schema_default(column: ColumnInfo, nullable: bool) -> object:
    """The schema ``default`` member's value, or ``_ABSENT`` (§5.3 "Schema default")."""
    text = default_text(column)
    kind = column.type
    if text is None:
        return _ABSENT
    if kind == "bit":
        value = _bit_value(column.default)
        width = _bit_width(column)
        return value != 0 if width == 1 else base64.b64encode(bit_bytes(value, width)).decode()
    if kind in STRING_TYPES or kind in ("enum", "set", "json", "vector"):
        return column.default if isinstance(column.default, bytes) else text
    fsp = column.decimal or 0
    if kind == "date":
        days = write_date(text)
        return days if days is not None else _ABSENT if nullable else 0
    if kind == "datetime":
        try:
            epoch = write_datetime(text, fsp) if text != _CURRENT_TIMESTAMP else 0
        except ValueError:
            return 0
        return epoch if epoch is not None else _ABSENT if nullable else 0
    if kind == "timestamp":
        if text == _CURRENT_TIMESTAMP:
            return _ABSENT if nullable else BELOW_MIN_TIMESTAMP
        try:
            # the schema reads the default as UTC, unlike payload values (TF codec.go)
            zoned = write_timestamp(text, fsp, UTC)
        except ValueError:
            return 0
        return _ABSENT if zoned == BELOW_MIN_TIMESTAMP and nullable else zoned
    if kind == "time":
        try:
            return write_time(text, fsp)
        except ValueError:
            return _ABSENT
    number = _float_default(text)
    if number is None or kind not in (*INTEGER_BITS, "float", "double", "decimal", "year"):
        return _ABSENT
    if kind == "year" and number < 100:
        number += 2000 if number < 70 else 1900
    return number


def _schema_type(column: ColumnInfo, flags: int) -> tuple[str, str | None, dict[str, str] | None]:
    """(type, logical name, parameters) of a supported column type."""
    kind = column.type
    unsigned = bool(flags & UNSIGNED_FLAG)
    if kind == "bit":
        width = _bit_width(column)
        if width == 1:
            return "boolean", None, None
        return "bytes", "io.debezium.data.Bits", {"length": str(width)}
    if kind in STRING_TYPES:
        return "string", None, None
    if kind == "enum":
        allowed = ",".join(_escape_enum(e) for e in column.elements or ())
        return "string", "io.debezium.data.Enum", {"allowed": allowed}
    if kind == "set":
        return "string", "io.debezium.data.EnumSet", {"allowed": ",".join(column.elements or ())}
    if kind == "datetime":
        micro = (column.decimal or 0) > 3
        return "int64", f"io.debezium.time.{'MicroTimestamp' if micro else 'Timestamp'}", None
    if kind in _LOGICAL:
        schema_type, name = _LOGICAL[kind]
        return schema_type, name, None
    if kind in ("tinyint", "mediumint", "bigint"):
        return {"tinyint": "int16", "mediumint": "int32", "bigint": "int64"}[kind], None, None
    if kind in ("smallint", "int"):
        wide = {"smallint": "int32", "int": "int64"}[kind]
        return (wide if unsigned else {"smallint": "int16", "int": "int32"}[kind]), None, None
    if kind == "float":
        # FLOAT(M,D) has a decimal count; plain FLOAT has TiDB's -1 (None here)
        return ("float" if column.decimal is None else "double"), None, None
    if kind in ("double", "decimal"):
        return "double", None, None
    raise KeyError(kind)


def _escape_enum(element: str) -> str:
    r"""Debezium's ENUM ``allowed`` escaping (§5.3): ``,`` → ``\\,``; ``\\'`` and ``''`` → ``'``."""
    return element.replace(",", "\\,").replace("\\'", "'").replace("''", "'")


def field_schema(column: ColumnInfo, flags: int, config: Config) -> dict[str, object]:
    """The field schema object of ``column``; ``ValueError`` if its default cannot be."""
    out: dict[str, object] = {}
    if config.enable_tidb_extension:
        out["tidb_type"] = tidb_type(column, flags)
    nullable = bool(flags & NULLABLE_FLAG)
    if column.type == "vector":
        # TiCDC writes no version for its own logical type
        out.update(type="string", optional=nullable, name="io.debezium.data.TiDBVectorFloat32")
    else:
        try:
            schema_type, name, parameters = _schema_type(column, flags)
        except KeyError:
            return out  # GEOMETRY, NULL: TiCDC logs "unsupported field type", writes no more
        out.update(type=schema_type, optional=nullable)
        if name is not None:
            out.update(name=name, version=1)
        if parameters is not None:
            out["parameters"] = parameters
    out["field"] = column.name
    default = _schema_default(column, nullable)
    if default is not _ABSENT:
        out["default"] = default
    return out


def _integer(column: ColumnInfo, flags: int, value: Value) -> int:
    if isinstance(value, str):
        value = int(value)
    if not isinstance(value, int):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    bits = INTEGER_BITS[column.type]
    if flags & UNSIGNED_FLAG:
        if value < 0:
            raise ValueError(f"{value} in an unsigned column")
        # BIGINT UNSIGNED max and out-of-range values become -1; other values above
        # 2^63 - 1 wrap to negative int64 (§5.3)
        if value >= 2**bits - (1 if bits == 64 else 0):
            return -1
        return value - 2**64 if value >= 2**63 else value
    return value if -(2 ** (bits - 1)) <= value < 2 ** (bits - 1) else -1


def _number(value: Value) -> float:
    if isinstance(value, DecimalValue | str):
        return float(value.text if isinstance(value, DecimalValue) else value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    raise ValueError(f"expected a number, got {type(value).__name__}")


def _text(value: Value) -> str | bytes:
    if isinstance(value, TimestampValue):
        return value.text
    if isinstance(value, str | bytes):
        return value
    raise ValueError(f"expected text, got {type(value).__name__}")


def _as_bytes(value: Value) -> bytes:
    text = _text(value)
    # surrogate escapes stand for the raw bytes of a binary default's text (``default_text``)
    return text if isinstance(text, bytes) else text.encode("utf-8", "surrogateescape")


def _timestamp(
    column: ColumnInfo, value: Value, substituted: bool, not_null: bool, config: Config
) -> object:
    if isinstance(value, TimestampValue) and value.zone not in (None, config.time_zone):
        raise ValueError(
            f"TIMESTAMP text in zone {value.zone}, the encoder's is {config.time_zone}"
        )
    text = _text(value)
    if text == _CURRENT_TIMESTAMP:
        return BELOW_MIN_TIMESTAMP if not_null else None
    zoned = write_timestamp(str(text), column.decimal or 0, config.zone)
    return None if zoned == BELOW_MIN_TIMESTAMP and substituted else zoned


def _enum_or_set(column: ColumnInfo, value: Value, config: Config) -> str | bytes:
    if isinstance(value, int):
        names = _member_names(column, value, is_set=column.type == "set")
        return "" if names is None else names  # an invalid member is written as ""
    text = _text(value)
    if config.profile == "ticdc" and column.type == "enum":
        # new-arch parses the default name (case-insensitively) before writing the member
        for element in column.elements or ():
            if isinstance(text, str) and element.lower() == text.lower():
                return element
    return text


def _value(column: ColumnInfo, flags: int, value: Value, substituted: bool,
           config: Config) -> object:  # fmt: skip
    """The payload value of a non-NULL ``value`` (``substituted``: it is the default)."""
    kind = column.type
    tiflow_text = substituted and config.profile == "tiflow"
    not_null = not flags & NULLABLE_FLAG
    if kind == "bit":
        number, width = _bit_value(value), _bit_width(column)
        return number != 0 if width == 1 else base64.b64encode(bit_bytes(number, width)).decode()
    if kind in STRING_TYPES:
        if flags & BINARY_FLAG:
            return base64.b64encode(_as_bytes(value)).decode()
        return _text(value)
    if kind in ("enum", "set"):
        return _enum_or_set(column, value, config)
    if kind == "decimal":
        return _number(value)
    if kind == "date":
        days = write_date(str(_text(value)))
        return days if days is not None else 0 if not_null else None
    if kind == "datetime":
        text = str(_text(value))
        epoch = 0 if text == _CURRENT_TIMESTAMP else write_datetime(text, column.decimal or 0)
        return epoch if epoch is not None else 0 if not_null else None
    if kind == "timestamp":
        return _timestamp(column, value, substituted, not_null, config)
    if kind == "time":
        return write_time(str(_text(value)), column.decimal or 0)
    if kind in INTEGER_BITS:
        return _integer(column, flags, value)
    if kind == "float":
        return _number(value) if tiflow_text else Float32(_number(value))
    if kind == "double":
        return _number(value)
    if kind == "year":
        if tiflow_text:
            return _text(value)  # the default text, written as a JSON string
        if not isinstance(value, int):
            raise ValueError(f"expected a year number, got {type(value).__name__}")
        return value
    if kind in ("json", "vector"):
        if kind == "vector" and substituted:
            raise ValueError("a VECTOR default is not a vector value (ErrDebeziumEncodeFailed)")
        return _text(value)
    if kind == "null":
        raise ValueError("a column of type NULL holds only NULL")
    # GEOMETRY: classic writes the raw value (bytes as base64), new-arch its %v text
    if isinstance(value, bytes):
        if config.profile == "ticdc":
            return "[" + " ".join(map(str, value)) + "]"
        return base64.b64encode(value).decode()
    return _text(value)


def field_value(column: ColumnInfo, flags: int, value: Value, config: Config) -> Pairs:
    """The payload member(s) of one column (§5.3); ``ValueError`` if the value cannot be."""
    substituted = value is None
    if value is None:
        if column.default is None:
            return Pairs([(column.name, None)])
        value = column.default
        if config.profile == "tiflow":
            value = default_text(column)
            if column.type in STRING_TYPES and flags & BINARY_FLAG:
                # classic writes the base64 member and then the raw text again (TF codec.go)
                encoded = base64.b64encode(_as_bytes(value)).decode()
                return Pairs([(column.name, encoded), (column.name, value)])
            if column.type == "bit":
                value = column.default
    return Pairs([(column.name, _value(column, flags, value, substituted, config))])
