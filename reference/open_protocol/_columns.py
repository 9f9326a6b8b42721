"""Column values on the Open Protocol wire: a writer and a reader per MySQL type (§2.5).

``WRITERS`` and ``READERS`` are keyed by every MySQL type; the wire names a column's type by
its code (``t``), so both are used through their code-keyed forms (``mysql.by_code``). A
writer turns a ``Value`` into the JSON text of ``v``; a reader turns the parsed ``v`` back into
a ``Value``. Both get the column's flag bits, because BinaryFlag decides between text and bytes
for the string types. Type codes no type has (TiDB never produces them) take the generic rule
of TiCDC's classic encoder when written: the JSON library's own form of the Go value (§2.5,
"everything else"); the reader refuses them.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from functools import partial
from typing import Literal

from ticdc_conformance.reference import _gostrconv
from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle, from_json_text, quote
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.mysql import (
    ANY_INT,
    BINARY_TYPES,
    INT64,
    INTEGER_TYPES,
    TEXT_TYPES,
    UINT64,
    UINT64_TYPES,
    MySQLType,
    by_code,
    codes_of,
)
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value, string_bytes

__all__ = [
    "FLOAT_CODES",
    "INTEGER_CODES",
    "READERS",
    "TEXT_CODES",
    "WRITERS",
    "Form",
    "form_of",
    "is_known",
    "read_value",
    "write_value",
]

Writer = Callable[[Value, int, JsonStyle], str]
Reader = Callable[[Json, int | None], Value]

_INTEGERS: frozenset[MySQLType] = INTEGER_TYPES | UINT64_TYPES | {"year"}
"""JSON integers: the integer types, YEAR, BIT, ENUM and SET."""
_QUOTED: frozenset[MySQLType] = frozenset({"char", "varchar", "binary", "varbinary"})
"""Text, or Go-quoted bytes under BinaryFlag."""
_BASE64 = (TEXT_TYPES | BINARY_TYPES) - _QUOTED
"""TINY/MEDIUM/LONG/plain TEXT and BLOB: standard base64 of the raw bytes, text too."""
_TEXT: frozenset[MySQLType] = frozenset({"date", "time", "datetime", "vector", "json"})
"""TiDB's text forms."""


