"""Craft row bodies as the decoder reads them: column groups into a ``DecodedRow`` (§3.2).

A row's body is its column groups, each of the size its size table states: a new group (0x01),
an old one (0x02), or new then old. ``row`` reads a row event's body: each group by the bulk
read (``_fast_groups``) where it reads the group through, else the full read (``_group``),
which raises at the fault or records an invalid value's finding. ``rows`` reads the bodies of a
message of row events only, held in ``bytes``: a body of one or two groups of the kinds a row
has goes through the bulk reads alone (an UPDATE's two groups through the last UPDATE's
compiled reader where they have its header, else ``fast_update``; one group through
``fast_group``), anything else (a group they do not read through, sizes that do not add up,
another order or count of groups) through ``row``, which reads it again and gives the outcome
it always gave.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, cast

from ticdc_conformance.reference.craft._fast_groups import Header, Names, fast_group, fast_update
from ticdc_conformance.reference.craft._groups import Terms, fields, fields_at_once
from ticdc_conformance.reference.craft._readers import KINDS_SEEN, Invalid, reader
from ticdc_conformance.reference.craft._rows import NEW_GROUP, OLD_GROUP
from ticdc_conformance.reference.craft.primitives import Buffer, fail, read_uvarint
from ticdc_conformance.reference.decoded import DecodedColumn, DecodedEvent, decoded_row
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG
from ticdc_conformance.reference.validity import ColumnType
from ticdc_conformance.reference.values import Value

__all__ = ["Found", "Headers", "Parts", "row", "rows"]

_new = tuple.__new__
"""``_new(DecodedColumn, members)``: a ``DecodedColumn`` from all its members in order, without
``__new__``'s argument handling."""
_KINDS = KINDS_SEEN
"""Column readers by (type code, flags), each chosen once (``_readers``)."""

_Columns = tuple[DecodedColumn, ...]

_OPERATIONS: dict[tuple[int, ...], Operation] = {
    (NEW_GROUP,): "insert",
    (OLD_GROUP,): "delete",
    (NEW_GROUP, OLD_GROUP): "update",
}


class Headers(NamedTuple):
    """The columnar headers, one element per event (§3.2)."""

    start: int
    commit_ts: list[int]
    kinds: list[int]
    partitions: list[int]
    schemas: list[str | None]
    tables: list[str | None]


Found = list[tuple[str, ColumnType, Value, int]]
"""Invalid values of a message: column, its type, the value and the value's byte offset."""


def _group(
    value: Buffer, start: int, end: int, terms: Terms, found: Found
) -> tuple[int, list[DecodedColumn]]:
    if start >= len(value):  # placed there by a group before it that ran past the message
        fail("a column group starts past the message's end", len(value))
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
    found: Found,
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
        # names are kept only where the value is bytes. A group that runs past the body (a
        # later size makes up for it) may run past the message: the full read alone reads it
        read = None
        if names is not None and size <= body_end - position:
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


class Parts(NamedTuple):
    """What every body needs: the bytes, the headers, the size tables and the terms."""

    value: Buffer
    headers: Headers
    tables: list[list[int]]
    terms: Terms
    found: Found
    names: Names | None
    """Term names by group header (``_fast_groups``); ``None`` unless the value is ``bytes``."""


def row(message: Parts, i: int, start: int, end: int) -> DecodedEvent:
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


def rows(message: Parts, start: int, sizes: Sequence[int]) -> list[DecodedEvent]:
    """The row events of a message of rows only whose value is ``bytes`` (see above)."""
    value = message.value
    headers, terms, names, tables = message.headers, message.terms, message.names, message.tables
    assert names is not None
    commit_ts, partitions = headers.commit_ts, headers.partitions
    schemas, tables_names = headers.schemas, headers.tables
    events: list[DecodedEvent] = []
    append = events.append
    end = start
    last: Header | None = None  # the last UPDATE's header: the next one's most often
    data = cast("bytes", value)  # the caller's promise, as for names
    for i, size in enumerate(sizes):
        start, end = end, end + size
        schema, table = schemas[i], tables_names[i]
        groups = tables[2 + i]
        read: tuple[Operation, _Columns | None, _Columns | None] | None = None
        if schema is None or table is None:
            pass  # row raises
        elif len(groups) == 2:
            first = groups[0]
            middle = start + first
            if first > 0 and groups[1] > 0 and middle + groups[1] == end:
                # the last UPDATE's header reads it at once where both groups have it (its
                # compiled reader checks that), else fast_update finds the header
                pair = None
                if last is not None:
                    pair = last.update(data, start, middle, end, terms, names)
                if pair is not None:
                    read = "update", pair[0], pair[1]
                else:
                    both = fast_update(data, start, middle, end, terms, names)
                    if both is not None:
                        read = "update", both[0], both[1]
                        last = both[2]
        elif len(groups) == 1 and groups[0] == size > 0:
            only = fast_group(data, start, end, terms, names)
            if only is not None:
                read = (
                    ("insert", None, only[1]) if only[0] == NEW_GROUP else ("delete", only[1], None)
                )
        if read is None or schema is None or table is None:
            append(row(message, i, start, end))
            continue
        partition = partitions[i]
        operation, before, after = read
        append(
            decoded_row(
                commit_ts[i],
                schema,
                table,
                operation,
                before,
                after,
                partition if partition >= 0 else None,
            )
        )
    return events
