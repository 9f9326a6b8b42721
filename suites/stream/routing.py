"""The ``topic-routing`` rule: each row and DDL on the topic its table routes to.

TiCDC's event router (``reference.routing``; docs/kafka.md "Topic routing") takes the first
``[[sink.dispatchers]]`` rule whose matcher takes the table: rows go to that rule's topic; a
DDL to the topic of the table it names before the DDL, a DDL naming no table to the default
topic (tiflow ``cdc/sink/dmlsink/mq/dispatcher/event_router.go``, ticdc
``downstreamadapter/sink/eventrouter/event_router.go``). A RENAME's message names the new
table, so it is checked only where the message says the old one (Simple's
``preTableSchema``). Not checked with ticdc's ``target-schema``/``target-table``: the messages
carry the target names while the topic follows the source names.
"""

from __future__ import annotations

from collections.abc import Iterable

from ticdc_conformance.reference import DecodedRow
from ticdc_conformance.reference.decoded import DecodedDDL
from ticdc_conformance.reference.routing import Router
from ticdc_conformance.suites.stream.catalog import CheckSettings

__all__ = ["RENAMES", "TopicRouting"]

RENAMES = frozenset({14, 51})
"""TiDB's ``ActionRenameTable`` and ``ActionRenameTables``: routed by the name before."""


class TopicRouting:
    """Where one topic's rows and DDLs should have gone."""

    def __init__(self, router: Router, topic: str) -> None:
        self.router, self.topic = router, topic
        self._topics: dict[tuple[str, str], str] = {}

    @classmethod
    def of(cls, settings: CheckSettings, topic: str) -> TopicRouting | None:
        """The rule for ``topic``, or ``None`` when the settings carry no rules to check."""
        router = settings.router()
        return None if router is None or router.renames else cls(router, topic)

    def _topic_of(self, schema: str, table: str) -> str:
        if (schema, table) not in self._topics:
            self._topics[schema, table] = self.router.topic_of_table(schema, table)
        return self._topics[schema, table]

    def rows(self, rows: Iterable[DecodedRow]) -> str | None:
        """What is wrong with a message's rows being here, or ``None``."""
        elsewhere = {self._topic_of(r.schema, r.table) for r in rows} - {self.topic}
        return None if not elsewhere else f"the rules route it to topic(s) {sorted(elsewhere)}"

    def ddl(self, ddl: DecodedDDL) -> str | None:
        """What is wrong with a DDL being here, or ``None`` (also when it cannot be told)."""
        schema, table = ddl.schema, ddl.table
        if ddl.ddl_type in RENAMES or "RENAME" in ddl.query.upper():
            if ddl.pre_table_info is None:
                return None
            schema, table = ddl.pre_table_info.schema, ddl.pre_table_info.name
        topic = self._topic_of(schema, table) if table else self.router.default_topic
        if topic == self.topic:
            return None
        return f"a DDL of {schema}.{table}: the rules route it to topic {topic}"
