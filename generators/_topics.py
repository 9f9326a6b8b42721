"""The simulator's topics: where each event goes (``reference.routing``), and each topic's log.

The machinery of ``ticdc_conformance.generators.simulator``; the routing rules themselves are
``reference.routing`` (docs/kafka.md "Topic routing"):

* rows go to their table's topic, on the partition that table's rule's dispatcher picks;
* a DDL goes to the topic of the table it names before the DDL, a database DDL to the
  default topic;
* a watermark goes to every topic an active table routes to, then the default topic
  (tiflow ``cdc/sink/ddlsink/mq/mq_ddl_sink.go`` ``WriteCheckpointTs``, ticdc
  ``downstreamadapter/sink/kafka/sink.go``). A table is active from its first row, from a
  DDL naming it, or from the changefeed's start (``tables`` given to the simulation); a
  ``DROP TABLE`` ends it;
* every topic has the changefeed's partition count (TiCDC creates each with
  ``partition-num``); a topic exists from the first event routed to it, the default topic
  from the start.

Table routing (``target-schema``/``target-table``, ticdc only) renames a row's or a DDL's
table after topic and partition are chosen from the source names; a DDL's query has its
backquoted ``schema``.``table`` replaced (ticdc rewrites the parsed statement,
``pkg/routing/ddl_query_rewriter.go``; the simulated workloads write their DDLs that way).
"""

from __future__ import annotations

import dataclasses
from typing import Generic, TypeVar

from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.events import DDLEvent, RowChangedEvent
from ticdc_conformance.reference.routing import Router, RoutingRule
from ticdc_conformance.reference.tables import Profile, TableInfo

__all__ = ["DROP_TABLE", "Topics", "check_routes", "router_of"]

Item = TypeVar("Item")

DROP_TABLE = 4
"""TiDB's ``ActionDropTable``: the table leaves the changefeed's active tables."""


def router_of(
    topic: str,
    routes: tuple[RoutingRule, ...],
    dispatcher: DispatchRule,
    *,
    case_sensitive: bool = False,
) -> Router:
    """The router of a changefeed: ``routes`` in order, then ``*.*`` with ``dispatcher``.

    ``dispatcher`` stands in for the partition rule of TiCDC's implicit last rule: a
    changefeed without rules dispatches every table with it. ``case_sensitive``: whether the
    matchers compare names as they are (docs/kafka.md "Topic routing").
    """
    last = RoutingRule(matcher=("*.*",), partition=dispatcher)
    return Router(default_topic=topic, rules=(*routes, last), case_sensitive=case_sensitive)


def check_routes(routes: tuple[RoutingRule, ...], profile: Profile) -> None:
    """``ValueError`` when a rule renames tables under profile ``tiflow``.

    tiflow has no such fields; ticdc has (``pkg/config/sink.go`` ``DispatchRule.TargetSchema``,
    ``TargetTable``).
    """
    if profile == "tiflow" and any(rule.renames for rule in routes):
        raise ValueError(
            "target-schema and target-table are table routing of the new architecture "
            "(pingcap/ticdc pkg/routing/router.go): profile tiflow has no such fields"
        )


class Topics(Generic[Item]):
    """Every topic's partitions of queued or delivered items, and the active tables."""

    def __init__(self, router: Router, partitions: int, profile: Profile) -> None:
        self.router, self.count, self.profile = router, partitions, profile
        self.logs: dict[str, list[list[Item]]] = {}
        self.active: dict[tuple[str, str], None] = {}
        self._rules: dict[tuple[str, str], tuple[str, DispatchRule]] = {}
        self._renamed: dict[int, tuple[TableInfo, TableInfo]] = {}
        self.of(router.default_topic)

    def of(self, topic: str) -> list[list[Item]]:
        """The partitions of ``topic``, created empty at its first use."""
        if topic not in self.logs:
            self.logs[topic] = [[] for _ in range(self.count)]
        return self.logs[topic]

    def row(self, row: RowChangedEvent) -> tuple[str, DispatchRule]:
        """The topic and partition rule of a row's table; the table becomes active."""
        name = (row.table.schema, row.table.name)
        if name not in self._rules:
            rule = self.router.rule_for(*name)
            self._rules[name] = (self.router.topic_of_table(*name), rule.partition)
        self.active.setdefault(name)
        return self._rules[name]

    def ddl(self, event: DDLEvent) -> str:
        """The topic of a DDL; the table it names becomes active, or leaves with DROP TABLE."""
        if event.table:
            name = (event.schema, event.table)
            if event.ddl_type == DROP_TABLE:
                self.active.pop(name, None)
            else:
                self.active.setdefault(name)
        return self.router.topic_of_ddl(event)

    def watermark(self) -> list[str]:
        """The topics a watermark goes to: the active tables', then the default topic."""
        return self.router.watermark_topics(self.active)

    def renamed_table(self, table: TableInfo) -> TableInfo:
        """``table`` under its target names (ticdc table routing); itself when not routed."""
        held = self._renamed.get(id(table))
        if held is None or held[0] is not table:
            schema, name = self.router.target_of(table.schema, table.name)
            renamed = table
            if (schema, name) != (table.schema, table.name):
                renamed = dataclasses.replace(table, schema=schema, name=name)
            held = self._renamed[id(table)] = (table, renamed)
        return held[1]

    def renamed_row(self, row: RowChangedEvent) -> RowChangedEvent:
        """``row`` with its table's target names."""
        if not self.router.renames:
            return row
        table = self.renamed_table(row.table)
        return row if table is row.table else dataclasses.replace(row, table=table)

    def renamed_ddl(self, event: DDLEvent) -> DDLEvent:
        """``event`` with the target names of the tables it names, in its fields and query."""
        if not self.router.renames or not event.table:
            return event
        schema, table = self.router.target_of(event.schema, event.table)
        query = event.query.replace(f"`{event.schema}`.`{event.table}`", f"`{schema}`.`{table}`")
        before = event.pre_table_info
        return dataclasses.replace(
            event,
            schema=schema,
            table=table,
            query=query,
            table_info=None if event.table_info is None else self.renamed_table(event.table_info),
            pre_table_info=None if before is None else self.renamed_table(before),
        )
