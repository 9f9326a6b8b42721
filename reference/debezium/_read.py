r"""Payload values back to TiDB values, guided by the field schema (§5.3, decoder side).

``read_column`` turns one payload member into a ``DecodedColumn``. The field schema's logical
``name`` decides first (Debezium's temporal, Bits, Enum, EnumSet, Json and TiDB vector types),
then its ``type``, refined by ``tidb_type`` when enable-tidb-extension wrote one. What the
message cannot settle is kept as the message says it and marked in ``ambiguity``:

* ``unsigned-unknown``: a negative int64 without ``tidb_type`` may be a wrapped BIGINT
  UNSIGNED (TiCDC writes 2^64 - 1 as -1);
* ``decimal-as-double``: a DECIMAL carried as a double (digits and scale may be lost);
  ``double-or-decimal``: a double without ``tidb_type``, which may be either;
* ``binary-unknown``: a string without ``tidb_type``, which may be base64 of binary bytes;
* ``null-or-default``: the value equals the schema ``default`` of a nullable column, and
  TiCDC writes a NULL as the default (or it is a YEAR as a JSON string, which only classic
  TiCDC's default for a NULL is);
* ``members-unresolved``: an ENUM member name that TiCDC's lossy ``allowed`` escaping
  (``''`` and ``\'`` folded to ``'``) makes impossible to place: kept as the name;
* ``no-schema``: the message has no schema (debezium-disable-schema), so numbers and strings
  are passed through as they are.
"""

from __future__ import annotations

import base64
import binascii
import re

from ticdc_conformance.reference._gojson import from_json_text
from ticdc_conformance.reference.debezium._temporal import (
    read_date,
    read_datetime,
    read_time,
    read_timestamp,
)
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.tables import TYPE_CODES
from ticdc_conformance.reference.values import TimestampValue, Value

__all__ = ["read_column", "split_allowed"]

_INT_RANGES = {"int16": 16, "int32": 32, "int64": 64}
_BINARY_TIDB_TYPES = frozenset({"binary", "varbinary", "tinyblob", "blob", "mediumblob",
                                "longblob"})  # fmt: skip
_LOGICAL_TYPES = {
    "io.debezium.time.Date": "date",
    "io.debezium.time.Timestamp": "datetime",
    "io.debezium.time.MicroTimestamp": "datetime",
    "io.debezium.time.ZonedTimestamp": "timestamp",
    "io.debezium.time.MicroTime": "time",
    "io.debezium.time.Year": "year",
    "io.debezium.data.Bits": "bit",
    "io.debezium.data.Enum": "enum",
    "io.debezium.data.EnumSet": "set",
    "io.debezium.data.Json": "json",
    "io.debezium.data.TiDBVectorFloat32": "vector",
}
_NO_DEFAULT = object()
_UNESCAPED_COMMA = re.compile(r"(?<!\\),")


def split_allowed(allowed: str) -> list[str]:
    r"""ENUM ``allowed`` members (commas inside members are escaped as ``\\,``)."""
    return [part.replace("\\,", ",") for part in _UNESCAPED_COMMA.split(allowed)] if allowed else []


def _integer(raw: object, bits: int) -> int:
    if type(raw) is not int or not -(2 ** (bits - 1)) <= raw < 2 ** (bits - 1):
        raise ValueError(f"expected an int{bits}")
    return raw


def _text(raw: object) -> str:
    if type(raw) is not str:
        raise ValueError("expected a JSON string")
    return raw


def _base64(raw: object) -> bytes:
    try:
        return base64.b64decode(_text(raw), validate=True)
    except binascii.Error as error:
        raise ValueError(f"invalid base64: {error}") from None


def _members(raw: object, field: dict[str, object], *, is_set: bool) -> tuple[Value, str | None]:
    text = _text(raw)
    parameters = field.get("parameters")
    allowed = parameters.get("allowed") if isinstance(parameters, dict) else None
    if not isinstance(allowed, str):
        raise ValueError("an Enum/EnumSet schema needs parameters.allowed")
    elements = allowed.split(",") if is_set else split_allowed(allowed)
    if not text:
        return 0, None  # TiCDC writes an invalid member as ""
    names = text.split(",") if is_set else [text]
    if all(elements.count(name) == 1 for name in names):
        if not is_set:
            return elements.index(text) + 1, None
        return sum(1 << elements.index(name) for name in set(names)), None
    if not is_set and ("'" in allowed or "\\" in allowed):
        # TiCDC's escaping folds '' and \' into ' and leaves a trailing \ before the comma
        # separator: the member is real, its position cannot be known
        return text, "members-unresolved"
    raise ValueError(f"{text!r} is not among the allowed members")


