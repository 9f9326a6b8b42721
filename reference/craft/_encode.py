"""Craft encoder: change events → Kafka messages (ground truth §3.2–§3.4).

Rows accumulate in a batch; *after* appending a row, the batch is flushed into one message
when its estimated size exceeds ``max-message-bytes`` or it holds ``max-batch-size`` rows, so
the row that crosses the limit still travels in the batch it made too large (§3.4). DDL and
resolved events close the batch and go out alone. Every message has a nil key.

Where TiCDC's encoder would crash (a nil-pointer dereference or a failed type assertion) the
reference raises ``EncodeError`` instead of inventing bytes: a row without schema or table
name, a column group with no column, a value of the wrong Go type for its column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ticdc_conformance.reference.craft._config import PROTOCOL, Config
from ticdc_conformance.reference.craft._values import Writer, value_writer
from ticdc_conformance.reference.craft.primitives import (
    write_bytes,
    write_bytes_chunk,
    write_delta_uvarint_chunk,
    write_delta_varint_chunk,
    write_nullable_bytes_chunk,
    write_size_tables,
    write_uvarint,
    write_uvarint_chunk,
)
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, RowChangedEvent
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.mysql import INT64
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG, Profile, TableInfo
from ticdc_conformance.reference.validation import check_row
from ticdc_conformance.reference.values import Value

__all__ = ["encode", "estimated_size"]

VERSION = 1
ROW, DDL, RESOLVED = 1, 2, 3
"""Event types in the header (§3.2)."""
NEW_GROUP, OLD_GROUP = 0x01, 0x02
NO_PARTITION = -1
_HEADER_ESTIMATE = 32
"""Per row: "4 64-bit integers" in TiCDC's estimate, plus schema and table bytes (§3.4)."""
_COLUMN_ESTIMATE = 16
"""Per column: "two 64-bit integers", plus name and value bytes (§3.4)."""


@dataclass(frozen=True, slots=True)
class _Header:
    commit_ts: int
    kind: int
    partition: int
    schema: bytes | None
    table: bytes | None


@dataclass(frozen=True, slots=True)
class _Group:
    kind: int
    names: tuple[bytes, ...]
    types_and_flags: bytes
    """The type code and flags chunks, written once per table layout."""
    values: list[bytes | None]
    size: int
    """TiCDC's estimate (§3.4): per column the name, the value and ``_COLUMN_ESTIMATE``."""


class _Terms:
    """The term dictionary: IDs 0, 1, 2, … in first-use order (§3.2)."""

    __slots__ = ("ids",)

    def __init__(self) -> None:
        self.ids: dict[bytes, int] = {}

    def id(self, term: bytes | None) -> int:
        if term is None:
            return -1
        return self.ids.setdefault(term, len(self.ids))


