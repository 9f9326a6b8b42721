"""``replay``: a topic dump into Kafka topics, as TiCDC would have written it (docs/kafka.md).

Rules:

* every record goes to its own partition (``partition=`` given explicitly: librdkafka's
  partitioner is not TiCDC's dispatcher), in the dump's offset order per partition, with its
  key, value (null stays null), timestamp (CreateTime; a null timestamp lets the producer
  stamp the time of sending) and headers, in order, byte for byte;
* a dump whose files hold a partition's records out of offset order is sorted in memory
  first; one holding an offset twice is refused;
* a topic (``topic_map`` renames them) that is absent is created with the dump's partition
  count: the labels' ``settings.partitions`` for the labelled topic, else the highest
  partition seen + 1. A topic with fewer partitions is refused (``UsageError``), one with more
  is used as it is;
* the producer is idempotent (``enable.idempotence``: no duplicates, no reordering on
  retries); ``compression`` is Kafka's ``compression.type`` (none, gzip, snappy, lz4, zstd);
* every delivery is verified: the run ends with every record acknowledged, or with
  ``BrokerError`` (exit status 3) saying how many were and what failed. The result says
  whether the topic's offsets equal the dump's (they do when the topic was empty and the dump's
  offsets run from 0 without gaps, as a simulated dump's do);
* ``rate`` paces the replay (records per second).
"""

from __future__ import annotations

import re
import time
from array import array
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.kafka.client import COMPRESSIONS, BrokerError, Watch, confluent
from ticdc_conformance.kafka.dump_reader import DumpPlan, Run, plan_dump, read_ahead
from ticdc_conformance.reference.errors import UsageError

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import AdminClient

__all__ = ["ReplayResult", "TopicReplay", "replay"]

_TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")
"""Kafka's legal topic names (and neither ``.`` nor ``..``)."""
_POLL_EVERY = 1024
_MESSAGE_MAX_BYTES = 100 << 20
"""The producer's limit unless ``--config message.max.bytes`` says: the broker's is the one
that matters (Kafka's socket.request.max.bytes is 100 MiB)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicReplay:
    """One topic written: where from, where to, with how many partitions."""

    source: str
    target: str
    partitions: int
    created: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplayResult:
    """The accounting of a replay: read, delivered, where, and whether offsets held."""

    records: int
    delivered: int
    topics: tuple[TopicReplay, ...]
    moved: int
    """Records whose offset in the topic differs from their offset in the dump."""
    first_moved: str | None
    seconds: float


class _Partition:
    """The delivery callback of one target partition: each report's topic offset, in order.

    An idempotent producer reports a partition's records in the order they were produced, so
    the n-th report is the n-th record sent (``sent``: the dump offsets, as Arrow arrays).
    Nothing but an append per report: offsets are compared once the run ends, vectorized.
    """

    __slots__ = ("failures", "reported", "sent")

    def __init__(self) -> None:
        self.sent: list[pa.Array] = []
        self.reported = array("q")
        """The topic offset of each report (-1: failed)."""
        self.failures: list[tuple[int, str]] = []
        """Each failed report: its place among the reports, and the error."""

    def __call__(self, error: KafkaError | None, message: Any) -> None:  # noqa: ANN401 - Message
        if error is None:
            self.reported.append(message.offset())
        else:
            self.failures.append((len(self.reported), error.str()))
            self.reported.append(-1)

    def dump_offset(self, place: int) -> int:
        """The dump offset of the ``place``-th record sent."""
        for chunk in self.sent:
            if place < len(chunk):
                return int(chunk[place].as_py())
            place -= len(chunk)
        raise IndexError(place)

    def moved(self) -> tuple[int, str | None]:
        """Records delivered at a topic offset other than their dump offset; the first."""
        count = len(self.reported)
        topic = pa.Array.from_buffers(pa.int64(), count, [None, pa.py_buffer(self.reported)])
        dump = pa.chunked_array(self.sent, pa.int64()).slice(0, count)
        differs = pc.and_(pc.not_equal(topic, dump), pc.greater_equal(topic, 0))
        moved = pc.sum(differs).as_py() or 0
        if not moved:
            return 0, None
        place = pc.index(differs, value=True).as_py()
        return (
            moved,
            f"dump offset {self.dump_offset(place)} is topic offset {topic[place].as_py()}",
        )


class _Deliveries:
    """Every target partition's callback, and the accounting over them."""

    __slots__ = ("partitions",)

    def __init__(self) -> None:
        self.partitions: dict[tuple[str, int], _Partition] = {}

    def partition(self, topic: str, partition: int) -> _Partition:
        """The callback of ``topic``/``partition``, made on first use."""
        found = self.partitions.get((topic, partition))
        if found is None:
            found = self.partitions[topic, partition] = _Partition()
        return found

    def reported(self) -> int:
        """Delivery reports so far, delivered or failed."""
        return sum(len(p.reported) for p in self.partitions.values())

    def failed(self) -> int:
        """Failed deliveries so far."""
        return sum(len(p.failures) for p in self.partitions.values())

    def first_failure(self) -> str | None:
        """The first failure of the first partition with one, in words."""
        for where, part in sorted(self.partitions.items()):
            if part.failures:
                place, said = part.failures[0]
                return (
                    f"{where[0]}/{where[1]}: dump offset {part.dump_offset(place)} failed: {said}"
                )
        return None

    def moved(self) -> tuple[int, str | None]:
        """Records at another topic offset than their dump offset; the first partition's first."""
        total, first = 0, None
        for where, part in sorted(self.partitions.items()):
            count, said = part.moved()
            total += count
            if first is None and said is not None:
                first = f"{where[0]}/{where[1]}: {said}"
        return total, first


