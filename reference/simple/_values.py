"""Column values on the Simple wire: a JSON and an Avro writer and reader per type (§4.3, §4.8).

``JSON_WRITERS``, ``AVRO_WRITERS`` and ``READERS`` are keyed by every MySQL type and used
through their code-keyed forms: a column's type is its type code (``ColumnInfo.type_code``
when given, as TiCDC reads it). DML messages carry no types. A reader therefore gets the
column of the table schema the message resolves to (``SimpleDecoder``), or no column at all
(the stateless ``decode``), in which case the value stays as the wire has it (``untyped``).

JSON: every value is a string except TIMESTAMP, ``{"location","value"}``. Integers, YEAR,
BIT, ENUM (index) and SET (bitmask) are decimal text; FLOAT and DOUBLE Go ``'f'`` format (never
an exponent); binary strings (charset ``binary``) standard base64; everything else its text.

Avro: the map value union ``null, long, float, double, string, bytes, Timestamp,
UnsignedBigint``. BIGINT UNSIGNED is ``UnsignedBigint{value}`` holding the uint64's bits as a
long (2^63 and above wrap negative); other integers, ENUM and SET are ``long``; BIT is ``long``
(``tiflow``) or decimal ``string`` (``ticdc``); binary strings ``bytes``; the rest ``string``.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NoReturn, TypeVar

from ticdc_conformance.reference._gofloat import format_float_positional
from ticdc_conformance.reference._gojson import JsonStyle, from_json_text, quote
from ticdc_conformance.reference.mysql import (
    INTEGER_TYPES,
    STRING_TYPES,
    UINT64_TYPES,
    MySQLType,
    by_code,
    integer_range,
    wrap_int64,
)
from ticdc_conformance.reference.simple._text import avro_text
from ticdc_conformance.reference.tables import ColumnInfo, Profile
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value, string_bytes

__all__ = [
    "AVRO_WRITERS",
    "JSON_WRITERS",
    "READERS",
    "TIMESTAMP_RECORD",
    "UNSIGNED_RECORD",
    "Raw",
    "Unsigned",
    "read_value",
    "reader_of",
    "untyped",
    "write_avro_value",
    "write_json_value",
]

TIMESTAMP_RECORD = "com.pingcap.simple.avro.Timestamp"
UNSIGNED_RECORD = "com.pingcap.simple.avro.UnsignedBigint"

_INTEGERS: frozenset[MySQLType] = INTEGER_TYPES | UINT64_TYPES | {"year"}
"""Integers, YEAR, BIT, ENUM (index) and SET (bitmask)."""
_TEXT: frozenset[MySQLType] = frozenset({"date", "time", "datetime", "vector", "json"})
"""TiDB's text forms."""
_NONE: frozenset[MySQLType] = frozenset({"null", "geometry"})
"""Types whose columns hold only NULL in what TiCDC replicates."""
T = TypeVar("T")
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_FLOAT_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")


@dataclass(frozen=True, slots=True)
class Unsigned:
    """An Avro ``UnsignedBigint`` as read: ``value`` is the true uint64 (wrap undone)."""

    value: int


Raw = None | int | float | str | bytes | TimestampValue | Unsigned
"""A DML value as read from the wire, before it is typed against a column."""

JsonWriter = Callable[[ColumnInfo, Value, str], str]
"""(column, non-null value, zone) → the JSON text of the value."""
AvroWriter = Callable[[ColumnInfo, Value, str, Profile], tuple[str, object]]
"""(column, non-null value, zone, profile) → the map value union branch and its datum."""
Reader = Callable[[ColumnInfo, Raw, bool], Value]
"""(column, non-null raw value, whether Avro) → the value."""


def _is_binary(column: ColumnInfo) -> bool:
    return column.effective_charset == "binary"


def _integer(name: MySQLType, column: ColumnInfo, value: Value) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    if value not in integer_range(name, unsigned=column.unsigned):
        raise ValueError(f"{value} does not fit the column's {column.type}")
    return value


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
    return f'"{_integer(name, column, value)}"'


def _json_float(bits: int, column: ColumnInfo, value: Value, zone: str) -> str:
    del column, zone
    return f'"{format_float_positional(_float(value), bits)}"'


def _json_decimal(column: ColumnInfo, value: Value, zone: str) -> str:
    del column, zone
    return _q(_decimal_text(value))


def _json_string(column: ColumnInfo, value: Value, zone: str) -> str:
    del zone
    if _is_binary(column):
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
    number = _integer(name, column, value)
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
    if _is_binary(column):
        return "bytes", string_bytes(value)
    return "string", avro_text(_string(value))


def _avro_text(column: ColumnInfo, value: Value, zone: str, profile: Profile) -> tuple[str, object]:
    del column, zone, profile
    return "string", avro_text(_text(value))


