"""Where ``capture`` starts reading each partition (docs/kafka.md).

Rules:

* ``--from-offsets`` entries are ``[TOPIC:]PARTITION=OFFSET`` (comma-separated, repeatable); an
  entry without a topic applies to that partition of every topic, one with a topic wins;
* ``--from-timestamp`` is milliseconds since the epoch or an ISO 8601 time with a zone; each
  partition starts at its first record at or after it (Kafka's ListOffsets by time), or at its
  end when it has none;
* a partition without either starts at its beginning. A topic the cluster lacks, or an entry
  naming a partition the topics lack, is a ``UsageError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from ticdc_conformance.kafka.client import Watch, confluent
from ticdc_conformance.kafka.dump_writer import PartFile
from ticdc_conformance.reference.errors import UsageError

if TYPE_CHECKING:
    from confluent_kafka import Consumer

__all__ = ["assignment", "parse_offsets", "parse_timestamp"]


def parse_offsets(specs: Sequence[str]) -> dict[tuple[str | None, int], int]:
    """``[TOPIC:]PARTITION=OFFSET`` entries (comma-separated, repeatable) as a mapping."""
    offsets: dict[tuple[str | None, int], int] = {}
    for entry in (part.strip() for spec in specs for part in spec.split(",")):
        where, sep, offset = entry.rpartition("=")
        topic, colon, partition = where.rpartition(":")
        try:
            key, value = (topic if colon else None, int(partition)), int(offset)
        except ValueError:
            key, value = (None, -1), -1
        if not sep or key[1] < 0 or value < 0:
            raise UsageError(f"--from-offsets takes [TOPIC:]PARTITION=OFFSET, got {entry!r}")
        offsets[key] = value
    return offsets


def parse_timestamp(text: str) -> int:
    """Milliseconds since the epoch, from an integer or an ISO 8601 time with a zone."""
    if text.isdigit():
        return int(text)
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise UsageError(
            f"--from-timestamp takes milliseconds or an ISO time with a zone, got {text!r}"
        )
    return round(moment.timestamp() * 1000)


def assignment(
    consumer: Consumer,
    topics: Sequence[str],
    from_offsets: Mapping[tuple[str | None, int], int],
    from_timestamp: int | None,
    watch: Watch,
) -> dict[tuple[str, int], PartFile]:
    """Every partition of ``topics`` with its start offset; ``UsageError`` for a missing topic."""
    kafka = confluent()
    try:
        metadata = consumer.list_topics(timeout=watch.timeout).topics
    except kafka.KafkaException as error:
        raise watch.fail("cannot read the cluster's metadata", error, consumer) from None
    parts: dict[tuple[str, int], PartFile] = {}
    for topic in topics:
        found = metadata.get(topic)
        if found is None or found.error is not None:
            raise UsageError(f"the cluster has no topic {topic}")
        for partition in sorted(found.partitions):
            start = from_offsets.get((topic, partition), from_offsets.get((None, partition)))
            parts[topic, partition] = PartFile(
                topic, partition, kafka.OFFSET_BEGINNING if start is None else start
            )
    named = {(t, p) for t, p in from_offsets if t is not None} - set(parts)
    if named:
        raise UsageError(f"--from-offsets names partitions the topics lack: {sorted(named)}")
    if from_timestamp is not None:
        asked = [kafka.TopicPartition(t, p, from_timestamp) for t, p in parts]
        try:
            found_offsets = consumer.offsets_for_times(asked, timeout=watch.timeout)
        except kafka.KafkaException as error:
            raise watch.fail("cannot look up offsets by time", error, consumer) from None
        for tp in found_offsets:  # -1: no record at or after that time
            parts[tp.topic, tp.partition].start = kafka.OFFSET_END if tp.offset < 0 else tp.offset
    return parts
