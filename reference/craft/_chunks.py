"""Craft's chunks and size tables, built on its scalars (``_scalars.py``).

The encodings and the readers' and writers' conventions are stated in
``reference/craft/primitives.py``, which offers these with the scalars.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import accumulate

from ticdc_conformance.reference.craft._scalars import (
    I64_MIN,
    MAX_UVARINT_BYTES,
    U64,
    Buffer,
    fail,
    need,
    read_uvarint,
    read_uvarint_reversed,
    write_uvarint,
    write_uvarint_reversed,
)

__all__ = [
    "read_bytes_chunk",
    "read_delta_uvarint_chunk",
    "read_delta_varint_chunk",
    "read_nullable_bytes_chunk",
    "read_size_tables",
    "read_uvarint_chunk",
    "read_varint_chunk",
    "write_bytes_chunk",
    "write_delta_uvarint_chunk",
    "write_delta_varint_chunk",
    "write_nullable_bytes_chunk",
    "write_size_tables",
    "write_uvarint_chunk",
    "write_varint_chunk",
    "zigzag_deltas",
]


def write_uvarint_chunk(out: bytearray, values: Sequence[int]) -> None:
    """Append each value as a uvarint."""
    if values and min(values) >= 0 and max(values) < 0x80:  # one byte each: in one go
        out += bytes(values)
        return
    append = out.append
    for value in values:
        if not 0 <= value < U64:
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
    need(count, offset, end)
    one_byte = buffer[offset : offset + count]  # fits: _need checked count <= end - offset
    if not count or max(one_byte) < 0x80:  # the common chunk: every uvarint takes one byte
        return list(one_byte), offset + count
    window = buffer[offset : min(end, offset + MAX_UVARINT_BYTES * count)]
    values: list[int] = []
    at = 0  # one-byte uvarints between the runs of bytes with 0x80, copied out in one go
    for run in _CONTINUED(window):
        first, last = run.span()  # the run and the byte after it are one uvarint
        if count - len(values) <= first - at:
            break
        if last - first >= MAX_UVARINT_BYTES or last == len(window):
            return _read_uvarints(buffer, offset, count, end)
        result = window[last]
        if last - first == MAX_UVARINT_BYTES - 1 and result > 1:
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
        if not I64_MIN <= value < -I64_MIN:
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
        write_uvarint(out, (value - last) % U64)
        last = value


def read_delta_uvarint_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[int], int]:
    """``count`` uint64 values from a delta uvarint chunk."""
    deltas, offset = read_uvarint_chunk(buffer, offset, count, end)
    values, last = [], 0
    for delta in deltas:
        last = (last + delta) % U64
        values.append(last)
    return values, offset


def write_delta_varint_chunk(out: bytearray, values: Sequence[int]) -> None:
    """Append the first value, then each difference to the previous one (int64 wrap)."""
    deltas, last = [], 0
    for value in values:
        if not I64_MIN <= value < -I64_MIN:
            raise ValueError(f"{value} is not an int64")
        deltas.append((value - last - I64_MIN) % U64 + I64_MIN)  # _wrap_int64, inlined
        last = value
    write_varint_chunk(out, deltas)


def read_delta_varint_chunk(
    buffer: Buffer, offset: int, count: int, end: int | None = None
) -> tuple[list[int], int]:
    """``count`` int64 values from a delta varint chunk."""
    raw, offset = read_uvarint_chunk(buffer, offset, count, end)
    return zigzag_deltas(raw), offset


SMALL = 1 << 14
ZIGZAG = [(r >> 1) ^ -(r & 1) for r in range(SMALL)]
"""ZigZag's values of the uvarints below 2^14 (the ones of one and two bytes)."""


def zigzag_deltas(raw: Sequence[int]) -> list[int]:
    """The int64 values of a delta varint chunk from its uvarints (ZigZag, int64 wrap)."""
    if raw and max(raw) < SMALL:  # uvarints: never negative
        # each delta under 2^13 in size: their sums cannot leave int64 (no wrap), so summed
        # as they are, in C
        return list(accumulate(map(ZIGZAG.__getitem__, raw)))
    values, last = [], 0
    for r in raw:
        last = (last + ((r >> 1) ^ -(r & 1)) - I64_MIN) % U64 + I64_MIN  # _wrap_int64
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
