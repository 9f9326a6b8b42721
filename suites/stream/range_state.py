"""What a range of a Kafka partition assumed of the partition before it, and what it leaves.

The Spark checker splits a Kafka partition much larger than its share of the dump into
ranges checked in parallel (``suites/stream/ranges.py``), each by a fresh ``PartitionChecker``.
A range after the first starts at a watermark message. Its findings are the partition's own
exactly when the state the checker would have carried into it makes no difference, and that
is decided after the fact, on the driver, from what each range recorded here:

* the range's first watermark is at or above the last one accepted before it
  (``watermark-monotonic``): then it is accepted, it sets the watermark every later row is
  judged by (``row-after-watermark``), and it forgets the redeliveries before it
  (``duplicate-identical`` compares only since the last watermark);
* no row message of the range repeats one delivered before it byte for byte (the hashes of
  their keys and values, ``allowed-duplicate``);
* per table, every first delivery the order rules see is at or above the newest commit ts
  of the rows before it (``commit-ts-order``) and of the DDLs before it (``row-before-ddl``);
  then neither rule's outcome depends on them (a lower row breaks it under any state);
* its first run of rows of one commit ts does not continue the run the range before it
  ended with (``split-update-order`` looks within one run).

``chain_problem`` walks a partition's ranges in order, composing the state each leaves
(the newest commit ts per table and the DDL barriers by maximum, the watermark and the last
run from the later range, the hashes by union), and names the first assumption that fails.
Any failure sends the whole dump back to the unsplit check, so a finding never depends on
where a partition was split. Standard library only.
"""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from hashlib import blake2b

__all__ = ["RangeState", "RangeTracker", "chain_problem", "message_hash"]

_Table = tuple[str, str]


def message_hash(key: bytes | None, value: bytes | None) -> int:
    """A fingerprint of a record's key and value that every process computes alike (not ``hash``).

    Equal records have equal fingerprints. Two that differ share one only by chance: it holds
    a CRC-32 of the key and a 64-bit BLAKE2b digest of the value. The value's digest is the
    one that counts: Craft and Canal-JSON messages have no key, and a 32-bit CRC of values
    alone would make a false repeat likely among millions of rows. A shared fingerprint can
    only make ``chain_problem`` see a repeat where there is none, which sends the dump back
    to the unsplit check: never another finding.
    """
    keyed = 0 if key is None else 1 << 32 | zlib.crc32(key)
    if value is None:
        return keyed
    valued = int.from_bytes(blake2b(value, digest_size=8).digest(), "little") | 1 << 64
    return valued << 33 | keyed


@dataclass(slots=True)
class RangeTracker:
    """What a range's checker records as it goes (``PartitionChecker(tracker=...)``)."""

    floors: dict[_Table, int] = field(default_factory=dict)
    """Per table, the lowest commit ts of a first delivery the order rules saw."""
    first_run_ts: int | None = None
    """The commit ts of the range's first run of rows the order rules saw."""
    hashes: set[int] = field(default_factory=set)
    """``message_hash`` of every row message of the range."""

    def delivered(self, key: bytes | None, value: bytes | None) -> None:
        """A row message of the range."""
        self.hashes.add(message_hash(key, value))

    def ordered(self, table: _Table, commit_ts: int) -> None:
        """A first delivery of ``table`` reaching the order rules.

        The definition, row by row, that ``RowOrder.broken`` applies inline.
        """
        floor = self.floors.get(table)
        if floor is None or commit_ts < floor:
            self.floors[table] = commit_ts

    def run(self, commit_ts: int | None) -> None:
        """A row reaching ``split-update-order``: the first one starts the first run.

        The definition, row by row, that ``RowOrder.broken`` applies inline.
        """
        if self.first_run_ts is None:
            self.first_run_ts = commit_ts


@dataclass(frozen=True, slots=True, kw_only=True)
class RangeState:
    """What one range assumed and what it leaves.

    Assumed: ``first_watermark``, ``floors``, ``first_run_ts``, ``hashes``. Left: ``watermark``,
    ``newest``, ``barriers``, ``last_run_ts``.
    """

    index: int
    """The range's place in its partition, from 0."""
    first_watermark: int | None
    """The commit ts of the watermark the range starts at (``None``: the partition's start, or
    a range that found no watermark and so checked nothing)."""
    floors: dict[_Table, int]
    first_run_ts: int | None
    hashes: frozenset[int]
    watermark: int | None
    newest: dict[_Table, int]
    barriers: dict[_Table, int]
    last_run_ts: int | None
    checked: int
    """Records the range checked."""


def _max_merged(before: dict[_Table, int], after: dict[_Table, int]) -> dict[_Table, int]:
    merged = dict(before)
    for table, ts in after.items():
        merged[table] = max(ts, merged.get(table, ts))
    return merged


def _problem(before: RangeState, later: RangeState) -> str | None:
    """Why ``later`` may have judged something otherwise than the partition's checker."""
    mark = later.first_watermark
    if before.watermark is not None and (mark is None or mark < before.watermark):
        return f"range {later.index} starts below the watermark {before.watermark}"
    for table, floor in later.floors.items():
        above = max(before.newest.get(table, floor), before.barriers.get(table, floor))
        if floor < above:
            return f"range {later.index}: {'.'.join(table)} at {floor}, below {above} before it"
    if later.first_run_ts is not None and later.first_run_ts == before.last_run_ts:
        return f"range {later.index} continues the run of commit ts {later.first_run_ts}"
    if not before.hashes.isdisjoint(later.hashes):
        return f"range {later.index} repeats a message of an earlier range"
    return None


def _composed(before: RangeState, later: RangeState) -> RangeState:
    """The state ``before`` and ``later`` (a range that checked records) leave together.

    The assumption members stay ``before``'s: nothing reads them any more.
    """
    return dataclasses.replace(
        before,
        hashes=before.hashes | later.hashes,
        watermark=later.watermark,
        newest=_max_merged(before.newest, later.newest),
        barriers=_max_merged(before.barriers, later.barriers),
        last_run_ts=before.last_run_ts if later.last_run_ts is None else later.last_run_ts,
    )


def chain_problem(ranges: Sequence[RangeState]) -> str | None:
    """Why one partition's ranges, in order, may not add up to its unsplit check, or ``None``."""
    if not ranges:
        return None
    state = ranges[0]
    for later in ranges[1:]:
        if later.checked == 0:  # no watermark after its start: its records are the earlier's
            continue
        problem = _problem(state, later)
        if problem is not None:
            return problem
        state = _composed(state, later)
    return None
