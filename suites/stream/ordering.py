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
from ticdc_conformance.suites.stream.range_state import RangeTracker

__all__ = ["BROKEN_AFTER_ORDER", "ORDER_DETAILS", "Redeliveries", "RowOrder", "TableOrder"]

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
        """The commit ts of a DDL of the row's table already seen that is newer than the row.

        The rule's definition, row by row: ``RowOrder.broken`` applies it inline, and
        ``tests/test_stream_row_order.py`` holds the two to the same answers.
        """
        barrier = self._barrier.get((row.schema, row.table))
        if barrier is None or row.commit_ts is None or row.commit_ts >= barrier:
            return None
        return barrier

    def delete_after_insert(self, row: DecodedRow) -> bool:
        """Whether ``row`` is a DELETE after an INSERT of its table at its commit ts.

        Feed a partition's rows (first deliveries) in order; a new commit ts starts a new run.
        The rule's definition, row by row, as ``before_ddl``'s.
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


_HELD = 4_096
"""Rows ``Redeliveries`` holds unhashed at most (whole decoded rows: a few kilobytes each);
past that it fingerprints them."""


def _fingerprint_of(first: DecodedRow | int) -> int:
    return first if type(first) is int else _fingerprint(first)  # type: ignore[arg-type]


class Redeliveries:
    """The first delivery of each transaction since the last watermark, row by row.

    A first run's rows are held as they are and fingerprinted only when a redelivery is
    compared with them (most runs never are), or when more than ``_HELD`` rows are held
    (a partition with few watermarks): the rows held whole stay bounded, each fingerprinted at
    most once. The fingerprints themselves stay until the next watermark.
    """

    def __init__(self) -> None:
        self.runs: dict[int, list[DecodedRow | int]] = {}
        """Commit ts → the rows (or their fingerprints) of its first delivery since the last
        watermark."""
        self._run_ts: int | None = None
        self._run_position = 0
        self._replaying = False
        self._held = 0
        """Rows in ``runs`` not yet fingerprinted."""
        self._pending: list[list[DecodedRow | int]] = []
        """The runs that may hold rows not yet fingerprinted: those started since the last
        pass of ``_fingerprint_held``, and the run it found being recorded."""

    def clear(self) -> None:
        """Forget every run: a watermark passed, rows above it were never delivered before."""
        self.runs.clear()
        self._pending.clear()
        self._run_ts = None
        self._held = 0

    def start(self, ts: int, row: DecodedRow) -> list[DecodedRow | int]:
        """The first run of ``ts`` starts with ``row``.

        The caller may go on appending to it (``recording``) and counts the rows with ``held``,
        this first one too.
        """
        self._run_ts, self._run_position, self._replaying = ts, 0, False
        run: list[DecodedRow | int] = [row]
        self.runs[ts] = run
        self._pending.append(run)
        return run

    def same_as_first(self, row: DecodedRow, ts: int) -> bool:
        """Whether ``row`` of a transaction delivered again repeats its first delivery.

        A run with a commit ts seen before is a redelivery and must repeat the first run in
        order. A transaction may change one row twice, so rows are matched by position, not
        by key.
        """
        if ts != self._run_ts:
            if ts not in self.runs:
                self.start(ts, row)
                self.held(1)
                return True
            self._run_ts, self._run_position, self._replaying = ts, 0, True
        first = self.runs[ts]
        if not self._replaying:
            first.append(row)
            self.held(1)
            return True
        position, self._run_position = self._run_position, self._run_position + 1
        return position < len(first) and _fingerprint_of(first[position]) == _fingerprint(row)

    @property
    def run_ts(self) -> int | None:
        """The commit ts of the run the last row belonged to."""
        return self._run_ts

    def recording(self) -> list[DecodedRow | int] | None:
        """The current run's first delivery while it is being recorded (not a redelivery).

        A caller may append the run's next rows to it itself, then say so with ``held``.
        """
        if self._run_ts is None or self._replaying:
            return None
        return self.runs[self._run_ts]

    def held(self, count: int) -> None:
        """``count`` rows were appended to the run ``recording`` gave."""
        self._held += count
        if self._held > _HELD:
            self._fingerprint_held()

    def _fingerprint_held(self) -> None:
        for run in self._pending:
            # rows are appended at a run's end: its rows not yet fingerprinted are its last
            start = len(run)
            while start and type(run[start - 1]) is not int:
                start -= 1
            run[start:] = [_fingerprint_of(held) for held in run[start:]]
        recording = self.recording()
        self._pending = [] if recording is None else [recording]
        self._held = 0


_BEFORE_DDL = ("row-before-ddl",)
_OLDER = ("commit-ts-order",)


class RowOrder:
    """The order rules of one partition's first deliveries, a message's rows at a time.

    ``row-before-ddl`` and ``commit-ts-order`` first; a row breaking neither is the newest of
    its table and goes on to ``split-update-order`` (``TableOrder``) and
    ``duplicate-identical`` (``Redeliveries``), as ``BROKEN_AFTER_ORDER`` says. One loop per
    message rather than a call per rule and row: this runs for every row of a dump.
    """

    __slots__ = ("newest", "redeliveries", "tables", "tracker")

    def __init__(self, tracker: RangeTracker | None = None) -> None:
        self.tables = TableOrder()
        self.redeliveries = Redeliveries()
        self.newest: dict[_Table, int] = {}
        """(schema, table) → the newest commit ts of a first delivery in order."""
        self.tracker = tracker
        """Of a range of the partition: what its rows assumed (``range_state.py``)."""

    def broken(  # noqa: C901, PLR0912, PLR0915 - one loop per message: the hottest of the rules
        self, rows: list[DecodedRow], *, misplaced: bool
    ) -> dict[str, list[DecodedRow]] | None:
        """The rules ``rows`` (first deliveries, in order) break, each with its rows.

        ``misplaced``: the message is on a partition its dispatcher does not pick, so its
        rows are no redelivery (a redelivery goes where the first delivery went).
        """
        tables, redeliveries, newest = self.tables, self.redeliveries, self.newest
        barriers, inserted = tables._barrier, tables._inserted  # noqa: SLF001 - one module's
        tracker = self.tracker
        floors = None if tracker is None else tracker.floors
        broken: dict[str, list[DecodedRow]] | None = None
        # the row before, when it was in order: a row of its table and commit ts is too
        last_ts: int | None = None
        last_schema = last_name = ""
        table: _Table = ("", "")
        # the first run ``redeliveries`` is recording (``same_as_first`` inline: per row)
        runs = redeliveries.runs
        run = None if misplaced else redeliveries.recording()
        run_ts = redeliveries.run_ts
        held = 0
        for row in rows:
            ts = row.commit_ts
            if ts is None:
                continue
            if ts != last_ts or row.table != last_name or row.schema != last_schema:
                table = (row.schema, row.table)
                if floors is not None:
                    floor = floors.get(table)
                    if floor is None or ts < floor:
                        floors[table] = ts
                barrier = barriers.get(table)
                rules: tuple[str, ...]
                if barrier is not None and ts < barrier:
                    rules = _BEFORE_DDL
                elif (top := newest.get(table)) is not None and ts < top:
                    rules = _OLDER
                else:
                    rules = ()
                if rules:
                    last_ts = None
                    if broken is None:
                        broken = {}
                    broken.setdefault(rules[0], []).append(row)
                    continue
                last_ts, last_schema, last_name = ts, row.schema, row.table
                newest[table] = ts
                if tracker is not None and tracker.first_run_ts is None:
                    tracker.first_run_ts = ts
                if ts != tables._run_ts:  # noqa: SLF001 - TableOrder.delete_after_insert
                    tables._run_ts = ts  # noqa: SLF001
                    if inserted:
                        inserted.clear()
            op = row.op
            if op == "insert":
                inserted.add(table)
                split = False
            else:
                split = op == "delete" and table in inserted
            if misplaced:
                same = True
            elif ts == run_ts and run is not None:  # the first run goes on
                run.append(row)
                held += 1
                same = True
            elif ts != run_ts and ts not in runs:  # a first run starts
                run, run_ts = redeliveries.start(ts, row), ts
                held += 1
                same = True
            else:
                same = redeliveries.same_as_first(row, ts)
                run, run_ts = redeliveries.recording(), ts
            if same and not split:
                continue
            if broken is None:
                broken = {}
            for rule in BROKEN_AFTER_ORDER[split, same]:
                broken.setdefault(rule, []).append(row)
        if held:
            redeliveries.held(held)
        return broken
