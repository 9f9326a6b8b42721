"""Simple-Avro: fastavro with the project's schema file, equivalent to TiCDC's (§4.8).

``reference/schemas/simple-message.avsc`` is a JSON array of 12 named records, so the
schema is a top-level union: DataType 0, ColumnSchema 1, IndexSchema 2, TableSchema 3,
Checksum 4, Watermark 5, Bootstrap 6, DDL 7, Timestamp 8, UnsignedBigint 9, DML 10,
Message 11. Every message is written as branch 11: the value starts with the zigzag byte
``0x16``, with no Confluent magic byte or schema id. Then the Message record: ``type``
(WATERMARK 0, BOOTSTRAP 1, DDL 2, DML 3) and the ``payload`` union in the same order.

uint64 members (``commitTs``, ``schemaVersion``, TableSchema ``version``) are written as Go
writes ``int64(v)``; the reader undoes the wrap. Go strings are bytes, so text that is not
valid UTF-8 goes into Avro strings raw, and the reader keeps such bytes. TiCDC writes map
entries in Go's random map order; the reference writes them sorted by column name.
``handleKeyOnly`` and ``claimCheckLocation`` are written only when large-message handling is
on (§4.7); an INSERT's ``data`` is an empty map rather than absent.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from functools import cache
from importlib import resources
from typing import Any

import fastavro

from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.events import DDLEvent, RowChangedEvent
from ticdc_conformance.reference.jsondoc import Fail, Path
from ticdc_conformance.reference.mysql import wrap_int64
from ticdc_conformance.reference.simple._checksum import Checksum
from ticdc_conformance.reference.simple._schema import read_table_schema, table_schema_avro
from ticdc_conformance.reference.simple._text import avro_text
from ticdc_conformance.reference.simple._values import (
    TIMESTAMP_RECORD,
    UNSIGNED_RECORD,
    Raw,
    Unsigned,
    write_avro_value,
)
from ticdc_conformance.reference.simple._wire import VERSION, Columns, Wire, failer, read_columns
from ticdc_conformance.reference.tables import Profile, TableInfo
from ticdc_conformance.reference.values import TimestampValue, Value

__all__ = ["SCHEMA_FILE", "bootstrap", "ddl", "dml", "parse", "schema", "watermark"]

PROTOCOL = "simple-avro"
SCHEMA_FILE = "simple-message.avsc"
_NS = "com.pingcap.simple.avro."
_PAYLOADS = {"WATERMARK": "Watermark", "BOOTSTRAP": "Bootstrap", "DDL": "DDL", "DML": "DML"}
_DML_TYPES = {"insert": "INSERT", "update": "UPDATE", "delete": "DELETE"}


def schema_text() -> str:
    """The project's Avro schema file, shipped with the package."""
    # anchored on a regular package: the data folder is no package zipimport can find
    files = resources.files("ticdc_conformance.reference").joinpath("schemas")
    return files.joinpath(SCHEMA_FILE).read_text(encoding="utf-8")


@cache
def schema() -> Any:  # noqa: ANN401 - fastavro's parsed schema
    """The parsed schema (parsed once)."""
    return fastavro.parse_schema(json.loads(schema_text()))


def _write(kind: str, payload: dict[str, object]) -> bytes:
    out = io.BytesIO()
    message = {"type": kind, "payload": (_NS + _PAYLOADS[kind], payload)}
    fastavro.schemaless_writer(out, schema(), (_NS + "Message", message))
    return out.getvalue()


def watermark(commit_ts: int, build_ts: int) -> bytes:
    """A WATERMARK message."""
    return _write(
        "WATERMARK", {"version": VERSION, "commitTs": wrap_int64(commit_ts), "buildTs": build_ts}
    )


def bootstrap(table: TableInfo, build_ts: int, profile: Profile) -> bytes:
    """A BOOTSTRAP message (no commitTs member in Avro)."""
    return _write(
        "BOOTSTRAP",
        {"version": VERSION, "buildTs": build_ts, "tableSchema": table_schema_avro(table, profile)},
    )