def _avro_never(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    _never(column, value, zone, profile)


def _read_timestamp(column: ColumnInfo, raw: Raw, avro: bool) -> Value:
    del column, avro
    if not isinstance(raw, TimestampValue):
        raise ValueError("a TIMESTAMP is a {location, value} object")
    return raw


def _read_integer(name: MySQLType, column: ColumnInfo, raw: Raw, avro: bool) -> Value:
    if isinstance(raw, Unsigned):
        if name != "bigint" or not column.unsigned:
            raise ValueError("UnsignedBigint holds only BIGINT UNSIGNED")
        return raw.value
    if avro and not (name == "bit" and isinstance(raw, str)):  # ticdc writes BIT as text
        return _integer(name, column, _avro_long(name, column, raw))
    if not (isinstance(raw, str) and _INTEGER_TEXT.fullmatch(raw)):
        raise ValueError("expected an integer as decimal text")
    return _integer(name, column, int(raw))


def _avro_long(name: MySQLType, column: ColumnInfo, raw: Raw) -> int:
    """The integer of an Avro ``long``; BIT, ENUM and SET carry their uint64 wrapped."""
    if type(raw) is not int:
        raise ValueError("expected a long")
    if name == "bigint" and column.unsigned:
        raise ValueError("BIGINT UNSIGNED is an UnsignedBigint record")
    return raw % 2**64 if name in UINT64_TYPES else raw


def _read_float(bits: int, column: ColumnInfo, raw: Raw, avro: bool) -> Value:
    del column
    if avro:
        if type(raw) is not float:
            raise ValueError("expected a float or double")
        if bits == 64:
            return raw
        # fastavro widens a float to Python's float; keep its shortest float32 digits
        try:
            return float(format_float_positional(raw, 32))
        except OverflowError:  # the double branch holding 1e300 for a FLOAT column
            raise ValueError("a double beyond the float32 range") from None
    if not isinstance(raw, str) or not _FLOAT_TEXT.fullmatch(raw):
        raise ValueError("expected a number in positional notation")
    value = float(raw)
    if value in (float("inf"), float("-inf")):
        raise ValueError("a float out of range")
    return value


def _read_decimal(column: ColumnInfo, raw: Raw, avro: bool) -> Value:
    del column, avro
    if not isinstance(raw, str):
        raise ValueError("expected the decimal as text")
    return DecimalValue(raw)


def _read_binary(raw: Raw, avro: bool) -> Value:
    if avro:
        if not isinstance(raw, bytes):
            raise ValueError("expected bytes")
        return raw
    if not isinstance(raw, str):
        raise ValueError("expected base64 text")
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"invalid base64: {error}") from None


def _read_string(column: ColumnInfo, raw: Raw, avro: bool) -> Value:
    if _is_binary(column):
        return _read_binary(raw, avro)
    if not isinstance(raw, str):
        raise ValueError("expected text")
    return from_json_text(raw)


def _read_text(column: ColumnInfo, raw: Raw, avro: bool) -> Value:
    del column, avro
    if not isinstance(raw, str):
        raise ValueError("expected text")
    return raw


def _read_never(column: ColumnInfo, raw: Raw, avro: bool) -> Value:
    del raw, avro
    raise ValueError(f"a {column.type} column holds only NULL")


JSON_WRITERS: dict[MySQLType, JsonWriter] = {
    "timestamp": _json_timestamp,
    **{name: partial(_json_integer, name) for name in _INTEGERS},
    "float": partial(_json_float, 32),
    "double": partial(_json_float, 64),
    "decimal": _json_decimal,
    **dict.fromkeys(STRING_TYPES, _json_string),
    **dict.fromkeys(_TEXT, _json_text),
    **dict.fromkeys(_NONE, _never),
}
AVRO_WRITERS: dict[MySQLType, AvroWriter] = {
    "timestamp": _avro_timestamp,
    **{name: partial(_avro_integer, name) for name in _INTEGERS},
    "float": partial(_avro_float, "float"),
    "double": partial(_avro_float, "double"),
    "decimal": _avro_decimal,
    **dict.fromkeys(STRING_TYPES, _avro_string),
    **dict.fromkeys(_TEXT, _avro_text),
    **dict.fromkeys(_NONE, _avro_never),
}
READERS: dict[MySQLType, Reader] = {
    "timestamp": _read_timestamp,
    **{name: partial(_read_integer, name) for name in _INTEGERS},
    "float": partial(_read_float, 32),
    "double": partial(_read_float, 64),
    "decimal": _read_decimal,
    **dict.fromkeys(STRING_TYPES, _read_string),
    **dict.fromkeys(_TEXT, _read_text),
    **dict.fromkeys(_NONE, _read_never),
}
_JSON_BY_CODE = by_code(JSON_WRITERS)
_AVRO_BY_CODE = by_code(AVRO_WRITERS)
_READERS_BY_CODE = by_code(READERS)


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


def untyped(raw: Raw) -> Value:
    """A value as the wire has it, when no table schema says its type."""
    if isinstance(raw, Unsigned):
        return raw.value
    if isinstance(raw, str):
        return from_json_text(raw)
    return raw


def reader_of(column: ColumnInfo) -> Reader:
    """The reader of ``column``'s non-null values: decoders pick it once per column."""
    return _READERS_BY_CODE.get(column.effective_type_code, _read_never)


def read_value(column: ColumnInfo, raw: Raw, *, avro: bool) -> Value:
    """The ``Value`` of a DML value typed by its column; ``ValueError`` if it does not fit."""
    if raw is None:
        return None
    return reader_of(column)(column, raw, avro)
