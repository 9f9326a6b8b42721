"""Open Protocol decoder: one Kafka message → decoded events (ground truth §2.1–§2.6).

Accepts the bytes of either profile and the legacy forms of §7.1: keys without ``f`` in the
columns, several resolved or DDL events in one message, and the empty batch. Everything else
raises ``DecodeError`` naming the part, the byte offset of the entry and, inside JSON, the
JSON Pointer of the member at fault. Being a reference, it is stricter than TiCDC's own
decoder: it rejects unknown members, value entries without a key entry, a resolved event with
value bytes, and a key entry without a value entry (where TiCDC's decoder panics, §2.8 O4).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import NoReturn

from ticdc_conformance.reference._gojson import GoJsonReader
from ticdc_conformance.reference.decoded import (
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.errors import DecodeError, Part
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.open_protocol._columns import (
    PASS_THROUGH,
    READERS,
    read_value,
)
from ticdc_conformance.reference.open_protocol._config import PROTOCOL

__all__ = ["decode", "read_claim_check"]

_VERSION = 1
_KEY_MEMBERS = frozenset({"ts", "scm", "tbl", "rid", "ptn", "t", "ohk", "ccl"})
_ROW_MEMBERS = frozenset({"u", "p", "d"})
_COLUMN_MEMBERS = frozenset({"t", "h", "f", "v"})
_DDL_MEMBERS = frozenset({"q", "t"})
_INT64 = range(-(2**63), 2**63)
_UINT64 = range(2**64)
_ANY_INT = range(-(2**63), 2**64)


_json_decoder = GoJsonReader()


def _pointer(*tokens: str) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


class _Entry:
    """One JSON document inside the frame, with what an error needs to locate itself."""

    __slots__ = ("message_index", "offset", "part")

    def __init__(self, part: Part, offset: int, message_index: int) -> None:
        self.part = part
        self.offset = offset
        self.message_index = message_index

    def fail(self, reason: str, *tokens: str) -> NoReturn:
        """Reject the member at JSON Pointer ``tokens`` (the document itself when none)."""
        self._raise(reason, self.offset, _pointer(*tokens))

    def _raise(self, reason: str, offset: int, path: str | None) -> NoReturn:
        raise DecodeError(
            reason,
            protocol=PROTOCOL,
            part=self.part,
            offset=offset,
            path=path,
            message_index=self.message_index,
        )

    def parse(self, data: bytes) -> object:
        try:
            text = data.decode()
        except UnicodeDecodeError:
            # profile ticdc copies invalid UTF-8 raw (§1.4): keep those bytes as escapes
            text = data.decode("utf-8", "surrogateescape")
        try:
            return _json_decoder.decode(text)
        except json.JSONDecodeError as error:
            at = self.offset + len(text[: error.pos].encode("utf-8", "surrogateescape"))
            self._raise(f"invalid JSON: {error.msg}", at, None)
        except ValueError as error:  # NaN or Infinity, which Python reads and JSON lacks
            self._raise(f"invalid JSON: {error}", self.offset, None)
        except RecursionError:
            self._raise("JSON nested too deeply", self.offset, None)


def _read_entry(data: bytes, position: int, part: Part, message_index: int) -> tuple[bytes, int]:
    if len(data) - position < 8:
        raise DecodeError(
            f"{len(data) - position} bytes left where an 8-byte length belongs",
            protocol=PROTOCOL, part=part, offset=position, message_index=message_index,
        )  # fmt: skip
    size = int.from_bytes(data[position : position + 8], "big")
    start = position + 8
    if size > len(data) - start:
        raise DecodeError(
            f"entry length {size} exceeds the {len(data) - start} bytes left",
            protocol=PROTOCOL, part=part, offset=position, message_index=message_index,
        )  # fmt: skip
    return data[start : start + size], start + size


def _uint(raw: dict[str, object], name: str, entry: _Entry, allowed: range) -> int | None:
    value = raw.get(name)
    if value is None and name not in raw:
        return None
    if type(value) is not int or value not in allowed:
        entry.fail(f"{name} must be an integer in [{allowed.start}, {allowed.stop})", name)
    return value


def _text(raw: dict[str, object], name: str, entry: _Entry) -> str:
    value = raw.get(name, "")
    if type(value) is not str:
        entry.fail(f"{name} must be a string", name)
    return value


def _columns(raw: object, member: str, entry: _Entry) -> tuple[DecodedColumn, ...]:
    if type(raw) is not dict:
        entry.fail("must be an object of columns", member)
    columns = []
    for name, column in raw.items():
        # Fast path for today's shape, {"t","f","v"} or {"t","h":true,"f","v"}; anything
        # else (legacy columns without f, or invalid ones) takes the checking path.
        try:
            type_code, flags, raw_value = column["t"], column["f"], column["v"]
        except (KeyError, TypeError):
            columns.append(_checked_column(name, column, member, entry))
            continue
        size = len(column)
        handle = size == 4 and column.get("h") is True
        if not (
            (size == 3 or handle)
            and type(type_code) is int
            and type(flags) is int
            and type_code in READERS  # the checking path refuses the others
            and flags in _UINT64
        ):
            columns.append(_checked_column(name, column, member, entry))
            continue
        json_type = type(raw_value)
        if raw_value is None or (
            PASS_THROUGH.get(type_code) is json_type
            and (json_type is not int or raw_value in _ANY_INT)
        ):
            value = raw_value
        else:
            try:
                value = read_value(type_code, raw_value, flags)
            except ValueError as error:
                entry.fail(str(error), member, name, "v")
        columns.append(DecodedColumn(name, value, type_code, flags, handle))
    return tuple(columns)


def _checked_column(name: str, column: object, member: str, entry: _Entry) -> DecodedColumn:
    """Decode one column that is not of today's common shape, rejecting what is invalid."""
    if type(column) is not dict:
        entry.fail("a column must be an object", member, name)
    if not column.keys() <= _COLUMN_MEMBERS:
        extra = min(column.keys() - _COLUMN_MEMBERS)
        entry.fail("unknown column member", member, name, extra)
    type_code = column.get("t")
    if type(type_code) is not int or not 0 <= type_code <= 255:
        entry.fail("t must be a type code 0..255", member, name, "t")
    flags = column.get("f")
    if flags is not None and (type(flags) is not int or flags not in _UINT64):
        entry.fail("f must be uint64 flag bits", member, name, "f")
    if "f" in column and flags is None:
        entry.fail("f must be uint64 flag bits", member, name, "f")
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


