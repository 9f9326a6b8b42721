"""``capture``: Kafka topics into a topic dump (docs/dump-format.md, docs/kafka.md).

Rules:

* every partition of every topic is read with ``assign()`` (no consumer group, nothing
  committed) from its beginning, from given offsets (``from_offsets``) or from the first
  offset at or after a time (``from_timestamp``), up to its end: the high watermark of the
  first fetch response for that partition (fetch responses carry it, right on every broker;
  Tansu answers a ListOffsets query with a wrong one). Records fetched past it are counted
  and not kept. ``follow`` reads on instead, until no record came for ``idle`` seconds or
  ``max_records`` were kept;
* each record is written as read: topic, partition, offset, timestamp (null when the record
  has none), key and value (null stays null), headers (keys as text, values byte for byte or
  null, in order, repeats kept). The timestamp type (CreateTime, LogAppendTime) is not kept;
* the dump is written into a hidden sibling folder ``.<name>.capture-<pid>`` holding the
  marker ``_INCOMPLETE`` (readers refuse it), and renamed to ``out`` only when every record
  is in and on disk: ``out`` is a complete dump or absent. An interrupt or a broker failure
  removes the sibling; a killed process leaves it, still marked;
* every record read is accounted for: ``CaptureResult.records`` kept = rows written, plus
  ``past_end`` fetched beyond the end and not kept;
* the Parquet pages are not compressed unless ``compression`` names a codec (``PARQUET_CODECS``:
  snappy, zstd, gzip), which costs the capture time;
* ``BrokerError`` (exit status 3) when the cluster is unreachable, refuses, or gives nothing
  for ``timeout`` seconds while partitions remain unread.
"""

from __future__ import annotations

import contextlib
import json
import time
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import groupby
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from ticdc_conformance.generators.dump import LABELS_FILE, fsync, publishing, write_records
from ticdc_conformance.generators.progress import Progress
from ticdc_conformance.kafka.capture_start import assignment
from ticdc_conformance.kafka.client import PARQUET_CODECS, BrokerError, Watch, confluent
from ticdc_conformance.kafka.dump_writer import PartFile, Writer
from ticdc_conformance.reference.errors import UsageError

if TYPE_CHECKING:
    from confluent_kafka import Consumer, KafkaError

__all__ = ["CaptureResult", "Follow", "capture"]

_CONSUMER = {
    "group.id": "ticdc-conformance-capture",  # librdkafka wants one; nothing is committed
    "enable.partition.eof": True,
    "enable.auto.commit": False,
    "enable.auto.offset.store": False,
    "auto.offset.reset": "error",  # a start offset out of range is said, never skipped
}
_CONSUME = 10_000
"""Records asked of librdkafka per call."""
_BUFFERED_BYTES = 256 << 20
"""Bytes of values held across partitions before every buffer is written out."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Follow:
    """Read past the end offsets, until one of these stops the capture."""

    idle: float = 10.0
    """Seconds without a new record."""
    max_records: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CaptureResult:
    """What a capture read and wrote."""

    out: Path
    records: int
    """Records read and written (rows in the dump)."""
    past_end: int
    """Records fetched past a partition's end offset, not kept."""
    partitions: int
    seconds: float
    leftovers: tuple[Path, ...]
    """Folders of earlier captures into ``out`` that were killed midway."""


