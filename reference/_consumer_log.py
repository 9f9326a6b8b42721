"""The reference consumer's log, in its own words: where a message sits, what is applied.

``reference.consumer`` reads a topic into these (its module doc states the rules): a change or a
DDL of the expected log with its first delivery's coordinates and its delivery count, what could
not be applied and why, and what one partition holds before the partitions are merged.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ticdc_conformance.reference.decoded import DecodedDDL, DecodedRow
from ticdc_conformance.reference.fold import HandleKey, TableName

__all__ = [
    "Applied",
    "AppliedChange",
    "AppliedDDL",
    "Coordinates",
    "NotApplied",
    "PartitionRead",
    "ReadItem",
]


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
class ReadItem:
    """A change or DDL as one partition delivered it, before the partitions are merged."""

    item: Applied
    """With the partition's delivery count."""
    identity: str
    """What makes two deliveries one change: the canonical text (``repr``) of the table,
    commit ts, op and images of a row, or of the commit ts, table and query of a DDL."""
    order: tuple[int, int, int, Coordinates, int]
    """The application order: commit ts, DDL before rows, the op's rank in a transaction
    (deletes, updates, inserts: TiCDC's sorter), the first delivery's coordinates, the position
    in the message."""


@dataclass(frozen=True, slots=True, kw_only=True)
class PartitionRead:
    """What one partition of a topic holds for the consumer (``read_partition``)."""

    items: tuple[ReadItem, ...]
    """Each identity once, in the order of first delivery."""
    watermark: int | None
    """The greatest watermark the partition sent; ``None`` when it sent none."""
    not_applied: tuple[NotApplied, ...]
    handle_keys: Mapping[TableName, tuple[str, ...]]
    """Every table's handle-key columns: those given, then those learned here."""
    messages: int