def _logical(name: str, raw: object, field: dict[str, object]) -> tuple[Value, str | None]:
    if name in ("io.debezium.data.Enum", "io.debezium.data.EnumSet"):
        return _members(raw, field, is_set=name.endswith("EnumSet"))
    return _temporal_or_text(name, raw), None


def _temporal_or_text(name: str, raw: object) -> Value:
    if name == "io.debezium.time.Date":
        return read_date(_integer(raw, 32))
    if name in ("io.debezium.time.Timestamp", "io.debezium.time.MicroTimestamp"):
        return read_datetime(_integer(raw, 64), micro=name.endswith("MicroTimestamp"))
    if name == "io.debezium.time.MicroTime":
        return read_time(_integer(raw, 64))
    if name == "io.debezium.time.ZonedTimestamp":
        return TimestampValue(read_timestamp(_text(raw)), "UTC")
    if name == "io.debezium.time.Year":
        # classic TiCDC writes a YEAR default (for a NULL) as a JSON string
        return int(_text(raw)) if type(raw) is str and raw.isdigit() else _integer(raw, 32)
    if name == "io.debezium.data.Bits":
        return int.from_bytes(_base64(raw), "little")
    return from_json_text(_text(raw))  # Json, TiDBVectorFloat32


def _typed(schema_type: object, raw: object, tidb: str | None) -> tuple[Value, str | None]:
    """Value and ambiguity of a member whose schema has no logical name."""
    if schema_type == "boolean":
        if type(raw) is not bool:
            raise ValueError("expected a JSON boolean")
        return int(raw), None
    if schema_type in _INT_RANGES:
        value = _integer(raw, _INT_RANGES[schema_type])
        if value >= 0 or schema_type != "int64":
            return value, None
        if tidb == "bigint unsigned":
            return value + 2**64, None
        return value, None if tidb is not None else "unsigned-unknown"
    if schema_type in ("float", "double"):
        if type(raw) not in (int, float):
            raise ValueError("expected a JSON number")
        number = float(raw)  # type: ignore[arg-type]
        if schema_type == "float" or tidb in ("double", "double unsigned", "float"):
            return number, None
        return number, "decimal-as-double" if tidb == "decimal" else "double-or-decimal"
    if schema_type == "bytes":
        return _base64(raw), None
    if schema_type == "string":
        if tidb in _BINARY_TIDB_TYPES:
            return _base64(raw), None
        return from_json_text(_text(raw)), None if tidb is not None else "binary-unknown"
    raise ValueError(f"unknown schema type {schema_type!r}")


def _untyped(raw: object) -> tuple[Value, str | None]:
    """A member without a field schema: the JSON scalar as it is."""
    if type(raw) is bool:
        return int(raw), None  # only BIT(1) is a boolean
    if type(raw) in (int, float):
        return raw, "no-schema"  # type: ignore[return-value]
    if type(raw) is str:
        return from_json_text(raw), "no-schema"
    raise ValueError("expected a JSON scalar")


def read_column(
    name: str, raw: object, field: dict[str, object] | None, handle_key: bool | None
) -> DecodedColumn:
    """One payload member as a decoded column; ``ValueError`` when the value does not fit."""
    tidb = field.get("tidb_type") if field is not None else None
    if tidb is not None and type(tidb) is not str:
        raise ValueError("tidb_type must be a string")
    logical = field.get("name") if field is not None else None
    mysql_type = tidb or _LOGICAL_TYPES.get(logical) if isinstance(logical, str) else tidb
    if field is not None and field.get("type") == "boolean" and mysql_type is None:
        mysql_type = "bit"
    base = mysql_type.removesuffix(" unsigned") if mysql_type else None
    type_code = TYPE_CODES.get(base) if base else None
    value: Value
    ambiguity: str | None = None
    if raw is None:
        value = None
    elif field is None:
        value, ambiguity = _untyped(raw)
    elif isinstance(logical, str) and logical in _LOGICAL_TYPES:
        value, ambiguity = _logical(logical, raw, field)
    elif "type" not in field:
        value, ambiguity = _untyped(raw)  # a type TiCDC does not support: no schema written
    else:
        value, ambiguity = _typed(field["type"], raw, tidb)
    default = field.get("default", _NO_DEFAULT) if field is not None else _NO_DEFAULT
    if (
        raw is not None
        and field is not None
        and field.get("optional") is True
        and (default == raw and type(default) is type(raw))
    ):
        ambiguity = "null-or-default"  # TiCDC writes a NULL as the default (§5.3)
    if logical == "io.debezium.time.Year" and type(raw) is str:
        ambiguity = "null-or-default"  # only classic's default for a NULL is a string
    return DecodedColumn(name, value, type_code, None, handle_key, mysql_type, ambiguity)
