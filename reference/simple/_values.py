"""Column values on the Simple wire: a JSON and an Avro writer and reader per type (§4.3, §4.8).

``JSON_WRITERS``, ``AVRO_WRITERS`` (written in ``_writers``) and ``READERS`` (here) are keyed
by every MySQL type and used through their code-keyed forms: a column's type is its type code
(``ColumnInfo.type_code`` when given, as TiCDC reads it); ``_raw`` holds the value as read
and the type groups both share. DML messages carry no types. A reader therefore gets the
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
from functools import partial

from ticdc_conformance.reference._gofloat import format_float_positional
from ticdc_conformance.reference._gojson import from_json_text
from ticdc_conformance.reference.mysql import STRING_TYPES, UINT64_TYPES, MySQLType, by_code
from ticdc_conformance.reference.simple._raw import (
    INTEGERS,
    NULL_ONLY,
    TEXT_FORMS,
    TIMESTAMP_RECORD,
    UNSIGNED_RECORD,
    Raw,
    Unsigned,
    checked_integer,
    is_binary,
)
from ticdc_conformance.reference.simple._writers import (
    AVRO_WRITERS,
    JSON_WRITERS,
    write_avro_value,
    write_json_value,
)
from ticdc_conformance.reference.tables import ColumnInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

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

_INTEGER_TEXT = re.compile(r"-?[0-9]+")
_FLOAT_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")

Reader = Callable[[ColumnInfo, Raw, bool], Value]
"""(column, non-null raw value, whether Avro) → the value."""


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
        return checked_integer(name, column, _avro_long(name, column, raw))
    if not (isinstance(raw, str) and _INTEGER_TEXT.fullmatch(raw)):
        raise ValueError("expected an integer as decimal text")
    return checked_integer(name, column, int(raw))


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
    if is_binary(column):
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


READERS: dict[MySQLType, Reader] = {
    "timestamp": _read_timestamp,
    **{name: partial(_read_integer, name) for name in INTEGERS},
    "float": partial(_read_float, 32),
    "double": partial(_read_float, 64),
    "decimal": _read_decimal,
    **dict.fromkeys(STRING_TYPES, _read_string),
    **dict.fromkeys(TEXT_FORMS, _read_text),
    **dict.fromkeys(NULL_ONLY, _read_never),
}
_READERS_BY_CODE = by_code(READERS)


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
