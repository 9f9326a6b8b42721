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

import contextlib
import json
import queue
import re
import threading
import time
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ticdc_conformance.generators.dump import DUMP_SCHEMA, dump_files, read_labels
from ticdc_conformance.kafka.client import COMPRESSIONS, BrokerError, Watch, confluent
from ticdc_conformance.kafka.progress import Progress
from ticdc_conformance.reference.errors import UsageError

if TYPE_CHECKING:
    from confluent_kafka import KafkaError, Producer
    from confluent_kafka.admin import AdminClient

__all__ = ["DumpPlan", "ReplayResult", "plan_dump", "replay"]

_TOPIC_NAME = re.compile(r"[A-Za-z0-9._-]{1,249}")
"""Kafka's legal topic names (and neither ``.`` nor ``..``)."""
_POLL_EVERY = 1024
_MESSAGE_MAX_BYTES = 100 << 20
"""The producer's limit unless ``--config message.max.bytes`` says: the broker's is the one
that matters (Kafka's socket.request.max.bytes is 100 MiB)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DumpPlan:
    """What a dump holds, read from its files before anything is sent."""

    files: tuple[Path, ...]
    records: int
    partitions: Mapping[str, int]
    """Topic → the partition count it needs."""
    ordered: bool
    """Whether the files give each partition's records in offset order."""
    labels: Mapping[str, Any]


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


def _labels(path: Path) -> dict[str, Any]:
    """A folder's ``_labels.json``, or the ``X.labels.json`` beside a stream fixture file."""
    if path.is_file():
        beside = path.with_name(path.name.removesuffix(".parquet") + ".labels.json")
        if beside.is_file():
            labels: dict[str, Any] = json.loads(beside.read_text(encoding="utf-8"))
            return labels
        path = path.parent
    return read_labels(path) if path.is_dir() else {}


_KEY = [("topic", "ascending"), ("partition", "ascending"), ("offset", "ascending")]


def _keys(files: tuple[Path, ...]) -> list[pa.Table]:
    """Each file's (topic, partition, offset) columns."""
    tables = []
    for file in files:
        try:
            tables.append(pq.read_table(file, columns=["topic", "partition", "offset"]))
        except (OSError, pa.ArrowInvalid, KeyError) as error:
            raise UsageError(f"{file}: not a topic dump: {error}") from None
    return tables


def _one_partition_each(tables: list[pa.Table]) -> dict[tuple[str, int], int] | None:
    """Partition → its highest offset, for ``write_dump``'s layout; else ``None``.

    That layout: every file holds one partition, in ascending offsets that follow the
    partition's earlier files.
    """
    last: dict[tuple[str, int], int] = {}
    for table in tables:
        if not table.num_rows:
            continue
        topic, partition = table["topic"].unique(), table["partition"].unique()
        if len(topic) != 1 or len(partition) != 1:
            return None
        offsets = table["offset"].combine_chunks()
        step = pc.min(pc.pairwise_diff(offsets)).as_py()  # None for one record
        key = (topic[0].as_py(), partition[0].as_py())
        if (step is not None and step <= 0) or offsets[0].as_py() <= last.get(key, -1):
            return None
        last[key] = offsets[-1].as_py()
    return last


def _sorted_keys(tables: list[pa.Table], path: Path | str) -> tuple[pa.Table, bool]:
    """All keys sorted (stably) by (topic, partition, offset); whether the files were in order.

    In order: the files gave each partition's records in offset order. ``UsageError`` for an
    offset held twice.
    """
    keys = pa.concat_tables(tables).combine_chunks()
    keys = keys.append_column("place", pa.array(range(keys.num_rows), pa.int64())).sort_by(_KEY)
    if keys.num_rows < 2:
        return keys, True
    head, tail = keys.slice(0, keys.num_rows - 1), keys.slice(1)
    same = pc.and_(
        pc.equal(head["topic"], tail["topic"]), pc.equal(head["partition"], tail["partition"])
    )
    twice = pc.and_(same, pc.equal(head["offset"], tail["offset"]))
    if pc.any(twice).as_py():
        row = head.filter(twice).slice(0, 1).to_pylist()[0]
        raise UsageError(
            f"{path}: {row['topic']}/{row['partition']} holds offset {row['offset']} twice"
        )
    return keys, not pc.any(pc.and_(same, pc.greater(head["place"], tail["place"]))).as_py()