def _envelope(key: dict[str, object]) -> tuple[int, str, str]:
    """commit_ts, schema and table of a checked key (empty names when omitted)."""
    return key["ts"], key.get("scm", ""), key.get("tbl", "")  # type: ignore[return-value]


def _row(key: dict[str, object], value: object, entry: _Entry) -> DecodedRow:
    if type(value) is not dict:
        entry.fail("row value must be a JSON object")
    if not value.keys() <= _ROW_MEMBERS:
        entry.fail("unknown row member", min(value.keys() - _ROW_MEMBERS))
    op: Operation
    before: tuple[DecodedColumn, ...] | None
    after: tuple[DecodedColumn, ...] | None
    if "d" in value:
        if len(value) > 1:
            entry.fail("d (delete) cannot come with u or p")
        op, before, after = "delete", _columns(value["d"], "d", entry), None
    elif "u" in value:
        op = "update" if "p" in value else "insert"
        after = _columns(value["u"], "u", entry)
        before = _columns(value["p"], "p", entry) if "p" in value else None
    else:
        entry.fail("row value needs u (insert, update) or d (delete)")
    commit_ts, schema, table = _envelope(key)
    location = key.get("ccl")
    return DecodedRow(
        commit_ts=commit_ts,
        schema=schema,
        table=table,
        op=op,
        before=before,
        after=after,
        partition_id=key.get("ptn"),  # type: ignore[arg-type]
        row_id=key.get("rid"),  # type: ignore[arg-type]
        handle_key_only=key.get("ohk") is True,
        claim_check_location=location if isinstance(location, str) else None,
    )


