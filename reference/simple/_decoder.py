"""Simple decoders: the stateless ``decode`` of one message and the stateful ``SimpleDecoder``.

A DML message carries no column types (§4.2, §6.6). ``decode`` therefore returns its values
as the wire has them: JSON strings as text (base64 too), TIMESTAMP as ``TimestampValue`` with
its location, Avro longs, floats, strings and bytes as read, BIGINT UNSIGNED as its true
uint64; ``mysql_type`` is null and ``ambiguity`` says the value is untyped.

``SimpleDecoder`` is what a consumer needs: it caches every TableSchema of BOOTSTRAP and DDL
messages (``tableSchema`` and ``preTableSchema``) by ``(database, table, version)``, the first
one seen winning as in TiCDC's consumer, and types each DML against the schema with its
``(database, table, schemaVersion)``. A DML whose schema is unknown is held back, never
guessed: ``pending()`` lists it with the reason, and it is released, typed, right after the
BOOTSTRAP or DDL that brings its schema. A released DML whose values do not fit its schema,
and any DML whose checksum does not verify, is ``rejected()`` with the reason.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple, NoReturn

from ticdc_conformance.reference.compression import Compression, decompress
from ticdc_conformance.reference.decoded import (
    DecodedBootstrap,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.jsondoc import Fail, Path
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.mysql import MySQLType
from ticdc_conformance.reference.simple import _avro, _json
from ticdc_conformance.reference.simple._checksum import verify_checksum
from ticdc_conformance.reference.simple._config import EncodingFormat
from ticdc_conformance.reference.simple._readers import Invalid, Reader, column_reader
from ticdc_conformance.reference.simple._values import untyped
from ticdc_conformance.reference.simple._wire import Columns, Wire
from ticdc_conformance.reference.tables import TableInfo
from ticdc_conformance.reference.validation import finding, info_type, raise_findings
from ticdc_conformance.reference.values import Value

__all__ = ["UNTYPED", "Pending", "SimpleDecoder", "decode", "parse", "read_claim_check"]

UNTYPED = "untyped: a Simple DML carries no column types; SimpleDecoder types it by its schema"
_OPS: dict[str, Operation] = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}

SchemaKey = tuple[str, str, int]
_column = partial(tuple.__new__, DecodedColumn)
"""A ``DecodedColumn`` from all its members in order, without ``__new__``'s keyword handling."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Pending:
    """A DML the decoder has not turned into a typed row, and why."""

    message_index: int
    database: str
    table: str
    schema_version: int
    reason: str


def parse(
    message: Message,
    encoding: EncodingFormat,
    message_index: int,
    compression: Compression = "none",
) -> Wire:
    """The members of one message (nil key expected; the value, decompressed, is the message)."""
    protocol = f"simple-{encoding}"
    if message.key:
        raise DecodeError(
            "Simple messages have a nil key",
            protocol=protocol,
            part="key",
            offset=0,
            message_index=message_index,
        )
    if not message.value:
        raise DecodeError(
            "the value is empty",
            protocol=protocol,
            part="value",
            offset=0,
            message_index=message_index,
        )
    read = _json.parse if encoding == "json" else _avro.parse
    value = decompress(
        compression, message.value, protocol=protocol, part="value", message_index=message_index
    )
    return read(value, message_index)


def read_claim_check(content: bytes, *, raw_value: bool = False, message_index: int = 0) -> Message:
    """The full message from a claim-check file, ``{"key": null, "value": base64}`` (§1.5).

    ``raw_value`` (``claim-check-raw-value=true``): the file is the value bytes alone
    (``pkg/sink/kafka/claimcheck/claim_check.go`` ``WriteMessage`` in pingcap/tiflow).
    """
    if raw_value:
        return Message(key=None, value=content)
    try:
        document = json.loads(content)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        raise DecodeError(
            f"not JSON: {error}",
            protocol="simple",
            part="value",
            offset=0,
            message_index=message_index,
        ) from None
    if type(document) is not dict or document.keys() != {"key", "value"}:
        raise DecodeError(
            "a claim-check file is an object with key and value",
            protocol="simple",
            part="value",
            path=(),
            message_index=message_index,
        )
    parts: dict[str, bytes | None] = {}
    for name in ("key", "value"):
        encoded = document[name]
        try:
            parts[name] = None if encoded is None else base64.b64decode(encoded, validate=True)
        except (TypeError, binascii.Error, ValueError):
            raise DecodeError(
                "must be base64 text or null",
                protocol="simple",
                part="value",
                path=(name,),
                message_index=message_index,
            ) from None
    return Message(key=parts["key"], value=parts["value"])


