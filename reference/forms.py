"""The kit's two JSON forms and the message-line form (the public contract).

* Change events (encoder input), documented in docs/change-events.md and described by
  ``schemas/change-event.schema.json``;
* decoded events (decoder output), docs/decoded-events.md and
  ``schemas/decoded-event.schema.json``;
* message lines: ``{"key": base64 | null, "value": base64 | null}`` plus ``claim_checks`` when
  TiCDC stored files next to the message.

Values use JSON where JSON is exact (null, integers of any size, floats, text) and three tagged
objects where it is not: ``{"bytes": base64}``, ``{"decimal": digits}`` and
``{"timestamp": text, "zone": name | null}``. Each ``read_*`` raises ``FormError`` with the
JSON Pointer of the offending member; each ``write_*`` returns plain JSON-ready objects.
"""

from __future__ import annotations

import base64
import binascii
import json
from importlib import resources
from typing import Literal, NoReturn, TypeVar

from ticdc_conformance.reference.decoded import (
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, ResolvedEvent, RowChangedEvent
from ticdc_conformance.reference.message import ClaimCheckObject, Message
from ticdc_conformance.reference.tables import ColumnInfo, IndexInfo, TableInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "json_schema",
    "read_change_event",
    "read_decoded_event",
    "read_message",
    "read_value",
    "write_change_event",
    "write_decoded_event",
    "write_message",
    "write_value",
]

T = TypeVar("T")
Json = object
_FLOAT_TYPES = frozenset({"float", "double"})


def _fail(reason: str, path: str) -> NoReturn:
    raise FormError(reason, path=path)


def _object(raw: Json, path: str, required: set[str], optional: set[str]) -> dict[str, Json]:
    if not isinstance(raw, dict):
        _fail("expected an object", path)
    missing = required - raw.keys()
    if missing:
        _fail(f"missing member {min(missing)!r}", path)
    unknown = raw.keys() - required - optional
    if unknown:
        _fail("unknown member", f"{path}/{min(unknown)}")
    return raw


def _typed(raw: dict[str, Json], name: str, kind: type[T], path: str, *, default: T) -> T:
    value = raw.get(name, default)
    if value is None and default is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        _fail(f"expected {kind.__name__}", f"{path}/{name}")
    return value


def _b64(text: Json, path: str) -> bytes:
    if not isinstance(text, str):
        _fail("expected base64 text", path)
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as error:
        _fail(f"invalid base64: {error}", path)


def read_value(raw: Json, path: str = "") -> Value:
    """A ``Value`` from its JSON form."""
    if raw is None or isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)):
        if isinstance(raw, int) and not -(2**63) <= raw < 2**64:
            _fail("integer outside the int64/uint64 range", path)
        return raw
    if isinstance(raw, float):
        return raw
    if isinstance(raw, dict):
        if raw.keys() == {"bytes"}:
            return _b64(raw["bytes"], f"{path}/bytes")
        try:
            if raw.keys() == {"decimal"} and isinstance(raw["decimal"], str):
                return DecimalValue(raw["decimal"])
            if raw.keys() == {"timestamp", "zone"} and isinstance(raw["timestamp"], str):
                zone = raw["zone"]
                if zone is None or isinstance(zone, str):
                    return TimestampValue(raw["timestamp"], zone)
        except ValueError as error:
            _fail(str(error), path)
    _fail("not a value: use null, a number, text, or a bytes/decimal/timestamp object", path)


def write_value(value: Value) -> Json:
    """The JSON form of a ``Value``."""
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, DecimalValue):
        return {"decimal": value.text}
    if isinstance(value, TimestampValue):
        return {"timestamp": value.text, "zone": value.zone}
    return value


_COLUMN_OPTIONAL = {
    "unsigned", "nullable", "charset", "collation", "length", "decimal", "elements",
    "default", "generated", "key", "type_code", "flags",
}  # fmt: skip


