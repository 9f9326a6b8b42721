"""TiCDC's ``large-message-handle-compression``: snappy blocks and LZ4 frames over message bytes.

The option (``none``, ``snappy`` or ``lz4``; default ``none``) compresses the bytes a codec
writes, the same way for every protocol that applies it (TiCDC ``pkg/compression/compress.go``
in ``pingcap/tiflow`` and ``pingcap/ticdc``; docs/rules/codec.md#compression):

* ``snappy`` is the snappy *block* format (a varint of the uncompressed length, then literal
  and copy elements), not the framed stream format;
* ``lz4`` is the LZ4 *frame* format as ``lz4.NewWriter`` of ``github.com/pierrec/lz4/v4``
  writes it with its defaults: independent blocks of at most 4 MiB, no block checksums, a
  content checksum, no content size. ``compress`` writes exactly that frame header, blocks and
  checksum; the compressed block contents come from another LZ4 implementation, so they decode
  to the same bytes but need not equal TiCDC's byte for byte (neither do snappy's: TiCDC uses
  ``github.com/klauspost/compress/snappy``, whose match finder differs). Compressed output is
  therefore compared by what it decompresses to, never by its bytes.

Where each protocol applies it (what is compressed, and what is not) is the codec's business;
``decompress`` raises only ``DecodeError``, at the part and offset of the compressed bytes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Literal

import cramjam

from ticdc_conformance.reference.errors import DecodeError, Part
from ticdc_conformance.reference.message import Message

__all__ = [
    "COMPRESSIONS",
    "COMPRESSION_OPTION",
    "Compression",
    "compress",
    "compression_of",
    "decompress",
    "decompress_message",
    "xxh32",
]

Compression = Literal["none", "snappy", "lz4"]
COMPRESSIONS: tuple[Compression, ...] = ("none", "snappy", "lz4")
"""The values TiCDC's ``compression.Supported`` accepts."""
COMPRESSION_OPTION = "large-message-handle-compression"

_MASK = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 2654435761, 2246822519, 3266489917, 668265263, 374761393
_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_DESCRIPTOR = bytes([0b01_1_0_0_1_0_0, 7 << 4])
"""FLG: version 1, independent blocks, content checksum; BD: 4 MiB blocks (pierrec defaults)."""
_LZ4_BLOCK = 4 << 20
_UNCOMPRESSED_BLOCK = 1 << 31
_SNAPPY_RATIO = 32
"""No snappy element expands more than 32-fold (a 2-byte copy of 64 bytes at most)."""


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (32 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 13) * _P1) & _MASK


def xxh32(data: bytes, seed: int = 0) -> int:
    """XXH32 of ``data``: the checksum of LZ4 frame headers and contents."""
    n = len(data)
    i = 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed, (seed - _P1) & _MASK]
        while i + 16 <= n:
            for lane in range(4):
                v[lane] = _round(v[lane], int.from_bytes(data[i : i + 4], "little"))
                i += 4
        h = _rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)
    else:
        h = seed + _P5
    h = (h + n) & _MASK
    while i + 4 <= n:
        h = (_rotl((h + int.from_bytes(data[i : i + 4], "little") * _P3) & _MASK, 17) * _P4) & _MASK
        i += 4
    for byte in data[i:]:
        h = (_rotl((h + byte * _P5) & _MASK, 11) * _P1) & _MASK
    h = ((h ^ (h >> 15)) * _P2) & _MASK
    h = ((h ^ (h >> 13)) * _P3) & _MASK
    return h ^ (h >> 16)


def _lz4_frame(data: bytes) -> bytes:
    out = bytearray(_LZ4_MAGIC + _LZ4_DESCRIPTOR)
    out.append((xxh32(_LZ4_DESCRIPTOR) >> 8) & 0xFF)
    for start in range(0, len(data), _LZ4_BLOCK):
        block = data[start : start + _LZ4_BLOCK]
        packed = bytes(cramjam.lz4.compress_block(block, store_size=False))
        if 0 < len(packed) < len(block):
            out += len(packed).to_bytes(4, "little") + packed
        else:  # an incompressible block is stored as it is, its size's high bit set
            out += (len(block) | _UNCOMPRESSED_BLOCK).to_bytes(4, "little") + block
    out += bytes(4) + xxh32(data).to_bytes(4, "little")
    return bytes(out)


def compress(compression: Compression, data: bytes) -> bytes:
    """``data`` compressed as TiCDC's ``compression.Encode`` does (``none``: unchanged)."""
    if compression == "snappy":
        return bytes(cramjam.snappy.compress_raw(data))
    if compression == "lz4":
        return _lz4_frame(data)
    return data


def _snappy_length(data: bytes) -> int | None:
    """The uncompressed length a snappy block's varint header claims (``None``: no header)."""
    length = 0
    for shift, byte in zip(range(0, 35, 7), data, strict=False):
        length |= (byte & 0x7F) << shift
        if byte < 0x80:
            return length
    return None


def decompress(
    compression: Compression,
    data: bytes,
    *,
    protocol: str,
    part: Part,
    offset: int = 0,
    message_index: int = 0,
) -> bytes:
    """``data`` decompressed as TiCDC's consumers do; a fault is a ``DecodeError`` at ``offset``.

    ``offset`` is where ``data`` starts within the message's ``part``.
    """
    if compression == "none":
        return data

    def fail(reason: str) -> DecodeError:
        return DecodeError(
            f"{compression}: {reason}",
            protocol=protocol,
            part=part,
            offset=offset,
            message_index=message_index,
        )

    if compression == "snappy":
        claimed = _snappy_length(data)
        if claimed is None:
            raise fail("not a snappy block: no length header")
        if claimed > _SNAPPY_RATIO * len(data):
            raise fail(f"snappy block claims {claimed} bytes, more than its {len(data)} can hold")
    elif not data.startswith(_LZ4_MAGIC):
        raise fail("not an LZ4 frame: no magic number 04 22 4d 18")
    try:
        if compression == "snappy":
            return bytes(cramjam.snappy.decompress_raw(data))
        return bytes(cramjam.lz4.decompress(data))
    except cramjam.DecompressionError as error:
        raise fail(f"corrupt compressed bytes ({error})") from None


def decompress_message(
    message: Message,
    compression: Compression,
    *,
    protocol: str,
    message_index: int = 0,
    key: bool = False,
) -> Message:
    """``message`` with its value (and its key when ``key``) decompressed; absent parts stay.

    For the protocols that compress whole values (Simple, Canal-JSON) or keys and values
    (Debezium). A decoder's later byte offsets in a decompressed part count decompressed bytes.
    """
    if compression == "none":
        return message
    parts: dict[Part, bytes | None] = {"key": message.key, "value": message.value}
    for part in ("key", "value") if key else ("value",):
        data = parts[part]
        if data is not None:
            parts[part] = decompress(
                compression, data, protocol=protocol, part=part, message_index=message_index
            )
    return replace(message, key=parts["key"], value=parts["value"])


def compression_of(options: Mapping[str, str]) -> Compression:
    """The ``large-message-handle-compression`` among sink ``options`` (absent: ``none``).

    Raises ``ValueError`` for a value TiCDC does not support.
    """
    text = options.get(COMPRESSION_OPTION, "none")
    for known in COMPRESSIONS:
        if text == known:
            return known
    raise ValueError(f"{COMPRESSION_OPTION} must be none, snappy or lz4, not {text!r}")
