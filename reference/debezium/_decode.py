"""Debezium decoder: one Kafka message → decoded events (ground truth §5).

Reads both profiles, with or without schema, and messages of Debezium's own MySQL connector
(``op`` ``r`` reads as an insert; a tombstone, a key with a null value, decodes to no event).
The envelope decides the event: ``op`` ``m`` is a WATERMARK, ``c``/``r``/``u``/``d`` a row, a
payload with ``ddl`` a DDL. ``commit_ts`` and ``cluster_id`` come from ``source`` and are
``None`` when the message lacks them (real Debezium). Row values are read by ``_read``; a
payload column the schema does not declare, a value of the wrong JSON type, or a schema or
member of the wrong shape raises ``DecodeError`` with the part and the JSON Pointer.
"""

from __future__ import annotations

import json
from typing import NoReturn, TypeVar

from ticdc_conformance.reference._gojson import GoJsonReader
from ticdc_conformance.reference.debezium._config import PROTOCOL
from ticdc_conformance.reference.debezium._ddl_read import read_table_change
from ticdc_conformance.reference.debezium._read import read_column
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

__all__ = ["decode"]

_OPS: dict[str, Operation] = {"c": "insert", "r": "insert", "u": "update", "d": "delete"}
_UINT64 = range(2**64)
T = TypeVar("T")


def _first_wins(pairs: list[tuple[str, object]]) -> dict[str, object]:
    # classic TiCDC can write a member twice (a binary column's default, see _types); the
    # first one is the value the schema describes
    members: dict[str, object] = {}
    for name, value in pairs:
        members.setdefault(name, value)
    return members


_json_decoder = GoJsonReader(object_pairs_hook=_first_wins)


def _pointer(tokens: tuple[str, ...]) -> str:
    return "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in tokens)


class _Doc:
    """One JSON document (key or value) and what its errors must name."""

    __slots__ = ("message_index", "part")

    def __init__(self, part: Part, message_index: int) -> None:
        self.part: Part = part
        self.message_index = message_index

    def fail(self, reason: str, *tokens: str, offset: int | None = None) -> NoReturn:
        raise DecodeError(
            reason, protocol=PROTOCOL, part=self.part, offset=offset,
            path=None if offset is not None else _pointer(tokens),
            message_index=self.message_index,
        )  # fmt: skip

    def parse(self, data: bytes) -> dict[str, object]:
        text = data.decode("utf-8", "surrogateescape")  # jsoniter copies invalid UTF-8 raw
        try:
            document = _json_decoder.decode(text)
        except json.JSONDecodeError as error:
            at = len(text[: error.pos].encode("utf-8", "surrogateescape"))
            self.fail(f"invalid JSON: {error.msg}", offset=at)
        except ValueError as error:
            self.fail(f"invalid JSON: {error}", offset=0)
        except RecursionError:
            self.fail("JSON nested too deeply", offset=0)
        if type(document) is not dict:
            self.fail("must be a JSON object")
        if "payload" not in document:
            self.fail("has no payload")
        if not document.keys() <= {"payload", "schema"}:
            self.fail("unknown member", min(document.keys() - {"payload", "schema"}))
        self.obj(document["payload"], "payload")
        if "schema" in document:
            self.obj(document["schema"], "schema")
        return document

    def obj(self, raw: object, *tokens: str) -> dict[str, object]:
        """``raw`` when it is a JSON object."""
        if type(raw) is not dict:
            self.fail("must be a JSON object", *tokens)
        return raw

    def need(self, raw: dict[str, object], name: str, kind: type[T], *tokens: str) -> T:
        """Member ``name`` of ``raw`` at ``tokens``, which must be a ``kind``."""
        if name not in raw:
            self.fail(f"missing member {name!r}", *tokens)
        value = raw[name]
        if type(value) is not kind:
            self.fail(f"must be a {kind.__name__}", *tokens, name)
        return value

    def maybe(self, raw: dict[str, object], name: str, kind: type[T], *tokens: str) -> T | None:
        """Member ``name`` of ``raw``, a ``kind`` or null or absent (``None``)."""
        if raw.get(name) is None:
            return None
        return self.need(raw, name, kind, *tokens)


def _source(payload: dict[str, object], doc: _Doc) -> tuple[int | None, str, str, str | None]:
    """commit_ts, db, table and cluster_id of ``payload.source``."""
    source = doc.obj(doc.need(payload, "source", dict, "payload"), "payload", "source")
    at = ("payload", "source")
    commit_ts = doc.maybe(source, "commit_ts", int, *at)
    if commit_ts is not None and commit_ts not in _UINT64:
        doc.fail("commit_ts must be a uint64", *at, "commit_ts")
    db = doc.maybe(source, "db", str, *at) or ""
    table = doc.maybe(source, "table", str, *at) or ""
    cluster = doc.maybe(source, "cluster_id", str, *at)
    return commit_ts, db, table, cluster


