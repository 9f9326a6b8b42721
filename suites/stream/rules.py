"""The per-partition checker of the stream rules (ground truth §6; docs/stream-checker.md).

The rule catalog, the settings and the findings are in ``suites/stream/catalog.py``, re-exported
here.

Plain Python, no Spark: the Spark job (``suites/stream/spark.py``) runs ``PartitionChecker``
on its executors, one per Kafka partition, over the records in offset order, as the in-process
path does for a small dump (``suites/stream/plain.py``: ``check_records``).

Per partition, in offset order:

* every message decodes (``undecodable`` otherwise; Simple with the partition's schema state);
* every value fits its column type (``invalid-value``, one finding per message naming its
  columns, docs/errors.md): such a message still counts as decoded, and its events, decoded
  leniently, go through the other rules;
* watermarks never go back (``watermark-monotonic``, §6.2: a checkpoint promises everything
  at or below it is written);
* a row message at or below the partition's last watermark after it is an at-least-once
  replay when it repeats an earlier delivery byte for byte (``allowed-duplicate``, counted,
  §6.3) and a violation otherwise (``row-after-watermark``);
* first deliveries of one table come in commit-ts order (``commit-ts-order``, §6.3), none
  older than a DDL of its table delivered before it (``row-before-ddl``, §6.2), a
  transaction's DELETEs of a table before its INSERTs (``split-update-order``, §6.5:
  ``suites/stream/ordering.py``), and a row delivered twice since the last watermark carries
  the same images (``duplicate-identical``);
* the dispatcher recomputed from the decoded row picks this partition (``partition-affinity``,
  §6.1); where the encoder replaced invalid UTF-8 with U+FFFD (Open ``tiflow``, Simple JSON,
  §1.4), a row whose hashed text holds U+FFFD cannot be recomputed and is counted instead
  (``affinity-unverifiable``);
* with routing rules, a row's or DDL's table routes to this topic (``topic-routing``,
  ``suites/stream/routing.py``), and a row's dispatcher is its rule's;
* messages keep ``max-message-bytes`` and ``max-batch-size`` (``message-size``,
  ``batch-size``, §1.5, §2.2, §3.4);
* Simple DML resolves to a schema some BOOTSTRAP or DDL announced (``schema-resolvable``,
  §6.6), announced before it on its partition (``schema-before-dml``), and its row checksum
  verifies (``checksum``, §4.6): ``suites/stream/schemas.py``;
* every claim-check reference resolves, through the claim-check storage, to the event it
  announces (``claim-check``: ``suites/stream/claim_checks.py``).

Across partitions, every DDL and watermark reaches every partition of its topic
(``ddl-broadcast``, ``watermark-broadcast``, §6.2), every watermark reaches the default topic
when routing rules name it, and with Simple's
``send-bootstrap-to-all-partition=true`` (the default) every BOOTSTRAP of a table's schema
version (``bootstrap-broadcast``, §6.6): checkers emit ``Broadcast`` records and
``missing_broadcasts`` finds the gaps. Canal-JSON writes a DDL to partition 0 alone, so there
a DDL on any other partition breaks ``ddl-broadcast``. Findings are counted per Kafka
message; a missing record is reported with offset ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ticdc_conformance.generators.simulator import DDL_TO_PARTITION_ZERO
from ticdc_conformance.reference import CODECS, DecodedRow, DecodeError, Message
from ticdc_conformance.reference.decoded import (
    DecodedBootstrap,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
)
from ticdc_conformance.reference.message import RECORD_OVERHEAD, SchemaCodec
from ticdc_conformance.reference.validation import InvalidValueError
from ticdc_conformance.suites.stream.affinity import Affinity
from ticdc_conformance.suites.stream.catalog import (
    RULES,
    Broadcast,
    CheckSettings,
    Finding,
    Rule,
    missing_broadcasts,
)
from ticdc_conformance.suites.stream.claim_checks import ClaimChecks
from ticdc_conformance.suites.stream.ordering import (
    BROKEN_AFTER_ORDER,
    ORDER_DETAILS,
    Redeliveries,
    TableOrder,
)
from ticdc_conformance.suites.stream.range_state import RangeState, RangeTracker
from ticdc_conformance.suites.stream.routing import TopicRouting
from ticdc_conformance.suites.stream.schemas import SchemaWatch

__all__ = [
    "RULES",
    "Broadcast",
    "CheckSettings",
    "Finding",
    "PartitionChecker",
    "Rule",
    "missing_broadcasts",
]


def _min_ts(rows: Iterable[DecodedRow]) -> int | None:
    stamps = [r.commit_ts for r in rows if r.commit_ts is not None]
    return min(stamps) if stamps else None


class PartitionChecker:
    """The sequential rules of one Kafka partition; feed records in offset order."""

    def __init__(
        self,
        settings: CheckSettings,
        topic: str,
        partition: int,
        *,
        tracker: RangeTracker | None = None,
    ) -> None:
        """A checker of the partition ``topic``/``partition`` from its first record.

        ``tracker``: of a range of the partition, what it records of its assumptions
        (``suites/stream/range_state.py``).
        """
        self.settings, self.topic, self.partition = settings, topic, partition
        self.tracker = tracker
        codec: Any = CODECS[settings.protocol]
        self._codec = codec
        self._compression = settings.compression
        options = dict(settings.options)
        self._bootstrap_everywhere = (
            options.get("send-bootstrap-to-all-partition", "true").lower() == "true"
        )
        self._schemas = (
            SchemaWatch(
                codec,
                codec.new_decoder(compression=self._compression),
                ordered=self._bootstrap_everywhere or partition == 0,
                compression=self._compression,
            )
            if isinstance(codec, SchemaCodec)
            else None
        )
        self.read = self.decoded = self.undecodable = 0
        self._watermark: int | None = None
        self._delivered: set[int] = set()
        self._newest: dict[tuple[str, str], int] = {}
        self._redeliveries = Redeliveries()
        self._dispatch = Affinity(settings, self._schemas and self._schemas.decoder)
        self._order = TableOrder()
        self._bootstraps: dict[str, int] = {}
        """BOOTSTRAPs seen per table schema version."""
        self._max_bytes = settings.max_message_bytes
        self._max_batch = settings.max_batch_size
        self._ddl_to_zero = settings.protocol in DDL_TO_PARTITION_ZERO
        self._claim_checks = ClaimChecks(
            settings,
            lambda message, offset: codec.decode(
                message, message_index=offset, compression=self._compression
            ),
            self._schemas and self._schemas.decoder,
        )
        self._routing = TopicRouting.of(settings, topic)

    def _decode(
        self, message: Message, offset: int
    ) -> tuple[list[DecodedEvent], InvalidValueError | None]:
        """The message's events, and its invalid values (its events then decoded leniently)."""
        try:
            return self._decoded(message, offset), None
        except InvalidValueError as error:
            events = list(error.events)
            if self._schemas is not None and events and not isinstance(events[0], DecodedRow):
                events = events[:1]  # rows released by a schema message belong to earlier offsets
            return events, error

    def _decoded(self, message: Message, offset: int) -> list[DecodedEvent]:
        if self._schemas is None:
            return list(
                self._codec.decode(message, message_index=offset, compression=self._compression)
            )
        return self._schemas.decode(message, offset)

    def feed(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> Iterator[Finding | Broadcast]:
        """Check one record; yield its findings and the broadcasts it carries."""
        self.read += 1
        message = Message(key=key, value=value)
        oversized = len(key or b"") + len(value or b"") + RECORD_OVERHEAD > self._max_bytes
        try:
            events, invalid = self._decode(message, offset)
        except DecodeError as error:
            if oversized:
                yield self._finding("message-size", offset, key, None, "over max-message-bytes")
            self.undecodable += 1
            yield self._finding("undecodable", offset, key, None, str(error))
            return
        if oversized:  # reported with the commit ts it carries, when the message decodes
            stamps = [e.commit_ts for e in events if e.commit_ts]
            yield self._finding(
                "message-size", offset, key, min(stamps, default=None), "over max-message-bytes"
            )
        self.decoded += 1
        if self._schemas is not None:
            for u in self._schemas.news(offset, events):
                yield self._finding(u.rule, u.offset, u.key, u.commit_ts, u.detail)
        if invalid is not None:
            yield self._invalid_found(offset, key, events, invalid)
        rows = [e for e in events if isinstance(e, DecodedRow)]
        if (stored := self._claim_checks.problems(offset, rows)) is not None:
            yield self._finding("claim-check", offset, key, *stored)
        for event in events:
            if not isinstance(event, DecodedRow):
                yield from self._control(offset, key, event)
        if rows:
            yield from self._rows(offset, key, value, rows)

    def _control(
        self, offset: int, key: bytes | None, event: DecodedEvent
    ) -> Iterator[Finding | Broadcast]:
        """A watermark, DDL or BOOTSTRAP: its broadcast, and what it changes for later rows."""
        if isinstance(event, DecodedDDL) and self._routing is not None:
            yield from self._routed(offset, key, self._routing.ddl(event), event.commit_ts)
        if isinstance(event, DecodedResolved):
            yield from self._watermark_seen(offset, key, event.commit_ts)
        elif isinstance(event, DecodedBootstrap) and self._bootstrap_everywhere:
            # each sending goes to every partition at once, so every partition has as many
            # of one schema version (§6.6): the n-th is one broadcast
            name = f"{event.schema}.{event.table} schema version {event.table_info.schema_version}"
            sent = self._bootstraps[name] = self._bootstraps.get(name, 0) + 1
            yield Broadcast(
                kind="bootstrap-broadcast",
                topic=self.topic,
                partition=self.partition,
                commit_ts=event.commit_ts,
                ident=f"BOOTSTRAP {name}, #{sent}",
            )
        elif isinstance(event, DecodedDDL) and self._ddl_to_zero:
            self._order.ddl(event)
            if self.partition != 0:
                yield self._finding(
                    "ddl-broadcast",
                    offset,
                    key,
                    event.commit_ts,
                    "canal-json writes a DDL to partition 0 only",
                )
        elif isinstance(event, DecodedDDL) and event.commit_ts is not None:
            self._order.ddl(event)
            yield Broadcast(
                kind="ddl-broadcast",
                topic=self.topic,
                partition=self.partition,
                commit_ts=event.commit_ts,
                ident=event.query,
            )

    def _invalid_found(
        self, offset: int, key: bytes | None, events: list[DecodedEvent], error: InvalidValueError
    ) -> Finding:
        stamps = [e.commit_ts for e in events if e.commit_ts]
        columns = sorted({getattr(f, "column", None) or "?" for f in error.findings})
        detail = f"columns {', '.join(columns)}: {error}"
        return self._finding("invalid-value", offset, key, min(stamps, default=None), detail)

    def _finding(
        self, rule: str, offset: int | None, key: bytes | None, ts: int | None, detail: str
    ) -> Finding:
        return Finding(
            rule=rule,
            topic=self.topic,
            partition=self.partition,
            offset=offset,
            key=key,
            commit_ts=ts,
            detail=detail,
        )

    def _watermark_seen(
        self, offset: int, key: bytes | None, ts: int
    ) -> Iterator[Finding | Broadcast]:
        yield Broadcast(
            kind="watermark-broadcast",
            topic=self.topic,
            partition=self.partition,
            commit_ts=ts,
            ident="",
        )
        if self._watermark is not None and ts < self._watermark:
            yield self._finding(
                "watermark-monotonic", offset, key, ts, f"watermark {ts} after {self._watermark}"
            )
            return
        self._watermark = ts
        # a row above this watermark cannot have been delivered before it (§6.2)
        self._redeliveries.clear()

    def _rows(
        self, offset: int, key: bytes | None, value: bytes | None, rows: list[DecodedRow]
    ) -> Iterator[Finding]:
        if self._max_batch is not None and len(rows) > self._max_batch:
            yield self._finding(
                "batch-size",
                offset,
                key,
                _min_ts(rows),
                f"{len(rows)} rows, max-batch-size {self._max_batch}",
            )
        misplaced = list(self._affinity(offset, key, rows))
        if self._routing is not None:
            misplaced += self._routed(offset, key, self._routing.rows(rows), _min_ts(rows))
        yield from misplaced
        digest = hash((key, value))
        if self.tracker is not None:
            self.tracker.delivered(key, value)
        repeat = digest in self._delivered
        self._delivered.add(digest)
        if repeat:
            yield self._finding("allowed-duplicate", offset, key, _min_ts(rows), "exact repeat")
            return
        mark = self._watermark
        late = [
            r for r in rows if mark is not None and r.commit_ts is not None and r.commit_ts <= mark
        ]
        if late:
            yield self._finding(
                "row-after-watermark", offset, key, _min_ts(late), f"at or below watermark {mark}"
            )
            return
        broken: dict[str, list[DecodedRow]] = {}
        for row in rows:
            for rule in self._row_rules(row, misplaced=bool(misplaced)):
                broken.setdefault(rule, []).append(row)
        for rule, detail in ORDER_DETAILS.items():
            if rule in broken:
                yield self._finding(rule, offset, key, _min_ts(broken[rule]), detail)

    def _row_rules(self, row: DecodedRow, *, misplaced: bool) -> tuple[str, ...]:
        """The order rules a first delivery of ``row`` breaks (``ORDER_DETAILS``)."""
        if row.commit_ts is None:
            return ()
        table = (row.schema, row.table)
        if self.tracker is not None:
            self.tracker.ordered(table, row.commit_ts)
        if self._order.before_ddl(row) is not None:
            return ("row-before-ddl",)
        newest = self._newest.get(table)
        if newest is not None and row.commit_ts < newest:
            return ("commit-ts-order",)
        self._newest[table] = row.commit_ts
        if self.tracker is not None:
            self.tracker.run(row.commit_ts)
        split = self._order.delete_after_insert(row)
        # a redelivery goes where the first delivery went: a misplaced row is no repeat
        same = misplaced or self._redeliveries.same_as_first(row, row.commit_ts)
        return BROKEN_AFTER_ORDER[split, same]

    def _affinity(
        self, offset: int, key: bytes | None, rows: list[DecodedRow]
    ) -> Iterator[Finding]:
        chosen, unverifiable = self._dispatch.partitions(rows, self.partition)
        if unverifiable:
            yield self._finding(
                "affinity-unverifiable",
                offset,
                key,
                _min_ts(unverifiable),
                "hashed text holds U+FFFD",
            )
        if chosen - {self.partition}:
            yield self._finding(
                "partition-affinity",
                offset,
                key,
                _min_ts(rows),
                f"dispatcher picks partition(s) {sorted(chosen)}",
            )

    def _routed(
        self, offset: int, key: bytes | None, wrong: str | None, ts: int | None
    ) -> Iterator[Finding]:
        if wrong is not None:
            yield self._finding("topic-routing", offset, key, ts, wrong)

    def range_state(self, index: int, first_watermark: int | None) -> RangeState:
        """What this checker of a range (``tracker``) assumed and leaves."""
        tracker = self.tracker or RangeTracker()
        return RangeState(
            index=index,
            first_watermark=first_watermark,
            floors=dict(tracker.floors),
            first_run_ts=tracker.first_run_ts,
            hashes=frozenset(tracker.hashes),
            watermark=self._watermark,
            newest=dict(self._newest),
            barriers=self._order.barriers,
            last_run_ts=self._order.run_ts,
            checked=self.read,
        )

    def finish(self) -> Iterator[Finding]:
        """Findings known only at the end: Simple DML whose schema never arrived."""
        if self._schemas is not None:
            for u in self._schemas.unresolved():
                yield self._finding(u.rule, u.offset, u.key, u.commit_ts, u.detail)
