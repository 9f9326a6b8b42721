"""Open Protocol decoder: one Kafka message → decoded events (ground truth §2.1–§2.6).

Accepts the bytes of either profile and the legacy forms of §7.1: keys without ``f`` in the
columns, several resolved or DDL events in one message, and the empty batch. Everything else
raises ``DecodeError`` naming the part, the byte offset of the entry and, inside JSON, the
JSON Pointer of the member at fault. Being a reference, it is stricter than TiCDC's own
decoder: it rejects unknown members, value entries without a key entry, a resolved event with
value bytes, and a key entry without a value entry (where TiCDC's decoder panics, §2.8 O4).

A message with a row event's key is first tried by its images' plans (``_batch``); that path
gives exactly what the entry-by-entry path below gives, or leaves the message to it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ticdc_conformance.reference.compression import Compression, decompress
from ticdc_conformance.reference.decoded import (
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.errors import DecodeError, Part
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.jsondoc import Json, Wording
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.mysql import UINT64
from ticdc_conformance.reference.open_protocol._batch import decode_rows
from ticdc_conformance.reference.open_protocol._columns import read_value
from ticdc_conformance.reference.open_protocol._config import PROTOCOL
from ticdc_conformance.reference.open_protocol._entry import Entry
from ticdc_conformance.reference.open_protocol._keys import Key, check_key, key_from_text
from ticdc_conformance.reference.open_protocol._plans import Kind, reader_for, remember
from ticdc_conformance.reference.open_protocol._readers import KINDS_SEEN, Invalid, reader
from ticdc_conformance.reference.open_protocol._rows import new_row
from ticdc_conformance.reference.validation import code_check, finding, raise_findings

__all__ = ["Entry", "decode"]

_VERSION = 1
_ROW_MEMBERS = frozenset({"u", "p", "d"})
_COLUMN_MEMBERS = frozenset({"t", "h", "f", "v"})
_DDL_MEMBERS = frozenset({"q", "t"})
_ROW_WORDING = Wording(not_object="row value must be a JSON object", unknown="unknown row member")


_column = partial(tuple.__new__, DecodedColumn)
"""A ``DecodedColumn`` from all its members in order, without ``__new__``'s argument handling."""


Columns = tuple[DecodedColumn, ...] | None


def _read_entry(data: bytes, position: int, part: Part, message_index: int) -> tuple[bytes, int]:
    if len(data) - position < 8:
        raise DecodeError(
            f"{len(data) - position} bytes left where an 8-byte length belongs",
            protocol=PROTOCOL,
            part=part,
            offset=position,
            message_index=message_index,
        )
    size = int.from_bytes(data[position : position + 8], "big")
    start = position + 8
    if size > len(data) - start:
        raise DecodeError(
            f"entry length {size} exceeds the {len(data) - start} bytes left",
            protocol=PROTOCOL,
            part=part,
            offset=position,
            message_index=message_index,
        )
    return data[start : start + size], start + size


def _columns(raw: Json, member: str, entry: Entry) -> tuple[DecodedColumn, ...]:
    if type(raw) is not dict:
        entry.fail("must be an object of columns", member)
    names = tuple(raw)
    read = reader_for(names)
    if read is not None:
        columns = read(raw)
        if columns is not None:
            return columns
    return _column_loop(names, raw, member, entry)


def _column_loop(
    names: tuple[str, ...], raw: dict[str, Json], member: str, entry: Entry
) -> tuple[DecodedColumn, ...]:
    """The columns of image ``raw``, one by one; keeps the image's plan when it has one."""
    columns: list[DecodedColumn] = []
    append = columns.append
    kinds: list[Kind] | None = []
    seen = KINDS_SEEN
    for name, column in raw.items():
        # Fast path for today's shape, {"t","f","v"} or {"t","h":true,"f","v"}, of a kind
        # TiCDC writes; anything else (legacy columns without f, or invalid ones) takes the
        # checking path, and the message is then checked value by value (_findings).
        try:
            type_code, flags, raw_value = column["t"], column["f"], column["v"]  # type: ignore[call-overload, index]
        except (KeyError, TypeError):  # TypeError: not an object
            append(_checked_column(name, column, member, entry))
            kinds = None
            continue
        size = len(column)  # type: ignore[arg-type]
        handle = size == 4 and column.get("h") is True  # type: ignore[union-attr]
        read = (
            seen.get((type_code, flags)) or reader(type_code, flags)
            if (size == 3 or handle) and type(type_code) is int is type(flags)
            else None
        )
        if read is None:
            append(_checked_column(name, column, member, entry))
            kinds = None
            continue
        try:
            value = None if raw_value is None else read(raw_value)
        except ValueError as error:
            entry.fail(str(error), member, name, "v")
        except Invalid as invalid:
            value = invalid.value
            entry.invalid = True
            kinds = None
        if kinds is not None:
            kinds.append((type_code, flags, size, handle, read))  # type: ignore[arg-type]
        append(_column((name, value, type_code, flags, handle, None, None)))
    if kinds:
        remember(names, kinds)
    return tuple(columns)


