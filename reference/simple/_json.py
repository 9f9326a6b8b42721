"""Simple-JSON: the message envelope as Go ``encoding/json`` writes TiCDC's struct (§4.2).

Member order is fixed: ``version, database, table, tableID, type, sql, commitTs, buildTs,
schemaVersion, claimCheckLocation, handleKeyOnly, checksum, data, old, tableSchema,
preTableSchema``; every member but ``version``, ``type``, ``commitTs`` and ``buildTs`` is
omitted when empty, zero or false. ``data``/``old`` keys are sorted by name (a Go map), so an
empty map disappears too. Strings are HTML-escaped and invalid UTF-8 becomes U+FFFD (§1.4).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, cast

from ticdc_conformance.reference._gojson import GoJsonReader, JsonStyle, quote, to_bytes
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.events import DDLEvent, RowChangedEvent
from ticdc_conformance.reference.jsondoc import Fail, Json, JsonObject
from ticdc_conformance.reference.mysql import INT64, UINT64
from ticdc_conformance.reference.simple._checksum import Checksum
from ticdc_conformance.reference.simple._schema import (
    DDL_KINDS,
    read_table_schema,
    table_schema_json,
)
from ticdc_conformance.reference.simple._values import Raw, write_json_value
from ticdc_conformance.reference.simple._wire import VERSION, Columns, Wire, failer, read_columns
from ticdc_conformance.reference.tables import Profile, TableInfo
from ticdc_conformance.reference.values import TimestampValue, Value

__all__ = [
    "DML_MEMBERS",
    "IMAGES",
    "bootstrap",
    "ddl",
    "dml",
    "document",
    "parse",
    "read",
    "read_checksum",
    "timestamp_object",
    "watermark",
]

PROTOCOL = "simple-json"
_DML_TYPES = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}
_COMMON = frozenset({"version", "type", "commitTs", "buildTs"})
DML_MEMBERS = _COMMON | {
    "database",
    "table",
    "tableID",
    "schemaVersion",
    "claimCheckLocation",
    "handleKeyOnly",
    "checksum",
    "data",
    "old",
}
"""Every member a DML may have (§4.2)."""
_MEMBERS = {
    "WATERMARK": _COMMON,
    "BOOTSTRAP": _COMMON | {"tableSchema"},
    "DDL": _COMMON | {"sql", "tableSchema", "preTableSchema"},
    "DML": DML_MEMBERS,
}
_CHECKSUM = frozenset({"version", "corrupted", "current", "previous"})
IMAGES = {"INSERT": ("data",), "UPDATE": ("data", "old"), "DELETE": ("old",)}
"""A DML type → the images it may carry."""
_UINT32 = range(2**32)


def _q(text: str) -> str:
    return quote(text, JsonStyle.GO_STD)


def watermark(commit_ts: int, build_ts: int) -> bytes:
    """A WATERMARK message (§4.2)."""
    return to_bytes(
        f'{{"version":{VERSION},"type":"WATERMARK","commitTs":{commit_ts},"buildTs":{build_ts}}}'
    )


def bootstrap(table: TableInfo, build_ts: int, profile: Profile) -> bytes:
    """A BOOTSTRAP message: commitTs is always 0 (§4.9)."""
    return to_bytes(
        f'{{"version":{VERSION},"type":"BOOTSTRAP","commitTs":0,"buildTs":{build_ts},'
        f'"tableSchema":{table_schema_json(table, profile)}}}'
    )


def ddl(event: DDLEvent, kind: str, build_ts: int, profile: Profile) -> bytes:
    """A DDL message: no database or table members, schemas only when TiCDC has them."""
    members = [f'"version":{VERSION}', f'"type":"{kind}"']
    if event.query:
        members.append(f'"sql":{_q(event.query)}')
    members += [f'"commitTs":{event.commit_ts}', f'"buildTs":{build_ts}']
    if event.table_info is not None:
        members.append(f'"tableSchema":{table_schema_json(event.table_info, profile)}')
    if event.pre_table_info is not None:
        members.append(f'"preTableSchema":{table_schema_json(event.pre_table_info, profile)}')
    return to_bytes("{" + ",".join(members) + "}")


def _columns(
    event: RowChangedEvent, image: Sequence[Value], positions: Sequence[int], zone: str
) -> str | None:
    columns = event.table.columns
    parts = [
        f"{_q(columns[i].name)}:{write_json_value(columns[i], image[i], zone)}"
        for i in sorted(positions, key=lambda i: columns[i].name)
    ]
    return "{" + ",".join(parts) + "}" if parts else None  # an empty map is omitted


def dml(
    event: RowChangedEvent,
    positions: Sequence[int],
    *,
    build_ts: int,
    zone: str,
    handle_key_only: bool,
    location: str | None,
    checksum: Checksum | None,
) -> bytes:
    """A DML message with the columns at ``positions`` (§4.2); ``ValueError`` on bad values."""
    table = event.table
    members = [f'"version":{VERSION}']
    if table.schema:
        members.append(f'"database":{_q(table.schema)}')
    if table.name:
        members.append(f'"table":{_q(table.name)}')
    table_id = table.partition_id if table.partition_id is not None else table.table_id
    if table_id:
        members.append(f'"tableID":{table_id}')
    members += [
        f'"type":"{_DML_TYPES[event.op]}"',
        f'"commitTs":{event.commit_ts}',
        f'"buildTs":{build_ts}',
    ]
    if table.schema_version:
        members.append(f'"schemaVersion":{table.schema_version}')
    if location:
        members.append(f'"claimCheckLocation":{_q(location)}')
    if handle_key_only:
        members.append('"handleKeyOnly":true')
    if checksum is not None:
        members.append(
            f'"checksum":{{"version":{checksum.version},'
            f'"corrupted":{"true" if checksum.corrupted else "false"},'
            f'"current":{checksum.current},"previous":{checksum.previous}}}'
        )
    for name, image in (("data", event.after), ("old", event.before)):
        if image is not None and (text := _columns(event, image, positions, zone)):
            members.append(f'"{name}":{text}')
    return to_bytes("{" + ",".join(members) + "}")


_decoder = GoJsonReader()


def _integer(raw: JsonObject, name: str, allowed: range, fail: Fail) -> int:
    value = raw.get(name, 0)
    if type(value) is not int or value not in allowed:
        fail(f"{name} must be an integer in [{allowed.start}, {allowed.stop})", (name,))
    return value


def _text(raw: JsonObject, name: str, fail: Fail) -> str:
    value = raw.get(name, "")
    if type(value) is not str:
        fail(f"{name} must be a string", (name,))
    return value


_PLAIN = frozenset({str, type(None)})
"""The raw value types a ``data``/``old`` map is read as it is with (every one but TIMESTAMP)."""


def _raw_columns(raw: Json, member: str, fail: Fail) -> Columns:
    if type(raw) is not dict:
        fail("must be an object of columns", (member,))
    return read_columns(raw, _PLAIN, lambda name, value: _raw_value(value, member, name, fail))  # type: ignore[arg-type]


def timestamp_object(value: JsonObject) -> TimestampValue:
    """A TIMESTAMP ``{location, value}`` object's value; ``ValueError`` if it is not one."""
    if value.keys() != _TIMESTAMP_MEMBERS:
        raise ValueError("not a {location, value} object")
    location, text = value["location"], value["value"]
    if type(location) is not str or type(text) is not str:
        raise ValueError("location and value must be strings")
    return TimestampValue(text, location)


