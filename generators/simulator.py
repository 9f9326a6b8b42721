"""TiCDC stream simulator: a workload in, the Kafka topic log TiCDC would write out.

A workload is an ordered sequence of transactions, DDLs and resolved (checkpoint) events. The
simulator does what TiCDC's Kafka sink does with them (ground truth §6):

* rows: each table's rows of a transaction in TiCDC's sorter order, key-changing UPDATEs split
  per profile unless ``output-raw-change-event`` (§6.5, ``reference.updates.sink_order``), then
  each row dispatched to a partition by the dispatcher rule (§6.1) and queued there;
* a DDL or resolved event first flushes every partition's queued rows (TiCDC writes a DDL only
  after all earlier DML, and a checkpoint only once the rows below it are written), then its
  one encoded message is broadcast to every partition (§6.2), except that Canal-JSON writes a
  DDL to partition 0 only (``DDL_TO_PARTITION_ZERO``). A protocol that writes no message
  for an event (Debezium's checkpoint without the TiDB extension) writes nothing;
* a flush encodes a partition's queued rows with the protocol's reference encoder, so batching
  (``max-batch-size``, ``max-message-bytes``) is the codec's (§2.2, §3.4);
* Simple: BOOTSTRAPs where ``reference.simple.BootstrapSchedule`` puts them (§6.6: a table's
  first row, then by its codec config's ``send-bootstrap-*`` options with commit time as the
  clock), to every partition or partition 0; with ``send-all-bootstrap-at-start`` the
  ``tables`` given to ``simulate`` first. ``encode_stream`` uses the same schedule: one
  partition's log of rows the sink neither reorders nor splits is what ``encode`` writes;
* a message over ``max-message-bytes`` (key + value + 36, §1.5) never reaches the topic: the
  Kafka producer is given the encoder's limit and refuses it, and the changefeed stops with
  an error. Craft batches by an estimate of the size and sends the row that crosses it in the
  batch it made too large (§3.4), so a small limit can stop a Craft changefeed; the simulator
  raises ``EncodeError`` there instead of writing a record TiCDC could not.

Topics follow the routing rules (``StreamSettings.routes``, ``[[sink.dispatchers]]``): rows go to
their table's topic with their rule's dispatcher, a DDL to its table's topic, a watermark to
every active table's topic and the default topic, each topic with ``partitions`` partitions
(``generators/_topics.py``). Without rules everything goes to ``topic``. The settings and the
workload's items are ``generators/_settings.py``, the log and its records ``generators/_log.py``.

Records carry the Kafka coordinates a consumer sees; the record timestamp is the physical time
of the newest commit ts the message carries (TiCDC leaves it to the producer clock, so a
simulation picks the commit time).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Sequence

from ticdc_conformance.generators._log import (
    Delivery,
    DeliveryKind,
    Record,
    TopicLog,
    log_records,
    new_delivery,
    physical_ms,
)
from ticdc_conformance.generators._settings import (
    RAW_CHANGE_EVENT,
    StreamSettings,
    Transaction,
    WorkloadItem,
    split_sink_options,
)
from ticdc_conformance.generators._topics import Topics
from ticdc_conformance.reference import Message, simple
from ticdc_conformance.reference.dispatch import DispatchRule, partition_of
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import DDLEvent, ResolvedEvent, RowChangedEvent
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.reference.tables import TableInfo
from ticdc_conformance.reference.updates import sink_order

__all__ = [
    "DDL_TO_PARTITION_ZERO",
    "RAW_CHANGE_EVENT",
    "Delivery",
    "DeliveryKind",
    "Record",
    "StreamSettings",
    "TopicLog",
    "Transaction",
    "WorkloadItem",
    "physical_ms",
    "simulate",
    "split_sink_options",
    "stream_records",
]

DDL_TO_PARTITION_ZERO = frozenset({"canal-json"})
"""Protocols whose DDL message TiCDC writes to partition 0 alone instead of broadcasting it
(``GetDDLDispatchRule``: tiflow ``cdc/sink/ddlsink/mq/mq_ddl_sink.go``, ticdc
``downstreamadapter/sink/helper/helper.go``)."""


_QUEUES_KEPT = 64
"""Table objects whose queues ``_Producer.queue_rows`` keeps (a DDL makes a new one)."""
_DEFAULT_MAX_BYTES = 10 * 1024 * 1024
"""``max-message-bytes`` of a protocol whose config has none (Debezium): TiCDC's default."""


