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
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.kafka.client import COMPRESSIONS, BrokerError, Watch, confluent
from ticdc_conformance.kafka.dump_reader import DumpPlan, plan_dump, read_ahead
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


class _Deliveries:
    """The delivery callback: counts, failures, and each record's offset in the topic."""

    __slots__ = ("count", "expected", "failed", "failures", "moved", "moves")

    def __init__(self) -> None:
        self.count = self.failed = self.moved = 0
        self.expected: dict[tuple[str, int], deque[int]] = {}
        self.failures: dict[tuple[str, int], tuple[int, str]] = {}
        """A partition's first failure: its dump offset and the error."""
        self.moves: dict[tuple[str, int], tuple[int, int]] = {}
        """A partition's first record at another offset: its dump offset and topic offset."""

    def __call__(self, error: KafkaError | None, message: Any) -> None:  # noqa: ANN401 - Message
        where = (message.topic(), message.partition())
        offset = self.expected[where].popleft()  # an idempotent producer reports in order
        if error is not None:
            self.failed += 1
            self.failures.setdefault(where, (offset, error.str()))
            return
        self.count += 1
        if message.offset() != offset:
            self.moved += 1
            self.moves.setdefault(where, (offset, message.offset()))

    @staticmethod
    def first(found: Mapping[tuple[str, int], tuple[int, object]], what: str) -> str | None:
        """The entry of the first partition in ``found``, in words."""
        if not found:
            return None
        place = min(found)
        offset, said = found[place]
        return f"{place[0]}/{place[1]}: dump offset {offset} {what} {said}"


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
        _produce(
            producer,
            plan,
            target=target,
            deliveries=deliveries,
            watch=watch,
            rate=rate,
            progress=progress,
        )
    finally:
        producer.purge()  # nothing left queued once the run ends, delivered or not
        producer.poll(0)
    if deliveries.failed or deliveries.count != plan.records:
        raise BrokerError(
            f"{deliveries.count} of {plan.records} records delivered; "
            f"{deliveries.failed} failed, first {deliveries.first(deliveries.failures, 'failed:')}"
        )
    return ReplayResult(
        records=plan.records,
        delivered=deliveries.count,
        topics=topics,
        moved=deliveries.moved,
        first_moved=deliveries.first(deliveries.moves, "is topic offset"),
        seconds=time.perf_counter() - started,
    )


def _produce(
    producer: Producer,
    plan: DumpPlan,
    *,
    target: Mapping[str, str],
    deliveries: _Deliveries,
    watch: Watch,
    rate: float | None,
    progress: Progress | None,
) -> None:
    sent, seen, began = 0, 0, time.monotonic()
    KafkaException = confluent().KafkaException  # noqa: N806 - the client's class
    produce, expected = producer.produce, deliveries.expected
    for columns in read_ahead(plan):
        for topic, partition, offset, stamp, key, value, headers in zip(*columns, strict=True):
            name = target[topic]
            queue = expected.get((name, partition))
            if queue is None:
                queue = expected[name, partition] = deque()
            queue.append(offset)
            while True:
                try:
                    produce(
                        name,
                        value,
                        key,
                        partition,
                        on_delivery=deliveries,
                        timestamp=stamp or 0,
                        headers=headers,
                    )
                    break
                except BufferError:  # the local queue is full: let deliveries drain it
                    producer.poll(0.1)
                    seen = _check(deliveries, seen, watch, "sending records")
                except KafkaException as error:  # a record the producer itself refuses
                    raise UsageError(
                        f"{topic}/{partition} offset {offset}: {error.args[0].str()} (the "
                        "producer's settings: --config)"
                    ) from None
            sent += 1
            if rate is not None and (ahead := began + sent / rate - time.monotonic()) > 0:
                producer.poll(0)
                seen = _check(deliveries, seen, watch, "sending records")
                time.sleep(ahead)
            if sent % _POLL_EVERY == 0:
                producer.poll(0)
                seen = _check(deliveries, seen, watch, "sending records")
                if progress is not None:
                    progress.update(deliveries.count)
    while len(producer):
        producer.flush(0.5)
        seen = _check(deliveries, seen, watch, "waiting for deliveries")
        if progress is not None:
            progress.update(deliveries.count)


def _check(deliveries: _Deliveries, seen: int, watch: Watch, doing: str) -> int:
    """Restart the no-progress clock when deliveries moved; raise when the cluster failed."""
    done = deliveries.count + deliveries.failed
    if done != seen:
        watch.progress()
    watch.check(doing)
    return done