_TIMESTAMP_MEMBERS = frozenset({"location", "value"})


def _raw_value(value: Json, member: str, name: str, fail: Fail) -> Raw:
    if value is None or type(value) is str:
        return value
    if type(value) is not dict or value.keys() != _TIMESTAMP_MEMBERS:
        fail("a value is a string, null or a {location, value} object", (member, name))
    location, text = value["location"], value["value"]
    if type(location) is not str or type(text) is not str:
        fail("location and value must be strings", (member, name))
    try:
        return TimestampValue(text, location)
    except ValueError as error:
        fail(str(error), (member, name, "value"))


def read_checksum(raw: Json, fail: Fail) -> Checksum:
    """A DML's ``checksum`` object (§4.2); ``fail`` when it is not one."""
    if type(raw) is not dict or raw.keys() != _CHECKSUM:
        fail("checksum has version, corrupted, current and previous", ("checksum",))
    corrupted = raw["corrupted"]
    if type(corrupted) is not bool:
        fail("must be a boolean", ("checksum", "corrupted"))
    numbers = []
    for name, allowed in (("version", INT64), ("current", _UINT32), ("previous", _UINT32)):
        number = raw[name]
        if type(number) is not int or number not in allowed:
            fail("out of range", ("checksum", name))
        numbers.append(number)
    version, current, previous = numbers
    return Checksum(version=version, corrupted=corrupted, current=current, previous=previous)