class _Producer:
    """The sink's state while a workload streams through it."""

    def __init__(self, settings: StreamSettings) -> None:
        self.settings = settings
        self.codec = settings.codec
        self.config = settings.codec_config()
        router = settings.router()
        self.topics = Topics[Delivery](router, settings.partitions, settings.profile)
        self.queued = Topics[RowChangedEvent](router, settings.partitions, settings.profile)
        default = self.topics.of(settings.topic)
        self.log = TopicLog(settings, default, self.topics.logs)
        config = self.config
        self.simple = config if isinstance(config, simple.Config) else None
        self.schedule = (
            simple.BootstrapSchedule(config)
            if isinstance(config, simple.Config) and simple.sends_bootstraps(config)
            else None
        )
        self.max_bytes: int = getattr(self.config, "max_message_bytes", _DEFAULT_MAX_BYTES)
        self.renames = router.renames
        """Whether rows change their table's names on the way (``Topics.renamed_row``)."""
        self.fixed: dict[tuple[str, str], tuple[DispatchRule, int]] = {}
        """A table's rule and partition, for rules whose partition is the table's alone."""
        self.queues: dict[int, tuple[TableInfo, tuple[str, str], list[RowChangedEvent]]] = {}
        """A table object's names and partition queue, for rules whose partition is the
        table's alone (``queue_rows``), by the object's identity, the object beside them."""
        self.delivered = 0
        """Deliveries appended to the log so far."""

    def sendable(self, messages: list[Message]) -> list[Message]:
        """``messages``, unless the producer refuses one as too large (§1.5)."""
        for message in messages:
            if message.length() > self.max_bytes:
                raise EncodeError(
                    f"a message of {message.length()} bytes (with the record overhead) is over "
                    f"max-message-bytes {self.max_bytes}: the Kafka producer refuses it and "
                    "TiCDC stops the changefeed",
                    protocol=self.settings.protocol,
                )
        return messages

    def add_rows(self, transaction: Transaction) -> None:
        settings = self.settings
        rows = sink_order(
            transaction.rows,
            settings.profile,
            output_raw_change_event=settings.output_raw_change_event,
        )
        if self.schedule is None and not self.renames:
            self.queue_rows(rows)
            return
        now = physical_ms(transaction.commit_ts)
        for row in rows:
            if self.schedule is not None:
                self.tick(now)
                if self.schedule.row(row.table, now):  # a table's first row (§6.6)
                    self.flush()
                    self.send_bootstrap(row.table, now)
            topic, rule = self.topics.row(row)
            partition = self.partition(row, rule)
            self.queued.of(topic)[partition].append(
                self.topics.renamed_row(row) if self.renames else row
            )

    def queue_rows(self, rows: list[RowChangedEvent]) -> None:
        """``add_rows``' loop without bootstraps or renames.

        A table's queue is kept while its rule's partition is the table's alone; its names
        become active again on each row, as ``Topics.row`` makes them.
        """
        queues, active = self.queues, self.topics.active
        for row in rows:
            table = row.table
            held = queues.get(id(table))
            if held is not None and held[0] is table:
                active.setdefault(held[1])  # what Topics.row does for a known table
                held[2].append(row)
                continue
            topic, rule = self.topics.row(row)
            queue = self.queued.of(topic)[self.partition(row, rule)]
            queue.append(row)
            if rule.kind == "table":
                if len(queues) >= _QUEUES_KEPT:
                    queues.clear()
                queues[id(table)] = (table, (table.schema, table.name), queue)

    def partition(self, row: RowChangedEvent, rule: DispatchRule) -> int:
        """``partition_of`` the row: once per table when the rule hashes its names alone."""
        settings = self.settings
        name = (row.table.schema, row.table.name)
        held = self.fixed.get(name)
        if held is not None and held[0] is rule:
            return held[1]
        partition = partition_of(row, settings.partitions, rule, settings.profile)
        if rule.kind == "table":
            self.fixed[name] = (rule, partition)
        return partition

    def tick(self, now: int) -> None:
        """The bootstrap ticker with commit time as its clock (``simple.BootstrapSchedule``)."""
        assert self.schedule is not None
        due = self.schedule.tick(now)
        if due:
            self.flush()  # a BOOTSTRAP follows the rows already queued
        for table in due:
            self.send_bootstrap(table, now)

    def send_bootstrap(self, table: TableInfo, now: int, *, everywhere: bool | None = None) -> None:
        """One BOOTSTRAP to every partition, or to partition 0 (the option, unless given)."""
        assert self.simple is not None
        assert isinstance(self.codec, SchemaCodec)
        if everywhere is None:
            everywhere = self.simple.send_bootstrap_to_all_partition
        topic = self.topics.router.topic_of_table(table.schema, table.name)
        renamed = self.topics.renamed_table(table)
        (message,) = self.sendable([self.codec.encode_bootstrap(renamed, self.simple)])
        delivery = Delivery(kind="bootstrap", message=message, commit_ts=0, timestamp=now)
        partitions = self.topics.of(topic)
        for deliveries in partitions if everywhere else partitions[:1]:
            deliveries.append(delivery)
            self.delivered += 1

    def flush(self) -> None:
        for topic, queued in self.queued.logs.items():
            for partition, rows in enumerate(queued):
                if not rows:
                    continue
                group = tuple(rows)
                rows.clear()
                newest = max([row.commit_ts for row in group])
                deliveries = self.topics.of(topic)[partition]
                for message in self.sendable(self.codec.encode(group, self.config)):
                    deliveries.append(new_delivery("rows", message, newest, group))
                    self.delivered += 1

    def broadcast(self, event: DDLEvent | ResolvedEvent) -> None:
        self.flush()
        if self.schedule is not None:
            self.tick(physical_ms(event.commit_ts))
        kind: DeliveryKind = "ddl" if isinstance(event, DDLEvent) else "resolved"
        if isinstance(event, DDLEvent):
            topics = [self.topics.ddl(event)]
            event = self.topics.renamed_ddl(event)
        else:
            topics = self.topics.watermark()
        for message in self.sendable(self.codec.encode([event], self.config)):
            delivery = new_delivery(kind, message, event.commit_ts, ())
            for topic in topics:  # the broadcast is per topic (§6.2)
                partitions = self.topics.of(topic)
                if kind == "ddl" and self.settings.protocol in DDL_TO_PARTITION_ZERO:
                    partitions = partitions[:1]
                for deliveries in partitions:
                    deliveries.append(delivery)
                self.delivered += len(partitions)


