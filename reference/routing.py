"""TiCDC's topic routing: which Kafka topic each event goes to.

The rules of ``[[sink.dispatchers]]`` are tried in order and the first whose ``matcher``
takes the table wins; TiCDC appends a last rule ``matcher = ["*.*"]`` with the default
partition dispatcher and the changefeed's topic, so every table matches one (tiflow
``cdc/sink/dmlsink/mq/dispatcher/event_router.go``, ticdc
``downstreamadapter/sink/eventrouter/event_router.go``; the same in both architectures).

* Matcher: TiDB's table-filter syntax, ``schema.table`` patterns with ``*``, ``?``, ``[a-z]``
  and ``[!a-z]``, backslash escapes, names quoted in backticks or double quotes, ``/regex/``
  parts and a leading ``!`` that excludes; the last pattern a table matches decides, a table
  none matches is not taken. Unless ``case-sensitive`` is set (off by default in both
  architectures) patterns and names compare in lower case.
* Topic: an empty ``topic`` is the changefeed's default topic; a name of only
  ``[A-Za-z0-9._-]`` is used as it is; anything else is an expression
  ``[prefix]{schema}[middle][{table}][suffix]`` (``topic/expression.go``: other shapes are
  refused when the changefeed is created). Substituting replaces every character of the
  schema and table names outside ``[A-Za-z0-9._-]`` by ``_`` (one per character), cuts the
  result to Kafka's 249 characters, and turns ``.`` and ``..`` into ``_`` and ``__``.
* Rows go to their table's topic. A DDL goes to the topic of the table it names before the
  DDL (a RENAME's old name: tiflow takes ``PreTableInfo``, ticdc the event's extra, dropped
  name) and, when it names no table (database DDLs), to the default topic. A watermark goes to
  every partition of every topic an active table routes to, and of the default topic.
* Table routing (the new architecture only, ticdc ``pkg/routing/router.go``,
  ``pkg/config/sink.go``): a rule's ``target-schema`` and ``target-table`` rename the table in
  the messages (``scm``/``tbl`` and the like are ``TableInfo.GetTargetSchemaName()``); topic
  and partition still follow the source names (``downstreamadapter/sink/kafka/sink.go``). Only
  rules with a target take part, the first whose matcher takes the table wins, an empty
  target keeps the source name, and ``{schema}``/``{table}`` are replaced by the source names
  as they are (no character replaced). An expression holds literal text and the two
  placeholders, no other brace. tiflow has no such fields.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.events import DDLEvent

__all__ = [
    "KAFKA_TOPIC_MAX_LENGTH",
    "Router",
    "RoutingRule",
    "TableFilter",
    "substitute_target",
    "substitute_topic",
    "target_expression_problem",
    "topic_expression_problem",
]

KAFKA_TOPIC_MAX_LENGTH = 249
_HARD_CODED = re.compile(r"[A-Za-z0-9._\-]+")
_EXPRESSION = re.compile(
    r"[A-Za-z0-9._\-]*(\{schema\})?([A-Za-z0-9._\-]*\{table\})?[A-Za-z0-9._\-]*"
)
_CONFIG_KEYS = frozenset(
    {"matcher", "partition", "dispatcher", "index", "columns", "topic"}
    | {"target-schema", "target-table"}
)
"""The keys of a ``[[sink.dispatchers]]`` rule (tiflow and ticdc ``pkg/config/sink.go``)."""
_FORBIDDEN = re.compile(r"[^a-zA-Z0-9._\-]")
_TARGET = re.compile(r"(?:[^{}]|\{schema\}|\{table\})*")


def topic_expression_problem(rule: str) -> str | None:
    """Why TiCDC refuses ``rule`` as a Kafka topic rule, or None when it takes it."""
    if rule == "" or _EXPRESSION.fullmatch(rule):
        return None
    return (
        f"topic rule {rule!r} is neither a topic name of [A-Za-z0-9._-] nor an expression "
        "[prefix]{schema}[middle][{table}][suffix]"
    )


def target_expression_problem(name: str, expression: str) -> str | None:
    """Why ticdc refuses ``expression`` as ``target-schema``/``target-table`` (``name``)."""
    if _TARGET.fullmatch(expression):
        return None
    return f"{name} {expression!r} must contain only literal text, {{schema}}, and {{table}}"


def substitute_target(expression: str, schema: str, table: str, default: str) -> str:
    """A target name: ``default`` when ``expression`` is empty, else the placeholders filled."""
    if expression == "":
        return default
    return expression.replace("{schema}", schema).replace("{table}", table)


def substitute_topic(rule: str, schema: str, table: str) -> str:
    """The topic ``rule`` (a name or an expression) gives the table ``schema.table``."""
    if _HARD_CODED.fullmatch(rule):
        return rule
    name = rule.replace("{schema}", _FORBIDDEN.sub("_", schema))
    name = name.replace("{table}", _FORBIDDEN.sub("_", table))
    if len(name) > KAFKA_TOPIC_MAX_LENGTH:
        return name[:KAFKA_TOPIC_MAX_LENGTH]
    return {".": "_", "..": "__"}.get(name, name)


def _glob(pattern: str) -> str:
    """A regular expression for one wildcard part (``*``, ``?``, ``[...]``, backslash escapes)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\" and i + 1 < len(pattern):
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char == "[" and "]" in pattern[i + 2 :]:
            end = pattern.index("]", i + 2)
            body = pattern[i + 1 : end]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _split(pattern: str) -> tuple[str, str]:
    """The schema and table parts of ``schema.table``, each as a regular expression."""
    parts: list[str] = []
    i, current = 0, ""
    while i < len(pattern):
        char = pattern[i]
        if char in '`"' and not current:
            end = pattern.find(char, i + 1)
            if end < 0:
                raise ValueError(f"table filter {pattern!r}: unterminated quote")
            current = "\x00" + re.escape(pattern[i + 1 : end])
            i = end + 1
        elif char == "/" and not current:
            end = pattern.find("/", i + 1)
            if end < 0:
                raise ValueError(f"table filter {pattern!r}: unterminated regular expression")
            current = "\x00" + f"(?:{pattern[i + 1 : end]})"
            i = end + 1
        elif char == "\\" and i + 1 < len(pattern):
            current += pattern[i : i + 2]
            i += 2
        elif char == "." and len(parts) == 0:
            parts.append(current)
            current = ""
            i += 1
        else:
            current += char
            i += 1
    parts.append(current)
    if len(parts) != 2 or not all(parts):
        raise ValueError(f"table filter {pattern!r} is not schema.table")
    schema, table = (p[1:] if p.startswith("\x00") else _glob(p) for p in parts)
    return schema, table


