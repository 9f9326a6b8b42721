"""Column values on the Simple wire: a JSON and an Avro writer and reader per type (§4.3, §4.8).

DML messages carry no types. A reader therefore gets the column of the table schema the
message resolves to (``SimpleDecoder``), or no column at all (the stateless ``decode``), in
which case the value stays as the wire has it (``untyped``).

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
from dataclasses import dataclass

from ticdc_conformance.reference._gojson import (
    JsonStyle,
    format_float_positional,
    from_json_text,
    quote,
)
from ticdc_conformance.reference.simple._text import avro_text, to_int64
from ticdc_conformance.reference.tables import ColumnInfo, Profile
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "TIMESTAMP_RECORD",
    "UNSIGNED_RECORD",
    "Raw",
    "Unsigned",
    "read_value",
    "untyped",
    "write_avro_value",
    "write_json_value",
]

TIMESTAMP_RECORD = "com.pingcap.simple.avro.Timestamp"
UNSIGNED_RECORD = "com.pingcap.simple.avro.UnsignedBigint"

_INTEGER_BITS = {1: 8, 2: 16, 9: 24, 3: 32, 8: 64, 13: 16}
"""TINYINT SMALLINT MEDIUMINT INT BIGINT, and YEAR (which TiDB holds as a small int)."""
_UINT64_CODES = (16, 247, 248)
"""BIT, ENUM, SET: uint64 whatever the column says (§1.1)."""
_TEXT_CODES = (10, 11, 12, 14, 225, 245)
"""DATE TIME DATETIME NEWDATE VECTOR JSON: text."""
_STRING_CODES = (15, 253, 254, 249, 250, 251, 252)
"""CHAR VARCHAR and the TEXT/BLOB family: text, or bytes when the charset is binary."""
_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_FLOAT_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")


@dataclass(frozen=True, slots=True)
class Unsigned:
    """An Avro ``UnsignedBigint`` as read: ``value`` is the true uint64 (wrap undone)."""

    value: int


Raw = None | int | float | str | bytes | TimestampValue | Unsigned
"""A DML value as read from the wire, before it is typed against a column."""


def _is_binary(column: ColumnInfo) -> bool:
    return column.effective_charset == "binary"


def _integer(column: ColumnInfo, value: Value) -> int:
    code = column.effective_type_code
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    if code in _UINT64_CODES or column.unsigned:
        allowed = range(2**64) if code in _UINT64_CODES else range(2 ** _INTEGER_BITS[code])
    else:
        half = 2 ** (_INTEGER_BITS[code] - 1)
        allowed = range(-half, half)
    if value not in allowed:
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


def _bytes(value: Value) -> bytes:
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    raise ValueError(f"expected text or bytes, got {type(value).__name__}")


def _float(value: Value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _json_text(column: ColumnInfo, value: Value, zone: str) -> str:
    if value is None:
        return "null"
    code = column.effective_type_code
    if code == 7:
        text = quote(_timestamp_text(value, zone), JsonStyle.GO_STD)
        return f'{{"location":{quote(zone, JsonStyle.GO_STD)},"value":{text}}}'
    if code in _INTEGER_BITS or code in _UINT64_CODES:
        return f'"{_integer(column, value)}"'
    if code in (4, 5):
        return f'"{format_float_positional(_float(value), 32 if code == 4 else 64)}"'
    if code == 246:
        if not isinstance(value, DecimalValue):
            raise ValueError(f"expected a decimal, got {type(value).__name__}")
        return quote(value.text, JsonStyle.GO_STD)
    if code in _STRING_CODES:
        if _is_binary(column):
            return '"' + base64.b64encode(_bytes(value)).decode("ascii") + '"'
        if not isinstance(value, str | bytes):
            raise ValueError(f"expected text or bytes, got {type(value).__name__}")
        return quote(value, JsonStyle.GO_STD)  # invalid UTF-8 becomes U+FFFD (§1.4)
    if code in _TEXT_CODES:
        return quote(_text(value), JsonStyle.GO_STD)
    raise ValueError(f"a {column.type} column cannot hold a value TiCDC replicates")


def _avro_datum(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    if value is None:
        return "null", None
    code = column.effective_type_code
    if code == 7:
        return TIMESTAMP_RECORD, {
            "location": avro_text(zone),
            "value": _timestamp_text(value, zone),
        }
    if code in _INTEGER_BITS or code in _UINT64_CODES:
        number = _integer(column, value)
        if code == 8 and column.unsigned:
            return UNSIGNED_RECORD, {"value": to_int64(number)}
        if code == 16 and profile == "ticdc":
            return "string", str(number)  # §4.10 item 1
        return "long", to_int64(number)
    if code in (4, 5):
        return ("float" if code == 4 else "double"), _float(value)
    if code == 246:
        if not isinstance(value, DecimalValue):
            raise ValueError(f"expected a decimal, got {type(value).__name__}")
        return "string", value.text
    if code in _STRING_CODES:
        if _is_binary(column):
            return "bytes", _bytes(value)
        if not isinstance(value, str | bytes):
            raise ValueError(f"expected text or bytes, got {type(value).__name__}")
        return "string", avro_text(value)
    if code in _TEXT_CODES:
        return "string", avro_text(_text(value))
    raise ValueError(f"a {column.type} column cannot hold a value TiCDC replicates")


def write_json_value(column: ColumnInfo, value: Value, zone: str) -> str:
    """The JSON text of a DML value (§4.3); ``ValueError`` if it does not fit the column."""
    try:
        return _json_text(column, value, zone)
    except ValueError as error:
        raise ValueError(f"column {column.name!r}: {error}") from None


def write_avro_value(
    column: ColumnInfo, value: Value, zone: str, profile: Profile
) -> tuple[str, object]:
    """The map value union branch and datum of a DML value (§4.8)."""
    try:
        return _avro_datum(column, value, zone, profile)
    except ValueError as error:
        raise ValueError(f"column {column.name!r}: {error}") from None


def untyped(raw: Raw) -> Value:
    """A value as the wire has it, when no table schema says its type."""
    if isinstance(raw, Unsigned):
        return raw.value
    if isinstance(raw, str):
        return from_json_text(raw)
    return raw


def _read_integer(column: ColumnInfo, raw: Raw, avro: bool) -> int:
    code = column.effective_type_code
    if isinstance(raw, Unsigned):
        if code != 8 or not column.unsigned:
            raise ValueError("UnsignedBigint holds only BIGINT UNSIGNED")
        return raw.value
    if avro:
        if type(raw) is not int:
            raise ValueError("expected a long")
        if code == 8 and column.unsigned:
            raise ValueError("BIGINT UNSIGNED is an UnsignedBigint record")
        number = raw % 2**64 if code in _UINT64_CODES else raw
    elif isinstance(raw, str) and _INTEGER_TEXT.fullmatch(raw):
        number = int(raw)
    else:
        raise ValueError("expected an integer as decimal text")
    return _integer(column, number)


def _read_float(raw: Raw, bits: int, avro: bool) -> float:
    if avro:
        if type(raw) is not float:
            raise ValueError("expected a float or double")
        # fastavro widens a float to Python's float; keep its shortest float32 digits
        return float(format_float_positional(raw, 32)) if bits == 32 else raw
    if not isinstance(raw, str) or not _FLOAT_TEXT.fullmatch(raw):
        raise ValueError("expected a number in positional notation")
    value = float(raw)
    if value in (float("inf"), float("-inf")):
        raise ValueError("a float out of range")
    return value


def read_value(column: ColumnInfo, raw: Raw, *, avro: bool) -> Value:
    """The ``Value`` of a DML value typed by its column; ``ValueError`` if it does not fit."""
    if raw is None:
        return None
    code = column.effective_type_code
    if code == 7:
        if not isinstance(raw, TimestampValue):
            raise ValueError("a TIMESTAMP is a {location, value} object")
        return raw
    if code in _INTEGER_BITS or code in _UINT64_CODES:
        if avro and code == 16 and isinstance(raw, str):  # profile ticdc writes BIT as text
            return _read_integer(column, raw, avro=False)
        return _read_integer(column, raw, avro)
    if code in (4, 5):
        return _read_float(raw, 32 if code == 4 else 64, avro)
    if code == 246:
        if not isinstance(raw, str):
            raise ValueError("expected the decimal as text")
        return DecimalValue(raw)
    if code in _STRING_CODES and _is_binary(column):
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
    if code in _STRING_CODES or code in _TEXT_CODES:
        if not isinstance(raw, str):
            raise ValueError("expected text")
        return from_json_text(raw) if code in _STRING_CODES else raw
    raise ValueError(f"a {column.type} column holds only NULL")
