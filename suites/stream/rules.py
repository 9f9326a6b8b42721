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
version (``bootstrap-broadcast``, §6.6): checkers emit ``Broadcast`` records (a watermark
as its commit ts alone) and ``broadcast_gaps`` finds the gaps. Canal-JSON writes a DDL to
partition 0 alone, so there a DDL on any other partition breaks ``ddl-broadcast``. Findings
are counted per Kafka message; a missing record is reported with offset ``None``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
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
    WATERMARK_BROADCAST,
    Broadcast,
    CheckSettings,
    Finding,
    Rule,
    missing_broadcasts,
)
from ticdc_conformance.suites.stream.claim_checks import ClaimChecks
from ticdc_conformance.suites.stream.messages import Item, MessageFindings
from ticdc_conformance.suites.stream.ordering import ORDER_DETAILS, RowOrder
from ticdc_conformance.suites.stream.range_state import RangeState, RangeTracker
from ticdc_conformance.suites.stream.routing import TopicRouting
from ticdc_conformance.suites.stream.schemas import SchemaWatch

__all__ = [
    "RULES",
    "Broadcast",
    "CheckSettings",
    "Finding",
    "Item",
    "PartitionChecker",
    "Rule",
    "missing_broadcasts",
]


def _min_ts(rows: Iterable[DecodedRow]) -> int | None:
    stamps = [r.commit_ts for r in rows if r.commit_ts is not None]
    return min(stamps) if stamps else None


