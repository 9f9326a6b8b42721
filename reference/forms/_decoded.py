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
from ticdc_conformance.reference.forms._change import read_optional_table, read_table, write_table
from ticdc_conformance.reference.forms._common import (
    Json,
    at_line,
    b64,
    ddl_fields,
    fail,
    kind_of,
    object_with,
    read_value,
    typed,
    with_commit_ts,
    write_ddl,
    write_value,
)
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
            "kind": "bootstrap", "commit_ts": event.commit_ts, "schema": event.schema,
            "table": event.table, "table_info": write_table(event.table_info),
        }  # fmt: skip
    out: dict[str, Json] = {"kind": "row"}
    for name in _DECODED_ROW:
        value = getattr(event, name)
        out[name] = _write_columns(value) if name in ("before", "after") else value
    return _with_cluster(out, event)


def _with_cluster(out: dict[str, Json], event: DecodedEvent) -> dict[str, Json]:
    """Add ``cluster_id``, a member only the protocols that carry it (Debezium) write."""
    cluster = getattr(event, "cluster_id", None)
    if cluster is not None:
        out["cluster_id"] = cluster
    return out


def _read_columns(raw: Json, path: str) -> tuple[DecodedColumn, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        fail("expected a list of columns or null", path)
    columns = []
    for i, item in enumerate(raw):
        at = f"{path}/{i}"
        obj = object_with(item, at, set(_DECODED_COLUMN), set())
        columns.append(
            DecodedColumn(
                name=typed(obj, "name", str, at, default=""),
                value=read_value(obj["value"], f"{at}/value"),
                type_code=typed(obj, "type_code", int, at, default=None),
                flags=typed(obj, "flags", int, at, default=None),
                handle_key=typed(obj, "handle_key", bool, at, default=None),
                mysql_type=typed(obj, "mysql_type", str, at, default=None),
                ambiguity=typed(obj, "ambiguity", str, at, default=None),
            )
        )
    return tuple(columns)


def read_decoded_event(raw: Json, *, line: int | None = None) -> DecodedEvent:
    """A decoded event from its JSON form (for comparing an implementation's output)."""
    with at_line(line):
        kind = kind_of(raw)
        if kind == "resolved":
            obj, commit_ts = with_commit_ts(raw, {"kind", "commit_ts"}, {"cluster_id"})
            return DecodedResolved(commit_ts=commit_ts, cluster_id=_cluster(obj))
        if kind == "ddl":
            obj, commit_ts, schema, table, query, ddl_type = ddl_fields(
                raw, set(_DDL_EXTRA), {"cluster_id"}, nullable_ts=True
            )
            return DecodedDDL(
                commit_ts=commit_ts, schema=schema, table=table, query=query, ddl_type=ddl_type,
                ddl_kind=typed(obj, "ddl_kind", str, "", default=None),
                table_info=read_optional_table(obj, "table_info"),
                pre_table_info=read_optional_table(obj, "pre_table_info"),
                cluster_id=_cluster(obj),
            )  # fmt: skip
        if kind == "bootstrap":
            obj, commit_ts = with_commit_ts(raw, {"kind", *_BOOTSTRAP}, set())
            return DecodedBootstrap(
                commit_ts=commit_ts,
                schema=typed(obj, "schema", str, "", default=""),
                table=typed(obj, "table", str, "", default=""),
                table_info=read_table(obj["table_info"], "/table_info"),
            )
        if kind == "row":
            obj, commit_ts = with_commit_ts(
                raw, {"kind", *_DECODED_ROW}, {"cluster_id"}, nullable=True
            )
            return DecodedRow(
                commit_ts=commit_ts,
                schema=typed(obj, "schema", str, "", default=""),
                table=typed(obj, "table", str, "", default=""),
                op=typed(obj, "op", str, "", default=""),  # type: ignore[arg-type]
                before=_read_columns(obj["before"], "/before"),
                after=_read_columns(obj["after"], "/after"),
                partition_id=typed(obj, "partition_id", int, "", default=None),
                table_id=typed(obj, "table_id", int, "", default=None),
                row_id=typed(obj, "row_id", int, "", default=None),
                schema_version=typed(obj, "schema_version", int, "", default=None),
                handle_key_only=typed(obj, "handle_key_only", bool, "", default=False),
                claim_check_location=typed(obj, "claim_check_location", str, "", default=None),
                cluster_id=_cluster(obj),
            )
        raise FormError("kind must be row, ddl, resolved or bootstrap", path="/kind")


def _cluster(obj: dict[str, Json]) -> str | None:
    return typed(obj, "cluster_id", str, "", default=None)


def read_message(raw: Json, *, line: int | None = None) -> Message:
    """A Kafka message from a message line."""
    with at_line(line):
        obj = object_with(raw, "", {"key", "value"}, {"claim_checks"})
        key = None if obj["key"] is None else b64(obj["key"], "/key")
        value = None if obj["value"] is None else b64(obj["value"], "/value")
        checks = obj.get("claim_checks", [])
        if not isinstance(checks, list):
            fail("expected a list", "/claim_checks")
        objects = []
        for i, item in enumerate(checks):
            at = f"/claim_checks/{i}"
            fields = object_with(item, at, {"location", "content"}, set())
            objects.append(
                ClaimCheckObject(
                    location=typed(fields, "location", str, at, default=""),
                    content=b64(fields["content"], f"{at}/content"),
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