def ddl(event: DDLEvent, kind: str, build_ts: int, profile: Profile) -> bytes:
    """A DDL message."""
    schemas = {
        name: None if info is None else (_NS + "TableSchema", table_schema_avro(info, profile))
        for name, info in (
            ("tableSchema", event.table_info),
            ("preTableSchema", event.pre_table_info),
        )
    }
    return _write(
        "DDL",
        {
            "version": VERSION,
            "type": kind,
            "sql": avro_text(event.query),
            "commitTs": wrap_int64(event.commit_ts),
            "buildTs": build_ts,
            **schemas,
        },
    )


def _columns(
    event: RowChangedEvent,
    image: Sequence[Value],
    positions: Sequence[int],
    zone: str,
    profile: Profile,
) -> dict[str, tuple[str, object]]:
    columns = event.table.columns
    return {
        avro_text(columns[i].name): write_avro_value(columns[i], image[i], zone, profile)
        for i in sorted(positions, key=lambda i: columns[i].name)
    }


def dml(
    event: RowChangedEvent,
    positions: Sequence[int],
    *,
    build_ts: int,
    zone: str,
    profile: Profile,
    large_message_handling: bool,
    handle_key_only: bool,
    location: str | None,
    checksum: Checksum | None,
) -> bytes:
    """A DML message with the columns at ``positions``; ``ValueError`` on bad values."""
    table = event.table
    table_id = table.partition_id if table.partition_id is not None else table.table_id
    record: dict[str, object] = {
        "version": VERSION,
        "database": avro_text(table.schema),
        "table": avro_text(table.name),
        "tableID": table_id or 0,
        "type": _DML_TYPES[event.op],
        "commitTs": wrap_int64(event.commit_ts),
        "buildTs": build_ts,
        "schemaVersion": wrap_int64(table.schema_version or 0),
        "handleKeyOnly": True if large_message_handling and handle_key_only else None,
        "claimCheckLocation": avro_text(location) if location else None,
        "checksum": None
        if checksum is None
        else (
            _NS + "Checksum",
            {
                "version": checksum.version,
                "corrupted": checksum.corrupted,
                "current": checksum.current,
                "previous": checksum.previous,
            },
        ),
        "data": None
        if event.after is None
        else _columns(event, event.after, positions, zone, profile),
        "old": None
        if event.before is None
        else _columns(event, event.before, positions, zone, profile),
    }
    return _write("DML", record)


def _unwrap(raw: object, record: str, path: Path, fail: Fail) -> Any:  # noqa: ANN401 - fastavro's decoded value, any Avro type
    if not (isinstance(raw, tuple) and raw[0] == _NS + record):
        fail(f"expected a {record} record", path)
    return raw[1]


def _raw_value(raw: object, path: Path, fail: Fail) -> Raw:
    if isinstance(raw, tuple):
        name, fields = raw
        if name == TIMESTAMP_RECORD:
            try:
                return TimestampValue(fields["value"], fields["location"])
            except ValueError as error:
                fail(str(error), (*path, "value"))
        if name == UNSIGNED_RECORD:
            return Unsigned(fields["value"] % 2**64)
        fail("not a value record", path)
    if not (raw is None or isinstance(raw, int | float | str | bytes)):
        fail("not a value", path)
    return raw  # the union's null, long, float, double, string and bytes, as read


_PLAIN = frozenset({type(None), int, float, str, bytes})
"""The map value union's branches that are read as they are (all but the two records)."""


def _raw_columns(raw: object, path: Path, fail: Fail) -> Columns | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        fail("expected a map", path)
    return read_columns(raw, _PLAIN, lambda name, value: _raw_value(value, (*path, name), fail))


def _read(value: bytes, message_index: int) -> Any:  # noqa: ANN401 - fastavro's decoded record
    stream = io.BytesIO(value)
    parsed = schema()  # outside the try: a schema that cannot load is no fault of the message
    try:
        result = fastavro.schemaless_reader(
            stream,
            parsed,
            None,
            return_record_name=True,
            handle_unicode_errors="surrogateescape",
        )
    except Exception as error:  # noqa: BLE001 - fastavro raises many kinds on bad bytes
        reason = f"not a Simple Avro message: {type(error).__name__}: {error}"
        raise DecodeError(
            reason,
            protocol=PROTOCOL,
            part="value",
            offset=min(stream.tell(), len(value)),
            message_index=message_index,
        ) from None
    if stream.tell() != len(value):
        raise DecodeError(
            f"{len(value) - stream.tell()} bytes after the message",
            protocol=PROTOCOL,
            part="value",
            offset=stream.tell(),
            message_index=message_index,
        )
    return result