class PartitionChecker(MessageFindings):
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
        """``hash`` of the key and value of every row message so far."""
        self._dispatch = Affinity(settings, self._schemas and self._schemas.decoder)
        self._order = RowOrder(tracker)
        self._bootstraps: dict[str, int] = {}
        """BOOTSTRAPs seen per table schema version."""
        self._max_payload = settings.max_message_bytes - RECORD_OVERHEAD
        """The most key and value bytes a record may hold (``message-size``)."""
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

    def feed(
        self, offset: int, key: bytes | None, value: bytes | None
    ) -> list[Finding | Broadcast]:
        """Check one record: its findings and the broadcasts it carries, in that order."""
        out: list[Item] = []
        self.check(offset, key, value, out)
        return [self.item(i) for i in out]

    def item(self, item: Item) -> Finding | Broadcast:
        """An item of ``check`` as ``feed`` gives it: a watermark's commit ts as its broadcast."""
        if type(item) is int:
            return Broadcast(
                kind=WATERMARK_BROADCAST,
                topic=self.topic,
                partition=self.partition,
                commit_ts=item,
                ident="",
            )
        return item  # type: ignore[return-value]

    def check(self, offset: int, key: bytes | None, value: bytes | None, out: list[Item]) -> None:
        """``feed``, its items appended to ``out``: no list and no object per watermark."""
        self.read += 1
        oversized = (len(key) if key else 0) + (len(value) if value else 0) > self._max_payload
        message = Message(key=key, value=value)
        invalid = None
        try:
            if self._schemas is None:
                events = self._codec.decode(
                    message, message_index=offset, compression=self._compression
                )
            else:
                events = self._schemas.decode(message, offset)
        except InvalidValueError as error:
            events, invalid = self._lenient(error), error
        except DecodeError as error:
            self._undecodable(offset, key, error, oversized=oversized, out=out)
            return
        self.decoded += 1
        if oversized or invalid is not None or self._schemas is not None:
            self._noted(offset, key, events, invalid, oversized=oversized, out=out)
        if len(events) == 1 and type(mark := events[0]) is DecodedResolved:  # a watermark alone
            ts = mark.commit_ts
            if self._watermark is None or ts >= self._watermark:  # ``_watermark_seen`` inline
                out.append(ts)
                self._watermark = ts
                if (redeliveries := self._order.redeliveries).runs:
                    redeliveries.clear()
            else:
                self._watermark_seen(offset, key, ts, out)
            return
        self._events(offset, key, value, events, out)

    def _events(
        self,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        events: Sequence[DecodedEvent],
        out: list[Item],
    ) -> None:
        """The rules of a decoded message's events, in order: claim checks, control, rows."""
        rows = [e for e in events if type(e) is DecodedRow]
        for row in rows:
            if row.claim_check_location is not None:  # a reference: the rule reads it
                self._claim_checked(offset, key, rows, out)
                break
        if len(rows) < len(events):
            for event in events:
                if type(event) is not DecodedRow:
                    self._control(offset, key, event, out)
        if rows:
            self._rows(offset, key, value, rows, out)

    def _control(
        self, offset: int, key: bytes | None, event: DecodedEvent, out: list[Item]
    ) -> None:
        """A watermark, DDL or BOOTSTRAP: its broadcast, and what it changes for later rows."""
        if isinstance(event, DecodedDDL) and self._routing is not None:
            self._routed(offset, key, self._routing.ddl(event), event.commit_ts, out)
        if isinstance(event, DecodedResolved):
            self._watermark_seen(offset, key, event.commit_ts, out)
        elif isinstance(event, DecodedBootstrap) and self._bootstrap_everywhere:
            # each sending goes to every partition at once, so every partition has as many
            # of one schema version (§6.6): the n-th is one broadcast
            name = f"{event.schema}.{event.table} schema version {event.table_info.schema_version}"
            sent = self._bootstraps[name] = self._bootstraps.get(name, 0) + 1
            out.append(
                Broadcast(
                    kind="bootstrap-broadcast",
                    topic=self.topic,
                    partition=self.partition,
                    commit_ts=event.commit_ts,
                    ident=f"BOOTSTRAP {name}, #{sent}",
                )
            )
        elif isinstance(event, DecodedDDL) and self._ddl_to_zero:
            self._order.tables.ddl(event)
            if self.partition != 0:
                detail = "canal-json writes a DDL to partition 0 only"
                out.append(self._finding("ddl-broadcast", offset, key, event.commit_ts, detail))
        elif isinstance(event, DecodedDDL) and event.commit_ts is not None:
            self._order.tables.ddl(event)
            out.append(
                Broadcast(
                    kind="ddl-broadcast",
                    topic=self.topic,
                    partition=self.partition,
                    commit_ts=event.commit_ts,
                    ident=event.query,
                )
            )

    def _watermark_seen(self, offset: int, key: bytes | None, ts: int, out: list[Item]) -> None:
        out.append(ts)  # the watermark's broadcast (``Item``)
        if self._watermark is not None and ts < self._watermark:
            detail = f"watermark {ts} after {self._watermark}"
            out.append(self._finding("watermark-monotonic", offset, key, ts, detail))
            return
        self._watermark = ts
        # a row above this watermark cannot have been delivered before it (§6.2)
        if (redeliveries := self._order.redeliveries).runs:  # none since the last one: as clear
            redeliveries.clear()

    def _rows(
        self,
        offset: int,
        key: bytes | None,
        value: bytes | None,
        rows: list[DecodedRow],
        out: list[Item],
    ) -> None:
        if self._max_batch is not None and len(rows) > self._max_batch:
            detail = f"{len(rows)} rows, max-batch-size {self._max_batch}"
            out.append(self._finding("batch-size", offset, key, _min_ts(rows), detail))
        before = len(out)
        self._affinity(offset, key, rows, out)
        if self._routing is not None:
            self._routed(offset, key, self._routing.rows(rows), _min_ts(rows), out)
        misplaced = len(out) > before
        digest = hash((key, value))
        if self.tracker is not None:
            self.tracker.delivered(key, value)
        if digest in self._delivered:
            out.append(
                self._finding("allowed-duplicate", offset, key, _min_ts(rows), "exact repeat")
            )
            return
        self._delivered.add(digest)
        mark = self._watermark
        if mark is not None:
            late = [r for r in rows if r.commit_ts is not None and r.commit_ts <= mark]
            if late:
                detail = f"at or below watermark {mark}"
                out.append(self._finding("row-after-watermark", offset, key, _min_ts(late), detail))
                return
        broken = self._order.broken(rows, misplaced=misplaced)
        if broken:
            for rule, detail in ORDER_DETAILS.items():
                if rule in broken:
                    out.append(self._finding(rule, offset, key, _min_ts(broken[rule]), detail))

    def _affinity(
        self, offset: int, key: bytes | None, rows: list[DecodedRow], out: list[Item]
    ) -> None:
        if self._dispatch.all_here(rows, self.partition):  # tables placed before, here
            return
        chosen, unverifiable = self._dispatch.partitions(rows, self.partition)
        if unverifiable:
            detail = "hashed text holds U+FFFD"
            out.append(
                self._finding("affinity-unverifiable", offset, key, _min_ts(unverifiable), detail)
            )
        if chosen and (len(chosen) > 1 or self.partition not in chosen):
            detail = f"dispatcher picks partition(s) {sorted(chosen)}"
            out.append(self._finding("partition-affinity", offset, key, _min_ts(rows), detail))

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
            newest=dict(self._order.newest),
            barriers=self._order.tables.barriers,
            last_run_ts=self._order.tables.run_ts,
            checked=self.read,
        )

    def finish(self) -> Iterator[Finding]:
        """Findings known only at the end: Simple DML whose schema never arrived."""
        if self._schemas is not None:
            for u in self._schemas.unresolved():
                yield self._finding(u.rule, u.offset, u.key, u.commit_ts, u.detail)