@dataclass(frozen=True, slots=True)
class TableFilter:
    """A ``matcher``: TiDB table-filter patterns, the last matching one deciding."""

    patterns: tuple[str, ...]
    case_sensitive: bool = False
    _compiled: tuple[tuple[bool, re.Pattern[str], re.Pattern[str]], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        flags = 0 if self.case_sensitive else re.IGNORECASE
        compiled = []
        for pattern in self.patterns:
            text = pattern.strip()
            exclude = text.startswith("!")
            schema, table = _split(text[1:] if exclude else text)
            compiled.append((not exclude, re.compile(schema, flags), re.compile(table, flags)))
        object.__setattr__(self, "_compiled", tuple(compiled))

    def match(self, schema: str, table: str) -> bool:
        """Whether the filter takes the table ``schema.table``."""
        for takes, schema_re, table_re in reversed(self._compiled):
            if schema_re.fullmatch(schema) and table_re.fullmatch(table):
                return takes
        return False


@dataclass(frozen=True, slots=True, kw_only=True)
class RoutingRule:
    """One ``[[sink.dispatchers]]`` rule: the tables it matches, their partitions and topic."""

    matcher: tuple[str, ...]
    partition: DispatchRule = field(default_factory=DispatchRule)
    topic: str = ""
    """Empty: the default topic; a name; or an expression with ``{schema}`` and ``{table}``."""
    target_schema: str = ""
    """ticdc only: the schema name the messages carry (empty: the source's)."""
    target_table: str = ""
    """ticdc only: the table name the messages carry (empty: the source's)."""

    def __post_init__(self) -> None:
        problems = (
            topic_expression_problem(self.topic),
            target_expression_problem("target-schema", self.target_schema),
            target_expression_problem("target-table", self.target_table),
        )
        for problem in problems:
            if problem is not None:
                raise ValueError(problem)

    @property
    def renames(self) -> bool:
        """Whether the rule routes tables to other names (``target-schema``/``target-table``)."""
        return self.target_schema != "" or self.target_table != ""

    def config(self) -> dict[str, object]:
        """The rule as TiCDC's ``[[sink.dispatchers]]`` keys (empty ones left out)."""
        rule = self.partition
        out: dict[str, object] = {"matcher": list(self.matcher), "partition": rule.partition}
        optional = {
            "index": rule.index_name or "",
            "columns": list(rule.columns),
            "topic": self.topic,
            "target-schema": self.target_schema,
            "target-table": self.target_table,
        }
        out.update({key: value for key, value in optional.items() if value})
        return out

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> RoutingRule:
        """A rule from ``[[sink.dispatchers]]`` keys (``dispatcher``: the old ``partition``).

        ``ValueError`` for an unknown key, a missing ``matcher`` or a bad expression.
        """
        unknown = set(config) - _CONFIG_KEYS
        if unknown:
            raise ValueError(f"unknown dispatcher key(s) {sorted(unknown)}")
        matcher = config.get("matcher")
        if not isinstance(matcher, list) or not matcher:
            raise ValueError("a dispatcher rule needs matcher, a list of table filters")
        columns = config.get("columns") or ()
        partition = DispatchRule(
            partition=str(config.get("partition") or config.get("dispatcher") or "default"),
            index_name=config.get("index") or None,
            columns=tuple(str(c) for c in columns),
        )
        return cls(
            matcher=tuple(str(m) for m in matcher),
            partition=partition,
            topic=str(config.get("topic") or ""),
            target_schema=str(config.get("target-schema") or ""),
            target_table=str(config.get("target-table") or ""),
        )


@dataclass(frozen=True, slots=True)
class Router:
    """TiCDC's event router: rules in order, then the implicit ``*.*`` rule."""

    default_topic: str
    rules: Sequence[RoutingRule] = ()
    case_sensitive: bool = False
    _filters: tuple[tuple[TableFilter, RoutingRule], ...] = field(
        init=False, repr=False, compare=False
    )

    def __post_init__(self) -> None:
        rules = (*self.rules, RoutingRule(matcher=("*.*",)))
        filters = tuple((TableFilter(r.matcher, self.case_sensitive), r) for r in rules)
        object.__setattr__(self, "_filters", filters)

    def rule_for(self, schema: str, table: str) -> RoutingRule:
        """The first rule whose matcher takes ``schema.table``."""
        return next(rule for found, rule in self._filters if found.match(schema, table))

    def target_of(self, schema: str, table: str) -> tuple[str, str]:
        """The (schema, table) names the messages of ``schema.table`` carry (ticdc routing).

        The first rule with a target whose matcher takes the table; none: the names as they
        are. ``Router.renames`` says whether any rule has a target.
        """
        for found, rule in self._filters:
            if rule.renames and found.match(schema, table):
                return (
                    substitute_target(rule.target_schema, schema, table, schema),
                    substitute_target(rule.target_table, schema, table, table),
                )
        return schema, table

    @property
    def renames(self) -> bool:
        """Whether a rule routes tables to other names (the new architecture only)."""
        return any(rule.renames for rule in self.rules)

    def topic_of_table(self, schema: str, table: str) -> str:
        """The topic of a table's rows."""
        rule = self.rule_for(schema, table)
        if rule.topic == "":
            return self.default_topic
        return substitute_topic(rule.topic, schema, table)

    def topic_of_ddl(self, event: DDLEvent) -> str:
        """The topic a DDL goes to: its table's before the DDL, else the default topic."""
        before = event.pre_table_info
        schema, table = (
            (before.schema, before.name) if before is not None else (event.schema, event.table)
        )
        if table == "":
            return self.default_topic
        return self.topic_of_table(schema, table)

    def watermark_topics(self, active_tables: Iterable[tuple[str, str]]) -> list[str]:
        """The topics a watermark goes to, in TiCDC's order: the active tables', then default."""
        topics = dict.fromkeys(self.topic_of_table(s, t) for s, t in active_tables)
        topics.setdefault(self.default_topic)
        return list(topics)
