"""The topic log the simulator writes: deliveries per partition, and records as read.

A ``Delivery`` is a message TiCDC produced, before its offset is known; a ``Record`` is one
record of a topic as a consumer reads it. ``TopicLog`` holds every topic's partitions'
deliveries in order, offsets being positions. A stream makes one delivery and one record per
message, so ``new_delivery`` and ``new_record`` make them through their slots' setters, without
a frozen dataclass's ``object.__setattr__`` per field (neither class checks its members).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Literal

from ticdc_conformance.generators._settings import StreamSettings
from ticdc_conformance.reference import Message
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.message import ClaimCheckObject

__all__ = [
    "Delivery",
    "DeliveryKind",
    "Record",
    "TopicLog",
    "log_records",
    "new_delivery",
    "new_record",
    "physical_ms",
]

DeliveryKind = Literal["rows", "ddl", "resolved", "bootstrap"]


def physical_ms(ts: int) -> int:
    """The wall-clock milliseconds of a TiDB TSO (its high bits, ``ts >> 18``)."""
    return ts >> 18


@dataclass(frozen=True, slots=True, kw_only=True)
class Delivery:
    """One Kafka message TiCDC produced, before its offset is known."""

    kind: DeliveryKind
    message: Message
    commit_ts: int
    """The newest commit ts the message carries (0 for a bootstrap)."""
    timestamp: int
    """Record timestamp, Unix milliseconds."""
    rows: tuple[RowChangedEvent, ...] = ()
    """The rows of the flush this message came from: it carries some of them, in order."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Record:
    """One record of a topic as a consumer reads it."""

    topic: str
    partition: int
    offset: int
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...] = ()
    claim_checks: tuple[ClaimCheckObject, ...] = field(default=(), compare=False)
    """Files the message's claim-check references name, as TiCDC stored them (not in a dump's
    Parquet: ``generators.claim_check`` writes them beside it)."""


(
    _set_topic,
    _set_partition,
    _set_offset,
    _set_timestamp,
    _set_key,
    _set_value,
    _set_headers,
    _set_claim_checks,
) = (vars(Record)[f.name].__set__ for f in fields(Record))
(
    _set_kind,
    _set_message,
    _set_commit_ts,
    _set_delivery_timestamp,
    _set_rows,
) = (vars(Delivery)[f.name].__set__ for f in fields(Delivery))


def new_record(  # noqa: PLR0917 - Record's members by position
    topic: str,
    partition: int,
    offset: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[tuple[str, bytes | None], ...],
    claim_checks: tuple[ClaimCheckObject, ...],
) -> Record:
    """``Record`` of its members by position (in declaration order), set through its slots.

    The object the constructor makes (it checks nothing), without a frozen dataclass's
    ``object.__setattr__`` per field: a stream makes one per message.
    """
    record = object.__new__(Record)
    _set_topic(record, topic)
    _set_partition(record, partition)
    _set_offset(record, offset)
    _set_timestamp(record, timestamp)
    _set_key(record, key)
    _set_value(record, value)
    _set_headers(record, headers)
    _set_claim_checks(record, claim_checks)
    return record


def new_delivery(
    kind: DeliveryKind, message: Message, commit_ts: int, rows: tuple[RowChangedEvent, ...]
) -> Delivery:
    """``Delivery`` stamped with ``commit_ts``'s time, set through its slots (``new_record``)."""
    delivery = object.__new__(Delivery)
    _set_kind(delivery, kind)
    _set_message(delivery, message)
    _set_commit_ts(delivery, commit_ts)
    _set_delivery_timestamp(delivery, physical_ms(commit_ts))
    _set_rows(delivery, rows)
    return delivery


def log_records(
    topic: str, partition: int, deliveries: Iterable[Delivery], first_offset: int
) -> Iterator[Record]:
    """One partition's deliveries as records, offsets counted from ``first_offset``."""
    for offset, delivery in enumerate(deliveries, first_offset):
        message = delivery.message
        yield new_record(
            topic,
            partition,
            offset,
            delivery.timestamp,
            message.key,
            message.value,
            (),
            message.claim_checks,
        )


@dataclass(slots=True)
class TopicLog:
    """Every topic's partitions' deliveries in order; offsets are positions.

    ``partitions`` are the default topic's (``settings.topic``), which ``topics`` holds too.
    """

    settings: StreamSettings
    partitions: list[list[Delivery]]
    topics: dict[str, list[list[Delivery]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.topics.setdefault(self.settings.topic, self.partitions)

    def records(self) -> Iterator[Record]:
        """The log as records, topic by topic in name order, partition by partition."""
        for topic in sorted(self.topics):
            for partition, deliveries in enumerate(self.topics[topic]):
                yield from log_records(topic, partition, deliveries, 0)

    def __len__(self) -> int:
        return sum(sum(map(len, partitions)) for partitions in self.topics.values())
