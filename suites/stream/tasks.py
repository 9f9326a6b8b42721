"""The Arrow tasks of the Spark stream checker: what runs in the executors' Python workers.

No Spark import (pyarrow and the rules only), so they are tested and read apart from the job.
Each checker task emits rows of one schema (``OUT``): per task its rule counts (``count``),
the first ``samples`` findings per rule in its checking order (``finding``), one row per Kafka
partition checked (``partition``), one row per DDL/watermark seen (``broadcast``) and, for a
range of a partition, its state (``range``, pickled in ``key``: ``suites/stream/ranges.py``),
which ``suites/stream/spark.py`` aggregates. Two tasks feed ``PartitionChecker`` the same way:

* ``shuffle_task``: the records arrive sorted by (topic, partition, offset) from a shuffle;
* ``file_task``: the task reads its Kafka partitions' files itself (``read_unit``), each
  partition in (topic, partition) order, the order the shuffle path sorts in, so both paths
  emit the same rows.

``decode_task`` is the benchmark's floor: decode every message statelessly and count.
"""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from ticdc_conformance.suites.stream.catalog import WATERMARK_BROADCAST
from ticdc_conformance.suites.stream.layout import Unit, read_unit
from ticdc_conformance.suites.stream.range_state import RangeState
from ticdc_conformance.suites.stream.ranges import Piece, RangeChecker
from ticdc_conformance.suites.stream.rules import (
    Broadcast,
    CheckSettings,
    Finding,
    Item,
    PartitionChecker,
)

__all__ = ["OUT", "OUT_DDL", "Task", "decode_task", "file_task", "shuffle_task"]

Task = Callable[[Iterator[pa.RecordBatch]], Iterator[pa.RecordBatch]]

OUT = pa.schema(
    [
        pa.field("kind", pa.string()),
        pa.field("rule", pa.string()),
        pa.field("topic", pa.string()),
        pa.field("partition", pa.int32()),
        pa.field("offset", pa.int64()),
        pa.field("key", pa.binary()),
        pa.field("commit_ts", pa.int64()),
        pa.field("detail", pa.string()),
        pa.field("count", pa.int64()),
    ]
)
OUT_DDL = (
    "kind string, rule string, topic string, partition int, offset long, key binary, "
    "commit_ts long, detail string, count long"
)
_FLUSH = 4096


