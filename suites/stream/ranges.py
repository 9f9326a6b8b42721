"""Ranges of one Kafka partition, checked in parallel: how a skewed dump uses every core.

One task per Kafka partition leaves cores idle when one partition holds most of the dump
(a table dispatcher sends each table to one partition). The Spark checker's file path
therefore splits a partition costing more than its share of the dump (``split``; the cost
counts bytes and records, ``layout.Unit.cost``) into ranges of about equal record counts,
and checks each in a task of its own with a fresh ``PartitionChecker`` that records its
assumptions (``suites/stream/range_state.py``).

The boundaries sit at watermark messages, so the state that carries over is small: the
boundary of range ``i`` is the first watermark message at or after its nominal start. Every
range finds it the same way (``RangeChecker``): range ``i`` skips the records before it,
range ``i - 1`` checks up to it. A range that finds none, or finds it past its own nominal
end, checks nothing and its records go to the range before it.

Only protocols whose messages decode alone can be split: Simple's rows are typed by the
BOOTSTRAPs and DDLs before them (its partitions are never split). Standard library,
pyarrow and the rules only: no Spark here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ticdc_conformance.reference import CODECS, DecodeError, Message
from ticdc_conformance.reference.decoded import DecodedResolved
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.suites.stream.catalog import Broadcast, CheckSettings, Finding
from ticdc_conformance.suites.stream.layout import Unit
from ticdc_conformance.suites.stream.range_state import RangeState, RangeTracker
from ticdc_conformance.suites.stream.rules import Item, PartitionChecker

__all__ = ["Piece", "RangeChecker", "split", "splittable"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """A range of a unit: its records from position ``start`` up to ``stop`` (nominal)."""

    unit: Unit
    index: int
    count: int
    """How many ranges the unit is split into."""
    start: int
    stop: int

    @property
    def cost(self) -> int:
        """The unit's cost (``Unit.cost``) in proportion to the range's records."""
        return self.unit.cost * (self.stop - self.start) // max(1, self.unit.rows)

    @property
    def key(self) -> tuple[str, int, int]:
        """(topic, partition, index): the order ranges are checked and reported in."""
        return self.unit.topic, self.unit.partition, self.index


def splittable(settings: CheckSettings) -> bool:
    """Whether the protocol's messages decode alone, so its partitions may be split."""
    return not isinstance(CODECS[settings.protocol], SchemaCodec)


def split(units: list[Unit], tasks: int, *, above: int = 0) -> list[Unit | Piece]:
    """Each unit, or its ranges when it holds more than ``above`` records and its share.

    The share is ``tasks``' part of the units' cost (``Unit.cost``: bytes and records); the
    ranges hold about a share each, as equal numbers of records.
    """
    share = max(1, math.ceil(sum(u.cost for u in units) / max(1, tasks)))
    placed: list[Unit | Piece] = []
    for unit in units:
        count = min(math.ceil(unit.cost / share), unit.rows)
        if count <= 1 or unit.rows <= above:
            placed.append(unit)
            continue
        bounds = [unit.rows * i // count for i in range(count + 1)]
        placed += [
            Piece(unit=unit, index=i, count=count, start=bounds[i], stop=bounds[i + 1])
            for i in range(count)
        ]
    return placed


class RangeChecker:
    """The checker of one range: feed it the unit's records from the range's nominal start."""

    def __init__(self, settings: CheckSettings, piece: Piece) -> None:
        self.piece = piece
        self.checker = PartitionChecker(
            settings, piece.unit.topic, piece.unit.partition, tracker=RangeTracker()
        )
        self._codec = CODECS[settings.protocol]
        self._compression = settings.compression
        self._position = piece.start
        self._started = piece.index == 0
        self._first_watermark: int | None = None
        self.done = False
        """Whether the range has ended: feed it nothing more."""

    def _watermark(self, key: bytes | None, value: bytes | None) -> int | None:
        """The commit ts of a watermark message, ``None`` for any other."""
        try:
            events = self._codec.decode(
                Message(key=key, value=value), compression=self._compression
            )
        except DecodeError:
            return None
        if len(events) == 1 and isinstance(events[0], DecodedResolved):
            return events[0].commit_ts
        return None

    def feed(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> list[Finding | Broadcast]:
        """Check the next record if it is the range's; ``done`` says when the range ended."""
        out: list[Item] = []
        self.check(offset, key, value, out)
        return [self.checker.item(i) for i in out]

    def check(self, offset: int, key: bytes | None, value: bytes | None, out: list[Item]) -> None:
        """``feed``, its items appended to ``out`` (``PartitionChecker.check``)."""
        position, self._position = self._position, self._position + 1
        last = self.piece.index == self.piece.count - 1
        if not self._started:
            mark = self._watermark(key, value)
            if mark is None:
                return
            if position >= self.piece.stop and not last:  # the next range starts here
                self.done = True
                return
            self._started, self._first_watermark = True, mark
        elif not last and position >= self.piece.stop and self._watermark(key, value) is not None:
            self.done = True
            return
        self.checker.check(offset, key, value, out)

    def state(self) -> RangeState:
        """What the range assumed and leaves (``suites/stream/range_state.py``)."""
        return self.checker.range_state(self.piece.index, self._first_watermark)
