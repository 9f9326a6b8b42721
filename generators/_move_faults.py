"""Fault kinds that move row messages: to another partition, or later within their flush.

The injectors of ``ticdc_conformance.generators.faults`` for ``partition-affinity`` and
``commit-ts-order`` (docs/dump-format.md):

* ``wrong-partition``: a row message lands on a partition its dispatcher does not choose;
* ``reordered-versions``: a flush of a partition's rows is cut at a transaction boundary and
  its later part sent first, so older rows of a table follow newer ones; whole transactions
  move, so none is cut in two (each message of the part sent late that carries such an older
  row is a finding).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from ticdc_conformance.generators._placement import (
    FaultPlacementError,
    Injector,
    Mark,
    row_ts,
    segment_before,
)
from ticdc_conformance.generators.simulator import Delivery
from ticdc_conformance.reference.events import RowChangedEvent

__all__ = ["reordered_versions", "wrong_partition"]


def _blocks_a_late_row(
    segment: list[Delivery],
    oldest: dict[tuple[str, str], int],
    deletes: set[tuple[str, str, int | None]],
) -> bool:
    """Whether rows (``oldest`` per table, these DELETEs) may not go last in ``segment``.

    No row there may be newer than them, per table (``commit-ts-order``); no DDL after them
    (``row-before-ddl``); no INSERT of a DELETE's table and commit ts (``split-update-order``:
    the halves of a split UPDATE, which a ``columns`` dispatcher may put on two partitions).
    """
    for d in segment:
        if d.kind == "ddl" and d.commit_ts > min(oldest.values()):
            return True
        for row in d.rows:
            table = (row.table.schema, row.table.name)
            if row.commit_ts > oldest.get(table, 2**64):
                return True
            if row.op == "insert" and (*table, row.commit_ts) in deletes:
                return True
    return False


def wrong_partition(inj: Injector, zone: int) -> list[Mark]:
    for p, _, end, rows in inj.stretches(zone):
        watermark = inj.log.partitions[p][end].commit_ts
        for i in rows:
            moved = inj.log.partitions[p][i]
            carried = inj.decode_rows(moved)
            oldest: dict[tuple[str, str], int] = {}
            for row in carried:
                key = (row.schema, row.table)
                oldest[key] = min(oldest.get(key, row_ts(row)), row_ts(row))
            deletes = {(r.schema, r.table, r.commit_ts) for r in carried if r.op == "delete"}
            for q in inj.partitions():
                target = inj.log.partitions[q]
                ends = [
                    j
                    for j, d in enumerate(target)
                    if d.kind == "resolved" and d.commit_ts == watermark
                ]
                if q == p or not ends:
                    continue
                newer = _blocks_a_late_row(list(segment_before(target, ends[0])), oldest, deletes)
                if not newer:
                    del inj.log.partitions[p][i]
                    target.insert(ends[0], moved)
                    return [Mark("partition-affinity", q, moved, min(oldest.values()))]
    raise FaultPlacementError("no row message can move to another partition cleanly")


def _flushes(deliveries: list[Delivery], indexes: list[int]) -> list[tuple[int, int]]:
    """(first, last) index of every run of row messages from one flush among ``indexes``."""
    runs: list[list[int]] = []
    for i in indexes:
        if runs and i == runs[-1][-1] + 1 and deliveries[i].rows is deliveries[i - 1].rows:
            runs[-1].append(i)
        else:
            runs.append([i])
    return [(run[0], run[-1]) for run in runs]


def _cuts(rows: Sequence[RowChangedEvent]) -> list[int]:
    """Transaction boundaries in ``rows`` with a table on both sides."""
    return [
        k
        for k in range(1, len(rows))
        if rows[k - 1].commit_ts != rows[k].commit_ts
        and {r.table.name for r in rows[:k]} & {r.table.name for r in rows[k:]}
    ]


def reordered_versions(inj: Injector, zone: int) -> list[Mark]:
    for p, _, _, indexes in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for first, last in _flushes(deliveries, indexes):
            rows = deliveries[first].rows
            cuts = _cuts(rows)
            if not cuts:
                continue
            # the flush cut at a transaction boundary, the later part sent first: whole
            # transactions move, so no transaction's run of rows is cut in two (§6.3)
            cut = inj.rng.choice(cuts)
            earlier, later = rows[:cut], rows[cut:]
            template = deliveries[first]
            moved, behind = (
                [dataclasses.replace(d, rows=part) for d in inj.encode_rows(template, part)]
                for part in (later, earlier)
            )
            deliveries[first : last + 1] = moved + behind
            newest: dict[tuple[str, str], int] = {}
            for row in later:
                name = (row.table.schema, row.table.name)
                newest[name] = max(newest.get(name, 0), row.commit_ts)
            marks = []
            for delivery in behind:  # what a checker sees: rows older than their table's newest
                older = []
                for decoded in inj.decode_rows(delivery):
                    name, ts = (decoded.schema, decoded.table), row_ts(decoded)
                    if ts < newest.get(name, 0):
                        older.append(ts)
                    else:
                        newest[name] = ts
                if older:
                    marks.append(Mark("commit-ts-order", p, delivery, min(older)))
            return marks
    raise FaultPlacementError("no flush holds two transactions that share a table")
