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
  handle key (``handle-key-only`` large messages), a row whose handle key is unknown, a
  claim-check reference no storage resolved (``consume(claim_check=...)`` resolves them to the
  rows TiCDC stored, ``reference.claim_check``), a reference whose file cannot be had.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ticdc_conformance.reference._consumer_log import (
    Applied,
    AppliedChange,
    AppliedDDL,
    Coordinates,
    NotApplied,
    PartitionRead,
    ReadItem,
)
from ticdc_conformance.reference.claim_check import ClaimCheck
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
    "PartitionRead",
    "ReadItem",
    "apply_log",
    "consume",
    "empties_table",
    "global_watermark",
    "read_partition",
]

_OP_RANK = {"delete": 0, "update": 1, "insert": 2}
"""TiCDC's sorter order within a transaction (tiflow ``cdc/model/sink.go``)."""
_EMPTIES_TABLE = re.compile(r"\s*(TRUNCATE|DROP)\s+TABLE\b", re.IGNORECASE)


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
    """One partition's reading, in offset order."""

    decoder: PartitionDecoder
    handle_keys: dict[TableName, tuple[str, ...]]
    watermark: int | None = None
    seen: dict[str, _Seen] = field(default_factory=dict)
    not_applied: list[NotApplied] = field(default_factory=list)
    messages: int = 0
    decoded: int = 0

    def read(self, where: Coordinates, message: Message) -> None:
        self.messages += 1
        try:
            events = self.decoder.decode(message, message_index=where.offset)
        except DecodeError as error:
            self.not_applied.append(NotApplied(where, str(error)))
            return
        for event in events:
            self.decoded += 1
            if isinstance(event, DecodedResolved):
                self.watermark = max(event.commit_ts, self.watermark or 0)
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

    def note(self, item: Applied, identity: str, rank: tuple[int, int]) -> None:
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
        identity = repr(("ddl", ddl.commit_ts, ddl.schema, ddl.table, ddl.query))
        self.note(applied, identity, (0, 0))

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
        if row.claim_check_location is not None:  # no storage was given to resolve it
            reason = (
                f"{table}: a claim-check reference, its row stored at {row.claim_check_location}"
            )
            self.not_applied.append(NotApplied(where, reason))
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
        identity = repr((row.schema, row.table, row.commit_ts, row.op, row.before, row.after))
        self.note(change, identity, (1, _OP_RANK[row.op]))


def read_partition(
    protocol: str,
    messages: Iterable[tuple[Coordinates, Message]],
    handle_keys: Mapping[TableName, Sequence[str]] | None = None,
    *,
    claim_check: ClaimCheck | None = None,
) -> PartitionRead:
    """One partition's messages, in offset order, read as the reference consumer reads them.

    A partition is decoded on its own (Simple types its rows by the BOOTSTRAP and DDL messages
    of the same partition); replays within it are counted on their first delivery.
    ``claim_check`` resolves claim-check references to their stored rows; without it, or when
    a file cannot be had, the message is not applied.
    """
    keys = {name: tuple(cols) for name, cols in (handle_keys or {}).items()}
    reader = _Reader(PartitionDecoder(protocol, claim_check=claim_check), keys)
    topic_partition: tuple[str, int] | None = None
    for where, message in messages:
        topic_partition = (where.topic, where.partition)
        reader.read(where, message)
    if topic_partition is not None:
        for error in reader.decoder.unresolved():
            where = Coordinates(*topic_partition, error.message_index)
            reader.not_applied.append(NotApplied(where, str(error)))
    items = tuple(
        ReadItem(item=replace(s.item, deliveries=s.deliveries), identity=identity, order=s.order)
        for identity, s in reader.seen.items()
    )
    return PartitionRead(
        items=items,
        watermark=reader.watermark,
        not_applied=tuple(reader.not_applied),
        handle_keys=reader.handle_keys,
        messages=reader.messages,
    )


def global_watermark(watermarks: Iterable[int | None]) -> int | None:
    """The least of the partitions' watermarks.

    One that sent none counts as 0, unless none did (``None``: a stream without watermarks is
    flushed whole).
    """
    known = list(watermarks)
    if all(w is None for w in known):
        return None
    return min(w or 0 for w in known)


def consume(
    protocol: str,
    messages: Iterable[tuple[Coordinates, Message]],
    *,
    handle_keys: Mapping[TableName, Sequence[str]] | None = None,
    claim_check: ClaimCheck | None = None,
) -> Consumed:
    """The expected final state and change log of ``messages`` (see the module doc).

    ``messages`` holds each partition's messages in offset order; partitions may interleave.
    Partitions are read in the order they first appear, each knowing the handle keys the
    earlier ones learned; a change delivered by several is kept at its first delivery in
    application order, its deliveries summed.
    """
    partitions: dict[tuple[str, int], list[tuple[Coordinates, Message]]] = {}
    for where, message in messages:
        partitions.setdefault((where.topic, where.partition), []).append((where, message))
    keys: dict[TableName, tuple[str, ...]] = {
        name: tuple(cols) for name, cols in (handle_keys or {}).items()
    }
    reads: list[PartitionRead] = []
    seen: dict[str, _Seen] = {}
    for partition in partitions.values():
        read = read_partition(protocol, partition, keys, claim_check=claim_check)
        reads.append(read)
        for name, columns in read.handle_keys.items():
            keys.setdefault(name, columns)
        for item in read.items:
            known = seen.get(item.identity)
            if known is None:
                seen[item.identity] = _Seen(item.item, item.order, item.item.deliveries)
                continue
            known.deliveries += item.item.deliveries
            if item.order < known.order:
                known.item, known.order = item.item, item.order
    watermark = global_watermark(read.watermark for read in reads)
    log: list[Applied] = []
    pending: list[Applied] = []
    for s in sorted(seen.values(), key=lambda s: s.order):
        applied = replace(s.item, deliveries=s.deliveries)
        (log if watermark is None or applied.commit_ts <= watermark else pending).append(applied)
    not_applied = [n for read in reads for n in read.not_applied]
    return Consumed(
        tables=apply_log(log),
        log=tuple(log),
        pending=tuple(pending),
        watermark=watermark,
        handle_keys=keys,
        not_applied=tuple(sorted(not_applied, key=lambda n: n.source)),
        messages=sum(read.messages for read in reads),
    )


def empties_table(query: str) -> bool:
    """Whether a DDL's query empties its table (``TRUNCATE TABLE``, ``DROP TABLE``)."""
    return _EMPTIES_TABLE.match(query) is not None


def apply_log(log: Iterable[Applied]) -> FoldedTables:
    """Every table ``log`` touches, after applying it in order (the module doc's rules)."""
    tables: FoldedTables = {}
    for item in log:
        rows = tables.setdefault(item.table_name, {})
        if isinstance(item, AppliedDDL):
            if empties_table(item.ddl.query):
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
