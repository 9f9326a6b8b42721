"""The stream rule catalog, the settings a check needs, and what a check reports.

Each rule has an id, a severity (``error`` fails a check, ``warning`` is counted) and a
one-line description; docs/rules/stream.md states each under its id (``doc``),
``suites/stream/rules.py`` checks them and docs/stream-checker.md runs them.
``CheckSettings`` are the TiCDC settings that matter (protocol, profile, partition count,
dispatcher, size limits), from a dump's label sidecar or from flags. A ``Finding`` is one
violation (or counted allowed anomaly) at Kafka coordinates; a ``Broadcast`` is a DDL or
watermark one partition saw, which every partition of the topic must see.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ticdc_conformance.reference.compression import Compression, compression_of
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.routing import Router, RoutingRule
from ticdc_conformance.reference.tables import Profile

__all__ = [
    "ACCOUNTING",
    "RULES",
    "WATERMARK_BROADCAST",
    "WATERMARK_POINTS",
    "Broadcast",
    "CheckResult",
    "CheckSettings",
    "Finding",
    "Rule",
    "Seen",
    "broadcast_gaps",
    "missing_broadcasts",
    "watermark_series",
]


WATERMARK_BROADCAST = "watermark-broadcast"
"""The rule (and broadcast kind) of watermarks: checkers hand a watermark on as its commit ts
alone, most messages of a dump being watermarks."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One stream rule: id, severity and what it asks."""

    id: str
    severity: str
    """``error`` fails the check (exit 1); ``warning`` is counted and reported only."""
    description: str

    @property
    def doc(self) -> str:
        """The rule's anchor in the rule catalog."""
        return f"docs/rules/stream.md#{self.id}"


_CATALOG = (
    Rule(
        id="undecodable",
        severity="error",
        description="every message decodes with the protocol's reference decoder",
    ),
    Rule(
        id="invalid-value",
        severity="error",
        description="every value is one TiCDC can have written for its column type",
    ),
    Rule(
        id="watermark-monotonic",
        severity="error",
        description="a partition's watermarks (resolved ts) never go back",
    ),
    Rule(
        id="row-after-watermark",
        severity="error",
        description="no new row at or below a partition's last watermark after it",
    ),
    Rule(
        id="allowed-duplicate",
        severity="warning",
        description="a replay after a restart repeats an earlier delivery exactly (allowed)",
    ),
    Rule(
        id="ddl-broadcast",
        severity="error",
        description="every DDL reaches every partition of its topic (Canal-JSON: partition 0 only)",
    ),
    Rule(
        id=WATERMARK_BROADCAST,
        severity="error",
        description="every watermark reaches every partition of its topic and the default topic",
    ),
    Rule(
        id="commit-ts-order",
        severity="error",
        description="per partition and table, first deliveries come in commit-ts order",
    ),
    Rule(
        id="duplicate-identical",
        severity="error",
        description="a row delivered again carries the same images as its first delivery",
    ),
    Rule(
        id="partition-affinity",
        severity="error",
        description="a row lands on the partition its dispatcher computes",
    ),
    Rule(
        id="affinity-unverifiable",
        severity="warning",
        description="a row's hashed text may be U+FFFD the encoder wrote for invalid UTF-8",
    ),
    Rule(
        id="message-size",
        severity="error",
        description="key + value + 36 bytes of overhead stay within max-message-bytes",
    ),
    Rule(
        id="batch-size",
        severity="error",
        description="a batched message holds at most max-batch-size rows (Open, Craft)",
    ),
    Rule(
        id="schema-resolvable",
        severity="error",
        description="every Simple DML resolves to a schema a BOOTSTRAP or DDL announced",
    ),
    Rule(
        id="row-before-ddl",
        severity="error",
        description="no new row of a table older than a DDL of it arrives after that DDL",
    ),
    Rule(
        id="split-update-order",
        severity="error",
        description="per partition, a transaction's DELETEs of a table precede its INSERTs",
    ),
    Rule(
        id="schema-before-dml",
        severity="error",
        description="a Simple DML's schema reaches its partition before the DML",
    ),
    Rule(
        id="bootstrap-broadcast",
        severity="error",
        description="a Simple BOOTSTRAP reaches every partition (send-bootstrap-to-all-partition)",
    ),
    Rule(
        id="topic-routing",
        severity="error",
        description="a row lands on the topic its table's [[sink.dispatchers]] rule names",
    ),
    Rule(
        id="checksum",
        severity="error",
        description="a Simple row's checksum matches its images (integrity-check-level)",
    ),
    Rule(
        id="claim-check",
        severity="error",
        description="every claim-check reference resolves to the row it announces",
    ),
)
RULES: dict[str, Rule] = {rule.id: rule for rule in _CATALOG}
"""Rule id → rule, in report order."""

