"""The ``topic-routing`` rule: each row and DDL on the topic its table routes to.

TiCDC's event router (``reference.routing``; docs/kafka.md "Topic routing") takes the first
``[[sink.dispatchers]]`` rule whose matcher takes the table: rows go to that rule's topic; a
DDL to the topic of the table it names before the DDL, a DDL naming no table to the default
topic (tiflow ``cdc/sink/dmlsink/mq/dispatcher/event_router.go``, ticdc
``downstreamadapter/sink/eventrouter/event_router.go``). A RENAME's message names the new
table, so it is checked only where the message says the old one (Simple's
``preTableSchema``).

With ticdc's ``target-schema``/``target-table`` the messages carry the target names while the
topic and the partition follow the source names (ticdc ``downstreamadapter/sink/kafka/sink.go``
routes by ``TableInfo.GetSchemaName()``, the source; a routed DDL keeps its source
``SchemaName``, ``pkg/common/event/ddl_event.go`` ``NewRoutedDDLEvent``). ``SourceNames`` maps
a message's names back through the rules: every source name whose target they are. A name
the rules cannot give back (a target that drops the source schema or table, e.g.
``target-schema = "archive"``, under a matcher with wildcards) is not checked; a name several
sources share is fine on the topic or partition of any of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Final

from ticdc_conformance.reference import DecodedRow
from ticdc_conformance.reference.decoded import DecodedDDL
from ticdc_conformance.reference.routing import Router, RoutingRule
from ticdc_conformance.suites.stream.catalog import CheckSettings

__all__ = ["RENAMES", "SourceNames", "TopicRouting", "sources_of"]

RENAMES = frozenset({14, 51})
"""TiDB's ``ActionRenameTable`` and ``ActionRenameTables``: routed by the name before."""

Name = tuple[str, str]
_PLACEHOLDERS: Final = ("{schema}", "{table}")
_LITERAL: Final = re.compile(r"([A-Za-z0-9_$-]+)\.([A-Za-z0-9_$-]+)")
"""A matcher pattern naming one table (no wildcard, quote, class or regular expression)."""


def _tokens(expression: str) -> list[str]:
    """``expression`` as literal runs and the placeholders ``{schema}``/``{table}``."""
    out, i = [], 0
    while i < len(expression):
        found = [(expression.find(p, i), p) for p in _PLACEHOLDERS]
        at, placeholder = min(((a, p) for a, p in found if a >= 0), default=(-1, ""))
        if at < 0:
            out.append(expression[i:])
            break
        if at > i:
            out.append(expression[i:at])
        out.append(placeholder)
        i = at + len(placeholder)
    return out


def _bindings(tokens: list[str], text: str, bound: dict[str, str]) -> Iterator[dict[str, str]]:
    """Every assignment of the placeholders (consistent with ``bound``) making ``text``."""
    if not tokens:
        if text == "":
            yield bound
        return
    token, rest = tokens[0], tokens[1:]
    if token not in _PLACEHOLDERS:
        if text.startswith(token):
            yield from _bindings(rest, text[len(token) :], bound)
        return
    if token in bound:
        if text.startswith(bound[token]):
            yield from _bindings(rest, text[len(bound[token]) :], bound)
        return
    for end in range(1, len(text) + 1):  # a source name is never empty
        yield from _bindings(rest, text[end:], {**bound, token: text[:end]})


def _literal_names(rule: RoutingRule) -> list[Name] | None:
    """The tables a matcher of plain ``schema.table`` names takes; ``None``: any other."""
    names = [_LITERAL.fullmatch(pattern.strip()) for pattern in rule.matcher]
    return None if not all(names) else [(m[1], m[2]) for m in names if m]


