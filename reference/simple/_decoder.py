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

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import NoReturn

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
from ticdc_conformance.reference.jsondoc import Fail, Path
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.simple import _avro, _json, _lazy
from ticdc_conformance.reference.simple._checksum import verify_checksum
from ticdc_conformance.reference.simple._config import EncodingFormat
from ticdc_conformance.reference.simple._plan import Found, Plan, decoded_column
from ticdc_conformance.reference.simple._rows import row as row_of
from ticdc_conformance.reference.simple._values import untyped
from ticdc_conformance.reference.simple._wire import Columns, Wire
from ticdc_conformance.reference.tables import TableInfo
from ticdc_conformance.reference.validation import finding, info_type, raise_findings

__all__ = ["UNTYPED", "Pending", "SimpleDecoder", "decode", "parse"]

UNTYPED = "untyped: a Simple DML carries no column types; SimpleDecoder types it by its schema"

SchemaKey = tuple[str, str, int]


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
    *,
    lazy: bool = False,
) -> Wire:
    """The members of one message (nil key expected; the value, decompressed, is the message).

    ``lazy``: JSON DML images may stay unchecked (``_lazy.parse``).
    """
    if message.key:
        raise DecodeError(
            "Simple messages have a nil key",
            protocol=f"simple-{encoding}",
            part="key",
            offset=0,
            message_index=message_index,
        )
    if not message.value:
        raise DecodeError(
            "the value is empty",
            protocol=f"simple-{encoding}",
            part="value",
            offset=0,
            message_index=message_index,
        )
    value = message.value
    if compression != "none":
        protocol = f"simple-{encoding}"
        value = decompress(
            compression, value, protocol=protocol, part="value", message_index=message_index
        )
    if encoding == "json":
        return _lazy.parse(value, message_index) if lazy else _json.parse(value, message_index)
    return _avro.parse(value, message_index)


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


def _untyped(columns: Columns | None) -> tuple[DecodedColumn, ...] | None:
    if columns is None:
        return None
    out = []
    for name, raw in columns.items():
        # ASCII text, most values, is its own value: no call for it
        value = raw if type(raw) is str and raw.isascii() else untyped(raw)
        out.append(decoded_column((name, value, None, None, None, None, UNTYPED)))
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
    return [row_of(wire, _untyped(wire.old), _untyped(wire.data))]


def _typed(
    wire: Wire, plan: Plan, fail: Fail, found: Found, full: Callable[[], Wire]
) -> DecodedRow:
    """The row typed by ``plan``'s schema; every value its column cannot hold goes to ``found``.

    Go's ``encoding/json`` writes text that is not UTF-8 as U+FFFD, goavro copies it raw
    (§4.3, §4.8): such text is invalid in JSON only. Unchecked images are typed at once, or
    else the message is read again in ``full`` (which raises the error it finds first).
    """
    if wire.unchecked:
        typed = plan.parsed_row(wire)
        if typed is not None:
            return typed
        wire = full()
    version = wire.schema_version
    old, data = wire.old, wire.data
    before = None if old is None else plan.image("old", old, version, fail, found)
    after = None if data is None else plan.image("data", data, version, fail, found)
    return row_of(wire, before, after)


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
        self._plans: dict[SchemaKey, tuple[TableInfo, Plan]] = {}
        """The cached schemas typing DMLs so far, with their typing plans, by the same key."""

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

    def _planned(self, wire: Wire) -> tuple[TableInfo, Plan] | None:
        """The DML's schema and its plan (made at its first DML: a schema is never replaced)."""
        key = (wire.database, wire.table, wire.schema_version)
        planned = self._plans.get(key)
        if planned is None:
            table = self._schemas.get(key)
            if table is None:
                return None
            planned = self._plans[key] = (table, Plan(table, avro=self.encoding == "avro"))
        return planned

    def _resolve(
        self,
        wire: Wire,
        planned: tuple[TableInfo, Plan],
        message_index: int,
        found: list[DecodeError],
        *,
        full: Callable[[], Wire] | None = None,
    ) -> DecodedRow | None:
        """The typed row; ``None`` when a held row (no ``full``) is rejected.

        ``full`` reads a DML arriving now again, in full (``_typed``).
        """

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

        table, plan = planned
        invalid: Found = []
        try:
            row = _typed(wire, plan, fail, invalid, full or (lambda: wire))
        except DecodeError as error:
            if full is not None:
                raise
            reject(f"does not fit its schema at {error.pointer}: {error.reason}")
            return None
        if self.verify_checksums and wire.checksum is not None:
            problems = verify_checksum(row, table, wire.checksum)
            if problems:
                reject("checksum: " + "; ".join(problems))
                return None
        if not invalid:
            return row
        columns = {column.name: column for column in table.columns}
        for member, name, value in invalid:
            bad = finding(
                name,
                info_type(columns[name], raw_text=self.encoding == "avro"),
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
        value = message.value
        try:  # a JSON DML's images are checked as they are typed
            if value and not message.key and self.compression == "none" and self.encoding == "json":
                wire = _lazy.parse(value, message_index)  # ``parse`` of a plain JSON value
            else:
                wire = parse(message, self.encoding, message_index, self.compression, lazy=True)
        except DecodeError:
            wire = self._full(message, message_index)  # a lazy read refuses only what a full
            # read refuses: it words why
        if wire.kind != "DML":
            return self._released(wire)
        planned = self._plans.get((wire.database, wire.table, wire.schema_version))
        if planned is None:  # its first DML: the plan is made now, if the schema is known
            planned = self._planned(wire)
        if planned is None:
            held = self._full(message, message_index) if wire.unchecked else wire
            self._held.append((message_index, held))
            return []
        if wire.unchecked and (wire.checksum is None or not self.verify_checksums):
            # the usual DML: typed at once, or else read again in full (``_typed``)
            row = planned[1].parsed_row(wire)
            if row is not None:
                return [row]
            wire = self._full(message, message_index)
        found: list[DecodeError] = []
        full = partial(self._full, message, message_index)
        row = self._resolve(wire, planned, message_index, found, full=full)
        rows: list[DecodedEvent] = [] if row is None else [row]
        if found:
            raise_findings(found, rows)
        return rows

    def _full(self, message: Message, message_index: int) -> Wire:
        """The message read in full (``parse``, not lazily)."""
        return parse(message, self.encoding, message_index, self.compression)

    def _released(self, wire: Wire) -> list[DecodedEvent]:
        """A schema message's event, then the held DMLs its schema releases (``feed``)."""
        found: list[DecodeError] = []
        events = [_schema_event(wire)]
        self._remember(wire.table_schema)
        self._remember(wire.pre_table_schema)
        still_held = []
        for index, held in self._held:
            planned = self._planned(held)
            if planned is None:
                still_held.append((index, held))
            elif (row := self._resolve(held, planned, index, found)) is not None:
                events.append(row)
        self._held = still_held
        raise_findings(found, events)
        return events