def _run(
    producer: _Producer,
    workload: Iterable[WorkloadItem],
    *,
    messages: int | None,
    tables: Sequence[TableInfo],
    progress: Callable[[int], None] | None,
) -> Iterator[None]:
    """Feed ``workload`` to ``producer`` item by item, yielding after each item and at the end.

    The run stops once the producer has delivered ``messages`` records (counted by
    ``producer.delivered``, so the caller may take them out of the log between items).
    """
    items = iter(workload)
    first = next(items, None)
    if producer.simple is not None and simple.bootstraps_at_start(producer.simple):
        # stamped with the first change's time: Kafka keeps no record time 0 (a producer
        # stamps such a record with its own clock, so a replay could not give it back)
        start = 0 if first is None else physical_ms(first.commit_ts)
        for table in tables:
            producer.send_bootstrap(table, start, everywhere=True)
    for item in itertools.chain(() if first is None else (first,), items):
        if isinstance(item, Transaction):
            producer.add_rows(item)
        else:
            producer.broadcast(item)
        count = producer.delivered
        if progress is not None:
            progress(count)
        if messages is not None and count >= messages:
            break
        yield
    producer.flush()
    yield


def simulate(
    workload: Iterable[WorkloadItem],
    settings: StreamSettings,
    *,
    messages: int | None = None,
    tables: Sequence[TableInfo] = (),
    progress: Callable[[int], None] | None = None,
) -> TopicLog:
    """The topic log TiCDC writes for ``workload``; stop once it holds ``messages`` records.

    ``tables`` are the tables replicated when the changefeed starts: with Simple's
    ``send-all-bootstrap-at-start`` each gets a BOOTSTRAP on every partition first. The stop
    happens between workload items, so the log may hold a few more records than asked.
    ``progress`` is told the records written so far after each workload item.
    """
    producer = _Producer(settings)
    for _ in _run(producer, workload, messages=messages, tables=tables, progress=progress):
        pass
    return producer.log


def stream_records(
    workload: Iterable[WorkloadItem],
    settings: StreamSettings,
    *,
    messages: int | None = None,
    tables: Sequence[TableInfo] = (),
    progress: Callable[[int], None] | None = None,
) -> Iterator[Record]:
    """``simulate(...).records()`` without holding the log: records as the sink writes them.

    The same records with the same coordinates, in another order: each partition's in offset
    order, partitions interleaved as the workload goes (a workload item's records come out
    once the item is through). Only the messages of one workload item are held at a time.
    """
    producer = _Producer(settings)
    log = producer.log
    offsets: dict[tuple[str, int], int] = {}
    taken = 0
    for _ in _run(producer, workload, messages=messages, tables=tables, progress=progress):
        if producer.delivered == taken:  # the item queued rows only: nothing to take
            continue
        taken = producer.delivered
        for topic, partitions in log.topics.items():
            for partition, deliveries in enumerate(partitions):
                if not deliveries:
                    continue
                first = offsets.get((topic, partition), 0)
                yield from log_records(topic, partition, deliveries, first)
                offsets[topic, partition] = first + len(deliveries)
                deliveries.clear()
