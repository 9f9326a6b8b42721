"""Column values inside Craft's nullable bytes chunk, per MySQL type (ground truth §3.3).

``WRITERS`` and ``READERS`` are keyed by every MySQL type; the wire names a column's type by
its code, so both are used through their code-keyed forms (``mysql.by_code``). A writer turns
a non-null ``Value`` into the value bytes, or ``None`` when TiCDC writes NULL whatever the
column held; a reader turns value bytes back into a ``Value``. Both get the column's flag bits
(UnsignedFlag picks uvarint or varint for integers, BinaryFlag picks bytes or text when reading
string types) and raise ``ValueError`` when the value does not fit. NULL (6), GEOMETRY (255),
unspecified (0) and any code TiDB does not produce have no value bytes: TiCDC writes every
value of such a column as NULL.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

from ticdc_conformance.reference.craft._scalars import UVARINT_BYTES
from ticdc_conformance.reference.craft.primitives import (
    read_float64,
    read_uvarint,
    read_varint,
    write_float64,
)
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.mysql import (
    INT64,
    INTEGER_TYPES,
    STRING_TYPES,
    UINT64,
    UINT64_TYPES,
    MySQLType,
    by_code,
)
from ticdc_conformance.reference.tables import BINARY_FLAG, UNSIGNED_FLAG
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value, string_bytes

__all__ = [
    "READERS",
    "WRITERS",
    "Writer",
    "decode_value",
    "encode_value",
    "value_writer",
]

Writer = Callable[[Value, int], bytes | None]
Reader = Callable[[bytes, int], Value]

_TEXT: frozenset[MySQLType] = frozenset({"date", "time", "datetime", "json"})
"""TiDB's text forms, raw UTF-8 (VECTOR too, see the tables)."""
_NULL_ONLY: frozenset[MySQLType] = frozenset({"null", "geometry"})
"""Types whose values TiCDC always writes as NULL (§3.3)."""
_FLOAT32 = struct.Struct("<f")


def _float64(value: float) -> bytes:
    out = bytearray()
    write_float64(out, value)
    return bytes(out)


def _int(value: Value, allowed: range, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ValueError(f"expected an integer, got {type(value).__name__}")
    if value not in allowed:
        raise ValueError(f"{value} does not fit {what}")
    return value


def _zigzag(value: int) -> bytes:
    return UVARINT_BYTES[(value << 1) ^ (value >> 63)]


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
    return UVARINT_BYTES[_int(value, UINT64, "a uint64")]


def _write_integer(value: Value, flags: int) -> bytes:
    if flags & UNSIGNED_FLAG:
        return UVARINT_BYTES[_int(value, UINT64, "an unsigned 64-bit integer")]
    return _zigzag(_int(value, INT64, "a signed 64-bit integer"))


def _write_year(value: Value, flags: int) -> bytes:
    del flags  # YEAR is always ZigZag, even under UnsignedFlag (§3.6 C7)
    return _zigzag(_int(value, INT64, "an int64"))


def _write_bytes(value: Value, flags: int) -> bytes:
    del flags
    return string_bytes(value)


def _write_null(value: Value, flags: int) -> None:
    del value, flags  # TiCDC writes the value of such a column as NULL (§3.3)


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
        raise ValueError("NaN and infinities never reach a codec (TiCDC writes 0, docs/errors.md)")
    return value


def _only_null(code: int) -> Reader:
    def read(data: bytes, flags: int) -> Value:
        del data, flags
        raise ValueError(
            f"TiCDC writes values of type code {code} only as NULL (docs/rules/craft.md)"
        )

    return read


WRITERS: dict[MySQLType, Writer] = {
    **dict.fromkeys(_TEXT | {"timestamp", "vector"}, _write_text),  # VECTOR: `[1,2,3]` (§3.3)
    "decimal": _write_decimal,
    **dict.fromkeys(UINT64_TYPES, _write_uvarint),
    **dict.fromkeys(INTEGER_TYPES, _write_integer),
    "year": _write_year,
    **dict.fromkeys(STRING_TYPES, _write_bytes),
    "float": _write_float,
    "double": _write_double,
    **dict.fromkeys(_NULL_ONLY, _write_null),
}
READERS: dict[MySQLType, Reader] = {
    **dict.fromkeys(_TEXT, _read_text),
    "timestamp": _read_timestamp,
    "decimal": _read_decimal,
    **dict.fromkeys(UINT64_TYPES, _read_uvarint),
    **dict.fromkeys(INTEGER_TYPES, _read_integer),
    "year": _read_year,
    **dict.fromkeys(STRING_TYPES, _read_bytes),
    "float": _read_float,
    "double": _read_float,
    # TiCDC's own decoder loses VECTOR values (an inverted error check, §3.3); this one keeps them
    "vector": _read_text,
    "null": _only_null(6),
    "geometry": _only_null(255),
}
_WRITERS_BY_CODE = by_code(WRITERS)
_READERS_BY_CODE = by_code(READERS)


def value_writer(type_code: int) -> Writer:
    """The writer of a column's non-null values by type code, for writers chosen once."""
    return _WRITERS_BY_CODE.get(type_code, _write_null)


def encode_value(type_code: int, value: Value, flags: int) -> bytes | None:
    """The value bytes of a column, ``None`` for NULL; ``ValueError`` if the value cannot be."""
    if value is None:
        return None
    return _WRITERS_BY_CODE.get(type_code, _write_null)(value, flags)


def decode_value(type_code: int, data: bytes | None, flags: int) -> Value:
    """The ``Value`` of a column's value bytes; ``ValueError`` if they do not fit the type."""
    if data is None:
        return None
    reader = _READERS_BY_CODE.get(type_code) or _only_null(type_code)
    return reader(data, flags)
