"""A correct TiCDC consumer: the algorithm of TiCDC's own Kafka consumer, step by step.

TiCDC delivers at least once, spreads one table over several partitions and orders rows only
within a partition. Its own consumer (``cmd/kafka-consumer/writer.go`` in pingcap/tiflow and
pingcap/ticdc; docs/consumers.md, "What a correct consumer does") still ends with the
upstream's tables, and so does this one:

1. Each partition is decoded on its own, in offset order (Simple: with the schemas its own
   BOOTSTRAP and DDL messages announced).
2. Each partition has a watermark: the greatest it has sent (a smaller one, after a restart,
   is ignored). The **global watermark** is the least of them; a partition that has sent none
   holds it at 0.
3. Row changes and DDLs wait in a buffer. When the global watermark rises, everything at or
   below it is applied, in one PostgreSQL transaction, in commit-ts order: at one commit ts
   (one upstream transaction) the DDL first, then deletes, updates, inserts, as TiCDC's sorter
   orders a transaction, so the two halves of a split key-changing UPDATE apply delete first
   even when they came from two partitions.
4. A change is applied once. One at or below the global watermark already applied is a
   replay: dropped. One delivered again while still waiting (the same table, commit ts, op and
   images) waits once. A DDL comes on every partition: one DDL (its commit ts, table and
   query), applied once every partition's watermark has reached it.
5. At the end of the topic, changes above the last watermark keep waiting: a later watermark
   would release them. A topic without any watermark (Debezium without the TiDB extension)
   gives nothing to order partitions by: it is applied whole at its end, each partition in
   offset order.

``check-consumer`` finds nothing wrong with it; ``naive.py`` beside it shows what each step
prevents. Run it like ``naive.py``::

    python examples/consumers/correct.py --bootstrap-servers 127.0.0.1:9092 --topic TOPIC \
        --protocol open --dsn postgresql://postgres@127.0.0.1:5432/postgres \
        --applied-log applied.jsonl
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from postgres_sink import (
    AppliedLog,
    HandleKeys,
    PostgresSink,
    Source,
    command_line,
    partitions_of,
    read_topic,
)

from ticdc_conformance.reference import (
    DecodedBootstrap,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)

_OP_RANK = {"delete": 0, "update": 1, "insert": 2}
"""Step 3: TiCDC's order within a transaction."""


@dataclass(frozen=True, slots=True, order=True)
class Waiting:
    """A change in the buffer, ordered as step 3 applies it."""

    order: tuple[int, int, int, Source]
    change: DecodedRow | DecodedDDL = field(compare=False)
    source: Source = field(compare=False)


@dataclass(slots=True)
class Summary:
    """What the consumer did with the topic."""

    applied: int = 0
    dropped: int = 0
    """Replays (step 4)."""
    waiting: int = 0
    """Changes above the last watermark (step 5)."""
    watermark: int | None = None


class CorrectConsumer:
    """Steps 2 to 5 over the events of ``read_topic``."""

    def __init__(
        self, partitions: list[int], sink: PostgresSink, log: AppliedLog, keys: HandleKeys
    ) -> None:
        self.watermarks: dict[int, int | None] = dict.fromkeys(partitions)
        self.applied_up_to: int | None = None
        self.buffer: dict[object, Waiting] = {}
        self.sink, self.log, self.keys = sink, log, keys
        self.summary = Summary()

    def see(self, source: Source, event: DecodedEvent) -> None:
        """Take one event of partition ``source.partition``, in that partition's offset order."""
        if isinstance(event, DecodedDDL | DecodedBootstrap):
            self.keys.learn(event)
        if isinstance(event, DecodedResolved):
            self.watermark(source.partition, event.commit_ts)
        elif isinstance(event, DecodedRow):
            identity: tuple[object, ...] = (
                event.schema,
                event.table,
                event.commit_ts,
                event.op,
                event.before,
                event.after,
            )
            self.wait(identity, event, (1, _OP_RANK[event.op]), source)
        elif isinstance(event, DecodedDDL):
            identity = ("DDL", event.schema, event.table, event.commit_ts, event.query)
            self.wait(identity, event, (0, 0), source)

    def watermark(self, partition: int, commit_ts: int) -> None:
        """Step 2, and step 3 when the global watermark rises."""
        self.watermarks[partition] = max(commit_ts, self.watermarks[partition] or 0)
        rising = min(w or 0 for w in self.watermarks.values())
        if rising > (self.applied_up_to or 0):
            self.apply(rising)

    def wait(
        self,
        identity: object,
        change: DecodedRow | DecodedDDL,
        rank: tuple[int, int],
        source: Source,
    ) -> None:
        """Step 4: a replay is dropped, a change delivered twice waits once."""
        commit_ts = change.commit_ts
        if commit_ts is None:
            raise ValueError(f"{source}: a change without commit ts cannot be ordered")
        replayed = self.applied_up_to is not None and commit_ts <= self.applied_up_to
        if replayed or identity in self.buffer:
            self.summary.dropped += 1
        else:
            self.buffer[identity] = Waiting((commit_ts, *rank, source), change, source)

    def apply(self, up_to: int) -> None:
        """Step 3: every waiting change at or below ``up_to``, in order, in one transaction."""
        # sorted() is stable: the rows of one message keep their order in it
        ready = sorted(w for w in self.buffer.values() if w.order[0] <= up_to)
        for waiting in ready:
            change = waiting.change
            if isinstance(change, DecodedRow):
                self.sink.apply_row(change, self.keys)
            else:
                self.sink.apply_ddl(change)
            self.log.write(change, waiting.source)
        self.sink.commit()
        self.buffer = {i: w for i, w in self.buffer.items() if w.order[0] > up_to}
        self.applied_up_to = up_to
        self.summary.applied += len(ready)

    def end(self) -> Summary:
        """Step 5: what is above the last watermark keeps waiting; without any, apply it all."""
        if all(w is None for w in self.watermarks.values()) and self.buffer:
            self.apply(max(w.order[0] for w in self.buffer.values()))
            self.applied_up_to = None
        self.summary.waiting = len(self.buffer)
        self.summary.watermark = self.applied_up_to
        return self.summary


def run(
    config: Mapping[str, str], topic: str, protocol: str, dsn: str, applied_log: Path
) -> Summary:
    """Read ``topic`` to its end and apply it as TiCDC's consumer does (the module doc)."""
    with PostgresSink(dsn) as sink, AppliedLog(applied_log) as log:
        consumer = CorrectConsumer(partitions_of(config, topic), sink, log, HandleKeys())
        for source, event in read_topic(config, topic, protocol):
            consumer.see(source, event)
        return consumer.end()


def main(argv: list[str] | None = None) -> int:
    """The command line (the module doc)."""
    config, args = command_line(__doc__, argv)
    summary = run(config, args.topic, args.protocol, args.dsn, args.applied_log)
    print(
        f"{summary.applied} changes applied up to watermark {summary.watermark}, "
        f"{summary.dropped} redeliveries dropped, {summary.waiting} waiting above it"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
