"""Column values inside Craft's nullable bytes chunk, per MySQL type code (ground truth §3.3).

``WRITERS`` and ``READERS`` have the same keys. A writer turns a non-null ``Value`` into the
value bytes, a reader turns value bytes back into a ``Value``; both get the column's flag bits
(UnsignedFlag picks uvarint or varint for integers, BinaryFlag picks bytes or text when
reading string types) and raise ``ValueError`` when the value does not fit. Type codes not
listed — NULL (6), GEOMETRY (255), unspecified (0) and any code TiDB does not produce — have
no value bytes: TiCDC writes every value of such a column as NULL, whatever it held.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from ticdc_conformance.reference.craft._primitives import (
    read_float64,
    read_uvarint,
    read_varint,
    write_float64,
    write_uvarint,
)
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["READERS", "WRITERS", "decode_value", "encode_value"]

Writer = Callable[[Value, int], bytes]
Reader = Callable[[bytes, int], Value]

TEXT_CODES = (10, 11, 12, 14, 245)
"""DATE TIME DATETIME NEWDATE JSON: TiDB's text forms, raw UTF-8."""
UVARINT_CODES = (16, 247, 248)
"""BIT ENUM SET: uvarint of the uint64."""
INTEGER_CODES = (1, 2, 3, 8, 9)
"""TINYINT SMALLINT INT BIGINT MEDIUMINT: uvarint under UnsignedFlag, else ZigZag varint."""
STRING_CODES = (15, 249, 250, 251, 252, 253, 254)
"""VARCHAR/VARBINARY, the TEXT/BLOB family, VAR_STRING, CHAR/BINARY: the raw bytes."""
_FLOAT32 = struct.Struct("<f")
_U64 = 1 << 64
_I64 = 1 << 63


def _uvarint(value: int) -> bytes:
    out = bytearray()
    write_uvarint(out, value)
    return bytes(out)


def _float64(value: float) -> bytes:
    out = bytearray()
    write_float64(out, value)
    return bytes(out)