def _prepare_topics(
    admin: AdminClient,
    plan: DumpPlan,
    topic_map: Mapping[str, str],
    watch: Watch,
) -> tuple[TopicReplay, ...]:
    """Check (or create) every target topic; ``UsageError`` when one has too few partitions."""
    kafka = confluent()
    unknown = sorted(set(topic_map) - set(plan.partitions))
    if unknown:
        raise UsageError(
            f"--topic-map names {unknown}, which the dump lacks (it has {sorted(plan.partitions)})"
        )
    targets = {source: topic_map.get(source, source) for source in plan.partitions}
    for target in targets.values():
        if not _TOPIC_NAME.fullmatch(target) or target in {".", ".."}:
            raise UsageError(f"{target!r} is no legal Kafka topic name")
    try:
        existing = admin.list_topics(timeout=watch.timeout).topics
    except kafka.KafkaException as error:
        raise watch.fail("cannot list the cluster's topics", error, admin) from None
    topics, create = [], []
    for source, target in sorted(targets.items()):
        needed = plan.partitions[source]
        have = existing.get(target)
        if have is not None and have.error is None:
            if len(have.partitions) < needed:
                raise UsageError(
                    f"topic {target} has {len(have.partitions)} partition(s); the "
                    f"dump needs {needed} (partitions 0-{needed - 1}): replay into "
                    "a new topic (--topic-map) or add partitions"
                )
            topics.append(
                TopicReplay(
                    source=source, target=target, partitions=len(have.partitions), created=False
                )
            )
        else:
            create.append(kafka.admin.NewTopic(target, needed, replication_factor=-1))
            topics.append(
                TopicReplay(source=source, target=target, partitions=needed, created=True)
            )
    if create:
        for target, future in admin.create_topics(create, request_timeout=watch.timeout).items():
            try:
                future.result()
            except kafka.KafkaException as error:
                raise watch.fail(f"cannot create topic {target}", error, admin) from None
        _wait_for_metadata(admin, {t.target: t.partitions for t in topics if t.created}, watch)
    return tuple(topics)


def _wait_for_metadata(admin: AdminClient, wanted: Mapping[str, int], watch: Watch) -> None:
    """Wait until new topics show all their partitions (producing before fails the records)."""
    deadline = time.monotonic() + watch.timeout
    while time.monotonic() < deadline:
        topics = admin.list_topics(timeout=watch.timeout).topics
        if all(t in topics and len(topics[t].partitions) >= n for t, n in wanted.items()):
            return
        time.sleep(0.05)
    raise BrokerError(f"created topics {sorted(wanted)} did not appear within {watch.timeout} s")


