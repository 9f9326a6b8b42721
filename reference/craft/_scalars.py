"""Craft's primitive scalars: uvarint, varint, reversed uvarint, float64, bytes.

The encodings and the readers' and writers' conventions are stated in
``reference/craft/primitives.py``, which offers these with the chunks (``_chunks.py``).
"""

from __future__ import annotations

import struct
from typing import NoReturn

from ticdc_conformance.reference.craft._config import PROTOCOL
from ticdc_conformance.reference.errors import DecodeError

__all__ = [
    "I64_MIN",
    "MAX_UVARINT_BYTES",
    "U64",
    "UVARINT_BYTES",
    "Buffer",
    "fail",
    "need",
    "read_bytes",
    "read_float64",
    "read_uvarint",
    "read_uvarint_reversed",
    "read_varint",
    "wrap_int64",
    "write_bytes",
    "write_float64",
    "write_uvarint",
    "write_uvarint_reversed",
    "write_varint",
]

U64 = 1 << 64
I64_MIN = -(1 << 63)
MAX_UVARINT_BYTES = 10
_FLOAT64 = struct.Struct("<d")

Buffer = bytes | bytearray | memoryview


def fail(reason: str, offset: int) -> NoReturn:
    """Raise the ``DecodeError`` every reader raises: part ``value``, at ``offset``."""
    raise DecodeError(reason, protocol=PROTOCOL, part="value", offset=offset)


def wrap_int64(value: int) -> int:
    return (value - I64_MIN) % U64 + I64_MIN


def need(count: int, offset: int, end: int) -> None:
    """Fail unless ``count`` items of at least one byte each fit in ``offset..end``."""
    if count > end - offset:
        fail(f"a chunk of {count} elements, but only {end - offset} bytes are left", offset)


def write_uvarint(out: bytearray, value: int) -> None:
    """Append ``value`` (0 ≤ value < 2^64) as a uvarint."""
    if not 0 <= value < U64:
        raise ValueError(f"{value} is not a uint64")
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


class _Pairs(dict[int, bytes]):
    """The two bytes of 14 bits of a uvarint that goes on after them (0x80 set on both)."""

    def __missing__(self, bits: int) -> bytes:
        made = self[bits] = bytes((bits & 0x7F | 0x80, bits >> 7 | 0x80))
        return made


_PAIRS = _Pairs()
_SHORT = 1 << 14
"""Uvarints below this take one or two bytes, and are kept once made."""


class _UvarintBytes(dict[int, bytes]):
    """``write_uvarint``'s bytes of an ``int``, by the value.

    ``ValueError`` for a value that is not a uint64. The ones below 2^14 are kept once made,
    the longer ones made from them and from ``_PAIRS``, 14 bits at a time.
    """

    def __missing__(self, value: int) -> bytes:
        if not 0 <= value < U64:
            raise ValueError(f"{value} is not a uint64")
        if value < _SHORT:
            made = self[value] = bytes(
                (value,) if value < 0x80 else (value & 0x7F | 0x80, value >> 7)
            )
            return made
        # 14 bits at a time, each pair with 0x80 on both bytes, then the rest's uvarint
        pairs, low = _PAIRS, _SHORT - 1
        if value < 1 << 28:
            return pairs[value & low] + self[value >> 14]
        if value < 1 << 42:
            return b"".join((pairs[value & low], pairs[value >> 14 & low], self[value >> 28]))
        parts = [pairs[value & low], pairs[value >> 14 & low], pairs[value >> 28 & low]]
        if value < 1 << 56:
            parts.append(self[value >> 42])
        else:
            parts += (pairs[value >> 42 & low], self[value >> 56])
        return b"".join(parts)


UVARINT_BYTES = _UvarintBytes()
"""Uvarints' bytes by value. ``int`` keys only: an equal ``bool`` or ``float`` would find an
``int``'s bytes, so callers check the type first."""


def read_uvarint(buffer: Buffer, offset: int, end: int | None = None) -> tuple[int, int]:
    """A uvarint at ``offset``: (value, offset after it)."""
    end = len(buffer) if end is None else end
    result = shift = 0
    position = offset
    while position < end:
        byte = buffer[position]
        position += 1
        if byte < 0x80:
            if position - offset == MAX_UVARINT_BYTES and byte > 1:
                break
            return result | byte << shift, position
        if position - offset == MAX_UVARINT_BYTES:
            break
        result |= (byte & 0x7F) << shift
        shift += 7
    else:
        fail("uvarint runs past the end of its region", offset)
    fail("uvarint overflows 64 bits", offset)


def write_varint(out: bytearray, value: int) -> None:
    """Append ``value`` (an int64) as a ZigZag varint."""
    if not I64_MIN <= value < -I64_MIN:
        raise ValueError(f"{value} is not an int64")
    write_uvarint(out, (value << 1) ^ (value >> 63))


def read_varint(buffer: Buffer, offset: int, end: int | None = None) -> tuple[int, int]:
    """A ZigZag varint at ``offset``: (int64 value, offset after it)."""
    raw, position = read_uvarint(buffer, offset, end)
    return (raw >> 1) ^ -(raw & 1), position


def write_uvarint_reversed(out: bytearray, value: int) -> int:
    """Append ``value`` as a reversed uvarint; return how many bytes that took."""
    forward = bytearray()
    write_uvarint(forward, value)
    out += forward[::-1]
    return len(forward)


def read_uvarint_reversed(buffer: Buffer, offset: int, start: int = 0) -> tuple[int, int]:
    """The reversed uvarint that ends just before ``offset``, read backwards.

    It may not reach below ``start``. Returns (value, offset of its first byte).
    """
    result = shift = 0
    position = offset
    while position > start:
        position -= 1
        byte = buffer[position]
        count = offset - position
        if byte < 0x80:
            if count == MAX_UVARINT_BYTES and byte > 1:
                break
            return result | byte << shift, position
        if count == MAX_UVARINT_BYTES:
            break
        result |= (byte & 0x7F) << shift
        shift += 7
    else:
        fail("the reversed-uvarint trailer runs past the start of the message", position)
    fail("the reversed-uvarint trailer overflows 64 bits", position)


def write_float64(out: bytearray, value: float) -> None:
    """Append ``value`` as 8 bytes IEEE-754 little-endian."""
    out += _FLOAT64.pack(value)


def read_float64(buffer: Buffer, offset: int, end: int | None = None) -> tuple[float, int]:
    """A little-endian float64 at ``offset``."""
    end = len(buffer) if end is None else end
    if end - offset < 8:
        fail(f"float64 needs 8 bytes, {end - offset} are left", offset)
    return _FLOAT64.unpack_from(buffer, offset)[0], offset + 8


def write_bytes(out: bytearray, data: bytes) -> None:
    """Append ``data`` as uvarint length and bytes (Craft's "string/bytes")."""
    write_uvarint(out, len(data))
    out += data


def read_bytes(buffer: Buffer, offset: int, end: int | None = None) -> tuple[bytes, int]:
    """Length-prefixed bytes at ``offset``."""
    end = len(buffer) if end is None else end
    size, start = read_uvarint(buffer, offset, end)
    if size > end - start:
        fail(f"length {size} exceeds the {end - start} bytes left", offset)
    return bytes(buffer[start : start + size]), start + size
