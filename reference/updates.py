"""How TiCDC splits an UPDATE that changes a key, per profile (ground truth §6.5).

Kafka sinks split by default (``output-raw-change-event = false``): the UPDATE becomes a
DELETE of the old image and an INSERT of the new one, with the same commit ts.

* ``tiflow``: an UPDATE is split when a column carrying the UniqueKey or HandleKey flag has a
  different value string (``ColumnValueString``) in the two images. If any row of the
  transaction was split, the transaction's rows are re-sorted: DELETEs, then UPDATEs, then
  INSERTs. TiCDC uses Go's unstable ``sort.Slice``; this module sorts stably, so rows of one
  kind keep their order here, which TiCDC does not promise.
* ``ticdc``: an UPDATE is split when a primary-key or unique-index column differs; the DELETE
  stays in place and the INSERTs are appended at the end of the transaction.
"""

from __future__ import annotations

from collections.abc import Sequence

from ticdc_conformance.reference.dispatch import column_value_string
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.tables import (
    HANDLE_KEY_FLAG,
    PRIMARY_KEY_FLAG,
    UNIQUE_KEY_FLAG,
    Profile,
)

__all__ = ["changes_key", "split_key_updates"]

_ORDER = {"delete": 0, "update": 1, "insert": 2}


def changes_key(row: RowChangedEvent, profile: Profile) -> bool:
    """Whether TiCDC of ``profile`` splits this row (an UPDATE that changes a key column)."""
    if row.op != "update" or row.before is None or row.after is None:
        return False
    table = row.table
    flags = table.column_flags(profile)
    if profile == "tiflow":
        watched = {i for i, bits in enumerate(flags) if bits & (UNIQUE_KEY_FLAG | HANDLE_KEY_FLAG)}
    else:
        watched = {i for i, bits in enumerate(flags) if bits & (PRIMARY_KEY_FLAG | UNIQUE_KEY_FLAG)}
        for index in table.indexes:
            if index.unique or index.primary:
                watched.update(p for n in index.columns if (p := table.position(n)) is not None)
    for i in sorted(watched):
        column, old, new = table.columns[i], row.before[i], row.after[i]
        if profile == "tiflow":
            if column_value_string(column, old) != column_value_string(column, new):
                return True
        elif old != new:
            return True
    return False


def _halves(row: RowChangedEvent) -> tuple[RowChangedEvent, RowChangedEvent]:
    ts, table, row_id = row.commit_ts, row.table, row.row_id
    return (
        RowChangedEvent(commit_ts=ts, table=table, op="delete", before=row.before, row_id=row_id),
        RowChangedEvent(commit_ts=ts, table=table, op="insert", after=row.after, row_id=row_id),
    )


def split_key_updates(rows: Sequence[RowChangedEvent], profile: Profile) -> list[RowChangedEvent]:
    """The rows of one transaction as TiCDC of ``profile`` sends them to a Kafka sink."""
    if profile == "tiflow":
        out: list[RowChangedEvent] = []
        split = False
        for row in rows:
            if changes_key(row, profile):
                out.extend(_halves(row))
                split = True
            else:
                out.append(row)
        return sorted(out, key=lambda r: _ORDER[r.op]) if split else out
    kept: list[RowChangedEvent] = []
    inserts: list[RowChangedEvent] = []
    for row in rows:
        if changes_key(row, profile):
            delete, insert = _halves(row)
            kept.append(delete)
            inserts.append(insert)
        else:
            kept.append(row)
    return kept + inserts