def _ddl(key: dict[str, object], value: object, entry: _Entry) -> DecodedDDL:
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
    commit_ts, schema, table = _envelope(key)
    return DecodedDDL(
        commit_ts=commit_ts, schema=schema, table=table, query=query, ddl_type=ddl_type
    )


def _check_key(raw: object, entry: _Entry) -> dict[str, object]:
    if type(raw) is not dict:
        entry.fail("key must be a JSON object")
    if not raw.keys() <= _KEY_MEMBERS:
        entry.fail("unknown key member", min(raw.keys() - _KEY_MEMBERS))
    if "ts" not in raw:
        entry.fail("key has no ts")
    _uint(raw, "ts", entry, _UINT64)
    _uint(raw, "rid", entry, _INT64)
    _uint(raw, "ptn", entry, _INT64)
    _text(raw, "scm", entry)
    _text(raw, "tbl", entry)
    _text(raw, "ccl", entry)
    if type(raw.get("ohk", False)) is not bool:
        entry.fail("ohk must be a boolean", "ohk")
    if raw.get("t") not in (1, 2, 3) or type(raw.get("t")) is not int:
        entry.fail("t must be 1 (row), 2 (DDL) or 3 (resolved)", "t")
    return raw


_KINDS: dict[int, Callable[[dict[str, object], object, _Entry], DecodedEvent]] = {
    1: _row,
    2: _ddl,
}


def decode(message: Message, *, message_index: int = 0) -> list[DecodedEvent]:
    """Decode one Open Protocol message into its events, in order; raise only ``DecodeError``."""
    key, value = message.key, message.value or b""
    if key is None or len(key) < 8:
        raise DecodeError(
            "key must start with the 8-byte version", protocol=PROTOCOL, part="key", offset=0,
            message_index=message_index,
        )  # fmt: skip
    if (version := int.from_bytes(key[:8], "big")) != _VERSION:
        raise DecodeError(
            f"version {version}, only version 1 exists", protocol=PROTOCOL, part="key",
            offset=0, message_index=message_index,
        )  # fmt: skip
    events: list[DecodedEvent] = []
    key_position, value_position = 8, 0
    while key_position < len(key):
        key_entry = _Entry("key", key_position + 8, message_index)
        key_json, key_position = _read_entry(key, key_position, "key", message_index)
        if value_position >= len(value):
            raise DecodeError(
                f"key entry {len(events)} has no value entry (a resolved event has 8 zero bytes)",
                protocol=PROTOCOL, part="value", offset=value_position, message_index=message_index,
            )  # fmt: skip
        value_entry = _Entry("value", value_position + 8, message_index)
        value_json, value_position = _read_entry(value, value_position, "value", message_index)
        parsed_key = _check_key(key_entry.parse(key_json), key_entry)
        kind = parsed_key["t"]
        if kind == 3:
            if value_json:
                value_entry.fail("a resolved event's value entry must be empty")
            events.append(DecodedResolved(commit_ts=parsed_key["ts"]))  # type: ignore[arg-type]
            continue
        events.append(_KINDS[kind](parsed_key, value_entry.parse(value_json), value_entry))  # type: ignore[index]
    if value_position < len(value):
        raise DecodeError(
            "value has more entries than the key", protocol=PROTOCOL, part="value",
            offset=value_position, message_index=message_index,
        )  # fmt: skip
    return events


def read_claim_check(content: bytes, *, message_index: int = 0) -> Message:
    """The original message from a claim-check file (§1.5), ready for ``decode``."""
    entry = _Entry("value", 0, message_index)
    document = entry.parse(content)
    if type(document) is not dict or document.keys() != {"key", "value"}:
        entry.fail("a claim-check file is an object with key and value")
    parts: dict[str, bytes | None] = {}
    for name in ("key", "value"):
        encoded = document[name]
        if encoded is None:
            parts[name] = None
            continue
        if type(encoded) is not str:
            entry.fail("must be base64 text or null", name)
        try:
            parts[name] = base64.b64decode(encoded, validate=True)
        except binascii.Error as error:
            entry.fail(f"invalid base64: {error}", name)
    return Message(key=parts["key"], value=parts["value"])
