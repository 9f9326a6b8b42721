"""Where a row's dispatcher sends it, recomputed from the decoded row (ground truth §6.1).

``Affinity`` computes, for the rows of one message, the partitions their dispatcher picks, and
which rows cannot be recomputed: where the encoder replaced invalid UTF-8 with U+FFFD (Open
``tiflow``, Simple JSON, §1.4), a row whose hashed text holds U+FFFD may have been hashed from
other bytes. The table dispatcher gives the same partition for every row of a table, so it is
computed once per table. Simple marks no handle key: the schema its decoder resolved the row
with says which columns it has (``index-value``). With routing rules each table has its rule's
dispatcher (the first ``[[sink.dispatchers]]`` rule whose matcher takes it, docs/kafka.md).
With ticdc's ``target-schema``/``target-table`` the rule and the hashed schema and table names
are the source's (ticdc ``downstreamadapter/sink/kafka/sink.go``): a row's names are mapped
back (``routing.SourceNames``); a row that may stand for several sources is where it is when
one of them picks its partition, and a row whose source cannot be told is not recomputed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from ticdc_conformance.reference import DecodedRow
from ticdc_conformance.reference.dispatch import (
    DispatchRule,
    decoded_partition_of,
    hashed_columns,
)
from ticdc_conformance.reference.losses import replaced_text_types
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG
from ticdc_conformance.suites.stream.catalog import CheckSettings
from ticdc_conformance.suites.stream.routing import SourceNames

__all__ = ["Affinity"]


def _replaced_text(row: DecodedRow, rule: DispatchRule, handle_key: frozenset[str] | None) -> bool:
    """Whether a text the rule hashes holds U+FFFD, maybe for bytes TiCDC hashed (§1.4)."""
    columns = hashed_columns(row, rule, handle_key=handle_key) or ()
    return any(isinstance(c.value, str) and "\ufffd" in c.value for c in columns)


class Affinity:
    """The dispatcher of one partition's checker, with its caches."""

    def __init__(self, settings: CheckSettings, stateful: Any) -> None:  # noqa: ANN401 - Simple's decoder
        self.settings = settings
        self._stateful = stateful
        self._handles: dict[tuple[str, str, int | None], frozenset[str] | None] = {}
        self._table_partitions: dict[tuple[str, str], int | None] = {}
        self._text_replaced = bool(replaced_text_types(settings.protocol, settings.profile))
        self._router = settings.router()
        self._sources = SourceNames(self._router)
        self._rules: dict[tuple[str, str], DispatchRule] = {}
        self._by_table: dict[tuple[str, str], bool] = {}
        """Per name a message carries: whether every source's rule is the table dispatcher."""
        self._placed: dict[tuple[tuple[str, str], int | None], set[int | None]] = {}
        """Per name under table dispatchers and ``here``: what its rows add to the picks."""

    def rule(self, row: DecodedRow) -> DispatchRule:
        """The partition rule of a row's table (under its source names)."""
        return self._rule_of((row.schema, row.table))

    def _rule_of(self, name: tuple[str, str]) -> DispatchRule:
        if self._router is None:
            return self.settings.dispatcher
        if name not in self._rules:
            self._rules[name] = self._router.rule_for(*name).partition
        return self._rules[name]

    def _table_wide(self, name: tuple[str, str], sources: tuple[tuple[str, str], ...]) -> bool:
        """Whether every row named ``name`` picks the same partitions (table dispatchers)."""
        if name not in self._by_table:
            self._by_table[name] = all(self._rule_of(s).kind == "table" for s in sources)
        return self._by_table[name]

    def all_here(self, rows: Sequence[DecodedRow], here: int) -> bool:
        """Whether every row is known to be placed on ``here`` alone (tables placed before).

        Then ``partitions`` picks ``here`` and no row it cannot recompute; ``False`` says
        nothing (ask ``partitions``).
        """
        if self.settings.partitions is None:
            return True
        placed, only = self._placed, {here}
        schema = table = None
        for r in rows:
            if r.table != table or r.schema != schema:
                schema, table = r.schema, r.table
                if placed.get(((schema, table), here)) != only:
                    return False
        return True

    def partitions(
        self, rows: Sequence[DecodedRow], here: int | None = None
    ) -> tuple[set[int], list[DecodedRow]]:
        """The partitions the dispatcher picks for ``rows``, and the rows it cannot recompute.

        Nothing is picked when the partition count is unknown. A row standing for several
        source tables (table routing) counts as ``here`` when one of them picks ``here``.
        """
        if self.settings.partitions is None:
            return set(), []
        chosen: set[int | None] = set()
        unverifiable: list[DecodedRow] = []
        done: set[tuple[str, str]] = set()
        placed = self._placed
        for r in rows:
            name = (r.schema, r.table)
            if name in done:  # a table dispatcher's table already placed: the same answer
                continue
            known = placed.get((name, here))
            if known is not None:  # placed in an earlier message: the same answer
                chosen |= known
                done.add(name)
                continue
            sources = self._sources.of(*name)
            if sources is None:  # the rules cannot give its source back: not recomputed
                continue
            picks = {self._partition(r, source, unverifiable) for source in sources}
            adds: set[int | None] = {here} if here is not None and here in picks else picks
            chosen |= adds
            if self._table_wide(name, sources):
                done.add(name)
                placed[name, here] = adds
        return {p for p in chosen if p is not None}, unverifiable

    def _partition(
        self, row: DecodedRow, source: tuple[str, str], unverifiable: list[DecodedRow]
    ) -> int | None:
        """The partition of ``row`` as a row of the table ``source`` (``None``: not known)."""
        count, profile = self.settings.partitions or 1, self.settings.profile
        named = row
        if source != (row.schema, row.table):
            named = dataclasses.replace(row, schema=source[0], table=source[1])
        rule = self.rule(named)
        tables = self._table_partitions
        if rule.kind == "table":  # the same for every row of a table: computed once
            if source not in tables:
                tables[source] = decoded_partition_of(named, count, rule, profile)
            return tables[source]
        handle_key = self._handle_names(row, rule)  # the schema the message's names resolve
        if self._text_replaced and _replaced_text(row, rule, handle_key):
            if not any(u is row for u in unverifiable):
                unverifiable.append(row)
            return None
        return decoded_partition_of(named, count, rule, profile, handle_key=handle_key)

    def _handle_names(self, row: DecodedRow, rule: DispatchRule) -> frozenset[str] | None:
        """Simple marks no handle key: the schema its decoder resolved the row with says."""
        if self._stateful is None or rule.kind != "index-value":
            return None
        key = (row.schema, row.table, row.schema_version)
        if key not in self._handles:
            table = self._stateful.table_info(row.schema, row.table, row.schema_version or 0)
            names: frozenset[str] | None = None
            if table is not None and rule.index_name is not None:
                index = next((i for i in table.indexes if i.name == rule.index_name), None)
                names = None if index is None else frozenset(index.columns)
            elif table is not None:
                flags = table.column_flags(self.settings.profile)
                names = frozenset(
                    c.name
                    for c, bits in zip(table.columns, flags, strict=True)
                    if bits & HANDLE_KEY_FLAG
                )
            self._handles[key] = names
        return self._handles[key]
