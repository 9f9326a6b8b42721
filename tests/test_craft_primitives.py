"""Craft primitives (ground truth §3.1) as mirror pairs, and TiCDC's codec_test.go facts (§7.2).

Expected bytes are written out by hand from the encoding rules (LEB128, ZigZag, IEEE-754),
not produced by the code under test.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference import DecodeError
from ticdc_conformance.reference.craft import primitives

U64 = 2**64
I64 = 2**63

# (writer, reader, value, hex); readers of chunks take the element count as their 3rd argument
SCALARS: list[tuple[Callable[..., Any], Callable[..., Any], Any, str]] = [
    (primitives.write_uvarint, primitives.read_uvarint, 0, "00"),
    (primitives.write_uvarint, primitives.read_uvarint, 127, "7f"),
    (primitives.write_uvarint, primitives.read_uvarint, 128, "80 01"),
    (primitives.write_uvarint, primitives.read_uvarint, 300, "ac 02"),  # §3.1
    (primitives.write_uvarint, primitives.read_uvarint, U64 - 1, "ff ff ff ff ff ff ff ff ff 01"),
    (primitives.write_varint, primitives.read_varint, -1, "01"),  # §3.1
    (primitives.write_varint, primitives.read_varint, 1, "02"),
    (primitives.write_varint, primitives.read_varint, 13, "1a"),
    (primitives.write_varint, primitives.read_varint, -13, "19"),
    (primitives.write_varint, primitives.read_varint, -I64, "ff ff ff ff ff ff ff ff ff 01"),
    (primitives.write_varint, primitives.read_varint, I64 - 1, "fe ff ff ff ff ff ff ff ff 01"),
    (primitives.write_float64, primitives.read_float64, 1.0, "00 00 00 00 00 00 f0 3f"),
    (primitives.write_float64, primitives.read_float64, -0.1, "9a 99 99 99 99 99 b9 bf"),
    (primitives.write_bytes, primitives.read_bytes, b"", "00"),
    (primitives.write_bytes, primitives.read_bytes, b"abc", "03 61 62 63"),
]
CHUNKS: list[tuple[Callable[..., Any], Callable[..., Any], list[Any], str]] = [
    (primitives.write_uvarint_chunk, primitives.read_uvarint_chunk, [1, 300], "01 ac 02"),
    (primitives.write_varint_chunk, primitives.read_varint_chunk, [-1, 1], "01 02"),
    # deltas wrap modulo 2^64: 3 - 5 is written as 2^64 - 2
    (
        primitives.write_delta_uvarint_chunk,
        primitives.read_delta_uvarint_chunk,
        [5, 3],
        "05 fe ff ff ff ff ff ff ff ff 01",
    ),
    (
        primitives.write_delta_varint_chunk,
        primitives.read_delta_varint_chunk,
        [-1, -1, 6],
        "01 00 0e",
    ),
    # int64 wrap: max - min overflows to -1 as Go computes it
    (
        primitives.write_delta_varint_chunk,
        primitives.read_delta_varint_chunk,
        [-I64, I64 - 1],
        "ff ff ff ff ff ff ff ff ff 01 01",
    ),
    (primitives.write_bytes_chunk, primitives.read_bytes_chunk, [b"a", b"bc"], "01 02 61 62 63"),
    (
        primitives.write_nullable_bytes_chunk,
        primitives.read_nullable_bytes_chunk,
        [None, b"", b"x"],
        "01 00 02 78",
    ),
]


@pytest.mark.parametrize(("write", "read", "value", "hex_"), SCALARS)
def test_scalar_pairs(
    write: Callable[..., Any], read: Callable[..., Any], value: Any, hex_: str
) -> None:
    out = bytearray()
    write(out, value)
    assert out.hex(" ") == hex_
    assert read(bytes(out), 0) == (value, len(out))
    # the same bytes in the middle of a buffer: offsets are absolute
    assert read(b"\xee" + bytes(out) + b"\xee", 1) == (value, len(out) + 1)


@pytest.mark.parametrize(("write", "read", "values", "hex_"), CHUNKS)
def test_chunk_pairs(
    write: Callable[..., Any], read: Callable[..., Any], values: list[Any], hex_: str
) -> None:
    out = bytearray()
    write(out, values)
    assert out.hex(" ") == hex_
    assert read(bytes(out), 0, len(values)) == (values, len(out))


@pytest.mark.parametrize(
    ("value", "hex_"),
    [(0, "00"), (5, "05"), (300, "02 ac"), (U64 - 1, "01 ff ff ff ff ff ff ff ff ff")],
)
def test_reversed_uvarint(value: int, hex_: str) -> None:
    out = bytearray(b"\x00")
    assert primitives.write_uvarint_reversed(out, value) == len(bytes.fromhex(hex_))
    assert out[1:].hex(" ") == hex_
    # read backwards from the end; the first trailer byte is the one without 0x80 (§3.6 C6)
    assert primitives.read_uvarint_reversed(bytes(out), len(out)) == (value, 1)


def test_size_tables_of_the_resolved_vector() -> None:
    out = bytearray()
    primitives.write_size_tables(out, [[13, 0], [0]])
    assert out.hex(" ") == "02 1a 19 01 00 05"  # §3.5: [13, 0] and [0], trailer 5
    assert primitives.read_size_tables(bytes(out), 0) == ([[13, 0], [0]], 0)


def test_ticdc_size_table_round_trip_after_a_prefix() -> None:
    # TestSizeTable (§7.2): two tables after 16 random bytes; the size excludes the prefix
    tables = [[1, 3, 5, 7, 9], [2, 4, 6, 8, 10]]
    out = bytearray(os.urandom(16))
    primitives.write_size_tables(out, tables)
    decoded, start = primitives.read_size_tables(bytes(out), 0)
    assert (decoded, start) == (tables, 16)
    # every element is a one-byte delta of 2 (ZigZag 04) after its first, and a count of 5
    assert out[16:].hex(" ") == "05 02 04 04 04 04 05 04 04 04 04 04 0c"


def test_ticdc_reversed_uvarint_over_powers_of_two() -> None:
    # TestUvarintReverse (§7.2): 0, 1, 2, 4, … 2^62 after 16 random bytes
    for value in [0, *(2**k for k in range(63))]:
        out = bytearray(os.urandom(16))
        written = primitives.write_uvarint_reversed(out, value)
        assert written == len(out) - 16 == max(1, -(-value.bit_length() // 7))
        assert primitives.read_uvarint_reversed(bytes(out), len(out)) == (value, 16)


def test_ticdc_encode_chunk() -> None:
    # TestEncodeChunk (§7.2): string, nullable string and varint chunks of three elements
    for write, read, values in [
        (primitives.write_bytes_chunk, primitives.read_bytes_chunk, [b"a", b"b", b"c"]),
        (
            primitives.write_nullable_bytes_chunk,
            primitives.read_nullable_bytes_chunk,
            [b"a", b"b", b"c"],
        ),
        (primitives.write_varint_chunk, primitives.read_varint_chunk, [1, 2, 3]),
    ]:
        out = bytearray()
        write(out, values)  # type: ignore[operator]
        assert read(bytes(out), 0, 3) == (values, len(out))


def test_overlong_uvarint_is_accepted_as_go_does() -> None:
    assert primitives.read_uvarint(b"\x80\x00", 0) == (0, 2)


BAD: list[tuple[str, Callable[[], object], str, int]] = [
    ("truncated uvarint", lambda: primitives.read_uvarint(b"\x80\x80", 0), "runs past the end", 0),
    (
        "region ends inside",
        lambda: primitives.read_uvarint(b"\x05\x80\x01", 1, 2),
        "runs past the end",
        1,
    ),
    (
        "11-byte uvarint",
        lambda: primitives.read_uvarint(b"\xff" * 10 + b"\x01", 0),
        "overflows 64 bits",
        0,
    ),
    (
        "10th byte above 1",
        lambda: primitives.read_uvarint(b"\xff" * 9 + b"\x02", 0),
        "overflows 64 bits",
        0,
    ),
    (
        "reversed without end",
        lambda: primitives.read_uvarint_reversed(b"\x01\x80\x80", 3, 1),
        "runs past the start",
        1,
    ),
    (
        "reversed overflow",
        lambda: primitives.read_uvarint_reversed(b"\x02" + b"\xff" * 9, 10),
        "overflows",
        0,
    ),
    ("short float", lambda: primitives.read_float64(b"\x00" * 7, 0), "needs 8 bytes, 7", 0),
    ("long bytes", lambda: primitives.read_bytes(b"\x05abc", 0), "length 5 exceeds the 3 bytes", 0),
    (
        "chunk count",
        lambda: primitives.read_uvarint_chunk(b"\x01\x02", 0, 3),
        "a chunk of 3 elements, but only 2",
        0,
    ),
    (
        "chunk lengths",
        lambda: primitives.read_bytes_chunk(b"\x01\x05ab", 0, 2),
        "add up to 6 but only 2",
        0,
    ),
    (
        "nullable -2",
        lambda: primitives.read_nullable_bytes_chunk(b"\x03", 0, 1),
        "-2 is below -1",
        0,
    ),
    (
        "nullable lengths",
        lambda: primitives.read_nullable_bytes_chunk(b"\x04\x01a", 0, 2),
        "add up to 2 but only 1",
        0,
    ),
    ("empty size table", lambda: primitives.read_size_tables(b"\x00\x01", 0), "has no elements", 0),
    (
        "tables before start",
        lambda: primitives.read_size_tables(b"\x00\x01\x00\x03", 1),
        "claims 3 bytes of size tables, 2",
        3,
    ),
]


@pytest.mark.parametrize(
    ("call", "reason", "offset"), [case[1:] for case in BAD], ids=[case[0] for case in BAD]
)
def test_readers_reject_with_the_offset(
    call: Callable[[], object], reason: str, offset: int
) -> None:
    with pytest.raises(DecodeError) as caught:
        call()
    assert reason in caught.value.reason
    assert (caught.value.protocol, caught.value.part, caught.value.offset) == (
        "craft",
        "value",
        offset,
    )


@pytest.mark.parametrize(
    ("write", "value"),
    [
        (primitives.write_uvarint, -1),
        (primitives.write_uvarint, U64),
        (primitives.write_varint, I64),
        (primitives.write_varint, -I64 - 1),
        (primitives.write_delta_varint_chunk, [0, I64]),
    ],
)
def test_writers_reject_out_of_range(write: Callable[..., Any], value: Any) -> None:
    with pytest.raises(ValueError, match="is not"):
        write(bytearray(), value)


HUGE = bytearray()
primitives.write_uvarint(HUGE, 2**62)


@pytest.mark.parametrize(
    "call",
    [
        lambda: primitives.read_bytes(bytes(HUGE) + b"x", 0),
        lambda: primitives.read_uvarint_chunk(b"\x01", 0, 2**62),
        lambda: primitives.read_bytes_chunk(bytes(HUGE) + b"x", 0, 1),
        lambda: primitives.read_nullable_bytes_chunk(bytes(HUGE), 0, 1),
        lambda: primitives.read_size_tables(bytes(HUGE) + b"\x01\x0a", 0),
    ],
    ids=["bytes", "chunk-count", "bytes-chunk", "nullable-chunk", "size-table-count"],
)
def test_lengths_claiming_2_to_62_fail_without_allocating(call: Callable[[], object]) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(DecodeError, match="left"):
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024


@given(st.integers(0, U64 - 1))
def test_uvarint_round_trip(value: int) -> None:
    for write, read in [
        (primitives.write_uvarint, primitives.read_uvarint),
        (primitives.write_uvarint_reversed, None),
    ]:
        out = bytearray()
        write(out, value)
        if read is None:
            assert primitives.read_uvarint_reversed(bytes(out), len(out)) == (value, 0)
        else:
            assert read(bytes(out), 0) == (value, len(out))
            assert len(out) == max(1, -(-value.bit_length() // 7))  # minimal LEB128


@given(st.lists(st.integers(-I64, I64 - 1), min_size=1, max_size=8))
def test_varint_chunks_round_trip(values: list[int]) -> None:
    for write, read in [
        (primitives.write_varint_chunk, primitives.read_varint_chunk),
        (primitives.write_delta_varint_chunk, primitives.read_delta_varint_chunk),
    ]:
        out = bytearray()
        write(out, values)
        assert read(bytes(out), 0, len(values)) == (values, len(out))


@given(st.lists(st.integers(0, U64 - 1), min_size=1, max_size=8))
def test_delta_uvarint_chunk_round_trip(values: list[int]) -> None:
    out = bytearray()
    primitives.write_delta_uvarint_chunk(out, values)
    assert primitives.read_delta_uvarint_chunk(bytes(out), 0, len(values)) == (values, len(out))


@given(st.lists(st.none() | st.binary(max_size=5), max_size=6), st.binary(max_size=4))
def test_bytes_chunks_round_trip(items: list[bytes | None], tail: bytes) -> None:
    out = bytearray()
    primitives.write_nullable_bytes_chunk(out, items)
    end = len(out)
    assert primitives.read_nullable_bytes_chunk(bytes(out) + tail, 0, len(items)) == (items, end)
    present = [item for item in items if item is not None]
    out = bytearray()
    primitives.write_bytes_chunk(out, present)
    assert primitives.read_bytes_chunk(bytes(out) + tail, 0, len(present)) == (present, len(out))


@given(
    st.lists(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=4), max_size=4),
    st.binary(max_size=8),
)
def test_size_tables_round_trip(tables: list[list[int]], prefix: bytes) -> None:
    out = bytearray(prefix)
    primitives.write_size_tables(out, tables)
    assert primitives.read_size_tables(bytes(out), len(prefix)) == (tables, len(prefix))


@given(st.binary(max_size=24), st.integers(0, 24))
def test_readers_are_total(data: bytes, count: int) -> None:
    readers: list[Callable[[], object]] = [
        lambda: primitives.read_uvarint(data, 0),
        lambda: primitives.read_varint(data, 0),
        lambda: primitives.read_uvarint_reversed(data, len(data)),
        lambda: primitives.read_float64(data, 0),
        lambda: primitives.read_bytes(data, 0),
        lambda: primitives.read_bytes_chunk(data, 0, count),
        lambda: primitives.read_nullable_bytes_chunk(data, 0, count),
        lambda: primitives.read_delta_uvarint_chunk(data, 0, count),
        lambda: primitives.read_delta_varint_chunk(data, 0, count),
        lambda: primitives.read_size_tables(data, 0),
    ]
    for reader in readers:
        try:
            reader()
        except DecodeError as error:
            assert error.offset is not None
            assert 0 <= error.offset <= len(data)


def _one_at_a_time(data: bytes, offset: int, count: int, end: int) -> object:
    """``count`` uvarints read with ``read_uvarint`` alone: the chunk reader's reference."""
    values = []
    try:
        for _ in range(count):
            value, offset = primitives.read_uvarint(data, offset, end)
            values.append(value)
    except DecodeError as error:
        return error.reason, error.offset
    return values, offset


_UVARINT_BYTES = st.lists(
    st.one_of(
        st.integers(0, 0x7F).map(lambda b: bytes([b])),
        st.integers(0, 2**70).map(lambda v: _hex_of(primitives.write_uvarint, v % U64)),
        st.binary(min_size=1, max_size=12),
        st.just(b"\xff" * 9 + b"\x02"),  # 10 bytes, over 64 bits
        st.just(b"\x80" * 11),
    ),
    max_size=12,
).map(b"".join)


def _hex_of(write: Callable[[bytearray, int], None], value: int) -> bytes:
    out = bytearray()
    write(out, value)
    return bytes(out)


@given(_UVARINT_BYTES, st.integers(0, 12), st.integers(0, 3), st.integers(0, 3))
def test_uvarint_chunk_reads_as_one_uvarint_at_a_time(
    data: bytes, count: int, offset: int, cut: int
) -> None:
    offset = min(offset, len(data))
    end = max(offset, len(data) - cut)
    if count > end - offset:
        return  # the chunk's own up-front length check, tested above
    try:
        got: object = primitives.read_uvarint_chunk(data, offset, count, end)
    except DecodeError as error:
        got = error.reason, error.offset
    assert got == _one_at_a_time(data, offset, count, end)
