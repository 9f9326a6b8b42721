"""Runs of uvarints read in bulk: mostly in C, each uvarint's bytes found by one pattern.

A uvarint is bytes with 0x80 set, then one byte without (ground truth §3.2). One regular
expression splits a region into its uvarints' bytes (``re.findall``, no Python per uvarint);
``UVARINTS`` maps those bytes to the value, the one- and two-byte uvarints (values below
2^14: counts, lengths, sizes, type codes, flags) from a table that keeps them once seen, the
longer ones worked out when met. A uvarint of more than 64 bits (more than 10 bytes, or a
10th byte above 1) raises ``Overflow``; the callers answer ``None`` then, and the decoder's
full read raises at it.

``header_uvarints`` reads the five header chunks of many rows (a Python loop over the commit
ts chunk, whose uvarints take five to nine bytes each, then the one-byte rest), and
``uvarints_filling`` any region the uvarints fill exactly, where few of many are longer than
a byte (``header_uvarints``' fallback); ``split_uvarints`` where many are or the region holds
few (the size tables), and ``fast_size_tables`` splits the size tables' numbers into tables.
``leading_uvarints`` takes a count of uvarints of one or two bytes from the start of a region
(a column group's value lengths).
"""

from __future__ import annotations

import re
from itertools import accumulate

from ticdc_conformance.reference.craft._chunks import SMALL, ZIGZAG
from ticdc_conformance.reference.craft.primitives import Buffer, read_uvarint_chunk, zigzag_deltas
from ticdc_conformance.reference.errors import DecodeError

__all__ = [
    "UVARINTS",
    "Overflow",
    "fast_size_tables",
    "header_uvarints",
    "leading_uvarints",
    "split_uvarints",
    "uvarints_filling",
]

_SPLIT = re.compile(rb"[\x80-\xff]*[\x00-\x7f]").findall
"""A region's uvarints' bytes, in order, up to the last byte below 0x80: where a region ends
with such a byte, the matches fill it exactly (every byte belongs to the next match)."""
_LOW_BYTES = bytes(range(0x80))
"""Every uvarint's last byte: one of these, and no other byte of it."""
_CONTINUED = re.compile(rb"[\x80-\xff]+").finditer
"""Runs of bytes with 0x80 set: every uvarint byte but the last."""
_FEW = 32
"""Uvarints few enough that splitting them all (``split_uvarints``) is the cheaper way."""
_MAX_BYTES = 10
_KEPT = 2
"""Uvarints of this many bytes at most are kept once worked out (16,512 at most)."""


class Overflow(ValueError):  # noqa: N818 - a signal to the caller, not an error shown
    """A uvarint of more than 64 bits."""


class _Uvarints(dict[bytes, int]):
    """A uvarint's value by its bytes (continuation bytes, then one byte below 0x80)."""

    def __missing__(self, key: bytes) -> int:
        last = len(key) - 1
        if last >= _MAX_BYTES or (last == _MAX_BYTES - 1 and key[last] > 1):
            raise Overflow
        value = key[last]
        for index in range(last - 1, -1, -1):
            value = value << 7 | key[index] & 0x7F
        if last < _KEPT:
            self[key] = value
        return value


UVARINTS = _Uvarints()
_value = UVARINTS.__getitem__


def uvarints_filling(value: bytes, start: int, end: int) -> list[int] | None:
    """The uvarints that fill ``start..end`` exactly, or ``None`` when they do not.

    ``None`` also for a uvarint past 64 bits: the caller's full read raises at the fault. Read
    by ``read_uvarint_chunk``, which copies out the one-byte uvarints between longer ones in
    one go: the cheaper way where few of many are longer; a region of few uvarints is split
    (``split_uvarints``).
    """
    region = value[start:end]
    if region.isascii():  # the common region: every uvarint takes one byte
        return list(region)
    count = len(region) - len(region.translate(None, _LOW_BYTES))
    if count <= _FEW:
        return split_uvarints(value, start, end)
    try:
        numbers, after = read_uvarint_chunk(value, start, count, end)
    except DecodeError:
        return None
    return numbers if after == end else None