def plan_dump(path: Path | str) -> DumpPlan:
    """Count a dump's records and partitions and check their order (``UsageError`` if bad).

    Vectorized: a dump in ``write_dump``'s layout is checked file by file; any other is
    checked on all its keys sorted by (topic, partition, offset).
    """
    try:
        files = tuple(dump_files(path))
    except ValueError as error:
        raise UsageError(str(error)) from None
    if not files:
        raise UsageError(f"no dump at {path}")
    tables = _keys(files)
    found, ordered = _one_partition_each(tables), True
    if found is None:
        keys, ordered = _sorted_keys(tables, path)
        highest = keys.group_by(["topic", "partition"]).aggregate([]).to_pydict()
        found = dict.fromkeys(zip(highest["topic"], highest["partition"], strict=True), 0)
    partitions: dict[str, int] = {}
    for topic, partition in found:
        partitions[topic] = max(partitions.get(topic, 0), partition + 1)
    labels = _labels(Path(path))
    settings = labels.get("settings") or {}
    if settings.get("topic") in partitions and isinstance(settings.get("partitions"), int):
        topic = settings["topic"]
        partitions[topic] = max(partitions[topic], settings["partitions"])
    records = sum(t.num_rows for t in tables)
    return DumpPlan(
        files=files, records=records, partitions=partitions, ordered=ordered, labels=labels
    )


def _batches(plan: DumpPlan) -> Iterator[pa.RecordBatch]:
    if plan.ordered:
        for file in plan.files:
            yield from pq.ParquetFile(file).iter_batches(columns=DUMP_SCHEMA.names)
        return
    table = pa.concat_tables(pq.read_table(f, columns=DUMP_SCHEMA.names) for f in plan.files)
    yield from table.sort_by(_KEY).to_batches()


def _columns(batch: pa.RecordBatch) -> list[list[Any]]:
    """A batch's columns as Python lists, headers as (key, value) lists or ``None``.

    Timestamps as milliseconds: ``to_pydict`` would build a ``datetime`` for each.
    """
    columns = [batch.column(name).to_pylist() for name in ("topic", "partition", "offset")]
    columns.append(batch.column("timestamp").cast(pa.int64()).to_pylist())
    columns += [batch.column("key").to_pylist(), batch.column("value").to_pylist()]
    headers = batch.column("headers")
    if not pc.sum(pc.list_value_length(headers)).as_py():  # no headers at all (TiCDC's case)
        columns.append([None] * batch.num_rows)
    else:
        columns.append(
            [[(h["key"], h["value"]) for h in row] if row else None for row in headers.to_pylist()]
        )
    return columns


def _read_ahead(plan: DumpPlan) -> Iterator[list[list[Any]]]:
    """The dump's batches as column lists, read one batch ahead in a thread of their own.

    Parquet decoding releases the GIL, so it overlaps with sending the batch before.
    """
    ready: queue.Queue[list[list[Any]] | BaseException | None] = queue.Queue(maxsize=2)
    stop = threading.Event()

    def put(item: list[list[Any]] | BaseException | None) -> None:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                ready.put(item, timeout=0.1)
                return

    def read() -> None:
        try:
            for batch in _batches(plan):
                put(_columns(batch))
            put(None)
        except BaseException as error:  # noqa: BLE001 - handed to the sending thread
            put(error)

    reader = threading.Thread(target=read, name="replay-reader", daemon=True)
    reader.start()
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


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
    for columns in _read_ahead(plan):
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
                        f"{topic}/{partition} offset {offset}: {error} (the "
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