class _Envelope(NamedTuple):
    """The members every message has, checked."""

    raw: JsonObject
    type: str
    commit_ts: int
    build_ts: int
    lazy: bool
    """``parse``'s ``lazy``: DML images may stay as parsed, their values unchecked."""


def _schemas(raw: JsonObject, fail: Fail) -> dict[str, TableInfo]:
    return {
        name: read_table_schema(raw[name], (name,), fail, avro=False)
        for name in ("tableSchema", "preTableSchema")
        if name in raw
    }


def _watermark(envelope: _Envelope, fail: Fail) -> Wire:
    del fail
    return Wire(
        kind="WATERMARK", type="WATERMARK", commit_ts=envelope.commit_ts, build_ts=envelope.build_ts
    )


def _bootstrap(envelope: _Envelope, fail: Fail) -> Wire:
    schemas = _schemas(envelope.raw, fail)
    if "tableSchema" not in schemas:
        fail("a BOOTSTRAP has a tableSchema", ())
    return Wire(
        kind="BOOTSTRAP",
        type="BOOTSTRAP",
        commit_ts=envelope.commit_ts,
        build_ts=envelope.build_ts,
        table_schema=schemas["tableSchema"],
    )


def _ddl(envelope: _Envelope, fail: Fail) -> Wire:
    schemas = _schemas(envelope.raw, fail)
    return Wire(
        kind="DDL",
        type=envelope.type,
        commit_ts=envelope.commit_ts,
        build_ts=envelope.build_ts,
        sql=_text(envelope.raw, "sql", fail),
        table_schema=schemas.get("tableSchema"),
        pre_table_schema=schemas.get("preTableSchema"),
    )


