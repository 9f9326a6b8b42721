"""The topic log the simulator writes: deliveries per partition, and records as read.

A ``Delivery`` is a message TiCDC produced, before its offset is known; a ``Record`` is one
record of a topic as a consumer reads it. ``TopicLog`` holds every topic's partitions'
deliveries in order, offsets being positions. A stream makes one delivery and one record per
message, so ``new_delivery`` and ``new_record`` make them as drafts (``reference.drafts``),
without a frozen dataclass's ``object.__setattr__`` per field (neither class checks its
members).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from ticdc_conformance.generators._settings import StreamSettings
from ticdc_conformance.reference import Message
from ticdc_conformance.reference.drafts import draft_class
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


_DraftRecord = draft_class(Record)
_DraftDelivery = draft_class(Delivery)


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
    """``Record`` of its members by position (in declaration order), made as a draft.

    The object the constructor makes (it checks nothing), without a frozen dataclass's
    ``object.__setattr__`` per field (``reference.drafts``): a stream makes one per message.
    """
    record: Any = object.__new__(_DraftRecord)
    record.topic = topic
    record.partition = partition
    record.offset = offset
    record.timestamp = timestamp
    record.key = key
    record.value = value
    record.headers = headers
    record.claim_checks = claim_checks
    record.__class__ = Record
    return record  # type: ignore[no-any-return]


def new_delivery(
    kind: DeliveryKind, message: Message, commit_ts: int, rows: tuple[RowChangedEvent, ...]
) -> Delivery:
    """``Delivery`` stamped with ``commit_ts``'s time, made as a draft (``new_record``)."""
    delivery: Any = object.__new__(_DraftDelivery)
    delivery.kind = kind
    delivery.message = message
    delivery.commit_ts = commit_ts
    delivery.timestamp = physical_ms(commit_ts)
    delivery.rows = rows
    delivery.__class__ = Delivery
    return delivery  # type: ignore[no-any-return]


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
