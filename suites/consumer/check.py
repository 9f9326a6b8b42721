"""The consumer check in plain Python: the rules of ``catalog`` over small inputs.

State rules, per expected table: the consumer's snapshot is keyed by the table's handle-key
columns (each value rendered by ``values.actual_text``); a key only expected is
``row-missing``, a key only in the snapshot (or held by a second row) ``row-unexpected``, a key
in both with a column whose values differ by ``values.same_value`` ``row-differs``, naming every
such column with both texts. A snapshot without the table misses every expected row.

Log rules, over the applied log in its order against the expected log (a change is identified
by its table, commit ts, op and handle key; the expected log's coordinates are where a replay
first delivered it):

* ``change-applied-twice``: a change applied again (at its second application);
* ``change-lost``: an expected change never applied; ``change-unexpected``: an applied change
  the expected log lacks (one above the final watermark is pending, not unexpected);
* ``key-order-broken``: a change applied after a change of the same key with a greater commit
  ts;
* ``change-before-ddl``: a row applied after a DDL of its table with a greater commit ts, or a
  DDL applied after a row of its table with a greater commit ts;
* ``transaction-split`` (opt-in): rows of one commit ts applied, then other rows, then rows
  of that commit ts again.

Every finding carries the table, the key and the coordinates known; ``Tally`` keeps the counts
and the first ``samples`` findings per rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ticdc_conformance.reference.decoded import DecodedDDL, DecodedRow
from ticdc_conformance.reference.fold import handle_key_of
from ticdc_conformance.suites.consumer.actual import AppliedEvent, Snapshot, rows_as_text
from ticdc_conformance.suites.consumer.catalog import RULES
from ticdc_conformance.suites.consumer.expected import (
    KEY_COLUMN,
    ExpectedState,
    ExpectedTable,
    key_text,
)
from ticdc_conformance.suites.consumer.values import same_value, value_text

__all__ = ["Tally", "check_log", "check_snapshot", "row_difference"]

Finding = dict[str, Any]


@dataclass(slots=True)
class Tally:
    """Counts per rule and the first ``samples`` findings of each."""

    samples: int = 20
    counts: Counter[str] = field(default_factory=Counter)
    found: dict[str, list[Finding]] = field(default_factory=dict)
    checked: Counter[str] = field(default_factory=Counter)
    """What was compared: ``rows`` expected, ``actual rows``, ``changes`` applied."""

    def add(self, rule: str, finding: Finding) -> None:
        """Count one finding of ``rule``; keep it while the rule has room for samples."""
        self.counts[rule] += 1
        self.keep(rule, finding)

    def keep(self, rule: str, finding: Finding) -> None:
        """Keep ``finding`` as a sample of ``rule`` (counted elsewhere) while there is room."""
        assert rule in RULES, rule
        kept = self.found.setdefault(rule, [])
        if len(kept) < self.samples:
            kept.append(finding)


def _table(table: ExpectedTable) -> str:
    return f"{table.schema}.{table.table}"


def row_difference(
    table: ExpectedTable, expected: Mapping[str, str | None], actual: Mapping[str, str | None]
) -> list[dict[str, str | None]]:
    """The columns of one row whose values differ, each with both texts."""
    return [
        {"column": column, "expected": expected.get(column), "actual": actual.get(column)}
        for column in table.columns
        if not same_value(
            expected.get(column), actual.get(column), table.kinds[column], table.zones[column]
        )
    ]


def _snapshot_rows(
    table: ExpectedTable, source: Snapshot, tally: Tally
) -> dict[str, dict[str, str | None]] | None:
    arrow = source.table(table)
    if arrow is None:
        return None
    rows: dict[str, dict[str, str | None]] = {}
    for row in rows_as_text(arrow):
        tally.checked["actual rows"] += 1
        key = key_text([row.get(column) for column in table.key])
        if key in rows:
            tally.add(
                "row-unexpected", {"table": _table(table), "key": key, "detail": "a key held twice"}
            )
            continue
        rows[key] = row
    return rows


def check_snapshot(expected: ExpectedState, source: Snapshot, tally: Tally) -> None:
    """The state rules over every expected table."""
    for table in expected.tables:
        actual = _snapshot_rows(table, source, tally)
        name = _table(table)
        for row in expected.rows(table):
            tally.checked["rows"] += 1
            key = str(row[KEY_COLUMN])
            got = None if actual is None else actual.pop(key, None)
            if got is None:
                detail = "no such table" if actual is None else "no row at this key"
                tally.add(
                    "row-missing", {"table": name, "key": key, "detail": detail, "expected": row}
                )
            elif differences := row_difference(table, row, got):
                tally.add("row-differs", {"table": name, "key": key, "columns": differences})
        for key, row in (actual or {}).items():
            tally.add("row-unexpected", {"table": name, "key": key, "actual": row})


_OP_RANK = {"delete": 0, "update": 1, "insert": 2}


def _expected_changes(
    expected: ExpectedState,
) -> dict[tuple[object, ...], dict[str, Any]]:
    changes: dict[tuple[object, ...], dict[str, Any]] = {}
    for item in expected.log():
        last = item["op"] if item["kind"] == "row" else item["query"]
        where = item["key"] if item["kind"] == "row" else "ddl"
        changes[(item["schema"], item["table"], item["commit_ts"], where, last)] = item
    return changes


@dataclass(slots=True)
class _LogCheck:
    """The log rules' state while the applied log streams past."""

    keys: Mapping[tuple[str, str], tuple[str, ...]]
    expected: dict[tuple[object, ...], dict[str, Any]]
    tally: Tally
    transactional: bool
    applied: dict[tuple[object, ...], AppliedEvent] = field(default_factory=dict)
    key_ts: dict[tuple[str, str, str], tuple[int, int]] = field(default_factory=dict)
    ddl_ts: dict[tuple[str, str], int] = field(default_factory=dict)
    row_ts: dict[tuple[str, str], int] = field(default_factory=dict)
    open_ts: int | None = None
    closed: set[int] = field(default_factory=set)

    def finding(self, applied: AppliedEvent, key: str | None, detail: str) -> Finding:
        event = applied.event
        return {
            "table": f"{getattr(event, 'schema', '')}.{getattr(event, 'table', '')}",
            "key": key,
            "commit_ts": event.commit_ts,
            "line": applied.line,
            "source": None if applied.source is None else str(applied.source),
            "detail": detail,
        }

    def key_of(self, row: DecodedRow) -> tuple[str | None, str | None]:
        columns = self.keys.get((row.schema, row.table), ())
        texts = []
        for image in (row.after if row.op != "delete" else row.before, row.before):
            key = handle_key_of(image, columns) if image is not None and columns else None
            texts.append(None if key is None else key_text([value_text(v) for v in key]))
        new, old = texts
        return new, (old if row.op == "update" and old != new else None)

    def see(self, applied: AppliedEvent) -> None:
        event = applied.event
        if isinstance(event, DecodedDDL) and event.commit_ts is not None:
            name = (event.schema, event.table)
            self.identify(applied, (*name, event.commit_ts, "ddl", event.query), None)
            if self.row_ts.get(name, -1) > event.commit_ts:
                self.tally.add(
                    "change-before-ddl",
                    self.finding(applied, None, "a DDL applied after a later row of its table"),
                )
            self.ddl_ts[name] = max(self.ddl_ts.get(name, 0), event.commit_ts)
        elif isinstance(event, DecodedRow) and event.commit_ts is not None:
            self.row(applied, event, event.commit_ts)

    def row(self, applied: AppliedEvent, row: DecodedRow, commit_ts: int) -> None:
        name = (row.schema, row.table)
        key, old_key = self.key_of(row)
        self.tally.checked["changes"] += 1
        self.identify(applied, (*name, commit_ts, key, row.op), key)
        order = (commit_ts, _OP_RANK[row.op])
        for changed in (key, old_key):
            if changed is None:
                continue
            last = self.key_ts.get((*name, changed))
            if last is not None and order < last:
                detail = f"applied after a change of commit ts {last[0]}"
                self.tally.add("key-order-broken", self.finding(applied, changed, detail))
            self.key_ts[(*name, changed)] = max(order, last or order)
        if commit_ts < self.ddl_ts.get(name, -1):
            detail = f"applied after the DDL of commit ts {self.ddl_ts[name]}"
            self.tally.add("change-before-ddl", self.finding(applied, key, detail))
        self.row_ts[name] = max(self.row_ts.get(name, 0), commit_ts)
        if self.transactional and commit_ts != self.open_ts:
            if commit_ts in self.closed:
                detail = "rows of this commit ts were applied before other rows came between"
                self.tally.add("transaction-split", self.finding(applied, key, detail))
            if self.open_ts is not None:
                self.closed.add(self.open_ts)
            self.open_ts = commit_ts

    def identify(
        self, applied: AppliedEvent, identity: tuple[object, ...], key: str | None
    ) -> None:
        first = self.applied.get(identity)
        if first is not None:
            where = first.source or f"line {first.line}"
            detail = f"applied before at {where}"
            self.tally.add("change-applied-twice", self.finding(applied, key, detail))
            return
        self.applied[identity] = applied
        if identity not in self.expected:
            detail = "not a change of the expected log"
            self.tally.add("change-unexpected", self.finding(applied, key, detail))

    def lost(self) -> None:
        for identity, item in self.expected.items():
            if identity not in self.applied:
                self.tally.add(
                    "change-lost",
                    {
                        "table": f"{item['schema']}.{item['table']}",
                        "key": item["key"],
                        "commit_ts": item["commit_ts"],
                        "source": f"{item['topic']}[{item['partition']}]@{item['offset']}",
                        "detail": f"{item['op'] or 'DDL ' + str(item['query'])} never applied",
                    },
                )


def check_log(
    expected: ExpectedState,
    applied: Iterable[AppliedEvent],
    tally: Tally,
    *,
    transactional: bool = False,
) -> None:
    """The log rules over an applied log (the module doc)."""
    keys = {table.name: table.key for table in expected.tables}
    check = _LogCheck(keys, _expected_changes(expected), tally, transactional)
    for event in applied:
        check.see(event)
    check.lost()
