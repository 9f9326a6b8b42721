"""Column values on the Open Protocol wire: a writer and a reader per type code (§2.5).

``WRITERS`` and ``READERS`` have the same keys. A writer turns a ``Value`` into the JSON text
of ``v``; a reader turns the parsed ``v`` back into a ``Value``. Both get the column's flag
bits, because BinaryFlag decides between text and bytes for the string types. Type codes that
are not listed (TiDB never produces them) take the generic rule of TiCDC's classic encoder:
the JSON library's own form of the Go value (§2.5, "everything else").
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from functools import partial

from ticdc_conformance.reference import _gostrconv
from ticdc_conformance.reference._gojson import JsonStyle, format_float, quote
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["PASS_THROUGH", "READERS", "WRITERS", "as_bytes", "read_value", "write_value"]

Writer = Callable[[Value, int, JsonStyle], str]
Reader = Callable[[object, int | None], Value]

INTEGER_CODES = (1, 2, 3, 8, 9, 13, 16, 247, 248)
"""TINYINT SMALLINT INT BIGINT MEDIUMINT YEAR BIT ENUM SET: JSON integers."""
STRING_CODES = (15, 253, 254)
"""VARCHAR/VARBINARY, VAR_STRING, CHAR/BINARY: text, or Go-quoted bytes under BinaryFlag."""
BASE64_CODES = (249, 250, 251, 252)
"""TINY/MEDIUM/LONG/plain TEXT and BLOB: standard base64 of the raw bytes, text too."""
TEXT_CODES = (10, 11, 12, 14, 225, 245)
"""DATE TIME DATETIME NEWDATE VECTOR JSON: TiDB's text forms."""
_UNSIGNED_RANGE = range(2**64)
_SIGNED_RANGE = range(-(2**63), 2**63)


def as_bytes(value: Value) -> bytes:
    """The bytes TiCDC holds for a string column's value (text as UTF-8)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    raise ValueError(f"expected text or bytes, got {type(value).__name__}")


def _write_integer(value: Value, flags: int, style: JsonStyle) -> str:
    del style
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    allowed = _UNSIGNED_RANGE if flags & UNSIGNED_FLAG else _SIGNED_RANGE
    if value not in allowed:
        kind = "unsigned" if flags & UNSIGNED_FLAG else "signed"
        raise ValueError(f"{value} does not fit a {kind} 64-bit integer")
    return str(value)


def _read_integer(raw: object, flags: int | None) -> Value:
    del flags
    if type(raw) is not int:
        raise ValueError("expected a JSON integer")
    if not -(2**63) <= raw < 2**64:
        raise ValueError("integer outside the int64/uint64 range")
    return raw


def _write_float(bits: int, value: Value, flags: int, style: JsonStyle) -> str:
    del flags
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    return format_float(float(value), bits, style)


def _read_float(raw: object, flags: int | None) -> Value:
    del flags
    if type(raw) is float:
        return raw
    if type(raw) is int:  # Go prints 2.0 as 2
        return float(raw)
    raise ValueError("expected a JSON number")


def _write_string(value: Value, flags: int, style: JsonStyle) -> str:
    if flags & BINARY_FLAG:
        return quote(_gostrconv.quote(as_bytes(value)), style)
    if not isinstance(value, str | bytes):
        raise ValueError(f"expected text or bytes, got {type(value).__name__}")
    return quote(value, style)


def _from_text(text: str) -> Value:
    # Surrogate escapes stand for bytes that were not valid UTF-8 on the wire (profile
    # ticdc copies them raw): such a value is bytes, not text.
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape")
    return text


def _read_string(raw: object, flags: int | None) -> Value:
    if type(raw) is not str:
        raise ValueError("expected a JSON string")
    if flags and flags & BINARY_FLAG:
        return _gostrconv.unquote(raw)
    return _from_text(raw)


def _write_base64(value: Value, flags: int, style: JsonStyle) -> str:
    del flags, style
    return '"' + base64.b64encode(as_bytes(value)).decode("ascii") + '"'


def _read_base64(raw: object, flags: int | None) -> Value:
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


def _read_text(raw: object, flags: int | None) -> Value:
    del flags
    if type(raw) is not str:
        raise ValueError("expected a JSON string")
    return raw


def _read_timestamp(raw: object, flags: int | None) -> Value:
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


def _read_decimal(raw: object, flags: int | None) -> Value:
    del flags
    if type(raw) is not str:
        raise ValueError("expected the decimal as a JSON string")
    return DecimalValue(raw)


def _write_null_type(value: Value, flags: int, style: JsonStyle) -> str:
    del value, flags, style
    raise ValueError("a column of type NULL holds only NULL")


def _read_null_type(raw: object, flags: int | None) -> Value:
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


def _read_generic(raw: object, flags: int | None) -> Value:
    del flags
    if raw is None or type(raw) in (int, float, str):
        return raw  # type: ignore[return-value]
    raise ValueError("expected a JSON scalar")


def _write_uint64(value: Value, flags: int, style: JsonStyle) -> str:
    """BIT, ENUM and SET: uint64 whatever the flags say (§1.1)."""
    return _write_integer(value, flags | UNSIGNED_FLAG, style)


WRITERS: dict[int, Writer] = {
    **dict.fromkeys(INTEGER_CODES, _write_integer),
    **dict.fromkeys((16, 247, 248), _write_uint64),
    4: partial(_write_float, 32),
    5: partial(_write_float, 64),
    6: _write_null_type,
    7: _write_text,
    **dict.fromkeys(STRING_CODES, _write_string),
    **dict.fromkeys(BASE64_CODES, _write_base64),
    **dict.fromkeys(TEXT_CODES, _write_text),
    246: _write_decimal,
    255: _write_unsupported,
}
READERS: dict[int, Reader] = {
    **dict.fromkeys(INTEGER_CODES, _read_integer),
    4: _read_float,
    5: _read_float,
    6: _read_null_type,
    7: _read_timestamp,
    **dict.fromkeys(STRING_CODES, _read_string),
    **dict.fromkeys(BASE64_CODES, _read_base64),
    **dict.fromkeys(TEXT_CODES, _read_text),
    246: _read_decimal,
    255: _read_generic,
}


PASS_THROUGH: dict[int, type] = {
    **dict.fromkeys(INTEGER_CODES, int),
    **dict.fromkeys(TEXT_CODES, str),
    4: float,
    5: float,
}
"""Type codes whose parsed ``v`` already is the ``Value`` when it has this JSON type (for
integers, once its range is checked): the decoder's shortcut past ``READERS``."""


def write_value(type_code: int, value: Value, flags: int, style: JsonStyle) -> str:
    """JSON text of ``v`` for a column (``null`` for NULL); ``ValueError`` if it cannot be."""
    if value is None:
        return "null"
    return WRITERS.get(type_code, _write_generic)(value, flags, style)


def read_value(type_code: int, raw: object, flags: int | None) -> Value:
    """The ``Value`` of a parsed ``v``; ``ValueError`` if it does not fit the type.

    A column without ``f`` is the legacy (2020) form, whose value forms differ from today's
    (base64 VARCHAR, §2.8 O1; synthetic values in the Java example batches, §7.1): its ``v``
    is passed through as the plain JSON scalar.
    """
    if flags is None:
        return None if raw is None else _read_generic(raw, flags)
    reader = READERS.get(type_code)
    if reader is None:  # TiCDC writes only the type codes of §1.6, NULL or not
        raise ValueError(f"unknown type code {type_code}")
    return None if raw is None else reader(raw, flags)