def _rows(items: list[dict[str, Any]]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist(items, schema=OUT)


def _finding_row(f: Finding) -> dict[str, Any]:
    return {
        "kind": "finding",
        "rule": f.rule,
        "topic": f.topic,
        "partition": f.partition,
        "offset": f.offset,
        "key": f.key,
        "commit_ts": f.commit_ts,
        "detail": f.detail[:300],
        "count": None,
    }


def _broadcast_rows(columns: tuple[list[Any], ...]) -> pa.RecordBatch:
    rules, topics, partitions, stamps, idents = columns
    n = len(rules)
    return pa.RecordBatch.from_arrays(
        [
            pa.array(["broadcast"] * n, pa.string()),
            pa.array(rules, pa.string()),
            pa.array(topics, pa.string()),
            pa.array(partitions, pa.int32()),
            pa.nulls(n, pa.int64()),
            pa.nulls(n, pa.binary()),
            pa.array(stamps, pa.int64()),
            pa.array(idents, pa.string()),
            pa.nulls(n, pa.int64()),
        ],
        schema=OUT,
    )


class _Collector:
    """What one task emits: rule counts, the first samples per rule, accounting, broadcasts."""

    def __init__(self, samples: int) -> None:
        self.samples = samples
        self.counts: Counter[str] = Counter()
        self.kept: dict[str, list[dict[str, Any]]] = {}
        self.seen: list[dict[str, Any]] = []
        # broadcasts are many (one per watermark per partition): kept as columns, not dicts
        self.broadcasts: tuple[list[Any], ...] = ([], [], [], [], [])
        self.items: list[Item] = []
        """What the checkers report, taken after each batch."""

    def take(self, item: Finding | Broadcast) -> None:
        if isinstance(item, Broadcast):
            values = (item.kind, item.topic, item.partition, item.commit_ts, item.ident)
            for column, value in zip(self.broadcasts, values, strict=True):
                column.append(value)
            return
        self.counts[item.rule] += 1
        sample = self.kept.setdefault(item.rule, [])
        if len(sample) < self.samples:
            sample.append(_finding_row(item))

    def take_all(self, checker: PartitionChecker, items: list[Item]) -> None:
        """``take`` each item of ``checker.check``; a watermark's stays columns, no object."""
        kinds, topics, partitions, stamps, idents = self.broadcasts
        topic, partition = checker.topic, checker.partition
        for item in items:
            if type(item) is int:
                kinds.append(WATERMARK_BROADCAST)
                topics.append(topic)
                partitions.append(partition)
                stamps.append(item)
                idents.append("")
            else:
                self.take(item)  # type: ignore[arg-type]
        items.clear()

    def feed(self, checker: PartitionChecker, batch: pa.RecordBatch) -> None:
        """Feed a batch of ``offset``, ``key``, ``value`` of ``checker``'s partition."""
        offsets, keys, values = (batch.column(i).to_pylist() for i in range(3))
        check, out = checker.check, self.items
        for offset, key, value in zip(offsets, keys, values, strict=True):
            check(offset, key, value, out)
        self.take_all(checker, out)

    def close(self, done: PartitionChecker) -> None:
        self.take_all(done, self.items)
        for item in done.finish():
            self.take(item)
        self.counts["_read"] += done.read
        self.counts["_decoded"] += done.decoded
        self.counts["_undecodable"] += done.undecodable
        self.seen.append({"kind": "partition", "topic": done.topic, "partition": done.partition})

    def flush(self, *, at_least: int = _FLUSH) -> Iterator[pa.RecordBatch]:
        if self.broadcasts[0] and len(self.broadcasts[0]) >= at_least:
            yield _broadcast_rows(self.broadcasts)
            for column in self.broadcasts:
                column.clear()

    def final(self) -> Iterator[pa.RecordBatch]:
        yield from self.flush(at_least=1)
        out = [{"kind": "count", "rule": rule, "count": n} for rule, n in self.counts.items()]
        out.extend(row for rows in self.kept.values() for row in rows)
        out.extend(self.seen)
        yield _rows(out)


def shuffle_task(settings: CheckSettings, samples: int) -> Task:
    """The shuffle path's task: records sorted by (topic, partition, offset).

    An offset twice in a Kafka partition is no dump: ``ValueError`` starting ``not a topic
    dump:``, which ``check-stream`` says as a usage error.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        collector = _Collector(samples)
        checker: PartitionChecker | None = None
        previous: int | None = None
        for batch in batches:
            columns = [batch.column(i).to_pylist() for i in range(5)]
            for topic, partition, offset, key, value in zip(*columns, strict=True):
                if checker is None or (checker.topic, checker.partition) != (topic, partition):
                    if checker is not None:
                        collector.close(checker)
                    checker = PartitionChecker(settings, topic, partition)
                elif offset == previous:  # sorted: a repeat is the next record
                    where = f"{topic}/{partition}: offset {offset}"
                    raise ValueError(f"not a topic dump: {where} twice")
                previous = offset
                checker.check(offset, key, value, collector.items)
            if checker is not None:
                collector.take_all(checker, collector.items)
            yield from collector.flush()
        if checker is not None:
            collector.close(checker)
        yield from collector.final()

    return run


def _range_row(piece: Piece, state: RangeState) -> dict[str, Any]:
    """A range's state for the driver (``range_state.chain_problem``), pickled in ``key``."""
    return {
        "kind": "range",
        "topic": piece.unit.topic,
        "partition": piece.unit.partition,
        "offset": piece.index,
        "key": pickle.dumps(state),
    }


def _check_piece(
    collector: _Collector, settings: CheckSettings, piece: Piece
) -> Iterator[pa.RecordBatch]:
    ranged = RangeChecker(settings, piece)
    check, out = ranged.check, collector.items
    for records in read_unit(piece.unit, start=piece.start):
        offsets, keys, values = (records.column(i).to_pylist() for i in range(3))
        for offset, key, value in zip(offsets, keys, values, strict=True):
            check(offset, key, value, out)
            if ranged.done:
                break
        collector.take_all(ranged.checker, out)
        yield from collector.flush()
        if ranged.done:
            break
    collector.close(ranged.checker)
    collector.seen.append(_range_row(piece, ranged.state()))


def file_task(settings: CheckSettings, samples: int, buckets: list[list[Unit | Piece]]) -> Task:
    """The file path's task: its bucket's units, each read from its files in offset order.

    A bucket may hold ranges of units (``suites/stream/ranges.py``): each is checked from its
    boundary and emits its state for the driver.
    """

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        collector = _Collector(samples)
        for batch in batches:
            for bucket in batch.column(0).to_pylist():
                for unit in buckets[bucket]:
                    if isinstance(unit, Piece):
                        yield from _check_piece(collector, settings, unit)
                        continue
                    checker = PartitionChecker(settings, unit.topic, unit.partition)
                    for records in read_unit(unit):
                        collector.feed(checker, records)
                        yield from collector.flush()
                    collector.close(checker)
        yield from collector.final()

    return run


def decode_task(protocol: str) -> Task:
    """The bare job's task: decode every message (stateless) and count messages and events."""

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        from ticdc_conformance.reference import CODECS, DecodeError, Message

        codec = CODECS[protocol]
        messages = events = 0
        for batch in batches:
            keys, values = batch.column(3).to_pylist(), batch.column(4).to_pylist()
            for key, value in zip(keys, values, strict=True):
                messages += 1
                try:
                    events += len(codec.decode(Message(key=key, value=value)))
                except DecodeError:
                    continue
        yield pa.RecordBatch.from_pydict(
            {"messages": [messages], "events": [events]},
            schema=pa.schema([("messages", pa.int64()), ("events", pa.int64())]),
        )

    return run