class _Capture:
    """The read loop and the files of one capture."""

    def __init__(
        self,
        consumer: Consumer,
        parts: dict[tuple[str, int], PartFile],
        folder: Path,
        watch: Watch,
        *,
        follow: Follow | None,
        compression: str,
    ) -> None:
        self.consumer, self.parts, self.folder = consumer, parts, folder
        self.watch, self.follow = watch, follow
        self.kept = self.past_end = self.buffered = 0
        self.unfinished = len(parts)
        self.writer = Writer(compression)
        self.last_record = self.probed = time.monotonic()

    def run(self, progress: Progress | None) -> None:
        """Consume until every partition is done (or ``follow`` stops)."""
        kafka = confluent()
        while not self._stopped():
            messages: list[Any] = self.consumer.consume(_CONSUME, 0.1)  # Message: see _keep
            if messages:
                self.watch.progress()
                self._keep(messages, kafka)
            else:
                self._starts_past_end()
                self.watch.check(self._waiting(), idle_ok=self.follow is not None)
                self._probe(kafka)
            if self.buffered > _BUFFERED_BYTES:  # bounded memory: write every buffer out
                for part in self.parts.values():
                    part.flush(self.folder, self.writer)
                self.buffered = 0
            if progress is not None:
                progress.update(self.kept)

    def _probe(self, kafka: ModuleType) -> None:
        """Following an idle topic, ask the cluster for metadata every ``timeout`` seconds.

        librdkafka does not always report every broker down after the only one died; a
        metadata request that fails says it.
        """
        now = time.monotonic()
        if self.follow is None or now - max(self.last_record, self.probed) < self.watch.timeout:
            return
        self.probed = now
        try:
            self.consumer.list_topics(timeout=self.watch.timeout)
        except kafka.KafkaException as error:
            raise BrokerError(
                f"no broker reachable while {self._waiting()}: {error.args[0].str()}"
            ) from None

    def _keep(self, messages: list[Any], kafka: ModuleType) -> None:
        """Keep the records of one ``consume`` batch; note ends of partitions and errors.

        The batch is cut into runs of one partition (``groupby``), and a run's records are
        read with ``map`` over the ``Message`` methods: no Python code runs per record.
        """
        kind = type(messages[0])
        kept = self.kept
        for partition, same in groupby(messages, kind.partition):
            for topic, records in groupby(same, kind.topic):
                run = list(records)
                part = self.parts.get((topic, partition))
                errors = list(map(kind.error, run))
                # any(), not count(None): a KafkaError compared with None sets an exception
                if part is not None and not any(errors):
                    self._take(part, run)
                else:
                    self._amid_errors(part, run, errors, kafka)
        if kept != self.kept:
            self.last_record = time.monotonic()

    def _amid_errors(
        self, part: PartFile | None, run: list[Any], errors: list[Any], kafka: ModuleType
    ) -> None:
        """A run holding an end of partition or an error: the records around it kept."""
        start = 0
        for place, error in enumerate(errors):
            if error is None:
                continue
            if error.code() != kafka.KafkaError._PARTITION_EOF:  # noqa: SLF001 - librdkafka's code, public in its docs
                self._failed(run[place], error, kafka)
            if part is not None:
                self._take(part, run[start:place])
                self._end_reached(part, run[place].offset())
            start = place + 1
        if part is not None:
            self._take(part, run[start:])

    def _take(self, part: PartFile, run: list[Any]) -> None:
        """Keep a run of ``part``'s records up to its end (or ``max_records``); count the rest."""
        if not run:
            return
        count = len(run)
        if self.follow is None:
            if part.end is None:
                self._learn_end(part)
            if part.done:
                self.past_end += count  # fetched along with the last records: not kept
                return
            end = part.end
            if end is not None and run[-1].offset() + 1 >= end:
                cut = bisect_left(run, end, key=type(run[0]).offset)
                self.past_end += count - cut
                run = run[:cut]
                self._finish(part)
        elif self.follow.max_records is not None:
            room = max(0, self.follow.max_records - self.kept)
            if count > room:
                self.past_end += count - room
                run = run[:room]
        self.kept += len(run)
        self.buffered += sum(map(len, run))
        part.keep(run, self.folder, self.writer)

    def _starts_past_end(self) -> None:
        """``UsageError`` for a start offset past its partition's end.

        Kafka says so (``_AUTO_OFFSET_RESET``, see ``_failed``); Tansu fetches nothing, but
        its fetch responses carry the high watermark.
        """
        for part in self.parts.values():
            if part.done or part.end is not None or part.start < 0:
                continue
            if 0 <= self._learn_end(part) < part.start:
                where = f"{part.topic}/{part.partition}"
                raise UsageError(
                    f"{where}: start offset {part.start} is outside the partition's "
                    f"records (it ends at {part.end})"
                )

    def _failed(self, message: Any, error: KafkaError, kafka: ModuleType) -> None:  # noqa: ANN401 - a confluent-kafka Message
        where = f"{message.topic()}/{message.partition()}"
        if error.code() == kafka.KafkaError._AUTO_OFFSET_RESET:  # noqa: SLF001 - librdkafka's code, public in its docs
            start = self.parts[message.topic(), message.partition()].start
            raise UsageError(f"{where}: start offset {start} is outside the partition's records")
        raise self.watch.fail(f"reading {where}", kafka.KafkaException(error))

    def _stopped(self) -> bool:
        if self.follow is None:
            return self.unfinished == 0
        if self.follow.max_records is not None and self.kept >= self.follow.max_records:
            return True
        if time.monotonic() - self.last_record < self.follow.idle:
            return False
        if self.watch.down:  # idle because the cluster is gone is no success
            raise BrokerError("no broker reachable when the capture went idle")
        return True

    def _waiting(self) -> str:
        left = [f"{p.topic}/{p.partition}" for p in self.parts.values() if not p.done]
        return f"reading {', '.join(left[:5])}{' ...' if len(left) > 5 else ''}"

    def _learn_end(self, part: PartFile) -> int:
        """The partition's high watermark from the fetch responses (cached by librdkafka)."""
        kafka = confluent()
        tp = kafka.TopicPartition(part.topic, part.partition)
        _, high = self.consumer.get_watermark_offsets(tp, cached=True)
        if high >= 0:
            part.end = high
        return high

    def _end_reached(self, part: PartFile, offset: int) -> None:
        if part.end is None and self._learn_end(part) < 0:
            part.end = offset
        if self.follow is None and not part.done and offset >= (part.end or 0):
            self._finish(part)

    def _finish(self, part: PartFile) -> None:
        part.done = True
        self.unfinished -= 1
        kafka = confluent()
        self.consumer.pause([kafka.TopicPartition(part.topic, part.partition)])

    def write(self) -> None:
        """Close every file under its final name, write the labels, check the accounting."""
        for part in self.parts.values():
            part.flush(self.folder, self.writer)
        self.writer.close(list(self.parts.values()))
        files = [p.file for _, p in sorted(self.parts.items()) if p.file is not None]
        for number, file in enumerate(files):
            final = self.folder / f"part-{number:05d}.parquet"
            file.replace(final)
            fsync(final)
        if not files:
            write_records([], self.folder / "part-00000.parquet")
        text = json.dumps(self.labels(), indent=2, sort_keys=True) + "\n"
        (self.folder / LABELS_FILE).write_text(text, encoding="utf-8")
        fsync(self.folder / LABELS_FILE)
        written = sum(p.written for p in self.parts.values())
        if written != self.kept:  # a bug of the kit, never a property of the topic
            raise RuntimeError(f"{self.kept} records kept but {written} written")

    def abandon(self) -> None:
        """Stop writing (the capture failed): the files are closed, to be removed."""
        with contextlib.suppress(Exception):
            self.writer.close(list(self.parts.values()))

    def labels(self) -> dict[str, Any]:
        """Where the capture read; a lone topic's partition count as ``settings``."""
        topics: dict[str, list[dict[str, Any]]] = {}
        for (topic, partition), part in sorted(self.parts.items()):
            topics.setdefault(topic, []).append(
                {
                    "partition": partition,
                    "records": part.written,
                    "first": part.first,
                    "last": part.last,
                    "end": part.end,
                }
            )
        settings = {}
        if len(topics) == 1:
            [(topic, partitions)] = topics.items()
            settings = {"topic": topic, "partitions": len(partitions)}
        return {
            "format": "ticdc-conformance topic dump",
            "version": 1,
            "settings": settings,
            "capture": {"follow": self.follow is not None, "topics": topics},
        }