def _image_fields(
    document: dict[str, object], image: str, doc: _Doc
) -> tuple[dict[str, dict[str, object]], int] | None:
    """The ``before``/``after`` field schemas by column name, and how many placeholders.

    TiCDC writes a placeholder (no ``field``) for a type it does not support. ``None``: the
    message has no schema.
    """
    if "schema" not in document:
        return None
    schema = doc.obj(document["schema"], "schema")
    envelope = doc.need(schema, "fields", list, "schema")
    for i, raw_entry in enumerate(envelope):
        entry = doc.obj(raw_entry, "schema", "fields", str(i))
        if entry.get("field") != image:
            continue
        columns = doc.need(entry, "fields", list, "schema", "fields", str(i))
        fields: dict[str, dict[str, object]] = {}
        placeholders = 0
        for j, raw_column in enumerate(columns):
            at = ("schema", "fields", str(i), "fields", str(j))
            column = doc.obj(raw_column, *at)
            if "type" not in column and "field" not in column:
                placeholders += 1  # GEOMETRY, NULL: TiCDC wrote tidb_type at most
                continue
            name = doc.need(column, "field", str, *at)
            doc.need(column, "type", str, *at)
            doc.need(column, "optional", bool, *at)
            doc.maybe(column, "name", str, *at)
            fields.setdefault(name, column)
        return fields, placeholders
    return doc.fail(f"the schema declares no {image} struct", "schema", "fields")


def _image(payload: dict[str, object], image: str, document: dict[str, object],
           handle: set[str] | None, doc: _Doc) -> tuple[DecodedColumn, ...] | None:  # fmt: skip
    raw = payload.get(image)
    if raw is None:
        return None
    row = doc.obj(raw, "payload", image)
    declared = _image_fields(document, image, doc)
    columns = []
    for name, value in row.items():
        field: dict[str, object] | None = None
        if declared is not None:
            fields, placeholders = declared
            field = fields.get(name)
            if field is None:
                if not placeholders:
                    doc.fail("column not declared in the schema", "payload", image, name)
                field, declared = {}, (fields, placeholders - 1)
        try:
            columns.append(
                read_column(name, value, field, None if handle is None else name in handle)
            )
        except ValueError as error:
            doc.fail(str(error), "payload", image, name)
    return tuple(columns)


def _row(op: str, document: dict[str, object], key: dict[str, object] | None,
         doc: _Doc) -> DecodedRow:  # fmt: skip
    payload: dict[str, object] = document["payload"]  # type: ignore[assignment]
    commit_ts, db, table, cluster = _source(payload, doc)
    handle = None if key is None else set(key["payload"])  # type: ignore[call-overload]
    before = _image(payload, "before", document, handle, doc)
    after = _image(payload, "after", document, handle, doc)
    operation = _OPS[op]
    # an update without output-old-value has no before image (§5.2)
    expected = {"insert": (False, True), "delete": (True, False), "update": (True, True)}
    if (before is not None, after is not None) not in (
        expected[operation],
        (False, True) if operation == "update" else expected[operation],
    ):
        doc.fail(f"op {op!r} does not match its before/after images", "payload", "op")
    return DecodedRow(
        commit_ts=commit_ts, schema=db, table=table, op=operation, before=before, after=after,
        cluster_id=cluster,
    )  # fmt: skip


def _ddl(document: dict[str, object], doc: _Doc) -> DecodedDDL:
    payload: dict[str, object] = document["payload"]  # type: ignore[assignment]
    commit_ts, _, table, cluster = _source(payload, doc)
    database = doc.maybe(payload, "databaseName", str, "payload") or ""
    query = doc.need(payload, "ddl", str, "payload")
    changes = doc.maybe(payload, "tableChanges", list, "payload") or []
    kind, table_info = None, None
    for i, raw_change in enumerate(changes):
        at = ("payload", "tableChanges", str(i))
        change = doc.obj(raw_change, *at)
        kind = doc.need(change, "type", str, *at)
        doc.need(change, "id", str, *at)
        raw_table = doc.maybe(change, "table", dict, *at)
        try:
            table_info = read_table_change(raw_table, database, table)
        except (ValueError, KeyError, TypeError) as error:
            doc.fail(f"invalid table description: {error}", *at, "table")
    return DecodedDDL(
        commit_ts=commit_ts, schema=database, table=table, query=query, ddl_kind=kind,
        table_info=table_info, cluster_id=cluster,
    )  # fmt: skip


def decode(message: Message, *, message_index: int = 0) -> list[DecodedEvent]:
    """Decode one Debezium message into its event; raise only ``DecodeError``."""
    if message.value is None:
        return []  # a tombstone: Debezium's marker for log compaction after a delete
    doc = _Doc("value", message_index)
    document = doc.parse(message.value)
    key = None
    if message.key is not None:
        key = _Doc("key", message_index).parse(message.key)
    payload: dict[str, object] = document["payload"]  # type: ignore[assignment]
    if "op" in payload:
        op = payload["op"]
        if op == "m":
            commit_ts, _, _, cluster = _source(payload, doc)
            if commit_ts is None:
                doc.fail("a WATERMARK needs source.commit_ts", "payload", "source")
            return [DecodedResolved(commit_ts=commit_ts, cluster_id=cluster)]
        if type(op) is not str or op not in _OPS:
            doc.fail("op must be c, r, u, d or m", "payload", "op")
        return [_row(op, document, key, doc)]
    if "ddl" in payload:
        return [_ddl(document, doc)]
    return doc.fail("payload has neither op (row, WATERMARK) nor ddl (DDL)", "payload")
