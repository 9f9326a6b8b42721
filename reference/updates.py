"""The order TiCDC sends a transaction's rows in, and its split of key-changing UPDATEs (§6.5).

TiCDC handles a transaction one table at a time (tiflow ``SingleTableTxn``, the new
architecture's per-table dispatcher), so every rule below applies to one table's rows of one
transaction, and tables keep the order in which the transaction first touched them.

* Sorter order, both profiles: TiCDC's sorter keys a transaction's rows by DML kind, DELETEs
  before UPDATEs before INSERTs, then by row key (tiflow
  ``cdc/processor/sourcemanager/sorter/pebble/encoding/key.go`` ``EncodeKey``, ticdc
  ``logservice/eventstore/format.go`` ``DMLOrder``). The row key order is the order of the
  int row handle (``RowChangedEvent.effective_row_id``); rows without one keep their order.
* Which UPDATE changes a key: profile ``tiflow`` splits when a column carrying the UniqueKey
  or HandleKey flag has a different value string (``ColumnValueString``) in the two images
  (tiflow ``cdc/model/sink.go`` ``ShouldSplitUpdateEvent``); profile ``ticdc`` when a column
  of the primary key or of a unique index, or one with the UniqueKey flag, differs (ticdc
  ``pkg/common/event/codec.go`` ``IsUKChanged``).
* Split, ``output-raw-change-event = false`` (the default): the UPDATE becomes a DELETE of
  the old image and an INSERT of the new one, with the same commit ts.

  - ``tiflow``: if any row was split, the table's rows are sorted again by kind, DELETEs,
    UPDATEs, INSERTs (``TrySplitAndSortUpdateEvent``). Go's ``sort.Sort`` is unstable in
    general but sorts 12 elements or fewer by insertion sort, which is stable; this module
    sorts stably, which is exact up to 12 rows and keeps rows of one kind in order beyond.
  - ``ticdc``: the DELETE stays where the UPDATE was and the INSERTs go after the table's
    other rows (ticdc ``pkg/eventservice/event_scanner.go`` ``appendRow``, ``commitTxn``).
* ``output-raw-change-event = true``: the UPDATE is sent whole, old and new image.

An UPDATE that gives a row a new clustered primary key (an integer primary key, or any
clustered one) never reaches TiCDC as an UPDATE: TiDB removes the old record and adds a new
one under the new row key (pingcap/tidb ``pkg/executor/write.go`` ``updateRecord``), so
TiCDC reads a DELETE and an INSERT whatever ``output-raw-change-event`` says. Only a change
of a unique key, or of a NONCLUSTERED primary key, keeps the row key and is an UPDATE.
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
    TableInfo,
)

__all__ = ["changes_key", "sink_order", "split_key_updates"]

_ORDER = {"delete": 0, "update": 1, "insert": 2}


def changes_key(row: RowChangedEvent, profile: Profile) -> bool:
    """Whether TiCDC of ``profile`` splits this row (an UPDATE that changes a key column)."""
    if row.op != "update" or row.before is None or row.after is None:
        return False
    table = row.table
    for i in _watched(table, profile):
        column, old, new = table.columns[i], row.before[i], row.after[i]
        if profile == "tiflow":
            # one value has one value string: a column an update left as it was is no change
            if old is not new and column_value_string(column, old) != column_value_string(
                column, new
            ):
                return True
        elif old != new:
            return True
    return False


_WATCHED_KEPT = 64
"""Tables (per profile) whose watched key columns ``_watched`` keeps; past this many it starts
again."""
_watched_by_table: dict[tuple[int, str], tuple[TableInfo, tuple[int, ...]]] = {}


def _watched(table: TableInfo, profile: Profile) -> tuple[int, ...]:
    """The positions whose change splits an UPDATE, in order; once per table object and profile.

    Kept by the object's identity with the object beside them (as ``validation.column_checks``
    keeps column types), so a new table taking a collected one's ``id`` is never mistaken for it.
    """
    kept = _watched_by_table.get((id(table), profile))
    if kept is not None and kept[0] is table:
        return kept[1]
    flags = table.column_flags(profile)
    if profile == "tiflow":
        watched = {i for i, bits in enumerate(flags) if bits & (UNIQUE_KEY_FLAG | HANDLE_KEY_FLAG)}
    else:
        watched = {i for i, bits in enumerate(flags) if bits & (PRIMARY_KEY_FLAG | UNIQUE_KEY_FLAG)}
        for index in table.indexes:
            if index.unique or index.primary:
                watched.update(p for n in index.columns if (p := table.position(n)) is not None)
    if len(_watched_by_table) >= _WATCHED_KEPT:
        _watched_by_table.clear()
    positions = tuple(sorted(watched))
    _watched_by_table[(id(table), profile)] = (table, positions)
    return positions


def _halves(row: RowChangedEvent) -> tuple[RowChangedEvent, RowChangedEvent]:
    ts, table, row_id = row.commit_ts, row.table, row.row_id
    return (
        RowChangedEvent(commit_ts=ts, table=table, op="delete", before=row.before, row_id=row_id),
        RowChangedEvent(commit_ts=ts, table=table, op="insert", after=row.after, row_id=row_id),
    )


def split_key_updates(rows: Sequence[RowChangedEvent], profile: Profile) -> list[RowChangedEvent]:
    """One table's rows of one transaction, key-changing UPDATEs split as ``profile`` does."""
    if profile == "tiflow":
        out: list[RowChangedEvent] = []
        split = False
        for row in rows:
            if row.op == "update" and changes_key(row, profile):
                out.extend(_halves(row))
                split = True
            else:
                out.append(row)
        return sorted(out, key=lambda r: _ORDER[r.op]) if split else out
    kept: list[RowChangedEvent] = []
    inserts: list[RowChangedEvent] = []
    for row in rows:
        if row.op == "update" and changes_key(row, profile):
            delete, insert = _halves(row)
            kept.append(delete)
            inserts.append(insert)
        else:
            kept.append(row)
    return kept + inserts


def sink_order(
    rows: Sequence[RowChangedEvent], profile: Profile, *, output_raw_change_event: bool = False
) -> list[RowChangedEvent]:
    """The rows of one transaction as TiCDC of ``profile`` hands them to a Kafka sink.

    Table by table (in the order the transaction first touched them): the sorter's order,
    then the split of key-changing UPDATEs unless ``output_raw_change_event``.
    """
    if len(rows) == 1:  # nothing to sort; only an UPDATE may split
        (row,) = rows
        if output_raw_change_event or row.op != "update":
            return [row]
        return split_key_updates(rows, profile)
    tables: dict[tuple[str, str, int | None], list[RowChangedEvent]] = {}
    for row in rows:
        table = row.table
        tables.setdefault((table.schema, table.name, table.partition_id), []).append(row)
    out: list[RowChangedEvent] = []
    for group in tables.values():
        if len(group) > 1:
            group.sort(key=_sorter_key)
        out.extend(group if output_raw_change_event else split_key_updates(group, profile))
    return out


def _sorter_key(row: RowChangedEvent) -> tuple[int, int]:
    """The sorter's order of a row: DML kind, then the int row handle."""
    row_id = row.row_id
    return _ORDER[row.op], row_id if row_id is not None else row.effective_row_id()
