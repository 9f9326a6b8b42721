"""Craft encoder: change events → Kafka messages (ground truth §3.2–§3.4).

Rows accumulate in a batch; *after* appending a row, the batch is flushed into one message
when its estimated size exceeds ``max-message-bytes`` or it holds ``max-batch-size`` rows, so
the row that crosses the limit still travels in the batch it made too large (§3.4). DDL and
resolved events close the batch and go out alone. Every message has a nil key.

Rows are laid out by ``_rows`` (the full way: ``validation.check_row`` first, then each value's
writer) or ``_fast_rows`` (values checked and written in one pass, for rows that pass). What a
rows message holds besides commit ts, values and sizes — the headers' other chunks, each
group's names, types and flags, the term dictionary — depends only on its rows' tables and
group layouts, and is made once for them.

Where TiCDC's encoder would crash (a nil-pointer dereference or a failed type assertion) the
reference raises ``EncodeError`` instead of inventing bytes: a row without schema or table
name, a column group with no column, a value of the wrong Go type for its column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ticdc_conformance.reference.craft._config import PROTOCOL, Config
from ticdc_conformance.reference.craft._fast_rows import fast_row
from ticdc_conformance.reference.craft._rows import (
    DDL,
    NEW_GROUP,
    NO_PARTITION,
    OLD_GROUP,
    RESOLVED,
    ROW,
    Group,
    Header,
    Row,
    row,
    utf8,
)
from ticdc_conformance.reference.craft._scalars import UVARINT_BYTES
from ticdc_conformance.reference.craft.primitives import (
    write_bytes,
    write_delta_varint_chunk,
    write_uvarint,
    write_uvarint_chunk,
    write_uvarint_reversed,
)
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, RowChangedEvent
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.validation import check_row

__all__ = [
    "DDL",
    "NEW_GROUP",
    "NO_PARTITION",
    "OLD_GROUP",
    "RESOLVED",
    "ROW",
    "encode",
    "estimated_size",
]

VERSION = 1
_U64 = 1 << 64


class _Terms:
    """The term dictionary: IDs 0, 1, 2, … in first-use order (§3.2)."""

    __slots__ = ("ids",)

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}

    def id(self, term: bytes | None) -> int:
        if term is None:
            return -1
        return self.ids.setdefault(term, len(self.ids))


def _message(header: Header, body: bytes) -> Message:
    """Lay out a message of one DDL or resolved event (§3.2): its header and its raw body."""
    out = bytearray()
    write_uvarint(out, VERSION)
    terms = _Terms()
    start = len(out)
    write_uvarint_chunk(out, [*_deltas([header.commit_ts]), header.kind])  # one element each
    write_delta_varint_chunk(out, [header.partition])
    write_delta_varint_chunk(out, [terms.id(header.schema)])
    write_delta_varint_chunk(out, [terms.id(header.table)])
    header_size = len(out) - start
    out += body
    start = len(out)
    if terms.ids:  # an empty dictionary is omitted entirely: count, a bytes chunk
        write_uvarint(out, len(terms.ids))
        write_uvarint_chunk(out, [len(term) for term in terms.ids])
        out += b"".join(terms.ids)
    _size_tables(out, [[header_size, len(out) - start], [len(body)]])
    return Message(key=None, value=bytes(out))


_UVARINT = UVARINT_BYTES.__getitem__


def _deltas(values: Sequence[int]) -> list[int]:
    """A delta uvarint chunk's numbers: each difference to the previous value modulo 2^64."""
    deltas, last = [], 0
    for value in values:
        deltas.append((value - last) % _U64)
        last = value
    return deltas


def _prefix(group: Group, terms: _Terms) -> bytes:
    out = bytearray((group.kind,))
    write_uvarint(out, len(group.names))
    write_delta_varint_chunk(out, [terms.id(name) for name in group.names])
    out += group.types_and_flags
    return bytes(out)