def _read_column(raw: Json, path: str) -> ColumnInfo:
    obj = _object(raw, path, {"name", "type"}, _COLUMN_OPTIONAL)
    elements = obj.get("elements")
    if elements is not None and not (
        isinstance(elements, list) and all(isinstance(e, str) for e in elements)
    ):
        _fail("expected a list of strings", f"{path}/elements")
    try:
        return ColumnInfo(
            name=_typed(obj, "name", str, path, default=""),
            type=_typed(obj, "type", str, path, default=""),
            unsigned=_typed(obj, "unsigned", bool, path, default=False),
            nullable=_typed(obj, "nullable", bool, path, default=None),
            charset=_typed(obj, "charset", str, path, default=None),
            collation=_typed(obj, "collation", str, path, default=None),
            length=_typed(obj, "length", int, path, default=None),
            decimal=_typed(obj, "decimal", int, path, default=None),
            elements=None if elements is None else tuple(elements),
            default=read_value(obj.get("default"), f"{path}/default"),
            generated=_typed(obj, "generated", str, path, default=None),  # type: ignore[arg-type]
            key=_typed(obj, "key", str, path, default=None),  # type: ignore[arg-type]
            type_code=_typed(obj, "type_code", int, path, default=None),
            flags=_typed(obj, "flags", int, path, default=None),
        )
    except ValueError as error:
        _fail(str(error), path)


def _write_column(column: ColumnInfo) -> dict[str, Json]:
    out: dict[str, Json] = {"name": column.name, "type": column.type}
    defaults = ColumnInfo(name="", type="int")
    for name in sorted(_COLUMN_OPTIONAL):
        value = getattr(column, name)
        if value != getattr(defaults, name):
            out[name] = list(value) if isinstance(value, tuple) else write_value(value)
    return out