def replay(
    path: Path | str,
    config: Mapping[str, str],
    *,
    topic_map: Mapping[str, str] | None = None,
    compression: str | None = None,
    rate: float | None = None,
    timeout: float = 30.0,
    progress: Progress | None = None,
) -> ReplayResult:
    """Produce the dump at ``path`` into the cluster ``config`` names; see the module rules."""
    if compression is not None and compression not in COMPRESSIONS:
        raise UsageError(f"compression {compression!r} is not one of {', '.join(COMPRESSIONS)}")
    if rate is not None and rate <= 0:
        raise UsageError("--rate must be positive")
    started = time.perf_counter()
    plan = plan_dump(path)
    if progress is not None:
        progress.total(plan.records)
    kafka = confluent()
    watch = Watch(config, timeout)
    fixed: dict[str, object] = {"enable.idempotence": True}
    if "message.max.bytes" not in config:  # librdkafka's default (1 MB) is below TiCDC's 10 MiB
        fixed["message.max.bytes"] = _MESSAGE_MAX_BYTES
    if compression is not None:
        fixed["compression.type"] = compression
    # first: an idempotent producer takes a while to get its producer id, meanwhile topics
    producer = watch.client(kafka.Producer, fixed)
    deliveries = _Deliveries()
    try:
        topics = _prepare_topics(
            watch.client(kafka.admin.AdminClient), plan, topic_map or {}, watch
        )
        target = {t.source: t.target for t in topics}
        _Sender(producer, deliveries, watch, rate, progress).send(plan, target)
    finally:
        producer.purge()  # nothing left queued once the run ends, delivered or not
        producer.poll(0)
    failed = deliveries.failed()
    delivered = deliveries.reported() - failed
    if failed or delivered != plan.records:
        raise BrokerError(
            f"{delivered} of {plan.records} records delivered; "
            f"{failed} failed, first {deliveries.first_failure()}"
        )
    moved, first_moved = deliveries.moved()
    return ReplayResult(
        records=plan.records,
        delivered=delivered,
        topics=topics,
        moved=moved,
        first_moved=first_moved,
        seconds=time.perf_counter() - started,
    )


class _Sender:
    """Sends every record, a run of one partition at a time, serving deliveries between chunks.

    The per-record loop is one ``produce`` call: a chunk's records are sent before the
    producer is polled, the pace checked and the cluster watched (``_POLL_EVERY`` records, or
    a hundredth of a second's worth at ``rate``).
    """

    def __init__(
        self,
        producer: Producer,
        deliveries: _Deliveries,
        watch: Watch,
        rate: float | None,
        progress: Progress | None,
    ) -> None:
        self.producer, self.deliveries, self.watch = producer, deliveries, watch
        self.rate, self.progress = rate, progress
        self.chunk = _POLL_EVERY if rate is None else max(1, min(_POLL_EVERY, int(rate / 100)))
        self.sent, self.seen, self.began = 0, 0, time.monotonic()
        self.refused: type[Exception] = confluent().KafkaException

    def send(self, plan: DumpPlan, target: Mapping[str, str]) -> None:
        """Send the dump's records to the ``target`` topics; wait for every delivery report."""
        for run in read_ahead(plan):
            report = self.deliveries.partition(target[run.topic], run.partition)
            report.sent.append(run.offset_array)
            for start in range(0, len(run.offsets), self.chunk):
                self._send(run, target[run.topic], report, start, start + self.chunk)
                self.sent += len(run.offsets[start : start + self.chunk])
                if self.rate is not None:
                    ahead = self.began + self.sent / self.rate - time.monotonic()
                    if ahead > 0:
                        self.serve("sending records")
                        time.sleep(ahead)
                self.serve("sending records")
        while len(self.producer):
            self.producer.flush(0.5)
            self.serve("waiting for deliveries")

    def _send(self, run: Run, name: str, report: _Partition, start: int, end: int) -> None:
        produce, partition = self.producer.produce, run.partition
        rows = zip(
            run.keys[start:end],
            run.values[start:end],
            run.stamps[start:end],
            run.headers[start:end],
            strict=True,
        )
        for place, (key, value, stamp, headers) in enumerate(rows, start):
            try:
                produce(
                    name,
                    value,
                    key,
                    partition,
                    on_delivery=report,
                    timestamp=stamp,
                    headers=headers,
                )
            except (BufferError, self.refused):  # queue full, or a record refused: say which
                self._retry(run, name, report, place)

    def _retry(self, run: Run, name: str, report: _Partition, place: int) -> None:
        """Send the record at ``place`` of ``run`` once the queue has room (or fail)."""
        while True:
            try:
                self.producer.produce(
                    name,
                    run.values[place],
                    run.keys[place],
                    run.partition,
                    on_delivery=report,
                    timestamp=run.stamps[place],
                    headers=run.headers[place],
                )
            except BufferError:  # the local queue is full: let deliveries drain it
                self.serve("sending records", 0.1)
            except self.refused as error:  # a record the producer itself refuses
                raise UsageError(
                    f"{run.topic}/{run.partition} offset {run.offsets[place]}: "
                    f"{error.args[0].str()} (the producer's settings: --config)"
                ) from None
            else:
                return

    def serve(self, doing: str, wait: float = 0) -> None:
        """Serve delivery reports; watch the cluster; show the progress."""
        self.producer.poll(wait)
        done = self.deliveries.reported()
        if done != self.seen:  # records moved: the no-progress clock starts again
            self.seen = done
            self.watch.progress()
        self.watch.check(doing)
        if self.progress is not None:
            self.progress.update(done - self.deliveries.failed())