def _size_tables(out: bytearray, tables: Sequence[Sequence[int]]) -> None:
    """``primitives.write_size_tables`` with every table's uvarints written in one chunk."""
    numbers = []
    for table in tables:
        numbers.append(len(table))
        last = 0
        for size in table:  # sizes: lengths of bytes, so int64 deltas that do not wrap
            delta = size - last
            numbers.append((delta << 1) ^ (delta >> 63))
            last = size
    chunk = _uvarints(numbers)
    out += chunk
    write_uvarint_reversed(out, len(chunk))


class _Skeleton(NamedTuple):
    """What a rows message holds besides commit ts, values and sizes (``_rows_message``)."""

    headers: bytes
    """The event type, partition, schema and table chunks of the headers."""
    prefixes: tuple[tuple[bytes, ...], ...]
    """Each row's groups' type, column count, name IDs, type codes and flags."""
    dictionary: bytes


_skeletons: dict[tuple[object, ...], _Skeleton] = {}
"""Recent messages' skeletons by their rows' headers and group layouts (which fix them)."""


def _skeleton(rows: Sequence[Row]) -> _Skeleton:
    headers = [r.header for r in rows]
    out = bytearray()
    terms = _Terms()
    write_uvarint_chunk(out, [h.kind for h in headers])
    write_delta_varint_chunk(out, [h.partition for h in headers])
    write_delta_varint_chunk(out, [terms.id(h.schema) for h in headers])
    write_delta_varint_chunk(out, [terms.id(h.table) for h in headers])
    made: dict[tuple[int, tuple[bytes, ...], bytes], bytes] = {}
    prefixes = []
    for r in rows:
        row_prefixes = []
        for group in r.groups:
            key = (group.kind, group.names, group.types_and_flags)
            if key not in made:  # the names' IDs stay the same within the message
                made[key] = _prefix(group, terms)
            row_prefixes.append(made[key])
        prefixes.append(tuple(row_prefixes))
    dictionary = bytearray()
    if terms.ids:  # an empty dictionary is omitted entirely: count, a bytes chunk
        write_uvarint(dictionary, len(terms.ids))
        write_uvarint_chunk(dictionary, [len(term) for term in terms.ids])
        dictionary += b"".join(terms.ids)
    return _Skeleton(bytes(out), tuple(prefixes), bytes(dictionary))


def _rows_message(rows: Sequence[Row]) -> Message:
    """``_message`` of rows, its skeleton made once for rows of the same tables and images."""
    key = tuple([r.layout for r in rows])
    skeleton = _skeletons.get(key)
    if skeleton is None:
        skeleton = _skeleton(rows)
        if len(_skeletons) >= 64:
            _skeletons.clear()
        _skeletons[key] = skeleton
    deltas, last = [], 0
    for r in rows:  # the delta uvarints of the commit ts, each modulo 2^64
        ts = r.header.commit_ts
        deltas.append(_UVARINT((ts - last) % _U64))
        last = ts
    commit_ts = b"".join(deltas)
    header_size = len(commit_ts) + len(skeleton.headers)
    parts = [_VERSION, commit_ts, skeleton.headers]
    # the size tables' uvarints as _size_tables makes them: each table's count, then the
    # ZigZag deltas of its sizes (lengths of bytes: int64 deltas that do not wrap)
    body_sizes: list[int] = []
    group_numbers: list[int] = []
    for r, prefixes in zip(rows, skeleton.prefixes, strict=True):
        groups = r.groups
        if len(groups) == 2:  # an UPDATE (a prefix per group): the common row, unrolled
            (first, second), (new, old) = prefixes, groups
            new_tail, old_tail = new.tail, old.tail
            parts += (first, new_tail, second, old_tail)
            new_size = len(first) + len(new_tail)
            old_size = len(second) + len(old_tail)
            delta = old_size - new_size
            group_numbers += (2, new_size << 1, (delta << 1) ^ (delta >> 63))
            body_sizes.append(new_size + old_size)
            continue
        group_numbers.append(len(prefixes))
        last = total = 0
        for group, prefix in zip(groups, prefixes, strict=True):
            tail = group.tail
            parts += (prefix, tail)
            size = len(prefix) + len(tail)
            delta = size - last
            group_numbers.append((delta << 1) ^ (delta >> 63))
            last = size
            total += size
        body_sizes.append(total)
    dictionary = skeleton.dictionary
    parts.append(dictionary)
    numbers = [2, header_size << 1, _zigzag(len(dictionary) - header_size), len(body_sizes)]
    last = 0
    for size in body_sizes:
        delta = size - last
        numbers.append((delta << 1) ^ (delta >> 63))
        last = size
    numbers += group_numbers
    tables = _uvarints(numbers)
    parts += (tables, _TRAILERS[len(tables)])
    return Message(key=None, value=b"".join(parts))


