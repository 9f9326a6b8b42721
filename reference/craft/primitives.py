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

The scalars are written in ``_scalars.py`` and the chunks in ``_chunks.py``; this module
offers them all.
"""

from __future__ import annotations

from ticdc_conformance.reference.craft._chunks import (
    read_bytes_chunk,
    read_delta_uvarint_chunk,
    read_delta_varint_chunk,
    read_nullable_bytes_chunk,
    read_size_tables,
    read_uvarint_chunk,
    read_varint_chunk,
    write_bytes_chunk,
    write_delta_uvarint_chunk,
    write_delta_varint_chunk,
    write_nullable_bytes_chunk,
    write_size_tables,
    write_uvarint_chunk,
    write_varint_chunk,
    zigzag_deltas,
)
from ticdc_conformance.reference.craft._scalars import (
    Buffer,
    fail,
    read_bytes,
    read_float64,
    read_uvarint,
    read_uvarint_reversed,
    read_varint,
    write_bytes,
    write_float64,
    write_uvarint,
    write_uvarint_reversed,
    write_varint,
)

__all__ = [
    "Buffer",
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
