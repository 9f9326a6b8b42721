"""Column groups and uvarint regions read in bulk, where the bytes hold no fault.

The rows of a message (and of the messages that follow) mostly come from a few tables, so
their column groups begin with the same bytes: the column count, then the chunks of name term
IDs, type codes and flags (ground truth §3.2). ``fast_group`` keeps what those bytes mean — the
IDs, the type codes, the flags and each column's reader (``_readers``) — by the bytes
themselves; identical bytes read as the same ``3 × count`` varints, so a group that starts
with them needs only its value lengths read, and each header has a reader compiled for it
(``_group_code``) that reads the lengths, slices the values and reads them column by column,
unrolled, and builds the ``DecodedColumn`` tuples. Compiling costs milliseconds, so a header is
compiled only at its second sighting (in another group: the first is read the full way) and
kept within a budget of columns, the least recently used dropped first (``_kept``).

It returns ``None`` for anything it does not read through: a count, header or length chunk
that does not fit, lengths that do not fill the group exactly, a value that its reader refuses
(``ValueError``) or finds invalid (``Invalid``). The decoder then reads the group again the
full way, which raises at the fault or records the finding. Term IDs are looked up as the full
way looks them up (``Terms.lookup``, which raises at an ID out of first-use order) once per
message and header; a lookup that succeeded leaves every ID below ``Terms.next_new``, so the
full way's lookup of the same IDs, should it read the group again, finds the same names.

Regions that hold only uvarints — the size tables, the five header chunks — are read by
``_uvarints`` (``header_uvarints``, ``uvarints_filling``, ``fast_size_tables``); each answers
``None`` where the full read would raise, and the decoder then takes it. The term dictionary
is sliced the same way (``terms_at_once``) where its lengths take one byte each.
"""

from __future__ import annotations

from itertools import accumulate, pairwise

from ticdc_conformance.reference.craft._group_code import group_reader
from ticdc_conformance.reference.craft._groups import Terms
from ticdc_conformance.reference.craft._kept import Kept
from ticdc_conformance.reference.craft._readers import Reader, bulk_reader
from ticdc_conformance.reference.craft.primitives import read_uvarint_chunk, zigzag_deltas
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG

__all__ = [
    "Header",
    "Names",
    "fast_group",
    "fast_update",
    "terms_at_once",
]

_BUDGET = 4096
"""Columns of compiled headers kept at most (``_kept``): some 2 KB of code each, 8 MB in all;
two generations of 2048 columns hold some 200 headers of 10 columns, 16 of 127."""


class Header:
    """What a group's column count and first three chunks say, by their bytes."""

    __slots__ = ("data", "ids", "read", "update")

    def __init__(
        self, data: bytes, ids: list[int], types: list[int], flags: list[int], readers: list[Reader]
    ) -> None:
        self.data = data
        self.ids = ids
        handles = [bool(flag & HANDLE_KEY_FLAG) for flag in flags]
        self.read, self.update = group_reader(data, ids, types, flags, handles, readers)


_HEADERS: Kept[bytes, Header] = Kept(_BUDGET, lambda header: len(header.ids))
"""Compiled headers by their column count's byte and their first bytes (``_header``)."""

Names = dict[bytes, list[str]]
"""The names of each header's IDs within one message (looked up in its term dictionary)."""


def _header(value: bytes, position: int, count: int, end: int, names: Names) -> Header | None:
    # the key: the count's byte (just before the header), then the header's first 3 × count
    # bytes (each uvarint takes one at least), or all its bytes where another header of the
    # same first bytes holds that key
    key = value[position - 1 : position + 3 * count]
    header = _HEADERS.recent.get(key) or _HEADERS.older(key)
    if header is not None and value.startswith(header.data, position):
        return header if position + len(header.data) <= end else None
    try:
        numbers, after = read_uvarint_chunk(value, position, 3 * count, end)
    except DecodeError:
        return None
    if header is not None:
        key = value[position - 1 : after]
        header = _HEADERS.recent.get(key) or _HEADERS.older(key)
        if header is not None:
            return header
    # made at its second sighting, in another group (names is the message's own object; a
    # group read again is not another sighting)
    if not _HEADERS.sighted_before(key, (names, position)):
        return None
    types = numbers[count : 2 * count]
    if max(types) > 255:
        return None
    flags = numbers[2 * count :]
    readers = [bulk_reader(type_code, flag) for type_code, flag in zip(types, flags, strict=True)]
    header = Header(value[position:after], zigzag_deltas(numbers[:count]), types, flags, readers)
    _HEADERS.keep(key, header)
    return header


def fast_group(
    value: bytes, start: int, end: int, terms: Terms, names: Names
) -> tuple[int, tuple[DecodedColumn, ...]] | None:
    """The group type and columns of the group at ``start..end``, or ``None`` (see above).

    ``end`` lies within ``value`` (the caller's promise: a group inside its body), so every
    value the lengths place before it is there to read.
    """
    if start + 1 >= end or value[start] not in (1, 2):
        return None
    count = value[start + 1]
    if not 0 < count < 0x80:
        return None
    position = start + 2
    header = _header(value, position, count, end, names)
    if header is None:
        return None
    columns = header.read(value, position + len(header.data), end, terms, names, position)
    if columns is None:
        return None
    return value[start], columns


def fast_update(  # noqa: PLR0917 - the group bounds, by position
    value: bytes,
    start: int,
    middle: int,
    end: int,
    terms: Terms,
    names: Names,
) -> tuple[tuple[DecodedColumn, ...], tuple[DecodedColumn, ...], Header] | None:
    """An UPDATE's old and new columns and the new group's header, or ``None``.

    ``fast_group`` of a new group at ``start..middle`` and of an old one at ``middle..end``;
    ``None`` where either is not read through or is of another type. The new group's header
    is found among the kept ones (a header's bytes are whole uvarints, so no other header
    starts where one does, and the one that does is the one ``fast_group`` finds). The old
    group mostly has the new one's header too (an UPDATE of one table): that header then
    reads it at once.
    """
    if start + 1 >= middle or value[start] != 1:
        return None
    count = value[start + 1]
    if not 0 < count < 0x80:
        return None
    header = _header(value, start + 2, count, middle, names)
    if header is None:
        return None
    both = header.update(value, start, middle, end, terms, names)
    if both is not None:
        return both[0], both[1], header
    # another header for the old group, or a group not read through: each alone (an old
    # group of this header that ``update`` did not read, this header does not read alone)
    new = header.read(value, start + 2 + len(header.data), middle, terms, names, start + 2)
    if new is None:
        return None
    read = fast_group(value, middle, end, terms, names)
    old = read[1] if read is not None and read[0] == 2 else None
    return None if old is None else (old, new, header)


def terms_at_once(value: bytes, start: int, count: int, end: int) -> list[str] | None:
    """The terms of a dictionary, sliced and decoded in one pass, or ``None``.

    ``None`` (for the full read) unless the lengths take one byte each, the terms fill the
    dictionary to ``end`` exactly and each is UTF-8 (so the full read's checks of them pass).
    """
    sizes = value[start : start + count]
    if len(sizes) != count or not sizes.isascii():
        return None
    ends = list(accumulate(sizes, initial=start + count))
    if ends[-1] != end:
        return None
    try:
        return [value[a:b].decode() for a, b in pairwise(ends)]
    except UnicodeDecodeError:
        return None