class _Trailers(dict[int, bytes]):
    """The trailer's reversed uvarint of the size tables' byte length, by the length."""

    def __missing__(self, length: int) -> bytes:
        trailer = bytearray()
        write_uvarint_reversed(trailer, length)
        if length < 1 << 14:  # the ones of one and two bytes, kept
            self[length] = bytes(trailer)
        return bytes(trailer)


_TRAILERS = _Trailers()


def _zigzag(value: int) -> int:
    return (value << 1) ^ (value >> 63)


def _uvarints(numbers: list[int]) -> bytes:
    """``write_uvarint_chunk``'s bytes of ``int`` values known to be uint64s, in C."""
    return bytes(numbers) if max(numbers) < 0x80 else b"".join(map(_UVARINT, numbers))


_VERSION = bytes((VERSION,))
"""The version's uvarint (one byte)."""


def _ddl_message(event: DDLEvent) -> Message:
    body = bytearray()
    write_uvarint(body, event.ddl_type)
    write_bytes(body, utf8(event.query, "query"))
    header = Header(
        commit_ts=event.commit_ts,
        kind=DDL,
        partition=NO_PARTITION,
        # empty names are written as null (−1), not as the term "" (§3.2)
        schema=utf8(event.schema, "schema name") or None,
        table=utf8(event.table, "table name") or None,
    )
    return _message(header, bytes(body))


def estimated_size(event: RowChangedEvent, config: Config | None = None) -> int:
    """TiCDC's size estimate of one row, which batching compares with the limit (§3.4)."""
    return row(event, config or Config()).size


@dataclass(slots=True)
class _Batch:
    rows: list[Row] = field(default_factory=list)
    size: int = 0


def encode(events: Iterable[ChangeEvent], config: Config | None = None) -> list[Message]:
    """Encode change events into Kafka messages exactly as classic TiCDC would."""
    config = config or Config()
    messages: list[Message] = []
    batch = _Batch()
    for index, event in enumerate(events):
        try:
            if isinstance(event, RowChangedEvent):
                made = fast_row(event, config)
                if made is None:  # anything the bulk path does not write: the full way
                    check_row(event, PROTOCOL)
                    made = row(event, config)
                batch.rows.append(made)
                batch.size += made.size
                # checked after appending: the crossing row stays in this batch (§3.4)
                if (
                    batch.size > config.max_message_bytes
                    or len(batch.rows) >= config.max_batch_size
                ):
                    messages.append(_rows_message(batch.rows))
                    batch = _Batch()
                continue
            if batch.rows:
                messages.append(_rows_message(batch.rows))
                batch = _Batch()
            if isinstance(event, DDLEvent):
                messages.append(_ddl_message(event))
            else:
                header = Header(event.commit_ts, RESOLVED, NO_PARTITION, None, None)
                messages.append(_message(header, b""))
        except EncodeError as error:
            raise EncodeError(error.reason, protocol=PROTOCOL, event_index=index) from None
    if batch.rows:
        messages.append(_rows_message(batch.rows))
    return messages
