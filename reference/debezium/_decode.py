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
from typing import NoReturn

from ticdc_conformance.reference.compression import Compression, decompress_message
from ticdc_conformance.reference.debezium._config import PROTOCOL
from ticdc_conformance.reference.debezium._ddl_read import read_table_change
from ticdc_conformance.reference.debezium._read import read_column
from ticdc_conformance.reference.debezium._readers import (
    Reader,
    column_reader,
    json_decoder,
    keep_schema,
    known_schema,
    schema_text,
    twice_count,
    whole_value,
)
from ticdc_conformance.reference.decoded import (
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
    decoded_row,
)
from ticdc_conformance.reference.errors import DecodeError, Part
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.jsondoc import Json, JsonObject, Members, Path, Token, Wording
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.mysql import UINT64
from ticdc_conformance.reference.validation import finding, raise_findings

__all__ = ["decode"]

_OPS: dict[str, Operation] = {"c": "insert", "r": "insert", "u": "update", "d": "delete"}
_WORDING = Wording(
    not_object="must be a JSON object",
    missing="missing member {name!r}",
    wrong_kind="must be a {kind}",
    not_list="must be a list",
)


class _Doc:
    """One JSON document (key or value) and what its errors must name."""

    __slots__ = ("found", "message_index", "part", "schema_key")

    def __init__(self, part: Part, message_index: int) -> None:
        self.part: Part = part
        self.message_index = message_index
        self.found: list[DecodeError] = []
        """Invalid values, each a finding (``validation``)."""
        self.schema_key: str | None = None
        """The text of the document's ``schema``, when it can be told (``_readers``)."""

    def fail(self, reason: str, *tokens: Token) -> NoReturn:
        """Reject the member at path ``tokens``."""
        self._raise(reason, tokens, None)

    def fail_at(self, reason: str, path: Path) -> NoReturn:
        """Reject the member at ``path`` (a ``jsondoc.Fail``)."""
        self._raise(reason, path, None)

    def _raise(self, reason: str, path: Path | None, offset: int | None) -> NoReturn:
        raise DecodeError(
            reason,
            protocol=PROTOCOL,
            part=self.part,
            offset=offset,
            path=path,
            message_index=self.message_index,
        )

    def members(self, raw: Json, *tokens: Token) -> Members:
        """``raw`` at ``tokens`` as a JSON object."""
        return Members(raw, tokens, self.fail_at, wording=_WORDING)

    def parse(self, data: bytes) -> tuple[Members, Members | None]:
        """The ``payload`` and the ``schema`` (``None`` when absent) of a document."""
        text = data.decode("utf-8", "surrogateescape")  # jsoniter copies invalid UTF-8 raw
        key = schema_text(text)
        document: Json = None if key is None else known_schema(text, key)
        if document is not None:
            self.schema_key = key
        else:
            document = self._read(text, key)
        if type(document) is not dict:
            self.fail("must be a JSON object")
        if "payload" not in document:
            self.fail("has no payload")
        if not document.keys() <= {"payload", "schema"}:
            self.fail("unknown member", min(document.keys() - {"payload", "schema"}))
        payload = self.members(document["payload"], "payload")
        if "schema" not in document:
            return payload, None
        return payload, self.members(document["schema"], "schema")

    def _read(self, text: str, key: str | None) -> Json:
        """The whole document; its schema kept under ``key`` when that is its text."""
        twice = twice_count()
        try:
            document = json_decoder.decode(text)
        except json.JSONDecodeError as error:
            at = len(text[: error.pos].encode("utf-8", "surrogateescape"))
            self._raise(f"invalid JSON: {error.msg}", None, at)
        except ValueError as error:
            self._raise(f"invalid JSON: {error}", None, 0)
        except RecursionError:
            self._raise("JSON nested too deeply", None, 0)
        if (
            key is not None
            and twice_count() == twice  # (another thread's count only costs the cache a miss)
            and type(document) is dict
            and whole_value(key)
            and keep_schema(key, document.get("schema"))
        ):
            self.schema_key = key
        return document


def _start_ts(payload: Members, doc: _Doc) -> int | None:
    """``source.start_ts`` of a row (``debezium-include-start-ts``, profile ``ticdc``).

    TiCDC writes a transaction's start TSO, a positive uint64; its own decoder falls back to
    ``commit_ts`` when the member is absent.
    """
    source = payload.members("source")
    start_ts = source.optional("start_ts", int)
    if start_ts is not None and not 0 < start_ts < 2**64:
        doc.fail("start_ts must be a positive uint64", *source.at("start_ts"))
    return start_ts