def sources_of(router: Router, schema: str, table: str) -> tuple[Name, ...] | None:
    """The source names whose target (``Router.target_of``) is ``schema.table``.

    A rule whose targets leave out ``{schema}`` or ``{table}`` gives the names its matcher
    lists, when it lists plain names; ``None`` when it may have made ``schema.table`` from
    a name it neither keeps nor lists: the source cannot be told.
    """
    found: dict[Name, None] = {}
    if router.target_of(schema, table) == (schema, table):
        found[schema, table] = None  # a table no renaming rule takes keeps its name
    for rule in router.rules:
        if not rule.renames:
            continue
        schema_tokens = _tokens(rule.target_schema or "{schema}")
        table_tokens = _tokens(rule.target_table or "{table}")
        for half in _bindings(schema_tokens, schema, {}):
            for whole in _bindings(table_tokens, table, half):
                candidates: list[Name] | None
                if len(whole) < len(_PLACEHOLDERS):  # a part of the source is dropped
                    candidates = _literal_names(rule)
                else:
                    candidates = [(whole["{schema}"], whole["{table}"])]
                if candidates is None:
                    return None
                for source in candidates:
                    if router.target_of(*source) == (schema, table):
                        found[source] = None
    return tuple(found)


class SourceNames:
    """``sources_of`` for one router, cached per name (names as they are without renames)."""

    def __init__(self, router: Router | None) -> None:
        self.router = router
        self._renames = router is not None and router.renames
        self._cache: dict[Name, tuple[Name, ...] | None] = {}

    def of(self, schema: str, table: str) -> tuple[Name, ...] | None:
        """The source names a message's ``schema.table`` may stand for; ``None``: unknown."""
        if not self._renames or self.router is None:
            return ((schema, table),)
        name = (schema, table)
        if name not in self._cache:
            self._cache[name] = sources_of(self.router, schema, table)
        return self._cache[name]


class TopicRouting:
    """Where one topic's rows and DDLs should have gone."""

    def __init__(self, router: Router, topic: str) -> None:
        self.router, self.topic = router, topic
        self.sources = SourceNames(router)
        self._topics: dict[Name, frozenset[str] | None] = {}

    @classmethod
    def of(cls, settings: CheckSettings, topic: str) -> TopicRouting | None:
        """The rule for ``topic``, or ``None`` when the settings carry no rules to check."""
        router = settings.router()
        return None if router is None else cls(router, topic)

    def _topics_of(self, schema: str, table: str) -> frozenset[str] | None:
        """The topics the table a message names may route to; ``None``: unknown."""
        if (schema, table) not in self._topics:
            sources = self.sources.of(schema, table)
            self._topics[schema, table] = (
                None
                if sources is None
                else frozenset(self.router.topic_of_table(*s) for s in sources)
            )
        return self._topics[schema, table]

    def _elsewhere(self, names: Iterable[Name]) -> set[str]:
        out: set[str] = set()
        for name in names:
            topics = self._topics_of(*name)
            if topics is not None and self.topic not in topics:
                out |= topics
        return out

    def rows(self, rows: Iterable[DecodedRow]) -> str | None:
        """What is wrong with a message's rows being here, or ``None``."""
        elsewhere = self._elsewhere({(r.schema, r.table) for r in rows})
        return None if not elsewhere else f"the rules route it to topic(s) {sorted(elsewhere)}"

    def ddl(self, ddl: DecodedDDL) -> str | None:
        """What is wrong with a DDL being here, or ``None`` (also when it cannot be told)."""
        schema, table = ddl.schema, ddl.table
        if ddl.ddl_type in RENAMES or "RENAME" in ddl.query.upper():
            if ddl.pre_table_info is None:
                return None
            schema, table = ddl.pre_table_info.schema, ddl.pre_table_info.name
        if not table:
            topics: frozenset[str] | None = frozenset({self.router.default_topic})
        else:
            topics = self._topics_of(schema, table)
        if topics is None or self.topic in topics:
            return None
        where = f"topic {min(topics)}" if len(topics) == 1 else f"topics {sorted(topics)}"
        return f"a DDL of {schema}.{table}: the rules route it to {where}"
