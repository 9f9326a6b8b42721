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

from collections.abc import Callable, Sequence
from typing import NamedTuple

from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.craft._config import PROTOCOL
from ticdc_conformance.reference.craft._encode import (
    DDL,
    NEW_GROUP,
    NO_PARTITION,
    OLD_GROUP,
    RESOLVED,
    ROW,
)
from ticdc_conformance.reference.craft._fast_groups import Names, fast_group, terms_at_once
from ticdc_conformance.reference.craft._groups import Terms, fields, fields_at_once
from ticdc_conformance.reference.craft._readers import KINDS_SEEN, Invalid, reader
from ticdc_conformance.reference.craft._uvarints import fast_size_tables, uvarints_filling
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
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    decoded_row,
)
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG
from ticdc_conformance.reference.validation import finding, raise_findings
from ticdc_conformance.reference.validity import ColumnType
from ticdc_conformance.reference.values import Value

__all__ = ["decode"]

_U64 = 1 << 64
_new = tuple.__new__
"""``_new(DecodedColumn, members)``: a ``DecodedColumn`` from all its members in order, without
``__new__``'s argument handling."""
_KINDS = KINDS_SEEN
"""Column readers by (type code, flags), each chosen once (``_readers``)."""

_OPERATIONS: dict[tuple[int, ...], Operation] = {
    (NEW_GROUP,): "insert",
    (OLD_GROUP,): "delete",
    (NEW_GROUP, OLD_GROUP): "update",
}


def _utf8(data: bytes, what: str, offset: int) -> str:
    try:
        return data.decode()
    except UnicodeDecodeError:
        fail(f"{what} is not UTF-8", offset)


def _dictionary(value: Buffer, start: int, end: int) -> Terms:
    if start == end:
        return Terms([])
    count, position = read_uvarint(value, start, end)
    if count == 0:
        fail("a term dictionary that is present holds one term at least", start)
    raw = terms_at_once(value, position, count, end)
    if raw is None:
        raw, position = read_bytes_chunk(value, position, count, end)
        if position != end:
            fail(f"{end - position} bytes after the term dictionary", position)
    if len(set(raw)) != len(raw):
        fail("the term dictionary repeats a term", start)
    try:
        return Terms([term.decode() for term in raw])
    except UnicodeDecodeError:
        return Terms([_utf8(term, f"term {i}", start) for i, term in enumerate(raw)])


class _Headers(NamedTuple):
    """The columnar headers, one element per event (§3.2)."""

    start: int
    commit_ts: list[int]
    kinds: list[int]
    partitions: list[int]
    schemas: list[str | None]
    tables: list[str | None]


def _headers(value: Buffer, start: int, end: int, count: int, terms: Terms) -> _Headers:
    # one pass over the five chunks where they fill the headers exactly and hold no fault
    numbers = uvarints_filling(value, start, end) if type(value) is bytes else None
    if numbers is not None and len(numbers) == 5 * count:
        kinds = numbers[count : 2 * count]
        if all(kind in _EVENTS for kind in kinds) and (count == 1 or set(kinds) == {ROW}):
            before = terms.next_new
            try:
                schemas = terms.names(zigzag_deltas(numbers[3 * count : 4 * count]), start)
                tables = terms.names(zigzag_deltas(numbers[4 * count :]), start)
            except DecodeError:
                terms.next_new = before  # the full read below raises at the right offset
            else:
                last, ts = 0, []
                for delta in numbers[:count]:
                    last = (last + delta) % _U64
                    ts.append(last)
                partitions = zigzag_deltas(numbers[2 * count : 3 * count])
                return _Headers(start, ts, kinds, partitions, schemas, tables)
    return _full_headers(value, start, end, count, terms)


def _full_headers(value: Buffer, start: int, end: int, count: int, terms: Terms) -> _Headers:
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
    return _Headers(start, ts, kinds, partitions, schemas, tables)


_Found = list[tuple[str, ColumnType, Value, int]]
"""Invalid values of a message: column, its type, the value and the value's byte offset."""