def _source(payload: Members, doc: _Doc) -> tuple[int | None, str, str, str | None]:
    """commit_ts, db, table and cluster_id of ``payload.source``."""
    source = payload.members("source")
    commit_ts = source.optional("commit_ts", int)
    if commit_ts is not None and commit_ts not in UINT64:
        doc.fail("commit_ts must be a uint64", *source.at("commit_ts"))
    db = source.optional("db", str) or ""
    table = source.optional("table", str) or ""
    return commit_ts, db, table, source.optional("cluster_id", str)


def _image_fields(
    schema: Members | None, image: str, doc: _Doc
) -> tuple[dict[str, JsonObject], int] | None:
    """The ``before``/``after`` field schemas by column name, and how many placeholders.

    TiCDC writes a placeholder (no ``field``) for a type it does not support. ``None``: the
    message has no schema.
    """
    if schema is None:
        return None
    for i, raw_entry in enumerate(schema.array("fields")):
        entry = doc.members(raw_entry, "schema", "fields", i)
        if entry.obj.get("field") != image:
            continue
        fields: dict[str, JsonObject] = {}
        placeholders = 0
        for j, raw_column in enumerate(entry.array("fields")):
            if type(raw_column) is dict and _well_formed(raw_column):  # no Members built
                name = raw_column["field"]
                if type(name) is str:  # (it is: for the type checker)
                    fields.setdefault(name, raw_column)
                    continue
            column = doc.members(raw_column, *entry.at("fields"), j)
            if "type" not in column and "field" not in column:
                placeholders += 1  # GEOMETRY, NULL: TiCDC wrote tidb_type at most
                continue
            name = column.get("field", str)
            column.get("type", str)
            column.get("optional", bool)
            column.optional("name", str)
            fields.setdefault(name, column.obj)
        return fields, placeholders
    return doc.fail(f"the schema declares no {image} struct", "schema", "fields")


_Plan = tuple[dict[str, Reader], int]
"""The readers of an image's fields by column name, and how many placeholders."""
_PLANS: dict[tuple[str, str], _Plan] = {}
"""Plans by the text of the schema and the image: a table's messages share their schema."""
_PLACEHOLDER = column_reader({})


def _plan(schema: Members | None, image: str, doc: _Doc) -> _Plan | None:
    """The readers for ``image``'s fields, chosen once per schema text (``None``: no schema)."""
    key = doc.schema_key
    if key is not None:
        plan = _PLANS.get((key, image))
        if plan is not None:
            return plan
    declared = _image_fields(schema, image, doc)
    if declared is None:
        return None
    fields, placeholders = declared
    plan = {name: column_reader(field) for name, field in fields.items()}, placeholders
    if key is not None:  # (a key is set once the text is known to be the schema's)
        if len(_PLANS) >= 256:
            _PLANS.clear()
        _PLANS[key, image] = plan
    return plan


def _well_formed(raw: JsonObject) -> bool:
    """Whether a field schema is one ``_image_fields`` may take as it is (no ``Members``).

    It is when ``field``, ``type``, ``optional`` and (if present) ``name`` are of the right
    kinds; anything else takes the checked path and its errors.
    """
    return (
        type(raw.get("field")) is str
        and type(raw.get("type")) is str
        and type(raw.get("optional")) is bool
        and type(raw.get("name", "")) is str
    )


def _image(
    payload: Members, image: str, schema: Members | None, handle: set[str] | None, doc: _Doc
) -> tuple[DecodedColumn, ...] | None:
    raw = payload.obj.get(image)
    if raw is None:
        return None
    row = raw if type(raw) is dict else doc.members(raw, "payload", image).obj  # (it raises)
    declared = _plan(schema, image, doc)
    if declared is None:  # no schema: every member as the JSON scalar it is
        scalars = []
        for name, value in row.items():
            try:
                scalars.append(
                    read_column(name, value, None, None if handle is None else name in handle)
                )
            except ValueError as error:
                doc.fail(str(error), "payload", image, name)
        return tuple(scalars)
    readers, placeholders = declared
    columns = []
    for name, value in row.items():
        read = readers.get(name)
        if read is None:
            if not placeholders:
                doc.fail("column not declared in the schema", "payload", image, name)
            read, placeholders = _PLACEHOLDER, placeholders - 1
        try:
            column, ctype = read(name, value, None if handle is None else name in handle)
        except ValueError as error:
            doc.fail(str(error), "payload", image, name)
        columns.append(column)
        if ctype is None:
            continue  # valid, or nothing to check: no finding to build
        invalid = finding(
            name,
            ctype,
            column.value,
            protocol=PROTOCOL,
            message_index=doc.message_index,
            path=("payload", image, name),
        )
        if invalid is not None:
            doc.found.append(invalid)
    return tuple(columns)