_BATCHING = ("open", "craft")
_DEFAULT_MAX_MESSAGE_BYTES = 10 * 1024 * 1024
_DEFAULT_MAX_BATCH_SIZE = 16


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckSettings:
    """The TiCDC settings a check needs (a dump's ``_labels.json`` ``settings``, or flags)."""

    protocol: str
    profile: Profile = "tiflow"
    partitions: int | None = None
    """The topic's partition count; ``None``: as many as the dump shows."""
    dispatcher: DispatchRule = field(default_factory=DispatchRule)
    options: tuple[tuple[str, str], ...] = ()
    claim_check_storage: str | None = None
    """The folder (``file://`` URI or path) holding the claim-check files; ``None``: none."""
    topic: str | None = None
    """The changefeed's default topic; ``None``: unknown (no cross-topic rule runs)."""
    routes: tuple[RoutingRule, ...] = ()
    """``[[sink.dispatchers]]`` in order (``topic-routing`` runs only with some and ``topic``)."""
    case_sensitive: bool = False
    """Whether the rules' matchers compare names as they are (``case-sensitive``)."""

    def router(self) -> Router | None:
        """The event router when there are routing rules and a default topic, else ``None``."""
        if not self.routes or self.topic is None:
            return None
        last = RoutingRule(matcher=("*.*",), partition=self.dispatcher)
        rules = (*self.routes, last)
        return Router(default_topic=self.topic, rules=rules, case_sensitive=self.case_sensitive)

    @property
    def max_message_bytes(self) -> int:
        """``max-message-bytes`` (default 10 MiB, §1.5)."""
        return int(dict(self.options).get("max-message-bytes", _DEFAULT_MAX_MESSAGE_BYTES))

    @property
    def compression(self) -> Compression:
        """``large-message-handle-compression``: how the checker decompresses (default none)."""
        return compression_of(dict(self.options))

    @property
    def max_batch_size(self) -> int | None:
        """``max-batch-size`` of the batching protocols (default 16); ``None`` for the others."""
        if self.protocol not in _BATCHING:
            return None
        return int(dict(self.options).get("max-batch-size", _DEFAULT_MAX_BATCH_SIZE))

    @classmethod
    def from_labels(cls, settings: Mapping[str, Any], **overrides: Any) -> CheckSettings:  # noqa: ANN401 - overrides of any field type
        """Settings from a label sidecar's ``settings``; non-``None`` overrides win."""
        dispatcher = settings.get("dispatcher") or {}
        values: dict[str, Any] = {
            "protocol": settings.get("protocol"),
            "profile": settings.get("profile", "tiflow"),
            "partitions": settings.get("partitions"),
            "dispatcher": DispatchRule(
                partition=dispatcher.get("partition", "default"),
                index_name=dispatcher.get("index-name"),
                columns=tuple(dispatcher.get("columns") or ()),
            ),
            "options": tuple(sorted((settings.get("options") or {}).items())),
            "topic": settings.get("topic"),
            "routes": tuple(RoutingRule.from_config(r) for r in settings.get("dispatchers") or ()),
            "case_sensitive": settings.get("case-sensitive") is True,
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values["protocol"] is None:
            raise ValueError("no protocol: give --protocol or a dump labelled with one")
        return cls(**values)


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One violation (or counted allowed anomaly) at Kafka coordinates."""

    rule: str
    topic: str
    partition: int
    offset: int | None
    """``None`` when the record is missing."""
    key: bytes | None = None
    commit_ts: int | None = None
    """The smallest commit ts involved; ``None`` when unknown (an undecodable message)."""
    detail: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Broadcast:
    """A DDL, watermark or BOOTSTRAP seen on one partition; all partitions must see it (§6.2)."""

    kind: str
    """``ddl-broadcast``, ``watermark-broadcast`` or ``bootstrap-broadcast``: the rule a gap
    breaks."""
    topic: str
    partition: int
    commit_ts: int
    ident: str
    """What tells two broadcasts of one commit ts apart (a DDL's query)."""


Seen = defaultdict[tuple[str, str, int, str], set[int]]
"""Broadcasts grouped: (kind, topic, commit ts, ident) → the partitions that carried one."""


def missing_broadcasts(
    broadcasts: Iterable[Broadcast], partitions: Mapping[str, int], default: str | None = None
) -> Iterator[Finding]:
    """One finding per partition of a topic lacking a DDL or watermark others have (§6.2).

    With the ``default`` topic known (routing rules), a watermark any topic carries must be on
    every partition of the default topic too (TiCDC sends each checkpoint there, tiflow
    ``cdc/sink/ddlsink/mq/mq_ddl_sink.go``, ticdc ``downstreamadapter/sink/kafka/sink.go``).
    """
    seen: Seen = defaultdict(set)
    for b in broadcasts:
        seen[b.kind, b.topic, b.commit_ts, b.ident].add(b.partition)
    return broadcast_gaps(seen, partitions, default)


def broadcast_gaps(
    seen: Seen, partitions: Mapping[str, int], default: str | None = None
) -> Iterator[Finding]:
    """``missing_broadcasts`` of broadcasts already grouped (``seen``, which it may extend)."""
    if default is not None and default in partitions:
        for kind, _, ts, ident in list(seen):
            if kind == WATERMARK_BROADCAST:
                seen[kind, default, ts, ident]  # owed to the default topic: an empty group
    every = {topic: set(range(n)) for topic, n in partitions.items()}
    gaps = [(group, where) for group, where in seen.items() if not every[group[1]] <= where]
    for (kind, topic, ts, ident), where in sorted(gaps):
        for p in range(partitions[topic]):
            if p not in where:
                yield Finding(
                    rule=kind,
                    topic=topic,
                    partition=p,
                    offset=None,
                    commit_ts=ts,
                    detail=ident or f"watermark {ts}",
                )


ACCOUNTING = ("_read", "_decoded", "_undecodable")
"""The pseudo-rules a check counts its messages under: read, decoded, undecodable."""

WATERMARK_POINTS = 64
"""Watermarks a report keeps per partition, evenly spread over those the partition carried."""


def watermark_series(
    stamps: Mapping[tuple[str, int], list[int]],
) -> list[dict[str, Any]]:
    """Per (topic, partition), its watermarks in commit-ts order, thinned.

    At most ``WATERMARK_POINTS`` evenly spaced ones (the first and the last always kept), with
    how many the partition carried (``seen``). Sorted, so both engines give the same series
    whatever order their tasks saw the watermarks in; ``watermark-monotonic`` reports the ones
    that went back.
    """
    series = []
    for (topic, partition), seen in sorted(stamps.items()):
        ordered = sorted(seen)
        n = len(ordered)
        if n > WATERMARK_POINTS:
            ordered = [
                ordered[round(k * (n - 1) / (WATERMARK_POINTS - 1))]
                for k in range(WATERMARK_POINTS)
            ]
        series.append({"topic": topic, "partition": partition, "seen": n, "commit_ts": ordered})
    return series


class CheckResult:
    """Counts per rule, bounded samples per rule, and the message accounting."""

    def __init__(
        self,
        counts: dict[str, int],
        samples: dict[str, list[dict[str, Any]]],
        records: int,
        *,
        plan: str,
        watermarks: list[dict[str, Any]] | None = None,
    ) -> None:
        self.watermarks = watermarks or []
        """``watermark_series``: each partition's watermarks, thinned."""
        self.counts = {r: n for r, n in counts.items() if r not in ACCOUNTING}
        self.samples = samples
        self.read, self.decoded, self.undecodable = (counts.get(n, 0) for n in ACCOUNTING)
        self.records = records
        """Records in the input, counted apart from the check (every one must be read)."""
        self.plan = plan
        """How the check ran: Spark's ``files`` (the no-shuffle path) or ``shuffle: <why the
        file plan did not hold>``, or ``in-process`` (the plain-Python checker)."""