def _dml(envelope: _Envelope, fail: Fail) -> Wire:
    raw = envelope.raw
    get = raw.get
    database, table = get("database", ""), get("table", "")
    location = get("claimCheckLocation", "")
    if type(database) is not str:
        database = _text(raw, "database", fail)
    if type(table) is not str:
        table = _text(raw, "table", fail)
    if type(location) is not str:
        location = _text(raw, "claimCheckLocation", fail)
    handle_key_only = get("handleKeyOnly", False)
    if type(handle_key_only) is not bool:
        fail("handleKeyOnly must be a boolean", ("handleKeyOnly",))
    data_object, old_object = get("data"), get("old")
    unchecked = (
        envelope.lazy
        and (type(data_object) is dict or "data" not in raw)
        and (type(old_object) is dict or "old" not in raw)
    )
    if unchecked:  # the objects as parsed: the typing reader checks their values
        data, old = cast("Columns | None", data_object), cast("Columns | None", old_object)
    else:
        data = None if "data" not in raw else _raw_columns(data_object, "data", fail)
        old = None if "old" not in raw else _raw_columns(old_object, "old", fail)
    images = IMAGES[envelope.type]
    if (data is not None and "data" not in images) or (old is not None and "old" not in images):
        extra = "data" if data is not None and "data" not in images else "old"
        fail(f"an {envelope.type} has no {extra}", (extra,))
    table_id, schema_version = get("tableID", 0), get("schemaVersion", 0)
    if type(table_id) is not int or table_id not in INT64:
        table_id = _integer(raw, "tableID", INT64, fail)
    if type(schema_version) is not int or schema_version not in UINT64:
        schema_version = _integer(raw, "schemaVersion", UINT64, fail)
    return Wire(
        "DML",
        envelope.type,
        envelope.commit_ts,
        envelope.build_ts,
        database=database,
        table=table,
        table_id=table_id,
        schema_version=schema_version,
        claim_check_location=location or None,
        handle_key_only=handle_key_only,
        checksum=read_checksum(raw["checksum"], fail) if "checksum" in raw else None,
        data=data,
        old=old,
        unchecked=unchecked,
    )


_KINDS: dict[str, Callable[[_Envelope, Fail], Wire]] = {
    "WATERMARK": _watermark,
    "BOOTSTRAP": _bootstrap,
    "DDL": _ddl,
    "DML": _dml,
}
"""Message kind → the reader of its own members (§4.2)."""


_KIND_OF = {
    **dict.fromkeys(IMAGES, "DML"),
    **dict.fromkeys(DDL_KINDS, "DDL"),
    "WATERMARK": "WATERMARK",
    "BOOTSTRAP": "BOOTSTRAP",
}
"""The JSON ``type`` → the message kind."""


def document(value: bytes, message_index: int) -> Json:
    """The JSON document of a message value, read as Go wrote it; ``DecodeError`` if none."""
    try:
        return _decoder.decode_bytes(value)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise DecodeError(
            f"not JSON: {error}",
            protocol=PROTOCOL,
            part="value",
            offset=0,
            message_index=message_index,
        ) from None


def parse(value: bytes, message_index: int, *, lazy: bool = False) -> Wire:
    """The members of a Simple-JSON message value; ``DecodeError`` when it is not one.

    ``lazy``: a DML's ``data`` and ``old`` objects are kept as parsed, their values unchecked
    (``Wire.unchecked``), for a reader that checks them as it types them. A lazy read refuses
    only messages a full read refuses, though maybe for a later member: read again in full
    for its error.
    """
    return read(document(value, message_index), message_index, lazy=lazy)


def read(raw: Json, message_index: int, *, lazy: bool = False) -> Wire:
    """The members of a message's JSON document as read (``parse``)."""
    fail = failer(PROTOCOL, message_index)
    if type(raw) is not dict:
        fail("a message is a JSON object", ())
    message_type = raw.get("type")
    # an object or array is no kind (and not hashable)
    kind = _KIND_OF.get(message_type, "") if type(message_type) is str else ""
    if not kind or type(message_type) is not str:
        fail("unknown message type", ("type",))
    keys = raw.keys()
    if not keys <= _MEMBERS[kind]:
        fail(f"a {message_type} message has no such member", (min(keys - _MEMBERS[kind]),))
    if not keys >= _COMMON:
        fail(f"missing member {min(_COMMON - keys)}", ())
    if raw["version"] != VERSION or type(raw["version"]) is not int:
        fail("version must be 1", ("version",))
    commit_ts, build_ts = raw["commitTs"], raw["buildTs"]
    if type(commit_ts) is not int or commit_ts not in UINT64:
        commit_ts = _integer(raw, "commitTs", UINT64, fail)
    if type(build_ts) is not int or build_ts not in INT64:
        build_ts = _integer(raw, "buildTs", INT64, fail)
    return _KINDS[kind](_Envelope(raw, message_type, commit_ts, build_ts, lazy), fail)