def _row_source(payload: Members, doc: _Doc) -> tuple[int | None, str, str, str | None, int | None]:
    """``_source`` and ``_start_ts`` of a row: read at once when every member is well formed."""
    source = payload.obj.get("source")
    if type(source) is dict:
        commit_ts, start_ts = source.get("commit_ts"), source.get("start_ts")
        db, table, cluster = source.get("db"), source.get("table"), source.get("cluster_id")
        if (
            (commit_ts is None or (type(commit_ts) is int and 0 <= commit_ts < 2**64))
            and (start_ts is None or (type(start_ts) is int and 0 < start_ts < 2**64))
            and (db is None or type(db) is str)
            and (table is None or type(table) is str)
            and (cluster is None or type(cluster) is str)
        ):
            return commit_ts, db or "", table or "", cluster, start_ts
    commit_ts, db, table, cluster = _source(payload, doc)  # (one of them raises)
    return commit_ts, db, table, cluster, _start_ts(payload, doc)


def _row(
    op: str, payload: Members, schema: Members | None, key: Members | None, doc: _Doc
) -> DecodedRow:
    commit_ts, db, table, cluster, start_ts = _row_source(payload, doc)
    handle = None if key is None else set(key.obj)
    before = _image(payload, "before", schema, handle, doc)
    after = _image(payload, "after", schema, handle, doc)
    operation = _OPS[op]
    # an update without output-old-value has no before image (§5.2)
    expected = {"insert": (False, True), "delete": (True, False), "update": (True, True)}
    if (before is not None, after is not None) not in (
        expected[operation],
        (False, True) if operation == "update" else expected[operation],
    ):
        doc.fail(f"op {op!r} does not match its before/after images", "payload", "op")
    return decoded_row(
        commit_ts=commit_ts,
        schema=db,
        table=table,
        op=operation,
        before=before,
        after=after,
        cluster_id=cluster,
        start_ts=start_ts,
    )


def _ddl(payload: Members, doc: _Doc) -> DecodedDDL:
    commit_ts, _, table, cluster = _source(payload, doc)
    database = payload.optional("databaseName", str) or ""
    query = payload.get("ddl", str)
    kind, table_info = None, None
    for i, raw_change in enumerate(payload.optional_array("tableChanges") or []):
        change = doc.members(raw_change, "payload", "tableChanges", i)
        kind = change.get("type", str)
        change.get("id", str)
        raw_table = change.optional_members("table")
        try:
            table_info = read_table_change(
                None if raw_table is None else raw_table.obj, database, table
            )
        except (ValueError, KeyError, TypeError) as error:
            doc.fail(f"invalid table description: {error}", *change.at("table"))
    return DecodedDDL(
        commit_ts=commit_ts,
        schema=database,
        table=table,
        query=query,
        ddl_kind=kind,
        table_info=table_info,
        cluster_id=cluster,
    )


def decode(
    message: Message, *, message_index: int = 0, compression: Compression = "none"
) -> list[DecodedEvent]:
    """Decode one Debezium message into its event; raise only ``DecodeError``.

    ``compression`` (``large-message-handle-compression``) decompresses key and value first:
    TiCDC's Debezium encoder compresses both (TiCDC has no Debezium consumer of its own).
    """
    message = decompress_message(
        message, compression, protocol=PROTOCOL, message_index=message_index, key=True
    )
    if message.value is None:
        return []  # a tombstone: Debezium's marker for log compaction after a delete
    doc = _Doc("value", message_index)
    payload, schema = doc.parse(message.value)
    key = None
    if message.key is not None:
        key = _Doc("key", message_index).parse(message.key)[0]
    if "op" in payload:
        op = payload.obj["op"]
        if op == "m":
            commit_ts, _, _, cluster = _source(payload, doc)
            if commit_ts is None:
                doc.fail("a WATERMARK needs source.commit_ts", "payload", "source")
            return [DecodedResolved(commit_ts=commit_ts, cluster_id=cluster)]
        if type(op) is not str or op not in _OPS:
            doc.fail("op must be c, r, u, d or m", "payload", "op")
        events: list[DecodedEvent] = [_row(op, payload, schema, key, doc)]
        raise_findings(doc.found, events)
        return events
    if "ddl" in payload:
        return [_ddl(payload, doc)]
    return doc.fail("payload has neither op (row, WATERMARK) nor ddl (DDL)", "payload")
