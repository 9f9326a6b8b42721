"""Craft's term dictionary and column-group fields as the decoder reads them (ground truth §3.2).

A column group holds, after its type byte and column count, four chunks of ``count`` varints
each (the delta varint chunk of name term IDs, type codes, flags, the nullable value lengths),
then the non-null values. ``fields`` reads them chunk by chunk, checking each as it comes;
``fields_at_once`` reads all four chunks in one loop over the bytes and slices the values in
one pass, and leaves any fault but a term ID's to ``fields``, which raises at the fault.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from ticdc_conformance.reference.craft.primitives import (
    Buffer,
    fail,
    read_delta_varint_chunk,
    read_nullable_bytes_chunk,
    read_uvarint_chunk,
    zigzag_deltas,
)
from ticdc_conformance.reference.errors import DecodeError

__all__ = ["Fields", "Terms", "fields", "fields_at_once"]


class Terms:
    """The decoded term dictionary, checking that IDs come in first-use order."""

    __slots__ = ("next_new", "terms")

    def __init__(self, terms: list[str]) -> None:
        self.terms = terms
        self.next_new = 0

    def names(self, ids: Sequence[int], offset: int) -> list[str | None]:
        """The terms of a chunk of IDs that starts at ``offset``, ``None`` for −1."""
        return self._resolve(ids, offset, nullable=True)

    def lookup(self, ids: Sequence[int], offset: int) -> list[str]:
        """The terms of a chunk of IDs that starts at ``offset``."""
        terms = self.terms
        if ids and min(ids) >= 0 and max(ids) < self.next_new:  # all seen before: no checks
            return [terms[t] for t in ids]
        return cast("list[str]", self._resolve(ids, offset, nullable=False))  # no −1 taken

    def _resolve(self, ids: Sequence[int], offset: int, *, nullable: bool) -> list[str | None]:
        """``term`` of each ID, ``None`` for −1 where ``nullable``.

        The checks are ``term``'s, made in the loop; an ID they refuse goes to ``term`` itself,
        which raises.
        """
        terms, next_new = self.terms, self.next_new
        found: list[str | None] = []
        for i, t in enumerate(ids):
            if 0 <= t < next_new:
                found.append(terms[t])
            elif t == next_new and t < len(terms):
                next_new += 1
                found.append(terms[t])
            elif t == -1 and nullable:
                found.append(None)
            else:
                self.next_new = next_new
                found.append(self.term(t, i, offset))  # raises
        self.next_new = next_new
        return found

    def term(self, term_id: int, position: int, offset: int) -> str:
        """Term ``term_id``, element ``position`` of the chunk of IDs at ``offset``."""
        if not 0 <= term_id < len(self.terms):
            fail(f"term id {term_id} (element {position}) is not in the dictionary", offset)
        if term_id > self.next_new:
            fail(
                f"term id {term_id} (element {position}) comes before id {self.next_new}: "
                "IDs are assigned in first-use order",
                offset,
            )
        if term_id == self.next_new:
            self.next_new += 1
        return self.terms[term_id]


Fields = tuple[list[str], list[int], list[int], list[bytes | None], int]
"""A column group's names, type codes, flags, values and the offset after them."""


def fields(value: Buffer, position: int, count: int, end: int, terms: Terms) -> Fields:
    """The columns of a group read chunk by chunk, each checked as it is read."""
    ids, names_at = read_delta_varint_chunk(value, position, count, end)
    names = terms.lookup(ids, position)
    types, flags_at = read_uvarint_chunk(value, names_at, count, end)
    if max(types) > 255:
        for i, type_code in enumerate(types):
            if type_code > 255:
                fail(f"column {i} has type code {type_code}, above 255", names_at)
    flags, values_at = read_uvarint_chunk(value, flags_at, count, end)
    raw, position = read_nullable_bytes_chunk(value, values_at, count, end)
    if position != end:
        fail(f"{end - position} bytes after the column group", position)
    return names, types, flags, raw, position


def fields_at_once(
    value: Buffer, position: int, count: int, end: int, terms: Terms
) -> Fields | None:
    """The columns of a group from one read of its 4 × ``count`` varints.

    The varints are the name IDs, type codes, flags and value lengths; the values are sliced
    in one pass after them.

    ``None`` when anything is amiss but a term ID (``Terms`` raises at once, as ``fields``
    would); ``fields`` then reads the group again and raises at the fault.
    """
    try:
        numbers, values_at = read_uvarint_chunk(value, position, 4 * count, end)
    except DecodeError:
        return None
    types = numbers[count : 2 * count]
    if max(types) > 255:
        return None
    lengths = numbers[3 * count :]
    total = 0
    for length in lengths:  # ZigZag: 1 is NULL (-1), other odd ones are below -1
        if length & 1:
            if length != 1:
                return None
        else:
            total += length
    if values_at + (total >> 1) != end:
        return None
    names = terms.lookup(zigzag_deltas(numbers[:count]), position)
    raw: list[bytes | None] = []
    append = raw.append
    at = values_at
    for length in lengths:
        if length & 1:
            append(None)
        else:
            after = at + (length >> 1)
            append(bytes(value[at:after]))
            at = after
    return names, types, numbers[2 * count : 3 * count], raw, end
