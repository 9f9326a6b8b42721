"""The decoded-event form (docs/decoded-events.md) and the message-line form."""

from __future__ import annotations

import base64

from ticdc_conformance.reference.decoded import (
    DecodedBootstrap,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import operation
from ticdc_conformance.reference.forms._change import read_optional_table, read_table, write_table
from ticdc_conformance.reference.forms._common import (
    Json,
    at_line,
    b64,
    ddl_members,
    fail,
    kind_of,
    members,
    read_value,
    write_ddl,
    write_value,
)
from ticdc_conformance.reference.jsondoc import Members, Path
from ticdc_conformance.reference.message import ClaimCheckObject, Message

__all__ = ["read_decoded_event", "read_message", "write_decoded_event", "write_message"]

_DECODED_COLUMN = ("name", "value", "type_code", "flags", "handle_key", "mysql_type", "ambiguity")
_DDL_EXTRA = ("ddl_kind", "table_info", "pre_table_info")
_BOOTSTRAP = ("commit_ts", "schema", "table", "table_info")
_DECODED_ROW = (
    "commit_ts",
    "schema",
    "table",
    "op",
    "before",
    "after",
    "partition_id",
    "table_id",
    "row_id",
    "schema_version",
    "handle_key_only",
    "claim_check_location",
)


def _write_columns(columns: tuple[DecodedColumn, ...] | None) -> Json:
    if columns is None:
        return None
    return [{**column._asdict(), "value": write_value(column.value)} for column in columns]


def write_decoded_event(event: DecodedEvent) -> dict[str, Json]:
    """The JSON form of a decoded event; every member is present, null where not carried."""
    if isinstance(event, DecodedResolved):
        return _with_cluster({"kind": "resolved", "commit_ts": event.commit_ts}, event)
    if isinstance(event, DecodedDDL):
        ddl = write_ddl(event)
        ddl["ddl_kind"] = event.ddl_kind
        for name in ("table_info", "pre_table_info"):
            info = getattr(event, name)
            ddl[name] = None if info is None else write_table(info)
        return _with_cluster(ddl, event)
    if isinstance(event, DecodedBootstrap):
        return {
            "kind": "bootstrap",
            "commit_ts": event.commit_ts,
            "schema": event.schema,
            "table": event.table,
            "table_info": write_table(event.table_info),
        }
    out: dict[str, Json] = {"kind": "row"}
    for name in _DECODED_ROW:
        value = getattr(event, name)
        out[name] = _write_columns(value) if name in ("before", "after") else value
    if event.start_ts is not None:
        out["start_ts"] = event.start_ts
    return _with_cluster(out, event)


def _with_cluster(out: dict[str, Json], event: DecodedEvent) -> dict[str, Json]:
    """Add ``cluster_id``, a member only the protocols that carry it (Debezium) write."""
    cluster = getattr(event, "cluster_id", None)
    if cluster is not None:
        out["cluster_id"] = cluster
    return out


def _read_columns(raw: Json, path: Path) -> tuple[DecodedColumn, ...] | None:
    if raw is None:
        return None
    if type(raw) is not list:
        fail("expected a list of columns or null", path)
    columns = []
    for i, item in enumerate(raw):
        column = members(item, (*path, i), _DECODED_COLUMN, ())
        columns.append(
            DecodedColumn(
                name=column.get("name", str),
                value=read_value(column.obj["value"], column.at("value")),
                type_code=column.optional("type_code", int),
                flags=column.optional("flags", int),
                handle_key=column.optional("handle_key", bool),
                mysql_type=column.optional("mysql_type", str),
                ambiguity=column.optional("ambiguity", str),
            )
        )
    return tuple(columns)


def read_decoded_event(raw: object, *, line: int | None = None) -> DecodedEvent:
    """A decoded event from its JSON form (for comparing an implementation's output)."""
    with at_line(line):
        kind = kind_of(raw)
        if kind == "resolved":
            obj = members(raw, (), ("kind", "commit_ts"), ("cluster_id",))
            return DecodedResolved(commit_ts=obj.get("commit_ts", int), cluster_id=_cluster(obj))
        if kind == "ddl":
            obj = ddl_members(raw, _DDL_EXTRA, ("cluster_id",))
            return DecodedDDL(
                commit_ts=obj.optional("commit_ts", int),
                schema=obj.get("schema", str),
                table=obj.get("table", str),
                query=obj.get("query", str),
                ddl_type=obj.optional("ddl_type", int),
                ddl_kind=obj.optional("ddl_kind", str),
                table_info=read_optional_table(obj, "table_info"),
                pre_table_info=read_optional_table(obj, "pre_table_info"),
                cluster_id=_cluster(obj),
            )
        if kind == "bootstrap":
            obj = members(raw, (), ("kind", *_BOOTSTRAP), ())
            return DecodedBootstrap(
                commit_ts=obj.get("commit_ts", int),
                schema=obj.get("schema", str),
                table=obj.get("table", str),
                table_info=read_table(obj.obj["table_info"], ("table_info",)),
            )
        if kind == "row":
            return _read_row(members(raw, (), ("kind", *_DECODED_ROW), ("start_ts", "cluster_id")))
        raise FormError("kind must be row, ddl, resolved or bootstrap", path=("kind",))


def _read_row(obj: Members) -> DecodedRow:
    return DecodedRow(
        commit_ts=obj.optional("commit_ts", int),
        schema=obj.get("schema", str),
        table=obj.get("table", str),
        op=operation(obj.get("op", str)),
        before=_read_columns(obj.obj["before"], ("before",)),
        after=_read_columns(obj.obj["after"], ("after",)),
        partition_id=obj.optional("partition_id", int),
        table_id=obj.optional("table_id", int),
        row_id=obj.optional("row_id", int),
        schema_version=obj.optional("schema_version", int),
        handle_key_only=obj.get("handle_key_only", bool),
        claim_check_location=obj.optional("claim_check_location", str),
        cluster_id=_cluster(obj),
        start_ts=obj.optional("start_ts", int),
    )


def _cluster(obj: Members) -> str | None:
    return obj.optional("cluster_id", str)


def read_message(raw: object, *, line: int | None = None) -> Message:
    """A Kafka message from a message line."""
    with at_line(line):
        obj = members(raw, (), ("key", "value"), ("claim_checks",))
        raw_key, raw_value = obj.obj["key"], obj.obj["value"]
        key = None if raw_key is None else b64(raw_key, ("key",))
        value = None if raw_value is None else b64(raw_value, ("value",))
        checks = obj.array("claim_checks") if "claim_checks" in obj else []
        objects = []
        for i, item in enumerate(checks):
            fields = members(item, ("claim_checks", i), ("location", "content"), ())
            objects.append(
                ClaimCheckObject(
                    location=fields.get("location", str),
                    content=b64(fields.obj["content"], fields.at("content")),
                )
            )
        return Message(key=key, value=value, claim_checks=tuple(objects))


def write_message(message: Message) -> dict[str, Json]:
    """The message-line form of a Kafka message."""
    out: dict[str, Json] = {
        "key": None if message.key is None else base64.b64encode(message.key).decode("ascii"),
        "value": None if message.value is None else base64.b64encode(message.value).decode("ascii"),
    }
    if message.claim_checks:
        out["claim_checks"] = [
            {"location": c.location, "content": base64.b64encode(c.content).decode("ascii")}
            for c in message.claim_checks
        ]
    return out
