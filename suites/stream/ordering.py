"""Two orders TiCDC's sink keeps within one partition: around a DDL, and in a split UPDATE.

* ``row-before-ddl`` (ground truth §6.2): a DDL is a barrier. TiCDC writes a DDL only after
  every row of its table committed before it has been flushed (tiflow's owner holds the tables
  at the DDL's commit ts minus one until the DDL is written, ``cdc/owner/ddl_manager.go``; the
  new architecture's dispatcher writes a block event only after the events before it are
  flushed, and the events after it only once it is, ``downstreamadapter/dispatcher/
  basic_dispatcher.go``). So after a DDL of a table, no row of that table older than the DDL
  arrives on the partition, but as an exact re-delivery of an earlier message (a replay after a
  restart, counted under ``allowed-duplicate`` before this rule is asked). Both profiles.
* ``split-update-order`` (§6.5): within one transaction TiCDC hands a table's rows to the sink
  DELETEs first (the sorter's order); a key-changing UPDATE split into a DELETE and an INSERT
  keeps that order, tiflow by sorting the table's rows by kind again, the new architecture by
  sending the INSERT halves at the end of the transaction. Per partition, the rows of one
  table at one commit ts therefore never show a DELETE after an INSERT; one that does is the
  INSERT half of a split UPDATE (or an INSERT) overtaking a DELETE, which a consumer applies as
  a duplicate unique key or a lost row. Both profiles.

A DDL that names no table (``CREATE DATABASE``) is a barrier for no row this module tracks.

And one order of redeliveries: the rows of one transaction reach a partition as one contiguous
run (§6.3), so a later run with the same commit ts is a redelivery and repeats the first run
row for row (``duplicate-identical``: ``Redeliveries``).
"""

from __future__ import annotations

from ticdc_conformance.reference.decoded import DecodedDDL, DecodedRow

__all__ = ["BROKEN_AFTER_ORDER", "ORDER_DETAILS", "Redeliveries", "TableOrder"]

_Table = tuple[str, str]


ORDER_DETAILS = {
    "row-before-ddl": "older than a DDL of its table delivered before it",
    "split-update-order": "a DELETE after an INSERT of its table in one transaction",
    "commit-ts-order": "older than a row of its table already delivered",
    "duplicate-identical": "delivered before with other images",
}
"""The order rules of first deliveries, in the order a message's findings are reported."""


BROKEN_AFTER_ORDER = {
    (False, True): (),
    (False, False): ("duplicate-identical",),
    (True, True): ("split-update-order",),
    (True, False): ("split-update-order", "duplicate-identical"),
}
"""The order rules a first delivery in commit-ts order breaks, by (a DELETE after an INSERT
of its table in its run, the same as its first delivery)."""


class TableOrder:
    """The DDL barrier and the DELETE-before-INSERT order of one partition, row by row."""

    __slots__ = ("_barrier", "_inserted", "_run_ts")

    def __init__(self) -> None:
        self._barrier: dict[_Table, int] = {}
        """(schema, table) → the newest commit ts of a DDL of the table seen so far."""
        self._run_ts: int | None = None
        self._inserted: set[_Table] = set()
        """Tables with an INSERT in the current run of one commit ts."""

    @property
    def barriers(self) -> dict[_Table, int]:
        """(schema, table) → the newest commit ts of a DDL of the table seen so far."""
        return dict(self._barrier)

    @property
    def run_ts(self) -> int | None:
        """The commit ts of the current run of rows (``delete_after_insert``)."""
        return self._run_ts

    def ddl(self, event: DecodedDDL) -> None:
        """Note a DDL: rows of its table older than it may no longer arrive."""
        if event.commit_ts is None or not event.table:
            return
        table = (event.schema, event.table)
        self._barrier[table] = max(self._barrier.get(table, 0), event.commit_ts)

    def before_ddl(self, row: DecodedRow) -> int | None:
        """The commit ts of a DDL of the row's table already seen that is newer than the row."""
        barrier = self._barrier.get((row.schema, row.table))
        if barrier is None or row.commit_ts is None or row.commit_ts >= barrier:
            return None
        return barrier

    def delete_after_insert(self, row: DecodedRow) -> bool:
        """Whether ``row`` is a DELETE after an INSERT of its table at its commit ts.

        Feed a partition's rows (first deliveries) in order; a new commit ts starts a new run.
        """
        if row.commit_ts != self._run_ts:
            self._run_ts = row.commit_ts
            self._inserted.clear()
        table = (row.schema, row.table)
        if row.op == "insert":
            self._inserted.add(table)
            return False
        return row.op == "delete" and table in self._inserted


def _fingerprint(row: DecodedRow) -> int:
    whole = (row.schema, row.table, row.op, row.before, row.after)
    try:
        return hash(whole)
    except TypeError:  # a value without hash: compare by its text
        return hash(repr(whole))


class Redeliveries:
    """The first delivery of each transaction since the last watermark, row by row."""

    def __init__(self) -> None:
        self._runs: dict[int, list[int]] = {}
        """Commit ts → row fingerprints of its first delivery since the last watermark."""
        self._run_ts: int | None = None
        self._run_position = 0
        self._replaying = False

    def clear(self) -> None:
        """Forget every run: a watermark passed, rows above it were never delivered before."""
        self._runs.clear()
        self._run_ts = None

    def same_as_first(self, row: DecodedRow, ts: int) -> bool:
        """Whether ``row`` of a transaction delivered again repeats its first delivery.

        A run with a commit ts seen before is a redelivery and must repeat the first run in
        order. A transaction may change one row twice, so rows are matched by position, not
        by key.
        """
        if ts != self._run_ts:
            self._run_ts, self._run_position = ts, 0
            self._replaying = ts in self._runs
            if not self._replaying:
                self._runs[ts] = []
        first = self._runs[ts]
        fingerprint = _fingerprint(row)
        if not self._replaying:
            first.append(fingerprint)
            return True
        position, self._run_position = self._run_position, self._run_position + 1
        return position < len(first) and first[position] == fingerprint