def header_uvarints(value: bytes, start: int, end: int, count: int) -> list[int] | None:
    """``uvarints_filling`` of the headers of ``count`` rows, or ``None``.

    The commit ts chunk comes first, ``count`` uvarints mostly of five to nine bytes, each
    read by a loop here (no table to miss); the other four chunks must then take one byte a
    uvarint and fill the headers to ``end`` exactly. ``None`` for anything else (a uvarint
    past 64 bits or past ``end``): the caller takes ``uvarints_filling``, then the full read.
    """
    position = start
    numbers: list[int] = []
    append = numbers.append
    for _ in range(count):
        number = shift = 0
        # ten bytes at most: a longer run is refused at its eleventh byte, not shifted through
        limit = position + 10
        if limit > end:  # noqa: PLR1730 - a comparison per uvarint, cheaper than min()'s call
            limit = end
        while True:
            if position >= limit:  # past the end, or past ten bytes
                return None
            byte = value[position]
            position += 1
            number |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        if shift == 63 and byte > 1:  # past 64 bits
            return None
        append(number)
    rest = value[position:end]
    if len(rest) != 4 * count or not rest.isascii():
        return None
    numbers += rest
    return numbers


def split_uvarints(value: bytes, start: int, end: int) -> list[int] | None:
    """``uvarints_filling`` by one pattern and ``UVARINTS``.

    The cheaper way where many uvarints are longer than a byte (the size tables: sizes of 64
    bytes and more).
    """
    region = value[start:end]
    if region.isascii():
        return list(region)
    if region[-1] >= 0x80:  # a uvarint runs past the end
        return None
    try:
        return list(map(_value, _SPLIT(region)))
    except Overflow:
        return None


def leading_uvarints(
    value: bytes, start: int, count: int, end: int
) -> tuple[list[int], int] | None:
    """The ``count`` uvarints from ``start`` and the offset after them, or ``None``.

    ``None`` unless each of them takes one or two bytes and they end by ``end``. The bytes
    they take are ``count`` plus their bytes with 0x80 set (each uvarint's first byte, when it
    takes two); the uvarints of one byte are copied out as they are and the two-byte ones put
    together where they start.
    """
    if count > end - start:
        return None
    size = count
    while True:  # the span grows by the bytes with 0x80 found in it, until it holds them all
        region = value[start : start + size]
        grown = count + len(region.translate(None, _LOW_BYTES))
        if grown == size:
            break
        if grown > end - start:
            return None
        size = grown
    if len(region) != size or (size and region[-1] >= 0x80):
        return None
    numbers = list(region)
    for run in reversed(list(_CONTINUED(region))):
        first, last = run.span()
        if last - first > 1:  # a uvarint of three bytes or more
            return None
        numbers[first : first + 2] = [numbers[first] & 0x7F | numbers[last] << 7]
    return numbers, start + size


def fast_size_tables(value: Buffer, offset: int) -> tuple[list[list[int]], int] | None:
    """``primitives.read_size_tables(value, offset)`` read in one pass, or ``None``.

    ``None`` for a trailer of more than one byte and for tables that are not whole (an empty
    one, a count past the uvarints left, a uvarint past 64 bits): the full read raises there.
    """
    end = len(value)
    if type(value) is not bytes or end <= offset or value[end - 1] >= 0x80:
        return None
    trailer = end - 1
    start = trailer - value[trailer]
    if start < offset:
        return None
    numbers = split_uvarints(value, start, trailer)
    if numbers is None:
        return None
    tables: list[list[int]] = []
    at, left = 0, len(numbers)
    if numbers and max(numbers) < SMALL:  # ZigZag's values of all at once (the counts' unused)
        small = list(map(ZIGZAG.__getitem__, numbers))
        append = tables.append
        while at < left:
            count = numbers[at]
            # deltas under 2^13 in size: their sums stay inside int64, as zigzag_deltas says
            if count == 2 and at + 2 < left:  # an UPDATE's two groups, the common table
                first = small[at + 1]
                append([first, first + small[at + 2]])
                at += 3
                continue
            if count == 0 or count > left - at - 1:
                return None
            append(list(accumulate(small[at + 1 : at + 1 + count])))
            at += 1 + count
        return tables, start
    while at < left:
        count = numbers[at]
        if count == 0 or count > left - at - 1:
            return None
        tables.append(zigzag_deltas(numbers[at + 1 : at + 1 + count]))
        at += 1 + count
    return tables, start