def _schema_event(wire: Wire) -> DecodedEvent:
    if wire.kind == "WATERMARK":
        return DecodedResolved(commit_ts=wire.commit_ts)
    table = wire.table_schema
    if wire.kind == "BOOTSTRAP" and table is not None:  # a BOOTSTRAP always has one
        return DecodedBootstrap(
            commit_ts=wire.commit_ts, schema=table.schema, table=table.name, table_info=table
        )
    named = wire.table_schema or wire.pre_table_schema
    return DecodedDDL(
        commit_ts=wire.commit_ts,
        schema="" if named is None else named.schema,
        table="" if named is None else named.name,
        query=wire.sql,
        ddl_kind=wire.type,
        table_info=wire.table_schema,
        pre_table_info=wire.pre_table_schema,
    )


def _row(
    wire: Wire, before: tuple[DecodedColumn, ...] | None, after: tuple[DecodedColumn, ...] | None
) -> DecodedRow:
    op = _OPS[wire.type]
    if op in ("update", "delete") and before is None:
        before = ()  # an empty map is omitted on the JSON wire
    if op in ("insert", "update") and after is None:
        after = ()
    return DecodedRow(
        commit_ts=wire.commit_ts,
        schema=wire.database,
        table=wire.table,
        op=op,
        before=before,
        after=after,
        table_id=wire.table_id,
        schema_version=wire.schema_version,
        handle_key_only=wire.handle_key_only,
        claim_check_location=wire.claim_check_location,
    )


def _untyped(columns: Columns | None) -> tuple[DecodedColumn, ...] | None:
    if columns is None:
        return None
    out = []
    for name, raw in columns:
        # ASCII text, most values, is its own value: no call for it
        value = raw if type(raw) is str and raw.isascii() else untyped(raw)
        out.append(_column((name, value, None, None, None, None, UNTYPED)))
    return tuple(out)


def decode(
    message: Message,
    *,
    encoding: EncodingFormat,
    message_index: int = 0,
    compression: Compression = "none",
) -> list[DecodedEvent]:
    """Decode one message on its own; DML values stay untyped (see the module docstring)."""
    wire = parse(message, encoding, message_index, compression)
    if wire.kind != "DML":
        return [_schema_event(wire)]
    return [_row(wire, _untyped(wire.old), _untyped(wire.data))]


class _Plan(NamedTuple):
    """How one table schema types a DML: per column, chosen once per schema (not per value)."""

    names: frozenset[str]
    columns: tuple[tuple[str, MySQLType, Reader], ...]
    """Schema order: the column's name, its type and its reader (``_readers``)."""


def _plan(table: TableInfo, avro: bool) -> _Plan:
    columns = tuple(
        (
            column.name,
            column.type,
            column_reader(column, info_type(column, raw_text=avro), avro=avro),
        )
        for column in table.columns
    )
    return _Plan(frozenset(column.name for column in table.columns), columns)


_ABSENT = object()


def _typed(wire: Wire, plan: _Plan, fail: Fail, found: list[tuple[str, str, Value]]) -> DecodedRow:
    """The row typed by ``plan``'s schema; every value its column cannot hold goes to ``found``.

    Go's ``encoding/json`` writes text that is not UTF-8 as U+FFFD, goavro copies it raw
    (§4.3, §4.8): such text is invalid in JSON only.
    """
    images: list[tuple[DecodedColumn, ...] | None] = []
    for member, columns in (("old", wire.old), ("data", wire.data)):
        if columns is None:
            images.append(None)
            continue
        raw = dict(columns)
        unknown = raw.keys() - plan.names
        if unknown:
            fail(
                f"column {min(unknown)!r} is not in schema version {wire.schema_version}",
                (member, min(unknown)),
            )
        typed = []
        for name, mysql_type, read in plan.columns:  # TiCDC's consumer: schema order
            given = raw.get(name, _ABSENT)
            if given is _ABSENT:
                continue  # virtual generated, or not a handle-key column
            value: Value = None
            if given is not None:
                try:
                    value = read(given)  # type: ignore[arg-type]  # a Raw: only _ABSENT is not
                except Invalid as invalid:
                    value = invalid.value
                    found.append((member, name, value))
                except ValueError as error:
                    fail(f"{mysql_type}: {error}", (member, name))
            typed.append(_column((name, value, None, None, None, mysql_type, None)))
        images.append(tuple(typed))
    return _row(wire, images[0], images[1])