def _write_integer(value: Value, flags: int, style: JsonStyle) -> str:
    del style
    if type(value) is int and 0 <= value < _INT64_END:  # fits signed and unsigned alike
        return str(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    allowed = UINT64 if flags & UNSIGNED_FLAG else INT64
    if value not in allowed:
        kind = "unsigned" if flags & UNSIGNED_FLAG else "signed"
        raise ValueError(f"{value} does not fit a {kind} 64-bit integer")
    return str(value)


_INT64_END = INT64.stop


def _read_integer(raw: Json, flags: int | None) -> Value:
    del flags
    if type(raw) is not int:
        raise ValueError("expected a JSON integer")
    if raw not in ANY_INT:
        raise ValueError("integer outside the int64/uint64 range")
    return raw


def _write_float(bits: int, value: Value, flags: int, style: JsonStyle) -> str:
    del flags
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    try:
        return format_float(float(value), bits, style)
    except OverflowError:  # FLOAT is held as float32 (as Craft's writer says)
        raise ValueError(f"{value!r} does not fit a FLOAT (float32)") from None


def _read_float(raw: Json, flags: int | None) -> Value:
    del flags
    if type(raw) is float:
        return raw
    if type(raw) is int:  # Go prints 2.0 as 2
        if not -(10**21) < raw < 10**21:  # Go writes 1e21 and above with an exponent (§1.4)
            raise ValueError("an integer of 22 digits or more, which Go never writes for a float")
        return float(raw)
    raise ValueError("expected a JSON number")


def _write_string(value: Value, flags: int, style: JsonStyle) -> str:
    if flags & BINARY_FLAG:
        return quote(_gostrconv.quote(string_bytes(value)), style)
    if not isinstance(value, str | bytes):
        raise ValueError(f"expected text or bytes, got {type(value).__name__}")
    return quote(value, style)


def _read_string(raw: Json, flags: int | None) -> Value:
    if type(raw) is not str:
        raise ValueError("expected a JSON string")
    if flags and flags & BINARY_FLAG:
        return _gostrconv.unquote(raw)
    # surrogate escapes stand for bytes that were not valid UTF-8 on the wire (profile ticdc
    # copies them raw): such a value is bytes, not text
    return from_json_text(raw)


def _write_base64(value: Value, flags: int, style: JsonStyle) -> str:
    del flags, style
    return '"' + base64.b64encode(string_bytes(value)).decode("ascii") + '"'


def _read_base64(raw: Json, flags: int | None) -> Value:
    if type(raw) is not str:
        raise ValueError("expected a base64 JSON string")
    try:
        data = base64.b64decode(raw, validate=True)
    except binascii.Error as error:
        raise ValueError(f"invalid base64: {error}") from None
    if flags and flags & BINARY_FLAG:
        return data
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data


def _write_text(value: Value, flags: int, style: JsonStyle) -> str:
    del flags
    if isinstance(value, TimestampValue):
        return quote(value.text, style)
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return quote(value, style)


def _read_text(raw: Json, flags: int | None) -> Value:
    del flags
    if type(raw) is not str:
        raise ValueError("expected a JSON string")
    return raw


def _read_timestamp(raw: Json, flags: int | None) -> Value:
    del flags
    if type(raw) is not str:
        raise ValueError("expected a JSON string")
    # Open Protocol does not say which zone the text is in (ground truth §1.1).
    return TimestampValue(raw, None)


def _write_decimal(value: Value, flags: int, style: JsonStyle) -> str:
    del flags
    if isinstance(value, DecimalValue):
        return quote(value.text, style)
    raise ValueError(f"expected a decimal, got {type(value).__name__}")


def _read_decimal(raw: Json, flags: int | None) -> Value:
    del flags
    if type(raw) is not str:
        raise ValueError("expected the decimal as a JSON string")
    return DecimalValue(raw)


def _write_null_type(value: Value, flags: int, style: JsonStyle) -> str:
    del value, flags, style
    raise ValueError("a column of type NULL holds only NULL")


def _read_null_type(raw: Json, flags: int | None) -> Value:
    del raw, flags
    raise ValueError("a column of type NULL holds only null")


def _write_unsupported(value: Value, flags: int, style: JsonStyle) -> str:
    del value, flags, style
    raise ValueError("GEOMETRY is not supported by TiCDC")


def _write_generic(value: Value, flags: int, style: JsonStyle) -> str:
    if isinstance(value, bytes):
        return _write_base64(value, flags, style)  # Go marshals []byte as base64
    if isinstance(value, int):
        return _write_integer(value, flags, style)
    if isinstance(value, float):
        return format_float(value, 64, style)
    if isinstance(value, DecimalValue | TimestampValue):
        return quote(value.text, style)
    return quote(str(value), style)


def _read_generic(raw: Json) -> Value:
    if raw is None or type(raw) is int or type(raw) is float or type(raw) is str:
        return raw
    raise ValueError("expected a JSON scalar")


def _read_geometry(raw: Json, flags: int | None) -> Value:
    del flags
    return _read_generic(raw)


def _write_uint64(value: Value, flags: int, style: JsonStyle) -> str:
    """BIT, ENUM and SET: uint64 whatever the flags say (§1.1)."""
    return _write_integer(value, flags | UNSIGNED_FLAG, style)


WRITERS: dict[MySQLType, Writer] = {
    **dict.fromkeys(INTEGER_TYPES | {"year"}, _write_integer),
    **dict.fromkeys(UINT64_TYPES, _write_uint64),
    "float": partial(_write_float, 32),
    "double": partial(_write_float, 64),
    "decimal": _write_decimal,
    **dict.fromkeys(_QUOTED, _write_string),
    **dict.fromkeys(_BASE64, _write_base64),
    **dict.fromkeys(_TEXT | {"timestamp"}, _write_text),
    "null": _write_null_type,
    "geometry": _write_unsupported,
}
READERS: dict[MySQLType, Reader] = {
    **dict.fromkeys(_INTEGERS, _read_integer),
    "float": _read_float,
    "double": _read_float,
    "decimal": _read_decimal,
    **dict.fromkeys(_QUOTED, _read_string),
    **dict.fromkeys(_BASE64, _read_base64),
    **dict.fromkeys(_TEXT, _read_text),
    "timestamp": _read_timestamp,
    "null": _read_null_type,
    "geometry": _read_geometry,
}
_WRITERS_BY_CODE = by_code(WRITERS)
_READERS_BY_CODE = by_code(READERS)

INTEGER_CODES = codes_of(_INTEGERS)
TEXT_CODES = codes_of(_TEXT)
FLOAT_CODES = codes_of({"float", "double"})
"""Type codes whose parsed ``v`` already is the ``Value`` when it is a JSON integer in the
int64/uint64 range, a JSON string or a JSON float: the decoder's shortcut past ``READERS``."""


def write_value(type_code: int, value: Value, flags: int, style: JsonStyle) -> str:
    """JSON text of ``v`` for a column (``null`` for NULL); ``ValueError`` if it cannot be."""
    if value is None:
        return "null"
    return _WRITERS_BY_CODE.get(type_code, _write_generic)(value, flags, style)


def is_known(type_code: int) -> bool:
    """Whether TiCDC writes columns of ``type_code`` (the reader takes only those)."""
    return type_code in _READERS_BY_CODE


Form = Literal["integer", "float", "string", "base64", "text", "timestamp", "decimal"]
"""How ``v`` is read for a type code: which of the readers above ``read_value`` takes."""
_FORMS: dict[Reader, Form] = {
    _read_integer: "integer",
    _read_float: "float",
    _read_string: "string",
    _read_base64: "base64",
    _read_text: "text",
    _read_timestamp: "timestamp",
    _read_decimal: "decimal",
}


def form_of(type_code: int) -> Form | None:
    """The form ``read_value`` reads ``v`` in for ``type_code``.

    ``None`` for NULL, GEOMETRY and unknown codes (the decoder's column readers build on it).
    """
    reader = _READERS_BY_CODE.get(type_code)
    return None if reader is None else _FORMS.get(reader)


def read_value(type_code: int, raw: Json, flags: int | None) -> Value:
    """The ``Value`` of a parsed ``v``; ``ValueError`` if it does not fit the type.

    A column without ``f`` is the legacy (2020) form, whose value forms differ from today's
    (base64 VARCHAR, §2.8 O1; synthetic values in the Java example batches, §7.1): its ``v``
    is passed through as the plain JSON scalar.
    """
    if flags is None:
        return _read_generic(raw)
    reader = _READERS_BY_CODE.get(type_code)
    if reader is None:  # TiCDC writes only the type codes of §1.6, NULL or not
        raise ValueError(f"unknown type code {type_code}")
    return None if raw is None else reader(raw, flags)
