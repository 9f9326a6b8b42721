"""A row change event as the Craft encoder lays it out, before the message (ground truth §3.2).

A row is its header (commit ts, event type, partition, schema and table names) and one or two
column groups: the new image (0x01) then the old one (0x02). A group keeps what does not
depend on the message — its names, the type and flag chunks of its table layout, and its
*tail*: the nullable value lengths chunk and the non-null values — so that the message only
adds the group type, the column count and the name term IDs. TiCDC's size estimate (§3.4)
comes with each group.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ticdc_conformance.reference.craft._config import PROTOCOL, Config
from ticdc_conformance.reference.craft._values import Writer, value_writer
from ticdc_conformance.reference.craft.primitives import write_uvarint_chunk
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.mysql import INT64
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG, Profile, TableInfo
from ticdc_conformance.reference.values import Value

__all__ = [
    "COLUMN_ESTIMATE",
    "DDL",
    "HEADER_ESTIMATE",
    "NEW_GROUP",
    "NO_PARTITION",
    "OLD_GROUP",
    "RESOLVED",
    "ROW",
    "Group",
    "Header",
    "Layout",
    "Row",
    "layout",
    "row",
    "row_layout",
    "tail",
    "utf8",
]

ROW, DDL, RESOLVED = 1, 2, 3
"""Event types in the header (§3.2)."""
NEW_GROUP, OLD_GROUP = 0x01, 0x02
NO_PARTITION = -1
HEADER_ESTIMATE = 32
"""Per row: "4 64-bit integers" in TiCDC's estimate, plus schema and table bytes (§3.4)."""
COLUMN_ESTIMATE = 16
"""Per column: "two 64-bit integers", plus name and value bytes (§3.4)."""


class Header(NamedTuple):
    commit_ts: int
    kind: int
    partition: int
    schema: bytes | None
    table: bytes | None


class Group(NamedTuple):
    kind: int
    names: tuple[bytes, ...]
    types_and_flags: bytes
    """The type code and flags chunks, written once per table layout."""
    tail: bytes
    """The nullable bytes chunk of the values: their varint lengths (−1 for NULL), then the
    non-null values."""
    size: int
    """TiCDC's estimate (§3.4): per column the name, the value and ``COLUMN_ESTIMATE``."""


class Row(NamedTuple):
    header: Header
    groups: tuple[Group, ...]
    size: int
    """TiCDC's estimate of the row (§3.4): ``HEADER_ESTIMATE``, the names and the groups."""
    layout: tuple[object, ...]
    """What fixes the row's share of a message's skeleton (``row_layout``)."""


def row_layout(header: Header, groups: Sequence[Group]) -> tuple[object, ...]:
    """The header but its commit ts, then each group's kind, names and type and flag chunks."""
    return (header[1:], *[group[:3] for group in groups])


def utf8(text: str, what: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:
        raise EncodeError(f"{what} {text!r} is not valid Unicode", protocol=PROTOCOL) from None


def tail(values: Sequence[bytes | None]) -> bytes:
    """The nullable bytes chunk of ``values``: ZigZag lengths, −1 (1) for NULL, then the data."""
    lengths = [1 if value is None else len(value) << 1 for value in values]
    if lengths and max(lengths) < 0x80:  # one byte each: in one go
        out = bytearray(lengths)
    else:
        out = bytearray()
        write_uvarint_chunk(out, lengths)
    out += b"".join([value for value in values if value is not None])
    return bytes(out)


class Layout(NamedTuple):
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
    """The names' bytes and ``COLUMN_ESTIMATE`` per column: the estimate without values."""


_layouts: dict[tuple[int, Profile, bool], tuple[TableInfo, Layout]] = {}
"""Recent tables' layouts by (id of the table, profile, keys only); a table is kept beside
its layout, so the id is not reused while the entry lives."""


def layout(table: TableInfo, profile: Profile, keys_only: bool) -> Layout:
    """The layout of ``table``'s column groups (kept for the tables seen last)."""
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
    made = Layout(
        flags,
        chosen,
        types,
        chosen_flags,
        names,
        tuple(value_writer(code) for code in types),
        bytes(types_and_flags),
        sum(map(len, names or ())) + COLUMN_ESTIMATE * len(chosen),
    )
    if len(_layouts) >= 64:
        _layouts.clear()
    _layouts[id(table), profile, keys_only] = (table, made)
    return made


def _group(
    kind: int, event: RowChangedEvent, image: Sequence[Value], config: Config, keys_only: bool
) -> Group:
    table = event.table
    made = layout(table, config.profile, keys_only)
    chosen = made.chosen
    if not chosen:
        # TiCDC leaves a nil group in the row and crashes encoding it (model.go, §3.2)
        what = "handle-key column" if keys_only else "stored column"
        raise EncodeError(f"the row has no {what} to put in a column group", protocol=PROTOCOL)
    values: list[bytes | None] = []
    append = values.append
    size = made.names_estimate
    for i, write, flag in zip(chosen, made.writers, made.chosen_flags, strict=True):
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
    names = made.names
    if names is None:
        names = tuple(utf8(table.columns[i].name, "column name") for i in chosen)
    return Group(kind, names, made.types_and_flags, tail(values), size)


def row(event: RowChangedEvent, config: Config) -> Row:
    """The row of ``event`` (``EncodeError`` where TiCDC's encoder would crash)."""
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
    header = Header(
        commit_ts=event.commit_ts,
        kind=ROW,
        partition=partition,
        schema=utf8(table.schema, "schema name"),
        table=utf8(table.name, "table name"),
    )
    size = HEADER_ESTIMATE + len(header.schema or b"") + len(header.table or b"")
    return Row(
        header, tuple(groups), size + sum(g.size for g in groups), row_layout(header, groups)
    )