def _table_schema(payload: dict[str, Any], name: str, fail: Fail) -> TableInfo:
    path = ("payload", name)
    return read_table_schema(
        _unwrap(payload[name], "TableSchema", path, fail), path, fail, avro=True
    )


def _watermark(payload: dict[str, Any], fail: Fail) -> Wire:
    del fail
    return Wire(
        kind="WATERMARK",
        type="WATERMARK",
        commit_ts=payload["commitTs"] % 2**64,
        build_ts=payload["buildTs"],
    )


def _bootstrap(payload: dict[str, Any], fail: Fail) -> Wire:
    table = read_table_schema(payload["tableSchema"], ("payload", "tableSchema"), fail, avro=True)
    return Wire(
        kind="BOOTSTRAP",
        type="BOOTSTRAP",
        commit_ts=0,
        build_ts=payload["buildTs"],
        table_schema=table,
    )


def _ddl(payload: dict[str, Any], fail: Fail) -> Wire:
    schemas = {
        name: _table_schema(payload, name, fail)
        for name in ("tableSchema", "preTableSchema")
        if payload[name] is not None
    }
    return Wire(
        kind="DDL",
        type=payload["type"],
        commit_ts=payload["commitTs"] % 2**64,
        build_ts=payload["buildTs"],
        sql=payload["sql"],
        table_schema=schemas.get("tableSchema"),
        pre_table_schema=schemas.get("preTableSchema"),
    )


def _checksum(raw: object, fail: Fail) -> Checksum | None:
    if raw is None:
        return None
    fields = _unwrap(raw, "Checksum", ("payload", "checksum"), fail)
    for name in ("current", "previous"):
        if not 0 <= fields[name] < 2**32:
            fail("a checksum is a uint32", ("payload", "checksum", name))
    return Checksum(
        version=fields["version"],
        corrupted=fields["corrupted"],
        current=fields["current"],
        previous=fields["previous"],
    )


def _dml(payload: dict[str, Any], fail: Fail) -> Wire:
    checksum = _checksum(payload["checksum"], fail)
    images = {"INSERT": ("data",), "UPDATE": ("data", "old"), "DELETE": ("old",)}[payload["type"]]
    for name in ("data", "old"):
        if name not in images and payload[name] is not None:
            fail(f"an {payload['type']} has no {name}", ("payload", name))
    return Wire(
        kind="DML",
        type=payload["type"],
        commit_ts=payload["commitTs"] % 2**64,
        build_ts=payload["buildTs"],
        database=payload["database"],
        table=payload["table"],
        table_id=payload["tableID"],
        schema_version=payload["schemaVersion"] % 2**64,
        claim_check_location=payload["claimCheckLocation"],
        handle_key_only=payload["handleKeyOnly"] is True,
        checksum=checksum,
        data=_raw_columns(payload["data"], ("payload", "data"), fail),
        old=_raw_columns(payload["old"], ("payload", "old"), fail),
    )


_KINDS: dict[str, Callable[[dict[str, Any], Fail], Wire]] = {
    "WATERMARK": _watermark,
    "BOOTSTRAP": _bootstrap,
    "DDL": _ddl,
    "DML": _dml,
}
"""The Message record's ``type`` → the reader of its payload record (§4.8)."""


def parse(value: bytes, message_index: int) -> Wire:
    """The members of a Simple-Avro message value; ``DecodeError`` when it is not one."""
    fail = failer(PROTOCOL, message_index)
    message = _unwrap(_read(value, message_index), "Message", (), fail)
    kind = message["type"]
    payload = _unwrap(message["payload"], _PAYLOADS[kind], ("payload",), fail)
    if payload["version"] != VERSION:
        fail("version must be 1", ("payload", "version"))
    return _KINDS[kind](payload, fail)