def _flags(column: dict[str, Json], where: tuple[str, str], entry: Entry) -> int | None:
    if "f" not in column:
        return None
    flags = column["f"]
    if type(flags) is not int or flags not in UINT64:
        entry.fail("f must be uint64 flag bits", *where, "f")
    return flags


def _checked_column(name: str, column: Json, member: str, entry: Entry) -> DecodedColumn:
    """Decode one column that is not of today's common shape, rejecting what is invalid.

    Its value is not checked here: the entry is marked for ``_findings``.
    """
    entry.invalid = True
    if type(column) is not dict:
        entry.fail("a column must be an object", member, name)
    if not column.keys() <= _COLUMN_MEMBERS:
        extra = min(column.keys() - _COLUMN_MEMBERS)
        entry.fail("unknown column member", member, name, extra)
    type_code = column.get("t")
    if type(type_code) is not int or not 0 <= type_code <= 255:
        entry.fail("t must be a type code 0..255", member, name, "t")
    flags = _flags(column, (member, name), entry)
    handle = column.get("h")
    if "h" in column and handle is not True:
        entry.fail("h is only ever present as true", member, name, "h")
    if "v" not in column:
        entry.fail("column has no v", member, name)
    try:
        value = read_value(type_code, column["v"], flags)
    except ValueError as error:
        entry.fail(str(error), member, name, "v")
    return DecodedColumn(
        name=name, value=value, type_code=type_code, flags=flags, handle_key=handle is True
    )


def _images(value: dict[str, Json], entry: Entry) -> tuple[Operation, Columns, Columns]:
    """The operation and the before and after images of a row value."""
    if "d" in value:
        if len(value) > 1:
            entry.fail("d (delete) cannot come with u or p")
        return "delete", _columns(value["d"], "d", entry), None
    if "u" not in value:
        entry.fail("row value needs u (insert, update) or d (delete)")
    after = _columns(value["u"], "u", entry)
    if "p" not in value:
        return "insert", None, after
    return "update", _columns(value["p"], "p", entry), after


def _row(key: Key, data: bytes, entry: Entry) -> DecodedEvent:
    value = entry.members(entry.parse(data), _ROW_MEMBERS, _ROW_WORDING)
    op, before, after = _images(value, entry)
    return new_row(key, op, before, after)


def _ddl(key: Key, data: bytes, entry: Entry) -> DecodedEvent:
    value = entry.parse(data)
    if type(value) is not dict:
        entry.fail("DDL value must be a JSON object")
    if value.keys() != _DDL_MEMBERS:
        entry.fail("DDL value has exactly q and t")
    query, ddl_type = value["q"], value["t"]
    if type(query) is not str:
        entry.fail("q must be a string", "q")
    if type(ddl_type) is not int or not 0 <= ddl_type <= 255:
        # a JSON number, not a string as the seeds say (§2.8 O2)
        entry.fail("t must be an ActionType number 0..255", "t")
    return DecodedDDL(
        commit_ts=key.commit_ts, schema=key.schema, table=key.table, query=query, ddl_type=ddl_type
    )


def _resolved(key: Key, data: bytes, entry: Entry) -> DecodedEvent:
    if data:
        entry.fail("a resolved event's value entry must be empty")
    return DecodedResolved(commit_ts=key.commit_ts)


