"""The reference consumer: what a correct consumer of a TiCDC topic applies, and in what order.

A pure function of a topic's messages, each partition's in offset order (no Kafka, no Spark):
``consume`` returns the **expected final state** of every table and the **expected change log**
a consumer must reach, whatever order its client interleaves the partitions in. It is the end
state of TiCDC's own Kafka consumer (``cmd/kafka-consumer/writer.go`` in pingcap/ticdc and
pingcap/tiflow; docs/consumers.md walks through it), with exact replays removed:

* Each partition is decoded on its own, in offset order (``reference.decoding``: Simple types
  rows by the BOOTSTRAP and DDL messages of the same partition).
* A partition's watermark is the greatest it has sent (a smaller one is ignored); the global
  watermark is the least over every partition of the input. Rows and DDLs at or below the final
  global watermark are applied (the flush is inclusive); those above it are ``pending``, as a
  consumer still holds them. A stream without any watermark (Debezium or Canal-JSON without the
  TiDB extension) is flushed whole at its end: nothing else could ever flush it.
* A change delivered more than once (an at-least-once replay after a restart, the same row at
  the same commit ts with the same images) is applied once; the log keeps the coordinates of its
  first delivery and counts the deliveries. A DDL sent to every partition, or replayed, is one
  DDL, identified by its commit ts, table and query.
* The log is in application order: by commit ts; within one commit ts (one upstream
  transaction) deletes, then updates, then inserts, as TiCDC's sorter orders a transaction, so
  the two halves of a split key-changing UPDATE apply delete first even from two partitions;
  then by coordinates and position in the message. A DDL precedes the rows of later commit ts.
* Applying the log: an INSERT or UPDATE writes the new image at its handle key, an UPDATE whose
  old handle key differs first removes the old key, a DELETE removes its key; ``TRUNCATE TABLE``
  and ``DROP TABLE`` empty their table.
* A table's handle-key columns: as the caller names them, else from the table info of a DDL or
  BOOTSTRAP message, else the columns the message marks (Open ``h``, the HandleKey flag).
* What cannot be applied is accounted for, never dropped silently: a message that does not
  decode, a row without a commit ts (a Debezium message from outside TiCDC) or with only its
  handle key (``handle-key-only`` large messages), a row whose handle key is unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ticdc_conformance.reference.decoded import (
    DecodedBootstrap,
    DecodedColumn,
    DecodedDDL,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.fold import (
    FoldedTables,
    HandleKey,
    TableName,
    handle_key_of,
    marked_handle_key,
)
from ticdc_conformance.reference.message import Message

__all__ = [
    "Applied",
    "AppliedChange",
    "AppliedDDL",
    "Consumed",
    "Coordinates",
    "NotApplied",
    "apply_log",
    "consume",
]

_OP_RANK = {"delete": 0, "update": 1, "insert": 2}
"""TiCDC's sorter order within a transaction (tiflow ``cdc/model/sink.go``)."""
_EMPTIES_TABLE = re.compile(r"\s*(TRUNCATE|DROP)\s+TABLE\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True, order=True)
class Coordinates:
    """Where a message sits in Kafka."""

    topic: str
    partition: int
    offset: int

    def __str__(self) -> str:
        return f"{self.topic}[{self.partition}]@{self.offset}"


@dataclass(frozen=True, slots=True, kw_only=True)
class AppliedChange:
    """One row change of the expected log."""

    row: DecodedRow
    commit_ts: int
    key: HandleKey
    """The handle key the change writes (INSERT, UPDATE) or removes (DELETE)."""
    old_key: HandleKey | None
    """The handle key a key-changing UPDATE moves the row away from, else ``None``."""
    source: Coordinates
    """The first delivery."""
    deliveries: int = 1

    @property
    def table_name(self) -> TableName:
        """(schema, table)."""
        return (self.row.schema, self.row.table)


@dataclass(frozen=True, slots=True, kw_only=True)
class AppliedDDL:
    """One DDL of the expected log."""

    ddl: DecodedDDL
    commit_ts: int
    source: Coordinates
    deliveries: int = 1

    @property
    def table_name(self) -> TableName:
        """(schema, table)."""
        return (self.ddl.schema, self.ddl.table)


Applied = AppliedChange | AppliedDDL


@dataclass(frozen=True, slots=True)
class NotApplied:
    """A message, or a row of one, the reference consumer could not apply, and why."""

    source: Coordinates
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Consumed:
    """What a correct consumer ends with (see the module doc)."""

    tables: FoldedTables
    log: tuple[Applied, ...]
    pending: tuple[Applied, ...]
    """Changes above the final global watermark: delivered, not yet to be applied."""
    watermark: int | None
    """The final global watermark; ``None`` when the stream carries none."""
    handle_keys: Mapping[TableName, tuple[str, ...]]
    not_applied: tuple[NotApplied, ...]
    messages: int
    """Messages read, each decoded or named in ``not_applied``."""


@dataclass(slots=True)
class _Seen:
    item: Applied
    order: tuple[int, int, int, Coordinates, int]
    deliveries: int = 1


@dataclass(slots=True)
class _Reader:
    protocol: str
    handle_keys: dict[TableName, tuple[str, ...]]
    decoders: dict[tuple[str, int], PartitionDecoder] = field(default_factory=dict)
    watermarks: dict[tuple[str, int], int | None] = field(default_factory=dict)
    seen: dict[object, _Seen] = field(default_factory=dict)
    not_applied: list[NotApplied] = field(default_factory=list)
    messages: int = 0
    decoded: int = 0

    def read(self, where: Coordinates, message: Message) -> None:
        partition = (where.topic, where.partition)
        if partition not in self.decoders:
            self.decoders[partition] = PartitionDecoder(self.protocol)
            self.watermarks[partition] = None
        self.messages += 1
        try:
            events = self.decoders[partition].decode(message, message_index=where.offset)
        except DecodeError as error:
            self.not_applied.append(NotApplied(where, str(error)))
            return
        for event in events:
            self.decoded += 1
            if isinstance(event, DecodedResolved):
                known = self.watermarks[partition]
                self.watermarks[partition] = max(event.commit_ts, known or 0)
            elif isinstance(event, DecodedRow):
                self.row(event, where)
            elif isinstance(event, DecodedDDL | DecodedBootstrap):
                self.table_info(event)
                if isinstance(event, DecodedDDL):
                    self.ddl(event, where)

    def table_info(self, event: DecodedDDL | DecodedBootstrap) -> None:
        info = event.table_info
        name = (event.schema, event.table)
        if info is not None and name not in self.handle_keys and info.handle_key():
            self.handle_keys[name] = tuple(info.columns[i].name for i in info.handle_key())

    def note(self, item: Applied, identity: object, rank: tuple[int, int]) -> None:
        known = self.seen.get(identity)
        if known is not None:
            known.deliveries += 1
            return
        self.seen[identity] = _Seen(item, (item.commit_ts, *rank, item.source, self.decoded))

    def ddl(self, ddl: DecodedDDL, where: Coordinates) -> None:
        if ddl.commit_ts is None:
            self.not_applied.append(NotApplied(where, "a DDL without commit ts cannot be placed"))
            return
        applied = AppliedDDL(ddl=ddl, commit_ts=ddl.commit_ts, source=where)
        self.note(applied, ("ddl", ddl.commit_ts, ddl.schema, ddl.table, ddl.query), (0, 0))

    def key_columns(self, row: DecodedRow, image: tuple[DecodedColumn, ...]) -> tuple[str, ...]:
        name = (row.schema, row.table)
        if name not in self.handle_keys and (marked := marked_handle_key(image)):
            self.handle_keys[name] = marked
        return self.handle_keys.get(name, ())

    def row(self, row: DecodedRow, where: Coordinates) -> None:
        table = f"{row.schema}.{row.table}"
        if row.commit_ts is None:
            self.not_applied.append(NotApplied(where, f"{table}: a row without commit ts"))
            return
        if row.handle_key_only and row.op != "delete":
            reason = f"{table}: a handle-key-only row carries no values to apply"
            self.not_applied.append(NotApplied(where, reason))
            return
        image = row.before if row.op == "delete" else row.after
        assert image is not None
        columns = self.key_columns(row, image)
        key = handle_key_of(image, columns) if columns else None
        if key is None:
            reason = f"{table}: the handle key is unknown or missing from the row image"
            self.not_applied.append(NotApplied(where, reason))
            return
        old_key = None
        if row.op == "update" and row.before is not None:
            old = handle_key_of(row.before, columns)
            old_key = old if old is not None and old != key else None
        change = AppliedChange(
            row=row, commit_ts=row.commit_ts, key=key, old_key=old_key, source=where
        )
        identity = (row.schema, row.table, row.commit_ts, row.op, row.before, row.after)
        self.note(change, identity, (1, _OP_RANK[row.op]))

    def global_watermark(self) -> int | None:
        if all(w is None for w in self.watermarks.values()):
            return None
        return min((w or 0 for w in self.watermarks.values()), default=0)

    def unresolved(self) -> None:
        for (topic, partition), decoder in self.decoders.items():
            for error in decoder.unresolved():
                where = Coordinates(topic, partition, error.message_index)
                self.not_applied.append(NotApplied(where, str(error)))


def consume(
    protocol: str,
    messages: Iterable[tuple[Coordinates, Message]],
    *,
    handle_keys: Mapping[TableName, Sequence[str]] | None = None,
) -> Consumed:
    """The expected final state and change log of ``messages`` (see the module doc).

    ``messages`` holds each partition's messages in offset order; partitions may interleave.
    """
    reader = _Reader(protocol, {name: tuple(cols) for name, cols in (handle_keys or {}).items()})
    for where, message in messages:
        reader.read(where, message)
    reader.unresolved()
    watermark = reader.global_watermark()
    ordered = sorted(reader.seen.values(), key=lambda s: s.order)
    log: list[Applied] = []
    pending: list[Applied] = []
    for seen in ordered:
        item = replace(seen.item, deliveries=seen.deliveries)
        (log if watermark is None or item.commit_ts <= watermark else pending).append(item)
    return Consumed(
        tables=apply_log(log),
        log=tuple(log),
        pending=tuple(pending),
        watermark=watermark,
        handle_keys=dict(reader.handle_keys),
        not_applied=tuple(sorted(reader.not_applied, key=lambda n: n.source)),
        messages=reader.messages,
    )


def apply_log(log: Iterable[Applied]) -> FoldedTables:
    """Every table ``log`` touches, after applying it in order (the module doc's rules)."""
    tables: FoldedTables = {}
    for item in log:
        rows = tables.setdefault(item.table_name, {})
        if isinstance(item, AppliedDDL):
            if _EMPTIES_TABLE.match(item.ddl.query):
                rows.clear()
            continue
        if item.old_key is not None:
            rows.pop(item.old_key, None)
        if item.row.op == "delete":
            rows.pop(item.key, None)
        else:
            assert item.row.after is not None
            rows[item.key] = item.row.after
    return tables