def _utf8(text: str, what: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:
        raise EncodeError(f"{what} {text!r} is not valid Unicode", protocol=PROTOCOL) from None


class _Layout(NamedTuple):
    """What a table's column groups hold under one profile, before any value."""

    flags: Sequence[int]
    chosen: list[int]
    types: tuple[int, ...]
    chosen_flags: tuple[int, ...]
    names: tuple[bytes, ...] | None
    """``None`` when a name is not valid Unicode (``_group`` raises, after the values)."""
    writers: tuple[Writer, ...]
    """Each chosen column's value writer, by its type code."""
    types_and_flags: bytes
    names_estimate: int
    """The names' bytes and ``_COLUMN_ESTIMATE`` per column: the estimate without values."""


_layouts: dict[tuple[int, Profile, bool], tuple[TableInfo, _Layout]] = {}
"""Recent tables' layouts by (id of the table, profile, keys only); a table is kept beside
its layout, so the id is not reused while the entry lives."""


def _layout(table: TableInfo, profile: Profile, keys_only: bool) -> _Layout:
    cached = _layouts.get((id(table), profile, keys_only))
    if cached is not None and cached[0] is table:
        return cached[1]
    flags = table.column_flags(profile)
    chosen = [
        i
        for i, column in enumerate(table.columns)
        if not column.is_virtual and not (keys_only and not flags[i] & HANDLE_KEY_FLAG)
    ]
    try:
        names: tuple[bytes, ...] | None = tuple(table.columns[i].name.encode() for i in chosen)
    except UnicodeEncodeError:
        names = None
    types = tuple(table.columns[i].effective_type_code for i in chosen)
    chosen_flags = tuple(flags[i] for i in chosen)
    types_and_flags = bytearray()
    write_uvarint_chunk(types_and_flags, types)
    write_uvarint_chunk(types_and_flags, chosen_flags)
    layout = _Layout(
        flags,
        chosen,
        types,
        chosen_flags,
        names,
        tuple(value_writer(code) for code in types),
        bytes(types_and_flags),
        sum(map(len, names or ())) + _COLUMN_ESTIMATE * len(chosen),
    )
    if len(_layouts) >= 64:
        _layouts.clear()
    _layouts[id(table), profile, keys_only] = (table, layout)
    return layout


def _group(
    kind: int, event: RowChangedEvent, image: Sequence[Value], config: Config, keys_only: bool
) -> _Group:
    table = event.table
    layout = _layout(table, config.profile, keys_only)
    chosen = layout.chosen
    if not chosen:
        # TiCDC leaves a nil group in the row and crashes encoding it (model.go, §3.2)
        what = "handle-key column" if keys_only else "stored column"
        raise EncodeError(f"the row has no {what} to put in a column group", protocol=PROTOCOL)
    values: list[bytes | None] = []
    append = values.append
    size = layout.names_estimate
    for i, write, flag in zip(chosen, layout.writers, layout.chosen_flags, strict=True):
        value = image[i]
        if value is None:
            append(None)
            continue
        try:
            data = write(value, flag)
        except ValueError as error:
            column = table.columns[i]
            raise EncodeError(f"column {column.name!r}: {error}", protocol=PROTOCOL) from None
        append(data)
        if data is not None:
            size += len(data)
    names = layout.names
    if names is None:
        names = tuple(_utf8(table.columns[i].name, "column name") for i in chosen)
    return _Group(kind, names, layout.types_and_flags, values, size)


@dataclass(frozen=True, slots=True)
class _Row:
    header: _Header
    groups: tuple[_Group, ...]

    def estimated_size(self) -> int:
        header = _HEADER_ESTIMATE + len(self.header.schema or b"") + len(self.header.table or b"")
        return header + sum(g.size for g in self.groups)


def _row(event: RowChangedEvent, config: Config) -> _Row:
    table = event.table
    if not table.schema or not table.name:
        # TiCDC's size estimate dereferences the nil name of an empty schema or table (§3.4)
        raise EncodeError("a row needs schema and table names", protocol=PROTOCOL)
    partition = NO_PARTITION if table.partition_id is None else table.partition_id
    if partition not in INT64:
        raise EncodeError(f"partition id {partition} is not an int64", protocol=PROTOCOL)
    groups = []
    if event.after is not None:
        groups.append(_group(NEW_GROUP, event, event.after, config, keys_only=False))
    if event.before is not None:
        keys_only = event.op == "delete" and config.delete_only_output_handle_key_columns
        groups.append(_group(OLD_GROUP, event, event.before, config, keys_only))
    header = _Header(
        commit_ts=event.commit_ts,
        kind=ROW,
        partition=partition,
        schema=_utf8(table.schema, "schema name"),
        table=_utf8(table.name, "table name"),
    )
    return _Row(header=header, groups=tuple(groups))


def _message(headers: Sequence[_Header], bodies: Sequence[bytes | tuple[_Group, ...]]) -> Message:
    """Lay out one message (§3.2): a body is raw bytes (DDL, resolved) or a row's groups."""
    out = bytearray()
    write_uvarint(out, VERSION)
    terms = _Terms()
    start = len(out)
    write_delta_uvarint_chunk(out, [h.commit_ts for h in headers])
    write_uvarint_chunk(out, [h.kind for h in headers])
    write_delta_varint_chunk(out, [h.partition for h in headers])
    write_delta_varint_chunk(out, [terms.id(h.schema) for h in headers])
    write_delta_varint_chunk(out, [terms.id(h.table) for h in headers])
    header_size = len(out) - start
    body_sizes, group_tables = [], []
    name_ids: dict[tuple[bytes, ...], bytes] = {}
    id_of = terms.id
    for body in bodies:
        start = len(out)
        if isinstance(body, bytes):
            out += body
        else:
            group_sizes = []
            for group in body:
                group_start = len(out)
                out.append(group.kind)
                write_uvarint(out, len(group.names))
                ids = name_ids.get(group.names)
                if ids is None:  # the names' IDs stay the same within the message
                    ids = name_ids[group.names] = _delta_varints([id_of(n) for n in group.names])
                out += ids
                out += group.types_and_flags
                write_nullable_bytes_chunk(out, group.values)
                group_sizes.append(len(out) - group_start)
            group_tables.append(group_sizes)
        body_sizes.append(len(out) - start)
    start = len(out)
    if terms.ids:  # an empty dictionary is omitted entirely
        write_uvarint(out, len(terms.ids))
        write_bytes_chunk(out, list(terms.ids))
    write_size_tables(out, [[header_size, len(out) - start], body_sizes, *group_tables])
    return Message(key=None, value=bytes(out))


def _delta_varints(values: Sequence[int]) -> bytes:
    out = bytearray()
    write_delta_varint_chunk(out, values)
    return bytes(out)


def _rows_message(rows: Sequence[_Row]) -> Message:
    return _message([r.header for r in rows], [r.groups for r in rows])


def _ddl_message(event: DDLEvent) -> Message:
    body = bytearray()
    write_uvarint(body, event.ddl_type)
    write_bytes(body, _utf8(event.query, "query"))
    header = _Header(
        commit_ts=event.commit_ts,
        kind=DDL,
        partition=NO_PARTITION,
        # empty names are written as null (−1), not as the term "" (§3.2)
        schema=_utf8(event.schema, "schema name") or None,
        table=_utf8(event.table, "table name") or None,
    )
    return _message([header], [bytes(body)])


def estimated_size(event: RowChangedEvent, config: Config | None = None) -> int:
    """TiCDC's size estimate of one row, which batching compares with the limit (§3.4)."""
    return _row(event, config or Config()).estimated_size()


@dataclass(slots=True)
class _Batch:
    rows: list[_Row] = field(default_factory=list)
    size: int = 0


def encode(events: Iterable[ChangeEvent], config: Config | None = None) -> list[Message]:
    """Encode change events into Kafka messages exactly as classic TiCDC would."""
    config = config or Config()
    messages: list[Message] = []
    batch = _Batch()
    for index, event in enumerate(events):
        try:
            if isinstance(event, RowChangedEvent):
                check_row(event, PROTOCOL)
                row = _row(event, config)
                batch.rows.append(row)
                batch.size += row.estimated_size()
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
                header = _Header(event.commit_ts, RESOLVED, NO_PARTITION, None, None)
                messages.append(_message([header], [b""]))
        except EncodeError as error:
            raise EncodeError(error.reason, protocol=PROTOCOL, event_index=index) from None
    if batch.rows:
        messages.append(_rows_message(batch.rows))
    return messages