class SimpleDecoder:
    """A consumer's decoder: schema cache, typed rows, DML held until its schema arrives."""

    def __init__(
        self,
        encoding: EncodingFormat,
        *,
        verify_checksums: bool = True,
        compression: Compression = "none",
    ) -> None:
        self.encoding: EncodingFormat = encoding
        self.verify_checksums = verify_checksums
        self.compression: Compression = compression
        """The consumer's ``large-message-handle-compression``: every value is decompressed."""
        self._schemas: dict[SchemaKey, TableInfo] = {}
        self._held: list[tuple[int, Wire]] = []
        self._rejected: list[Pending] = []
        self._plans: dict[int, tuple[TableInfo, _Plan]] = {}
        """Typing plans by the id of the schema they were made for (kept alive beside it)."""

    def table_info(self, database: str, table: str, schema_version: int) -> TableInfo | None:
        """The cached schema with exactly this key, if any."""
        return self._schemas.get((database, table, schema_version))

    def pending(self) -> tuple[Pending, ...]:
        """DMLs held back because their schema has not arrived, in arrival order."""
        return tuple(
            Pending(
                message_index=index,
                database=wire.database,
                table=wire.table,
                schema_version=wire.schema_version,
                reason=f"no BOOTSTRAP or DDL has given schema version {wire.schema_version}"
                f" of {wire.database}.{wire.table}",
            )
            for index, wire in self._held
        )

    def rejected(self) -> tuple[Pending, ...]:
        """Released DMLs that did not fit their schema, and DMLs failing their checksum."""
        return tuple(self._rejected)

    def _remember(self, table: TableInfo | None) -> None:
        if table is None or not table.schema or not table.name:
            return  # TiCDC's consumer keeps only named tables
        self._schemas.setdefault((table.schema, table.name, table.schema_version or 0), table)

    def _resolve(
        self,
        wire: Wire,
        table: TableInfo,
        message_index: int,
        found: list[DecodeError],
        *,
        released: bool,
    ) -> DecodedRow | None:
        def fail(reason: str, path: Path) -> NoReturn:
            raise DecodeError(
                reason,
                protocol=f"simple-{self.encoding}",
                part="value",
                path=path,
                message_index=message_index,
            )

        def reject(reason: str) -> None:
            self._rejected.append(
                Pending(
                    message_index=message_index,
                    database=wire.database,
                    table=wire.table,
                    schema_version=wire.schema_version,
                    reason=reason,
                )
            )

        avro = self.encoding == "avro"
        planned = self._plans.get(id(table))
        if planned is None or planned[0] is not table:
            planned = self._plans[id(table)] = (table, _plan(table, avro))
        invalid: list[tuple[str, str, Value]] = []
        try:
            row = _typed(wire, planned[1], fail, invalid)
        except DecodeError as error:
            if not released:
                raise
            reject(f"does not fit its schema at {error.pointer}: {error.reason}")
            return None
        if self.verify_checksums and wire.checksum is not None:
            problems = verify_checksum(row, table, wire.checksum)
            if problems:
                reject("checksum: " + "; ".join(problems))
                return None
        columns = {column.name: column for column in table.columns} if invalid else {}
        for member, name, value in invalid:
            bad = finding(
                name,
                info_type(columns[name], raw_text=avro),
                value,
                protocol=f"simple-{self.encoding}",
                message_index=message_index,
                path=(member, name),
            )
            if bad is not None:
                found.append(bad)
        return row

    def feed(self, message: Message, *, message_index: int = 0) -> list[DecodedEvent]:
        """Decode one message; return the events now resolvable, released DMLs included.

        Raises ``DecodeError`` (and changes nothing) when the message is invalid, or when a
        DML's values do not fit its already known schema.
        """
        wire = parse(message, self.encoding, message_index, self.compression)
        found: list[DecodeError] = []
        if wire.kind == "DML":
            table = self.table_info(wire.database, wire.table, wire.schema_version)
            if table is None:
                self._held.append((message_index, wire))
                return []
            row = self._resolve(wire, table, message_index, found, released=False)
            rows: list[DecodedEvent] = [] if row is None else [row]
            raise_findings(found, rows)
            return rows
        events = [_schema_event(wire)]
        self._remember(wire.table_schema)
        self._remember(wire.pre_table_schema)
        still_held = []
        for index, held in self._held:
            table = self.table_info(held.database, held.table, held.schema_version)
            if table is None:
                still_held.append((index, held))
            elif (row := self._resolve(held, table, index, found, released=True)) is not None:
                events.append(row)
        self._held = still_held
        raise_findings(found, events)
        return events
