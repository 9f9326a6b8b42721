"""Craft decoder: one Kafka message → decoded events (ground truth §3.1–§3.3).

It reads as TiCDC's decoder does — the version, then the size tables from the trailer
backwards, the body offsets from the body-size table, the term dictionary at header size plus
body size, the headers, then each body by its sizes — but checks what TiCDC's decoder takes on
trust, so that a message passes only if TiCDC's encoder could have written it:

* the parts fill the message exactly: version, headers, bodies, term dictionary, size tables
  and trailer, each region read to its last byte and not beyond;
* every count and length is checked against the bytes left before anything is read or
  allocated (TiCDC's decoder reads a truncated varint as 0 and slices past the end);
* one size table per row event after the meta and body tables, every size table non-empty;
* term IDs appear in first-use order (headers' schemas, headers' tables, then column names
  body by body), every term is used once at least and no term is repeated;
* a message holds rows only, or exactly one DDL or one resolved event; rows have schema and
  table names; DDL and resolved events have partition −1; resolved events have null names and
  an empty body; a row has a new group (0x01), an old group (0x02) or new then old;
* only version 1 exists (TiCDC's decoder accepts any version from 1 up); the key is absent.

The size tables, the headers and the column groups are read in bulk where their bytes hold no
fault (``_fast_groups``); anything else is read again the full way, which raises at the fault.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import accumulate

from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.craft._config import PROTOCOL
from ticdc_conformance.reference.craft._encode import (
    DDL,
    NO_PARTITION,
    RESOLVED,
    ROW,
)
from ticdc_conformance.reference.craft._fast_groups import Names, terms_at_once
from ticdc_conformance.reference.craft._groups import Terms
from ticdc_conformance.reference.craft._row_bodies import Found, Headers, Parts, row
from ticdc_conformance.reference.craft._row_bodies import rows as rows_of
from ticdc_conformance.reference.craft._uvarints import (
    fast_size_tables,
    header_uvarints,
    uvarints_filling,
)
from ticdc_conformance.reference.craft.primitives import (
    Buffer,
    fail,
    read_bytes,
    read_bytes_chunk,
    read_delta_uvarint_chunk,
    read_delta_varint_chunk,
    read_size_tables,
    read_uvarint,
    read_uvarint_chunk,
    zigzag_deltas,
)
from ticdc_conformance.reference.decoded import (
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
)
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.validation import finding, raise_findings

__all__ = ["decode"]

_U64 = 1 << 64
_ROWS = {ROW}


def _utf8(data: bytes, what: str, offset: int) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        fail(f"{what} is not UTF-8", offset)


def _dictionary(value: Buffer, start: int, end: int) -> Terms:
    if start == end:
        return Terms([])
    if type(value) is bytes and 0 < value[start] < 0x80:  # a count of one byte
        terms = terms_at_once(value, start + 1, value[start], end)
        # the text of distinct bytes is distinct: no repeat there, none in the bytes
        if terms is not None and len(set(terms)) == len(terms):
            return Terms(terms)
    count, position = read_uvarint(value, start, end)
    if count == 0:
        fail("a term dictionary that is present holds one term at least", start)
    raw, position = read_bytes_chunk(value, position, count, end)
    if position != end:
        fail(f"{end - position} bytes after the term dictionary", position)
    if len(set(raw)) != len(raw):
        fail("the term dictionary repeats a term", start)
    try:
        return Terms([term.decode() for term in raw])
    except UnicodeDecodeError:
        return Terms([_utf8(term, f"term {i}", start) for i, term in enumerate(raw)])


def _headers(value: Buffer, start: int, end: int, count: int, terms: Terms) -> Headers:
    # one pass over the five chunks where they fill the headers exactly and hold no fault
    numbers = None
    if type(value) is bytes:
        numbers = header_uvarints(value, start, end, count) or uvarints_filling(value, start, end)
    if numbers is not None and len(numbers) == 5 * count:
        kinds = numbers[count : 2 * count]
        # rows only, or one event of any type
        if (set(kinds) == _ROWS) if count > 1 else (count == 1 and kinds[0] in _EVENTS):
            before = terms.next_new
            try:
                schemas = terms.names(zigzag_deltas(numbers[3 * count : 4 * count]), start)
                tables = terms.names(zigzag_deltas(numbers[4 * count :]), start)
            except DecodeError:
                terms.next_new = before  # the full read below raises at the right offset
            else:
                ts = list(accumulate(numbers[:count]))  # uvarints: never negative
                if ts[-1] >= _U64:  # a sum past 2^64 somewhere: each modulo 2^64
                    last, ts = 0, []
                    for delta in numbers[:count]:
                        last = (last + delta) % _U64
                        ts.append(last)
                partitions = zigzag_deltas(numbers[2 * count : 3 * count])
                return Headers(start, ts, kinds, partitions, schemas, tables)
    return _full_headers(value, start, end, count, terms)


def _full_headers(value: Buffer, start: int, end: int, count: int, terms: Terms) -> Headers:
    ts, kinds_at = read_delta_uvarint_chunk(value, start, count, end)
    kinds, partitions_at = read_uvarint_chunk(value, kinds_at, count, end)
    for i, kind in enumerate(kinds):
        if kind not in _EVENTS:
            fail(f"event {i} has type {kind}; 1 row, 2 DDL, 3 resolved", kinds_at)
    if count > 1 and set(kinds) != {ROW}:
        fail("only rows share a message; a DDL or resolved event travels alone", kinds_at)
    partitions, schemas_at = read_delta_varint_chunk(value, partitions_at, count, end)
    schema_ids, tables_at = read_delta_varint_chunk(value, schemas_at, count, end)
    schemas = terms.names(schema_ids, schemas_at)
    table_ids, position = read_delta_varint_chunk(value, tables_at, count, end)
    tables = terms.names(table_ids, tables_at)
    if position != end:
        fail(f"{end - position} bytes after the headers", position)
    return Headers(start, ts, kinds, partitions, schemas, tables)


def _control(message: Parts, i: int) -> None:
    if message.headers.partitions[i] != NO_PARTITION:
        partition = message.headers.partitions[i]
        fail(f"a DDL or resolved event has partition {partition}, not -1", message.headers.start)


def _ddl(message: Parts, i: int, start: int, end: int) -> DecodedEvent:
    _control(message, i)
    ddl_type, query_at = read_uvarint(message.value, start, end)
    if ddl_type > 255:
        fail(f"DDL type {ddl_type} is not an ActionType byte", start)
    query, after = read_bytes(message.value, query_at, end)
    if after != end:
        fail(f"{end - after} bytes after the DDL query", after)
    headers = message.headers
    return DecodedDDL(
        commit_ts=headers.commit_ts[i],
        schema=headers.schemas[i] or "",
        table=headers.tables[i] or "",
        query=_utf8(query, "the DDL query", query_at),
        ddl_type=ddl_type,
    )


def _resolved(message: Parts, i: int, start: int, end: int) -> DecodedEvent:
    _control(message, i)
    headers = message.headers
    if end != start or headers.schemas[i] is not None or headers.tables[i] is not None:
        fail("a resolved event has null schema and table and an empty body", start)
    return DecodedResolved(commit_ts=headers.commit_ts[i])


_EVENTS: dict[int, Callable[[Parts, int, int, int], DecodedEvent]] = {
    ROW: row,
    DDL: _ddl,
    RESOLVED: _resolved,
}
"""Header event type → the reader of its body (§3.2)."""


def _decode(value: Buffer, found: Found) -> list[DecodedEvent]:
    if value[:1] == b"\x01":  # version 1, the only one: its one-byte uvarint
        version, header_start = 1, 1
    else:
        version, header_start = read_uvarint(value, 0)
    if version != 1:
        fail(f"version {version}, only version 1 exists", 0)
    tables, tables_start = fast_size_tables(value, header_start) or read_size_tables(
        value, header_start
    )
    if len(tables) < 2 or len(tables[0]) != 2:
        fail("size tables begin with [headers, dictionary] and the body sizes", tables_start)
    (header_size, dictionary_size), body_sizes = tables[0], tables[1]
    if min(header_size, dictionary_size, *body_sizes) < 0:
        fail("a size table holds a negative size", tables_start)
    bodies_start = header_start + header_size
    dictionary_start = bodies_start + sum(body_sizes)
    if dictionary_start + dictionary_size != tables_start:
        fail(
            f"headers ({header_size}), bodies ({sum(body_sizes)}) and dictionary "
            f"({dictionary_size}) do not fill the {tables_start - header_start} bytes "
            "before the size tables",
            tables_start,
        )
    terms = _dictionary(value, dictionary_start, tables_start)
    headers = _headers(value, header_start, bodies_start, len(body_sizes), terms)
    rows = headers.kinds.count(ROW)
    if len(tables) != 2 + rows:
        fail(f"{len(tables) - 2} column-group size tables for {rows} rows", tables_start)
    names: Names | None = {} if type(value) is bytes else None
    message = Parts(value, headers, tables, terms, found, names)
    if names is not None and rows == len(body_sizes):
        events = rows_of(message, bodies_start, body_sizes)
    else:
        events = []
        position = bodies_start
        for i, size in enumerate(body_sizes):
            events.append(_EVENTS[headers.kinds[i]](message, i, position, position + size))
            position += size
    if terms.next_new != len(terms.terms):
        fail(f"term {terms.next_new} of the dictionary is never used", dictionary_start)
    return events


def decode(
    message: Message,
    *,
    message_index: int = 0,
    compression: Compression = "none",  # noqa: ARG001 - the codec surface's parameter
) -> list[DecodedEvent]:
    """Decode one Craft message into its events, in order; raise only ``DecodeError``."""
    if message.key is not None:
        raise DecodeError(
            "a Craft message has no key (TiCDC sends nil)",
            protocol=PROTOCOL,
            part="key",
            offset=0,
            message_index=message_index,
        )
    found: Found = []
    try:
        events = _decode(message.value or b"", found)
    except DecodeError as error:
        if message_index == 0:
            raise
        raise DecodeError(
            error.reason,
            protocol=PROTOCOL,
            part=error.part,
            offset=error.offset,
            message_index=message_index,
        ) from None
    if found:
        findings = [
            finding(name, ctype, value, protocol=PROTOCOL, message_index=message_index, offset=at)
            for name, ctype, value, at in found
        ]
        raise_findings([error for error in findings if error is not None], events)
    return events
