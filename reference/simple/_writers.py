"""Simple DML values written: a JSON and an Avro writer per MySQL type (§4.3, §4.8).

The rules of each encoding are ``_values``'; the tables are keyed by every MySQL type and used
through their code-keyed forms (a column's type is its type code).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from functools import partial
from typing import NoReturn, TypeVar

from ticdc_conformance.reference._gofloat import format_float_positional
from ticdc_conformance.reference._gojson import JsonStyle, quote
from ticdc_conformance.reference.mysql import STRING_TYPES, MySQLType, by_code, wrap_int64
from ticdc_conformance.reference.simple._raw import (
    INTEGERS,
    NULL_ONLY,
    TEXT_FORMS,
    TIMESTAMP_RECORD,
    UNSIGNED_RECORD,
    checked_integer,
    is_binary,
)
from ticdc_conformance.reference.simple._text import avro_text
from ticdc_conformance.reference.tables import ColumnInfo, Profile
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value, string_bytes

__all__ = ["AVRO_WRITERS", "JSON_WRITERS", "write_avro_value", "write_json_value"]

T = TypeVar("T")
JsonWriter = Callable[[ColumnInfo, Value, str], str]
"""(column, non-null value, zone) → the JSON text of the value."""
AvroWriter = Callable[[ColumnInfo, Value, str, Profile], tuple[str, object]]
"""(column, non-null value, zone, profile) → the map value union branch and its datum."""


def _timestamp_text(value: Value, zone: str) -> str:
    if not isinstance(value, TimestampValue):
        raise ValueError(f"expected a timestamp, got {type(value).__name__}")
    if value.zone is not None and value.zone != zone:
        # TiCDC renders every TIMESTAMP in its server zone, the one ``location`` names
        raise ValueError(f"TIMESTAMP rendered in {value.zone}, the encoder's zone is {zone}")
    return value.text


def _text(value: Value) -> str:
    if isinstance(value, DecimalValue | TimestampValue):
        return value.text
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return value


def _decimal_text(value: Value) -> str:
    if not isinstance(value, DecimalValue):
        raise ValueError(f"expected a decimal, got {type(value).__name__}")
    return value.text


def _string(value: Value) -> str | bytes:
    if not isinstance(value, str | bytes):
        raise ValueError(f"expected text or bytes, got {type(value).__name__}")
    return value


def _float(value: Value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _never(column: ColumnInfo, *args: object) -> NoReturn:
    del args
    raise ValueError(f"a {column.type} column cannot hold a value TiCDC replicates")


def _q(text: str | bytes) -> str:
    return quote(text, JsonStyle.GO_STD)  # invalid UTF-8 becomes U+FFFD (§1.4)


def _json_timestamp(column: ColumnInfo, value: Value, zone: str) -> str:
    del column
    return f'{{"location":{_q(zone)},"value":{_q(_timestamp_text(value, zone))}}}'


def _json_integer(name: MySQLType, column: ColumnInfo, value: Value, zone: str) -> str:
    del zone
    return f'"{checked_integer(name, column, value)}"'


def _json_float(bits: int, column: ColumnInfo, value: Value, zone: str) -> str:
    del column, zone
    return f'"{format_float_positional(_float(value), bits)}"'


def _json_decimal(column: ColumnInfo, value: Value, zone: str) -> str:
    del column, zone
    return _q(_decimal_text(value))


def _json_string(column: ColumnInfo, value: Value, zone: str) -> str:
    del zone
    if is_binary(column):
        return '"' + base64.b64encode(string_bytes(value)).decode("ascii") + '"'
    return _q(_string(value))


def _json_text(column: ColumnInfo, value: Value, zone: str) -> str:
    del column, zone
    return _q(_text(value))


def _avro_timestamp(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    del column, profile
    return TIMESTAMP_RECORD, {"location": avro_text(zone), "value": _timestamp_text(value, zone)}


def _avro_integer(
    name: MySQLType, column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    del zone
    number = checked_integer(name, column, value)
    if name == "bigint" and column.unsigned:
        return UNSIGNED_RECORD, {"value": wrap_int64(number)}
    if name == "bit" and profile == "ticdc":
        return "string", str(number)  # §4.10 item 1
    return "long", wrap_int64(number)


def _avro_float(
    kind: str, column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    del column, zone, profile
    return kind, _float(value)


def _avro_decimal(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    del column, zone, profile
    return "string", _decimal_text(value)


def _avro_string(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    del zone, profile
    if is_binary(column):
        return "bytes", string_bytes(value)
    return "string", avro_text(_string(value))


def _avro_text(column: ColumnInfo, value: Value, zone: str, profile: Profile) -> tuple[str, object]:
    del column, zone, profile
    return "string", avro_text(_text(value))


def _avro_never(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    _never(column, value, zone, profile)


JSON_WRITERS: dict[MySQLType, JsonWriter] = {
    "timestamp": _json_timestamp,
    **{name: partial(_json_integer, name) for name in INTEGERS},
    "float": partial(_json_float, 32),
    "double": partial(_json_float, 64),
    "decimal": _json_decimal,
    **dict.fromkeys(STRING_TYPES, _json_string),
    **dict.fromkeys(TEXT_FORMS, _json_text),
    **dict.fromkeys(NULL_ONLY, _never),
}
AVRO_WRITERS: dict[MySQLType, AvroWriter] = {
    "timestamp": _avro_timestamp,
    **{name: partial(_avro_integer, name) for name in INTEGERS},
    "float": partial(_avro_float, "float"),
    "double": partial(_avro_float, "double"),
    "decimal": _avro_decimal,
    **dict.fromkeys(STRING_TYPES, _avro_string),
    **dict.fromkeys(TEXT_FORMS, _avro_text),
    **dict.fromkeys(NULL_ONLY, _avro_never),
}
_JSON_BY_CODE = by_code(JSON_WRITERS)
_AVRO_BY_CODE = by_code(AVRO_WRITERS)


def _entry(table: dict[int, T], column: ColumnInfo) -> T:
    entry = table.get(column.effective_type_code)
    if entry is None:
        raise ValueError(f"a {column.type} column cannot hold a value TiCDC replicates")
    return entry


def write_json_value(column: ColumnInfo, value: Value, zone: str) -> str:
    """The JSON text of a DML value (§4.3); ``ValueError`` if it does not fit the column."""
    if value is None:
        return "null"
    try:
        return _entry(_JSON_BY_CODE, column)(column, value, zone)
    except ValueError as error:
        raise ValueError(f"column {column.name!r}: {error}") from None


def write_avro_value(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    """The map value union branch and datum of a DML value (§4.8)."""
    if value is None:
        return "null", None
    try:
        return _entry(_AVRO_BY_CODE, column)(column, value, zone, profile)
    except ValueError as error:
        raise ValueError(f"column {column.name!r}: {error}") from None