def _int(value: Value, low: int, high: int, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    if not low <= value < high:
        raise ValueError(f"{value} does not fit {what}")
    return value


def _zigzag(value: int) -> bytes:
    return _uvarint((value << 1) ^ (value >> 63))


def _write_text(value: Value, flags: int) -> bytes:
    del flags
    if isinstance(value, TimestampValue):
        return value.text.encode()
    if not isinstance(value, str):
        raise ValueError(f"expected text, got {type(value).__name__}")
    return value.encode()


def _write_decimal(value: Value, flags: int) -> bytes:
    del flags
    if not isinstance(value, DecimalValue):
        raise ValueError(f"expected a decimal, got {type(value).__name__}")
    return value.text.encode()


def _write_uvarint(value: Value, flags: int) -> bytes:
    del flags
    return _uvarint(_int(value, 0, _U64, "a uint64"))


def _write_integer(value: Value, flags: int) -> bytes:
    if flags & UNSIGNED_FLAG:
        return _uvarint(_int(value, 0, _U64, "an unsigned 64-bit integer"))
    return _zigzag(_int(value, -_I64, _I64, "a signed 64-bit integer"))


def _write_year(value: Value, flags: int) -> bytes:
    del flags  # YEAR is always ZigZag, even under UnsignedFlag (§3.6 C7)
    return _zigzag(_int(value, -_I64, _I64, "an int64"))


def _write_bytes(value: Value, flags: int) -> bytes:
    del flags
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    raise ValueError(f"expected text or bytes, got {type(value).__name__}")


def _number(value: Value) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {type(value).__name__}")
    return float(value)


def _write_float(value: Value, flags: int) -> bytes:
    del flags
    number = _number(value)
    try:
        # TiCDC holds FLOAT as float32 and widens it to float64 on the wire (§3.3)
        narrowed = _FLOAT32.unpack(_FLOAT32.pack(number))[0]
    except OverflowError:
        raise ValueError(f"{number!r} does not fit a FLOAT (float32)") from None
    return _float64(narrowed)


def _write_double(value: Value, flags: int) -> bytes:
    del flags
    return _float64(_number(value))


def _text(data: bytes) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        raise ValueError("value is not UTF-8 text") from None


def _read_text(data: bytes, flags: int) -> Value:
    del flags
    return _text(data)


def _read_timestamp(data: bytes, flags: int) -> Value:
    del flags
    # Craft does not say which zone the text is in (the TiCDC server's, §1.1)
    return TimestampValue(_text(data), None)


def _read_decimal(data: bytes, flags: int) -> Value:
    del flags
    return DecimalValue(_text(data))


def _whole(reader: Callable[[bytes, int], tuple[int, int]], data: bytes) -> int:
    """A varint that must fill the value bytes exactly."""
    try:
        value, end = reader(data, 0)
    except DecodeError as error:
        raise ValueError(error.reason) from None
    if end != len(data):
        raise ValueError(f"{len(data) - end} bytes after the varint")
    return value


def _read_uvarint(data: bytes, flags: int) -> Value:
    del flags
    return _whole(read_uvarint, data)


def _read_integer(data: bytes, flags: int) -> Value:
    return _whole(read_uvarint if flags & UNSIGNED_FLAG else read_varint, data)


def _read_year(data: bytes, flags: int) -> Value:
    del flags
    return _whole(read_varint, data)


def _read_bytes(data: bytes, flags: int) -> Value:
    if flags & BINARY_FLAG:
        return data
    try:
        return data.decode()
    except UnicodeDecodeError:
        return data  # text that is not UTF-8 stays bytes, as in the value model


def _read_float(data: bytes, flags: int) -> Value:
    del flags
    if len(data) != 8:
        raise ValueError(f"a float64 has 8 bytes, not {len(data)}")
    value, _ = read_float64(data, 0)
    if not math.isfinite(value):
        raise ValueError("NaN and infinities never reach a codec (TiCDC writes 0, §1.1)")
    return value


WRITERS: dict[int, Writer] = {
    **dict.fromkeys(TEXT_CODES, _write_text),
    7: _write_text,
    246: _write_decimal,
    **dict.fromkeys(UVARINT_CODES, _write_uvarint),
    **dict.fromkeys(INTEGER_CODES, _write_integer),
    13: _write_year,
    **dict.fromkeys(STRING_CODES, _write_bytes),
    4: _write_float,
    5: _write_double,
    225: _write_text,  # VECTOR as its text form `[1,2,3]` (§3.3)
}
READERS: dict[int, Reader] = {
    **dict.fromkeys(TEXT_CODES, _read_text),
    7: _read_timestamp,
    246: _read_decimal,
    **dict.fromkeys(UVARINT_CODES, _read_uvarint),
    **dict.fromkeys(INTEGER_CODES, _read_integer),
    13: _read_year,
    **dict.fromkeys(STRING_CODES, _read_bytes),
    4: _read_float,
    5: _read_float,
    # TiCDC's own decoder loses VECTOR values (an inverted error check, §3.3); this one keeps them
    225: _read_text,
}


def encode_value(type_code: int, value: Value, flags: int) -> bytes | None:
    """The value bytes of a column, ``None`` for NULL; ``ValueError`` if the value cannot be."""
    if value is None:
        return None
    writer = WRITERS.get(type_code)
    return None if writer is None else writer(value, flags)


def decode_value(type_code: int, data: bytes | None, flags: int) -> Value:
    """The ``Value`` of a column's value bytes; ``ValueError`` if they do not fit the type."""
    if data is None:
        return None
    reader = READERS.get(type_code)
    if reader is None:
        raise ValueError(f"TiCDC writes values of type code {type_code} only as NULL (§3.3)")
    return reader(data, flags)