def _group(
    value: Buffer, start: int, end: int, terms: Terms, found: _Found
) -> tuple[int, list[DecodedColumn]]:
    kind = value[start]
    if kind not in (NEW_GROUP, OLD_GROUP):
        fail(f"column group type {kind}; 1 new, 2 old", start)
    count, position = read_uvarint(value, start + 1, end)
    if count == 0:
        fail("a column group holds one column at least", start + 1)
    at_once = fields_at_once(value, position, count, end, terms)
    names, types, flags, raw, position = at_once or fields(value, position, count, end, terms)
    columns: list[DecodedColumn] = []
    append = columns.append
    data_at = position - sum(len(r) for r in raw if r is not None)
    for name, type_code, flag, data in zip(names, types, flags, raw, strict=True):
        handle = bool(flag & HANDLE_KEY_FLAG)
        if data is None:
            append(_new(DecodedColumn, (name, None, type_code, flag, handle, None, None)))
            continue
        read = _KINDS.get((type_code, flag)) or reader(type_code, flag)
        try:
            decoded = read(data)
        except ValueError as error:
            fail(f"column {name!r}: {error}", data_at)
        except Invalid as invalid:
            decoded = invalid.value
            found.append((name, invalid.ctype, decoded, data_at))
        append(_new(DecodedColumn, (name, decoded, type_code, flag, handle, None, None)))
        data_at += len(data)
    return kind, columns


def _row_groups(  # noqa: PLR0917 - called once per row, by position
    value: Buffer,
    start: int,
    sizes: Sequence[int],
    body_end: int,
    terms: Terms,
    found: _Found,
    names: Names | None,
) -> tuple[Operation, dict[int, tuple[DecodedColumn, ...]]]:
    if sum(sizes) != body_end - start:
        fail(f"column groups of {sum(sizes)} bytes in a body of {body_end - start}", start)
    groups: dict[int, tuple[DecodedColumn, ...]] = {}
    kinds = []
    position = start
    for size in sizes:
        if size <= 0:
            fail(f"a column group of {size} bytes", position)
        # the bulk read where it reads the group through, else the full read (_fast_groups);
        # names are kept only where the value is bytes
        read = None
        if names is not None:
            read = fast_group(value, position, position + size, terms, names)  # type: ignore[arg-type]
        if read is None:
            kind, listed = _group(value, position, position + size, terms, found)
            read = kind, tuple(listed)
        kind, columns = read
        kinds.append(kind)
        groups[kind] = columns
        position += size
    operation = _OPERATIONS.get(tuple(kinds))
    if operation is None:
        fail(f"column groups {kinds}: a row has [1], [2] or [1, 2]", start)
    return operation, groups


class _Message(NamedTuple):
    """What every body needs: the bytes, the headers, the size tables and the terms."""

    value: Buffer
    headers: _Headers
    tables: list[list[int]]
    terms: Terms
    found: _Found
    names: Names | None
    """Term names by group header (``_fast_groups``); ``None`` unless the value is ``bytes``."""


def _row(message: _Message, i: int, start: int, end: int) -> DecodedEvent:
    headers = message.headers
    schema, table = headers.schemas[i], headers.tables[i]
    if schema is None or table is None:
        fail(f"row {i} has no schema or table name", headers.start)
    op, groups = _row_groups(
        message.value,
        start,
        message.tables[2 + i],
        end,
        message.terms,
        message.found,
        message.names,
    )
    partition = headers.partitions[i]
    return decoded_row(
        headers.commit_ts[i],
        schema,
        table,
        op,
        groups.get(OLD_GROUP),
        groups.get(NEW_GROUP),
        partition if partition >= 0 else None,
    )


def _control(message: _Message, i: int) -> None:
    if message.headers.partitions[i] != NO_PARTITION:
        partition = message.headers.partitions[i]
        fail(f"a DDL or resolved event has partition {partition}, not -1", message.headers.start)


def _ddl(message: _Message, i: int, start: int, end: int) -> DecodedEvent:
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


def _resolved(message: _Message, i: int, start: int, end: int) -> DecodedEvent:
    _control(message, i)
    headers = message.headers
    if end != start or headers.schemas[i] is not None or headers.tables[i] is not None:
        fail("a resolved event has null schema and table and an empty body", start)
    return DecodedResolved(commit_ts=headers.commit_ts[i])


_EVENTS: dict[int, Callable[[_Message, int, int, int], DecodedEvent]] = {
    ROW: _row,
    DDL: _ddl,
    RESOLVED: _resolved,
}
"""Header event type → the reader of its body (§3.2)."""


def _decode(value: Buffer, found: _Found) -> list[DecodedEvent]:
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
    message = _Message(value, headers, tables, terms, found, names)
    events: list[DecodedEvent] = []
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
    found: _Found = []
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
    findings = [
        finding(name, ctype, value, protocol=PROTOCOL, message_index=message_index, offset=at)
        for name, ctype, value, at in found
    ]
    raise_findings([error for error in findings if error is not None], events)
    return events