def _read_table(raw: Json, path: str) -> TableInfo:
    obj = _object(
        raw, path, {"schema", "name", "columns"},
        {"indexes", "table_id", "partition_id", "schema_version"},
    )  # fmt: skip
    columns = obj["columns"]
    if not isinstance(columns, list):
        _fail("expected a list", f"{path}/columns")
    indexes = obj.get("indexes", [])
    if not isinstance(indexes, list):
        _fail("expected a list", f"{path}/indexes")
    index_infos = []
    for i, index in enumerate(indexes):
        at = f"{path}/indexes/{i}"
        fields = _object(index, at, {"name", "columns"}, {"primary", "unique"})
        names = fields["columns"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            _fail("expected a list of column names", f"{at}/columns")
        index_infos.append(
            IndexInfo(
                name=_typed(fields, "name", str, at, default=""),
                columns=tuple(names),
                primary=_typed(fields, "primary", bool, at, default=False),
                unique=_typed(fields, "unique", bool, at, default=False),
            )
        )
    column_infos = tuple(_read_column(c, f"{path}/columns/{i}") for i, c in enumerate(columns))
    try:
        return TableInfo(
            schema=_typed(obj, "schema", str, path, default=""),
            name=_typed(obj, "name", str, path, default=""),
            columns=column_infos,
            indexes=tuple(index_infos),
            table_id=_typed(obj, "table_id", int, path, default=None),
            partition_id=_typed(obj, "partition_id", int, path, default=None),
            schema_version=_typed(obj, "schema_version", int, path, default=None),
        )
    except ValueError as error:
        _fail(str(error), path)


def _write_table(table: TableInfo) -> dict[str, Json]:
    out: dict[str, Json] = {
        "schema": table.schema,
        "name": table.name,
        "columns": [_write_column(c) for c in table.columns],
    }
    if table.indexes:
        out["indexes"] = [
            {"name": i.name, "columns": list(i.columns), "primary": i.primary, "unique": i.unique}
            for i in table.indexes
        ]
    for name in ("table_id", "partition_id", "schema_version"):
        if getattr(table, name) is not None:
            out[name] = getattr(table, name)
    return out


def _read_image(raw: Json, table: TableInfo, path: str) -> tuple[Value, ...]:
    if not isinstance(raw, dict):
        _fail("expected an object of column values", path)
    unknown = [name for name in raw if table.position(name) is None]
    if unknown:
        _fail("no such column in the table", f"{path}/{unknown[0]}")
    image: list[Value] = []
    for column in table.columns:
        if column.name not in raw:
            if column.is_virtual:
                image.append(None)
                continue
            _fail(f"missing column {column.name!r}", path)
        value = read_value(raw[column.name], f"{path}/{column.name}")
        if column.type in _FLOAT_TYPES and isinstance(value, int):
            value = float(value)
        image.append(value)
    return tuple(image)


def _write_image(table: TableInfo, image: tuple[Value, ...]) -> dict[str, Json]:
    return {
        column.name: write_value(value)
        for column, value in zip(table.columns, image, strict=True)
        if not column.is_virtual
    }


def read_change_event(raw: Json, *, line: int | None = None) -> ChangeEvent:
    """A change event from its JSON form."""
    try:
        kind = raw.get("kind") if isinstance(raw, dict) else None
        if kind == "resolved":
            obj = _object(raw, "", {"kind", "commit_ts"}, set())
            return ResolvedEvent(commit_ts=_typed(obj, "commit_ts", int, "", default=0))
        if kind == "ddl":
            obj = _object(
                raw, "", {"kind", "commit_ts", "schema", "table", "query", "ddl_type"}, set()
            )
            return DDLEvent(
                commit_ts=_typed(obj, "commit_ts", int, "", default=0),
                schema=_typed(obj, "schema", str, "", default=""),
                table=_typed(obj, "table", str, "", default=""),
                query=_typed(obj, "query", str, "", default=""),
                ddl_type=_typed(obj, "ddl_type", int, "", default=0),
            )
        if kind == "row":
            obj = _object(
                raw, "", {"kind", "commit_ts", "table", "op"}, {"before", "after", "row_id"}
            )
            table = _read_table(obj["table"], "/table")
            before, after = obj.get("before"), obj.get("after")
            return RowChangedEvent(
                commit_ts=_typed(obj, "commit_ts", int, "", default=0),
                table=table,
                op=_typed(obj, "op", str, "", default=""),  # type: ignore[arg-type]
                before=None if before is None else _read_image(before, table, "/before"),
                after=None if after is None else _read_image(after, table, "/after"),
                row_id=_typed(obj, "row_id", int, "", default=None),
            )
        _fail("kind must be row, ddl or resolved", "/kind")
    except FormError as error:
        raise FormError(error.reason, path=error.path, line=line) from None
    except ValueError as error:
        raise FormError(str(error), path="", line=line) from None


def write_change_event(event: ChangeEvent) -> dict[str, Json]:
    """The JSON form of a change event."""
    if isinstance(event, ResolvedEvent):
        return {"kind": "resolved", "commit_ts": event.commit_ts}
    if isinstance(event, DDLEvent):
        return {
            "kind": "ddl", "commit_ts": event.commit_ts, "schema": event.schema,
            "table": event.table, "query": event.query, "ddl_type": event.ddl_type,
        }  # fmt: skip
    out: dict[str, Json] = {
        "kind": "row", "commit_ts": event.commit_ts, "table": _write_table(event.table),
        "op": event.op,
    }  # fmt: skip
    if event.before is not None:
        out["before"] = _write_image(event.table, event.before)
    if event.after is not None:
        out["after"] = _write_image(event.table, event.after)
    if event.row_id is not None:
        out["row_id"] = event.row_id
    return out


_DECODED_COLUMN = ("name", "value", "type_code", "flags", "handle_key", "mysql_type")
_DECODED_ROW = (
    "commit_ts", "schema", "table", "op", "before", "after", "partition_id", "table_id",
    "row_id", "schema_version", "handle_key_only", "claim_check_location",
)  # fmt: skip


def _write_columns(columns: tuple[DecodedColumn, ...] | None) -> Json:
    if columns is None:
        return None
    return [
        {
            "name": c.name,
            "value": write_value(c.value),
            "type_code": c.type_code,
            "flags": c.flags,
            "handle_key": c.handle_key,
            "mysql_type": c.mysql_type,
        }
        for c in columns
    ]


def write_decoded_event(event: DecodedEvent) -> dict[str, Json]:
    """The JSON form of a decoded event; every member is present, null where not carried."""
    if isinstance(event, DecodedResolved):
        return {"kind": "resolved", "commit_ts": event.commit_ts}
    if isinstance(event, DecodedDDL):
        return {
            "kind": "ddl", "commit_ts": event.commit_ts, "schema": event.schema,
            "table": event.table, "query": event.query, "ddl_type": event.ddl_type,
        }  # fmt: skip
    out: dict[str, Json] = {"kind": "row"}
    for name in _DECODED_ROW:
        value = getattr(event, name)
        out[name] = _write_columns(value) if name in ("before", "after") else value
    return out


def _read_columns(raw: Json, path: str) -> tuple[DecodedColumn, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list):
        _fail("expected a list of columns or null", path)
    columns = []
    for i, item in enumerate(raw):
        at = f"{path}/{i}"
        obj = _object(item, at, set(_DECODED_COLUMN), set())
        columns.append(
            DecodedColumn(
                name=_typed(obj, "name", str, at, default=""),
                value=read_value(obj["value"], f"{at}/value"),
                type_code=_typed(obj, "type_code", int, at, default=None),
                flags=_typed(obj, "flags", int, at, default=None),
                handle_key=_typed(obj, "handle_key", bool, at, default=None),
                mysql_type=_typed(obj, "mysql_type", str, at, default=None),
            )
        )
    return tuple(columns)


def read_decoded_event(raw: Json, *, line: int | None = None) -> DecodedEvent:
    """A decoded event from its JSON form (for comparing an implementation's output)."""
    try:
        kind = raw.get("kind") if isinstance(raw, dict) else None
        if kind == "resolved":
            obj = _object(raw, "", {"kind", "commit_ts"}, set())
            return DecodedResolved(commit_ts=_typed(obj, "commit_ts", int, "", default=0))
        if kind == "ddl":
            obj = _object(
                raw, "", {"kind", "commit_ts", "schema", "table", "query", "ddl_type"}, set()
            )
            return DecodedDDL(
                commit_ts=_typed(obj, "commit_ts", int, "", default=0),
                schema=_typed(obj, "schema", str, "", default=""),
                table=_typed(obj, "table", str, "", default=""),
                query=_typed(obj, "query", str, "", default=""),
                ddl_type=_typed(obj, "ddl_type", int, "", default=None),
            )
        if kind == "row":
            obj = _object(raw, "", {"kind", *_DECODED_ROW}, set())
            return DecodedRow(
                commit_ts=_typed(obj, "commit_ts", int, "", default=0),
                schema=_typed(obj, "schema", str, "", default=""),
                table=_typed(obj, "table", str, "", default=""),
                op=_typed(obj, "op", str, "", default=""),  # type: ignore[arg-type]
                before=_read_columns(obj["before"], "/before"),
                after=_read_columns(obj["after"], "/after"),
                partition_id=_typed(obj, "partition_id", int, "", default=None),
                table_id=_typed(obj, "table_id", int, "", default=None),
                row_id=_typed(obj, "row_id", int, "", default=None),
                schema_version=_typed(obj, "schema_version", int, "", default=None),
                handle_key_only=_typed(obj, "handle_key_only", bool, "", default=False),
                claim_check_location=_typed(obj, "claim_check_location", str, "", default=None),
            )
        _fail("kind must be row, ddl or resolved", "/kind")
    except FormError as error:
        raise FormError(error.reason, path=error.path, line=line) from None


def read_message(raw: Json, *, line: int | None = None) -> Message:
    """A Kafka message from a message line."""
    try:
        obj = _object(raw, "", {"key", "value"}, {"claim_checks"})
        key = None if obj["key"] is None else _b64(obj["key"], "/key")
        value = None if obj["value"] is None else _b64(obj["value"], "/value")
        checks = obj.get("claim_checks", [])
        if not isinstance(checks, list):
            _fail("expected a list", "/claim_checks")
        objects = []
        for i, item in enumerate(checks):
            at = f"/claim_checks/{i}"
            fields = _object(item, at, {"location", "content"}, set())
            objects.append(
                ClaimCheckObject(
                    location=_typed(fields, "location", str, at, default=""),
                    content=_b64(fields["content"], f"{at}/content"),
                )
            )
        return Message(key=key, value=value, claim_checks=tuple(objects))
    except FormError as error:
        raise FormError(error.reason, path=error.path, line=line) from None


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


def json_schema(form: Literal["change-event", "decoded-event"]) -> dict[str, Json]:
    """The JSON Schema (draft 2020-12) shipped for ``form``; the decoded-event schema refers
    to the change-event schema by its ``$id``.
    """
    text = resources.files(__package__).joinpath("schemas", f"{form}.schema.json").read_text()
    schema: dict[str, Json] = json.loads(text)
    return schema
