"""Craft's primitive encodings and chunks, as mirror pairs (ground truth §3.1).

Writers append to a ``bytearray`` and raise ``ValueError`` for a value the encoding cannot
hold. Readers take ``(buffer, offset)`` and an optional exclusive ``end`` (the region the
value must lie in; the whole buffer when omitted) and return ``(value, new_offset)``; they
raise ``DecodeError`` (part ``value``, message index 0: the caller re-labels it) at the offset
of the element at fault. A chunk of N elements never stores N; the caller knows it. Every
reader checks a count or length against the bytes left *before* it allocates or slices, so a
length claiming 2^62 bytes fails at once.

* uvarint: LEB128, low 7-bit group first, 0x80 on every byte but the last. Like Go's
  ``binary.Uvarint``, the reader takes at most 10 bytes, the 10th at most 1 (overlong forms
  such as ``80 00`` are accepted as Go accepts them).
* varint: ZigZag of an int64, then uvarint.
* reversed uvarint: the uvarint bytes in reverse order (the message trailer), read backwards
  from the end: every byte but the *first* has 0x80 (the public document says the opposite).
* float64: 8 bytes IEEE-754 little-endian.
* bytes ("string/bytes"): uvarint length, then the bytes.
* chunks: uvarint / varint chunk (N values); delta uvarint chunk (the first value, then each
  difference to the previous one, modulo 2^64); delta varint chunk (the same with varints,
  differences wrapping in int64 as Go computes them); bytes chunk (N uvarint lengths, then the
  N byte strings); nullable bytes chunk (N *varint* lengths, −1 for NULL, then the non-null
  byte strings).
* size tables: each table is uvarint(element count) and a delta varint chunk; after the last
  table, the reversed uvarint of the tables' byte length.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Sequence
from typing import NoReturn

from ticdc_conformance.reference.craft._config import PROTOCOL
from ticdc_conformance.reference.errors import DecodeError

__all__ = [
    "fail",
    "read_bytes",
    "read_bytes_chunk",
    "read_delta_uvarint_chunk",
    "read_delta_varint_chunk",
    "read_float64",
    "read_nullable_bytes_chunk",
    "read_size_tables",
    "read_uvarint",
    "read_uvarint_chunk",
    "read_uvarint_reversed",
    "read_varint",
    "read_varint_chunk",
    "write_bytes",
    "write_bytes_chunk",
    "write_delta_uvarint_chunk",
    "write_delta_varint_chunk",
    "write_float64",
    "write_nullable_bytes_chunk",
    "write_size_tables",
    "write_uvarint",
    "write_uvarint_chunk",
    "write_uvarint_reversed",
    "write_varint",
    "write_varint_chunk",
    "zigzag_deltas",
]

_U64 = 1 << 64
_I64_MIN = -(1 << 63)
_MAX_UVARINT_BYTES = 10
_FLOAT64 = struct.Struct("<d")

Buffer = bytes | bytearray | memoryview


def fail(reason: str, offset: int) -> NoReturn:
    """Raise the ``DecodeError`` every reader raises: part ``value``, at ``offset``."""
    raise DecodeError(reason, protocol=PROTOCOL, part="value", offset=offset)


def _wrap_int64(value: int) -> int:
    return (value - _I64_MIN) % _U64 + _I64_MIN


def _need(count: int, offset: int, end: int) -> None:
    """Fail unless ``count`` items of at least one byte each fit in ``offset..end``."""
    if count > end - offset:
        fail(f"a chunk of {count} elements, but only {end - offset} bytes are left", offset)


# --- scalars ----------------------------------------------------------------------------


def write_uvarint(out: bytearray, value: int) -> None:
    """Append ``value`` (0 ≤ value < 2^64) as a uvarint."""
    if not 0 <= value < _U64:
        raise ValueError(f"{value} is not a uint64")
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)


def read_uvarint(buffer: Buffer, offset: int, end: int | None = None) -> tuple[int, int]:
    """A uvarint at ``offset``: (value, offset after it)."""
    end = len(buffer) if end is None else end
    result = shift = 0
    position = offset
    while position < end:
        byte = buffer[position]
        position += 1
        if byte < 0x80:
            if position - offset == _MAX_UVARINT_BYTES and byte > 1:
                break
            return result | byte << shift, position
        if position - offset == _MAX_UVARINT_BYTES:
            break
        result |= (byte & 0x7F) << shift
        shift += 7
    else:
        fail("uvarint runs past the end of its region", offset)
    fail("uvarint overflows 64 bits", offset)


def write_varint(out: bytearray, value: int) -> None:
    """Append ``value`` (an int64) as a ZigZag varint."""
    if not _I64_MIN <= value < -_I64_MIN:
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
            if count == _MAX_UVARINT_BYTES and byte > 1:
                break
            return result | byte << shift, position
        if count == _MAX_UVARINT_BYTES:
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


# --- chunks -----------------------------------------------------------------------------


def write_uvarint_chunk(out: bytearray, values: Sequence[int]) -> None:
    """Append each value as a uvarint."""
    if values and min(values) >= 0 and max(values) < 0x80:  # one byte each: in one go
        out += bytes(values)
        return
    append = out.append
    for value in values:
        if not 0 <= value < _U64:
            raise ValueError(f"{value} is not a uint64")
        rest = value
        while rest >= 0x80:
            append(rest & 0x7F | 0x80)
            rest >>= 7
        append(rest)


def read_uvarint_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[int], int]:
    """``count`` uvarints.

    Read in one pass over the bytes they can take (ten each at most): the one-byte uvarints
    between runs of bytes with 0x80 are copied out in one go. A chunk that does not end
    inside those bytes or holds a uvarint of more than 64 bits is read again one uvarint at
    a time, which raises at the uvarint at fault.
    """
    end = len(buffer) if end is None else end
    _need(count, offset, end)
    one_byte = buffer[offset : offset + count]  # fits: _need checked count <= end - offset
    if not count or max(one_byte) < 0x80:  # the common chunk: every uvarint takes one byte
        return list(one_byte), offset + count
    window = buffer[offset : min(end, offset + _MAX_UVARINT_BYTES * count)]
    values: list[int] = []
    at = 0  # one-byte uvarints between the runs of bytes with 0x80, copied out in one go
    for run in _CONTINUED(window):
        first, last = run.span()  # the run and the byte after it are one uvarint
        if count - len(values) <= first - at:
            break
        if last - first >= _MAX_UVARINT_BYTES or last == len(window):
            return _read_uvarints(buffer, offset, count, end)
        result = window[last]
        if last - first == _MAX_UVARINT_BYTES - 1 and result > 1:
            return _read_uvarints(buffer, offset, count, end)
        values += window[at:first]
        for index in range(last - 1, first - 1, -1):
            result = result << 7 | window[index] & 0x7F
        values.append(result)
        at = last + 1
    left = count - len(values)
    if left > len(window) - at:
        return _read_uvarints(buffer, offset, count, end)
    values += window[at : at + left]
    return values, offset + at + left


_CONTINUED = re.compile(rb"[\x80-\xff]+").finditer
"""Runs of bytes with 0x80 set: every uvarint byte but the last."""


def _read_uvarints(buffer: Buffer, offset: int, count: int, end: int) -> tuple[list[int], int]:
    """``count`` uvarints read one at a time (raises at the first that does not fit)."""
    values = []
    for _ in range(count):
        value, offset = read_uvarint(buffer, offset, end)
        values.append(value)
    return values, offset


def write_varint_chunk(out: bytearray, values: Sequence[int]) -> None:
    """Append each value as a ZigZag varint."""
    if values and min(values) >= -0x40 and max(values) < 0x40:  # one byte each: in one go
        out += bytes([(value << 1) ^ (value >> 63) for value in values])
        return
    append = out.append
    for value in values:
        if not _I64_MIN <= value < -_I64_MIN:
            raise ValueError(f"{value} is not an int64")
        rest = (value << 1) ^ (value >> 63)
        while rest >= 0x80:
            append(rest & 0x7F | 0x80)
            rest >>= 7
        append(rest)


def read_varint_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[int], int]:
    """``count`` ZigZag varints."""
    raw, offset = read_uvarint_chunk(buffer, offset, count, end)
    return [(r >> 1) ^ -(r & 1) for r in raw], offset


def write_delta_uvarint_chunk(out: bytearray, values: Sequence[int]) -> None:
    """Append the first value, then each difference to the previous one modulo 2^64."""
    last = 0
    for value in values:
        write_uvarint(out, (value - last) % _U64)
        last = value


def read_delta_uvarint_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[int], int]:
    """``count`` uint64 values from a delta uvarint chunk."""
    deltas, offset = read_uvarint_chunk(buffer, offset, count, end)
    values, last = [], 0
    for delta in deltas:
        last = (last + delta) % _U64
        values.append(last)
    return values, offset


def write_delta_varint_chunk(out: bytearray, values: Sequence[int]) -> None:
    """Append the first value, then each difference to the previous one (int64 wrap)."""
    deltas, last = [], 0
    for value in values:
        if not _I64_MIN <= value < -_I64_MIN:
            raise ValueError(f"{value} is not an int64")
        deltas.append((value - last - _I64_MIN) % _U64 + _I64_MIN)  # _wrap_int64, inlined
        last = value
    write_varint_chunk(out, deltas)


def read_delta_varint_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[int], int]:
    """``count`` int64 values from a delta varint chunk."""
    raw, offset = read_uvarint_chunk(buffer, offset, count, end)
    return zigzag_deltas(raw), offset


def zigzag_deltas(raw: Sequence[int]) -> list[int]:
    """The int64 values of a delta varint chunk from its uvarints (ZigZag, int64 wrap)."""
    values, last = [], 0
    for r in raw:
        last = (last + ((r >> 1) ^ -(r & 1)) - _I64_MIN) % _U64 + _I64_MIN  # _wrap_int64
        values.append(last)
    return values


def write_bytes_chunk(out: bytearray, items: Sequence[bytes]) -> None:
    """Append all lengths as uvarints, then all byte strings."""
    for item in items:
        write_uvarint(out, len(item))
    for item in items:
        out += item


def read_bytes_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[bytes], int]:
    """``count`` byte strings of a bytes chunk."""
    end = len(buffer) if end is None else end
    sizes, position = read_uvarint_chunk(buffer, offset, count, end)
    if sum(sizes) > end - position:
        fail(f"lengths add up to {sum(sizes)} but only {end - position} bytes are left", offset)
    items = []
    for size in sizes:
        items.append(bytes(buffer[position : position + size]))
        position += size
    return items, position


def write_nullable_bytes_chunk(out: bytearray, items: Sequence[bytes | None]) -> None:
    """Append all lengths as varints (−1 for ``None``), then the non-null byte strings."""
    write_varint_chunk(out, [-1 if item is None else len(item) for item in items])
    out += b"".join([item for item in items if item is not None])


def read_nullable_bytes_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[bytes | None], int]:
    """``count`` byte strings or ``None`` of a nullable bytes chunk."""
    end = len(buffer) if end is None else end
    raw, position = read_uvarint_chunk(buffer, offset, count, end)
    # ZigZag: an even raw length n is n // 2 bytes, 1 is NULL, any other odd one below -1
    total = 0
    for size in raw:
        if size & 1:
            if size != 1:
                fail(f"nullable length {min((r >> 1) ^ -(r & 1) for r in raw)} is below -1", offset)
        else:
            total += size
    total >>= 1
    if total > end - position:
        fail(f"lengths add up to {total} but only {end - position} bytes are left", offset)
    items: list[bytes | None] = []
    append = items.append
    for size in raw:
        if size & 1:
            append(None)
        else:
            after = position + (size >> 1)
            append(bytes(buffer[position:after]))
            position = after
    return items, position


# --- size tables ------------------------------------------------------------------------


def write_size_tables(out: bytearray, tables: Sequence[Sequence[int]]) -> None:
    """Append the size tables and the reversed-uvarint trailer of their byte length."""
    start = len(out)
    for table in tables:
        write_uvarint(out, len(table))
        write_delta_varint_chunk(out, table)
    write_uvarint_reversed(out, len(out) - start)


def read_size_tables(
    buffer: Buffer, offset: int, end: int | None = None
) -> tuple[list[list[int]], int]:
    """The size tables whose trailer ends at ``end``: (tables, offset of the first table).

    They may not start before ``offset``. Each table holds at least one element: TiCDC never
    writes an empty one (its delta encoder needs a first element).
    """
    end = len(buffer) if end is None else end
    size, trailer = read_uvarint_reversed(buffer, end, offset)
    if size > trailer - offset:
        fail(
            f"the trailer claims {size} bytes of size tables, {trailer - offset} are left", trailer
        )
    start = position = trailer - size
    tables = []
    while position < trailer:
        count, after = read_uvarint(buffer, position, trailer)
        if count == 0:
            fail("a size table has no elements", position)
        table, position = read_delta_varint_chunk(buffer, after, count, trailer)
        tables.append(table)
    return tables, start
