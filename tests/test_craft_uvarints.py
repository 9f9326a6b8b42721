"""Craft's uvarint runs read in C agree with the uvarint-by-uvarint reads.

``split_uvarints`` and ``uvarints_filling`` (``_uvarints``) answer the uvarints that fill a
region exactly, as ``read_uvarint`` reads them one by one, or ``None`` where that read raises
or does not end at the region's end; ``zigzag_deltas``' sums in C give the loop's values; ``UVARINT_BYTES`` gives
``write_uvarint``'s bytes, or its ``ValueError``; ``leading_uvarints`` and
``fast_size_tables`` read what ``read_uvarint_chunk`` and ``read_size_tables`` read, or
answer ``None``.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference.craft import _chunks, _uvarints
from ticdc_conformance.reference.craft._scalars import (
    I64_MIN,
    U64,
    UVARINT_BYTES,
    read_uvarint,
    write_uvarint,
)
from ticdc_conformance.reference.craft.primitives import (
    read_size_tables,
    read_uvarint_chunk,
    write_size_tables,
)
from ticdc_conformance.reference.errors import DecodeError


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _one_by_one(region: bytes) -> list[int] | None:
    numbers, at = [], 0
    try:
        while at < len(region):
            number, at = read_uvarint(region, at)
            numbers.append(number)
    except DecodeError:
        return None
    return numbers


NUMBERS = st.one_of(
    st.integers(0, 0x7F),
    st.integers(0x80, 1 << 14),
    st.integers(0, U64 - 1),
    st.integers(U64, 1 << 80),  # past 64 bits: refused
)
REGIONS = st.one_of(
    st.lists(NUMBERS, max_size=12).map(lambda ns: b"".join(map(_uvarint, ns))),
    st.binary(max_size=24),
    st.lists(st.sampled_from([b"\x80", b"\xff", b"\x01", b"\x00", b"\x81\x01"]), max_size=14).map(
        b"".join
    ),
)


@settings(max_examples=1000, deadline=None)
@given(region=REGIONS, before=st.binary(max_size=3), after=st.binary(max_size=3))
def test_regions_read_as_one_by_one(region: bytes, before: bytes, after: bytes) -> None:
    value = before + region + after
    start, end = len(before), len(before) + len(region)
    expected = _one_by_one(region)
    assert _uvarints.split_uvarints(value, start, end) == expected
    assert _uvarints.uvarints_filling(value, start, end) == expected


def test_edges() -> None:
    for number in (0, 0x7F, 0x80, (1 << 14) - 1, 1 << 14, U64 - 1):
        region = _uvarint(number) * 2
        assert _uvarints.split_uvarints(region, 0, len(region)) == [number, number]
    for region in (_uvarint(U64), b"\x80" * 10 + b"\x00", b"\xff" * 9 + b"\x02", b"\x80"):
        assert _uvarints.split_uvarints(region, 0, len(region)) is None
    assert _uvarints.split_uvarints(b"\xff" * 9 + b"\x01", 0, 10) == [U64 - 1]


def _zigzag_loop(raw: list[int]) -> list[int]:
    values, last = [], 0
    for r in raw:
        last = (last + ((r >> 1) ^ -(r & 1)) - I64_MIN) % U64 + I64_MIN
        values.append(last)
    return values


@settings(max_examples=500, deadline=None)
@given(raw=st.lists(st.one_of(st.integers(0, (1 << 14) - 1), st.integers(0, U64 - 1)), max_size=20))
def test_zigzag_deltas_as_the_loop(raw: list[int]) -> None:
    assert _chunks.zigzag_deltas(raw) == _zigzag_loop(raw)
    assert _chunks.zigzag_deltas(bytes(r for r in raw if r < 256)) == _zigzag_loop(
        [r for r in raw if r < 256]
    )


@settings(max_examples=1000, deadline=None)
@given(
    value=st.one_of(
        st.integers(0, (1 << 14) + 5),
        st.integers(0, U64 - 1),
        st.sampled_from([(1 << k) + d for k in (7, 14, 21, 28, 42, 56, 63) for d in (-1, 0, 1)]),
        st.integers(-5, -1),
        st.integers(U64, U64 + 5),
    )
)
def test_uvarint_bytes_as_write_uvarint(value: int) -> None:
    out = bytearray()
    try:
        write_uvarint(out, value)
    except ValueError as error:
        with pytest.raises(ValueError, match=str(error)):
            UVARINT_BYTES[value]
        return
    assert UVARINT_BYTES[value] == bytes(out)
    assert UVARINT_BYTES[value] == bytes(out)  # kept or made again, the same


@settings(max_examples=1000, deadline=None)
@given(region=REGIONS, count=st.integers(0, 14), cut=st.integers(0, 30))
def test_leading_uvarints_as_the_chunk_read(region: bytes, count: int, cut: int) -> None:
    end = min(cut, len(region))
    found = _uvarints.leading_uvarints(region, 0, count, end)
    try:
        expected = read_uvarint_chunk(region, 0, count, end)
    except DecodeError:
        assert found is None
        return
    assert found is None or found == expected


def test_leading_uvarints_take_two_byte_ones() -> None:
    region = b"\x02\xa0\x01\x01\xff\x7f\x00rest"
    assert _uvarints.leading_uvarints(region, 0, 5, len(region)) == ([2, 160, 1, 16383, 0], 7)
    assert _uvarints.leading_uvarints(region, 0, 5, 6) is None  # past the end
    assert _uvarints.leading_uvarints(b"\x80\x80\x01", 0, 1, 3) is None  # three bytes


@settings(max_examples=500, deadline=None)
@given(tables=st.lists(st.lists(st.integers(-(1 << 15), 1 << 40), min_size=1, max_size=4)))
def test_fast_size_tables_as_the_full_read(tables: list[list[int]]) -> None:
    out = bytearray(b"\x01")
    write_size_tables(out, tables)
    value = bytes(out)
    fast = _uvarints.fast_size_tables(value, 1)
    assert fast is None or fast == read_size_tables(value, 1)


HEADERS = st.integers(1, 5).flatmap(
    lambda count: st.tuples(
        st.just(count),
        st.one_of(
            st.tuples(
                st.lists(NUMBERS, min_size=count, max_size=count),
                st.lists(st.integers(0, 0x7F), min_size=4 * count, max_size=4 * count),
            ).map(lambda parts: b"".join(map(_uvarint, parts[0])) + bytes(parts[1])),
            REGIONS,
            st.lists(
                st.sampled_from(
                    [b"\x80" * 9 + b"\x01", b"\x80" * 10 + b"\x00", b"\xff" * 9 + b"\x02"]
                ),
                max_size=count,
            ).map(lambda parts: b"".join(parts) + bytes(4 * count)),
        ),
    )
)


@settings(max_examples=1000, deadline=None)
@given(header=HEADERS, before=st.binary(max_size=3), after=st.binary(max_size=3))
def test_header_uvarints_as_one_by_one(
    header: tuple[int, bytes], before: bytes, after: bytes
) -> None:
    count, region = header
    value = before + region + after
    start, end = len(before), len(before) + len(region)
    read = _uvarints.header_uvarints(value, start, end, count)
    expected = _one_by_one(region)
    if read is not None:  # only what the one-by-one read gives: 5 × count uvarints
        assert read == expected
        assert len(read) == 5 * count
    head, tail = region[: len(region) - 4 * count], region[len(region) - 4 * count :]
    stamps = _one_by_one(head)
    if stamps is not None and len(stamps) == count and len(tail) == 4 * count and tail.isascii():
        # well-formed headers whose last four chunks take a byte a uvarint: read through
        assert read == [*stamps, *tail]


def test_header_uvarints_refuse_a_long_run_at_once() -> None:
    # a uvarint past ten bytes: refused as the one-by-one read refuses it, whatever the run
    for run in (11, 12, 1000, 300_000):
        region = b"\xff" * run + b"\x01" + bytes(4)
        assert _one_by_one(region[: run + 1]) is None
        assert _uvarints.header_uvarints(region, 0, len(region), 1) is None
        assert _uvarints.uvarints_filling(region, 0, len(region)) is None
    region = b"\xff" * 9 + b"\x01" + bytes(4)  # ten bytes, 64 bits: read
    assert _uvarints.header_uvarints(region, 0, len(region), 1) == [U64 - 1, 0, 0, 0, 0]