_RESOLVED = 3
_ROW_KEY = b'"t":1'
"""In the key of a row event: a message whose key lacks it has no row for the fast path."""
_KINDS: dict[int, Callable[[Key, bytes, Entry], DecodedEvent]] = {
    1: _row,
    2: _ddl,
    3: _resolved,
}
"""Key ``t`` → the reader of the value entry: row, DDL, resolved (§2.3)."""


def decode(
    message: Message, *, message_index: int = 0, compression: Compression = "none"
) -> list[DecodedEvent]:
    """Decode one Open Protocol message into its events, in order; raise only ``DecodeError``.

    ``compression`` (the consumer's ``large-message-handle-compression``) decompresses each
    row and DDL value entry; keys, length prefixes and resolved entries are never compressed.
    """
    key, value = message.key, message.value or b""
    if key is None or len(key) < 8:
        raise DecodeError(
            "key must start with the 8-byte version",
            protocol=PROTOCOL,
            part="key",
            offset=0,
            message_index=message_index,
        )
    if (version := int.from_bytes(key[:8], "big")) != _VERSION:
        raise DecodeError(
            f"version {version}, only version 1 exists",
            protocol=PROTOCOL,
            part="key",
            offset=0,
            message_index=message_index,
        )
    if compression == "none" and _ROW_KEY in key:
        # a message of rows read by plans; anything else, the entry-by-entry path
        rows = decode_rows(key, value)
        if rows is not None:
            return rows
    events: list[DecodedEvent] = []
    entries: list[int] = []
    key_position, value_position = 8, 0
    # one Entry per part, moved from entry to entry: the value's marks whether any of its
    # entries may hold an invalid value
    key_entry = Entry("key", 0, message_index)
    value_entry = Entry("value", 0, message_index)
    while key_position < len(key):
        key_entry.offset = key_position + 8
        key_json, key_position = _read_entry(key, key_position, "key", message_index)
        if value_position >= len(value):
            raise DecodeError(
                f"key entry {len(events)} has no value entry (a resolved event has 8 zero bytes)",
                protocol=PROTOCOL,
                part="value",
                offset=value_position,
                message_index=message_index,
            )
        value_entry.offset = value_position + 8
        entries.append(value_position + 8)
        value_json, value_position = _read_entry(value, value_position, "value", message_index)
        parsed_key = key_from_text(key_json) or check_key(key_entry.parse(key_json), key_entry)
        if compression != "none" and parsed_key.kind != _RESOLVED:
            value_json = decompress(
                compression,
                value_json,
                protocol=PROTOCOL,
                part="value",
                offset=value_entry.offset,
                message_index=message_index,
            )
            value_entry.decompressed = True
        else:
            value_entry.decompressed = False
        events.append(_KINDS[parsed_key.kind](parsed_key, value_json, value_entry))
    if value_position < len(value):
        raise DecodeError(
            "value has more entries than the key",
            protocol=PROTOCOL,
            part="value",
            offset=value_position,
            message_index=message_index,
        )
    # a column reader found an invalid value, or a column took the checking path
    if value_entry.invalid:
        raise_findings(_findings(events, entries, message_index), events)
    return events


def _findings(
    events: list[DecodedEvent], entries: list[int], message_index: int
) -> list[DecodeError]:
    """Every value TiCDC cannot have written for its column's type code and flags (§2.5).

    The new architecture copies text that is not UTF-8 raw (§2.5), so such text is valid.
    A column without ``f`` (TiCDC's 2020 batches) is not checked: ``v`` passes through as it
    is, and TiCDC's own test batches of that time hold synthetic values ("aa" in a TINYINT).
    """
    found: list[DecodeError] = []
    for event, offset in zip(events, entries, strict=True):
        if type(event) is not DecodedRow:
            continue
        before = "d" if event.op == "delete" else "p"
        for member, image in ((before, event.before), ("u", event.after)):
            for column in image or ():
                if column.flags is None or column.value is None:
                    continue  # a 2020 column without f (see the docstring), or NULL
                checked = code_check(column.type_code, column.flags)
                if checked is None or checked[1](column.value, checked[0]) is None:
                    continue  # unchecked or valid: no finding to build
                error = finding(
                    column.name,
                    checked[0],
                    column.value,
                    protocol=PROTOCOL,
                    message_index=message_index,
                    offset=offset,
                    path=(member, column.name, "v"),
                )
                if error is not None:
                    found.append(error)
    return found
