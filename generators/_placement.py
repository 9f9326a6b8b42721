"""Where faults go: the log split into zones of watermark segments, one zone per fault.

The machinery of ``ticdc_conformance.generators.faults``; the fault kinds and the rule for
which of them apply are there.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ticdc_conformance.generators.simulator import Delivery, TopicLog
from ticdc_conformance.reference import DecodedRow
from ticdc_conformance.reference.compression import compression_of
from ticdc_conformance.reference.validation import InvalidValueError

__all__ = ["FaultPlacementError", "Injector", "Mark", "row_ts", "rows_carried", "segment_before"]


class FaultPlacementError(ValueError):
    """The log has no stretch where the fault can be placed (too short, or wrong protocol)."""


@dataclass(slots=True)
class Mark:
    """A finding whose offset is known once every fault is in place."""

    rule: str
    partition: int
    anchor: Delivery | None
    commit_ts: int
    topic: str | None = None
    """``None``: the default topic."""


class Injector:
    """The log being faulted, split into one zone of watermark segments per fault.

    A segment is the stretch of a partition between two watermarks (they are broadcast, so
    every partition has the same segments). Each fault works inside its own zone, and the
    segments at a zone's edges are left alone, so no two faults ever touch neighbouring
    records and each causes only its own findings.
    """

    def __init__(self, log: TopicLog, rng: random.Random, zones: int) -> None:
        self.log, self.rng = log, rng
        self.codec = log.settings.codec
        self.config = log.settings.codec_config()
        self.compression = compression_of(dict(log.settings.options))
        watermarks = [d.commit_ts for d in log.partitions[0] if d.kind == "resolved"]
        size = len(watermarks) // max(zones, 1)
        if size < 3:
            raise FaultPlacementError(
                f"{len(watermarks)} watermarks are too few for {zones} fault(s): "
                "each fault needs a stretch of at least 3"
            )
        self.zones = [set(watermarks[z * size + 1 : (z + 1) * size - 1]) for z in range(zones)]

    def segments(self, partition: int, zone: int) -> list[tuple[int, int]]:
        """(start, end) indexes of watermarks around each segment of ``zone``, shuffled."""
        deliveries = self.log.partitions[partition]
        marks = [i for i, d in enumerate(deliveries) if d.kind == "resolved"]
        mine = [
            (start, end)
            for start, end in zip([-1, *marks], marks, strict=False)
            if deliveries[end].commit_ts in self.zones[zone]
            and (start < 0 or deliveries[start].commit_ts < deliveries[end].commit_ts)
        ]
        self.rng.shuffle(mine)
        return mine

    def stretches(self, zone: int) -> Iterator[tuple[int, int, int, list[int]]]:
        """(partition, start, end, indexes of row messages) per segment of ``zone``, shuffled."""
        for p in self.partitions():
            for start, end in self.segments(p, zone):
                yield p, start, end, self.rows_in(p, start, end)

    def rows_in(self, partition: int, start: int, end: int) -> list[int]:
        deliveries = self.log.partitions[partition]
        return [i for i in range(start + 1, end) if deliveries[i].kind == "rows"]

    def decode_rows(self, delivery: Delivery) -> list[DecodedRow]:
        """The rows a message carries, decoded leniently (the invalid-value fault's too)."""
        try:
            events = list(self.codec.decode(delivery.message, compression=self.compression))
        except InvalidValueError as error:
            events = list(error.events)
        return [e for e in events if isinstance(e, DecodedRow)]

    def oldest(self, delivery: Delivery) -> int:
        """The smallest commit ts among the rows a message carries."""
        return min(row_ts(row) for row in self.decode_rows(delivery))

    def schema_versions(self) -> set[int | None]:
        """The schema versions of every table a row of the log belongs to."""
        return {
            row.table.schema_version
            for deliveries in self.log.partitions
            for d in deliveries
            for row in d.rows
        }

    def partitions(self) -> list[int]:
        order = list(range(len(self.log.partitions)))
        self.rng.shuffle(order)
        return order

    def encode_rows(self, template: Delivery, rows: Sequence[object]) -> list[Delivery]:
        messages = self.codec.encode(rows, self.config)  # type: ignore[arg-type]
        return [dataclasses.replace(template, message=m) for m in messages]


def segment_before(deliveries: list[Delivery], end: int) -> Iterator[Delivery]:
    """The records between the watermark at ``end`` and the one before it, newest first."""
    for j in range(end - 1, -1, -1):
        if deliveries[j].kind == "resolved":
            return
        yield deliveries[j]


def row_ts(row: DecodedRow) -> int:
    """A row's commit ts: TiCDC's messages always carry it (only real Debezium lacks it)."""
    assert row.commit_ts is not None
    return row.commit_ts


def rows_carried(deliveries: list[Delivery], delivery: Delivery, inj: Injector) -> list[object]:
    """The rows one batched message carries: its slice of the flush it came from, in order."""
    start = 0
    for sibling in deliveries:
        if sibling.rows is not delivery.rows:
            continue
        count = len(inj.decode_rows(sibling))
        if sibling is delivery:
            return list(delivery.rows[start : start + count])
        start += count
    raise AssertionError("a delivery is among its own flush")
