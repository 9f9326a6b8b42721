"""The consumer rules: what a consumer's tables and applied log must show.

Each rule has an id, a severity (``error`` fails a check), a one-line description and the
TiCDC source it rests on; docs/rules/consumer.md explains each under its id (``doc``). The
state rules compare a snapshot of the consumer's tables with the expected final state; the log
rules read the consumer's applied log against the expected change log (``reference.consumer``).
``transaction-split`` is opt-in: only consumers that claim transactional consistency keep it.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LOG_RULES", "RULES", "STATE_RULES", "Rule"]

_WRITER = "cmd/kafka-consumer/writer.go"


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One consumer rule."""

    id: str
    severity: str
    description: str
    source: str
    """The TiCDC source the rule rests on (a path in pingcap/ticdc)."""

    @property
    def doc(self) -> str:
        """The rule's anchor in the rule catalog."""
        return f"docs/rules/consumer.md#{self.id}"


STATE_RULES = (
    Rule(
        id="row-missing",
        severity="error",
        description="every row of the expected final state is in the consumer's table",
        source=_WRITER,
    ),
    Rule(
        id="row-unexpected",
        severity="error",
        description="the consumer's table holds no row the expected final state lacks",
        source=_WRITER,
    ),
    Rule(
        id="row-differs",
        severity="error",
        description="a row the consumer holds has the expected value in every column",
        source="pkg/sink/mysql/sql_builder.go",
    ),
)
LOG_RULES = (
    Rule(
        id="change-applied-twice",
        severity="error",
        description="a change a replay delivered again is applied once",
        source=_WRITER,
    ),
    Rule(
        id="change-lost",
        severity="error",
        description="every change of the expected log is applied",
        source=_WRITER,
    ),
    Rule(
        id="change-unexpected",
        severity="error",
        description="every change applied is one of the expected log",
        source=_WRITER,
    ),
    Rule(
        id="key-order-broken",
        severity="error",
        description="the changes of one key are applied in commit-ts order",
        source="cmd/util/event_group.go",
    ),
    Rule(
        id="change-before-ddl",
        severity="error",
        description="a table's rows and DDLs are applied in commit-ts order",
        source=_WRITER,
    ),
    Rule(
        id="transaction-split",
        severity="error",
        description="(opt-in) the rows of one commit ts are applied together, unsplit",
        source="cmd/util/event_group.go",
    ),
)
RULES = {rule.id: rule for rule in (*STATE_RULES, *LOG_RULES)}
"""Rule id → rule, in report order."""