def capture(
    config: Mapping[str, str],
    topics: Sequence[str],
    out: Path | str,
    *,
    from_offsets: Mapping[tuple[str | None, int], int] | None = None,
    from_timestamp: int | None = None,
    follow: Follow | None = None,
    timeout: float = 30.0,
    compression: str = "none",
    progress: Progress | None = None,
) -> CaptureResult:
    """Capture ``topics`` of the cluster ``config`` names into the dump ``out``."""
    out = Path(out)
    if not topics:
        raise UsageError("capture needs at least one --topic")
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"{out} exists and is not empty: capture writes a new dump")
    if from_offsets and from_timestamp is not None:
        raise UsageError("give --from-offsets or --from-timestamp, not both")
    if compression not in PARQUET_CODECS:
        codecs = ", ".join(PARQUET_CODECS)
        raise UsageError(f"Parquet compression {compression!r} is not one of {codecs}")
    started = time.perf_counter()
    kafka = confluent()
    watch = Watch(config, timeout)
    consumer = watch.client(kafka.Consumer, _CONSUMER)
    leftovers = tuple(sorted(out.parent.glob(f".{out.name}.capture-*")))  # killed captures
    run: _Capture | None = None
    try:
        parts = assignment(
            consumer, list(dict.fromkeys(topics)), from_offsets or {}, from_timestamp, watch
        )
        with publishing(out, "capture") as folder:  # out appears only once the dump is whole
            run = _Capture(consumer, parts, folder, watch, follow=follow, compression=compression)
            consumer.assign(
                [kafka.TopicPartition(t, p, part.start) for (t, p), part in parts.items()]
            )
            run.run(progress)
            run.write()
    except BaseException:
        if run is not None:
            run.abandon()
        raise
    finally:
        consumer.close()
    return CaptureResult(
        out=out,
        records=run.kept,
        past_end=run.past_end,
        partitions=len(parts),
        seconds=time.perf_counter() - started,
        leftovers=leftovers,
    )
