"""Delivery faults injected into a clean topic log, each labelled with what a checker must find.

Every fault kind breaks one stream rule (ground truth §6) and records the findings it causes:
the rule id, the partition, the offset of the offending record (``None`` when the fault is a
record that is missing) and the commit ts involved. Faults are placed in separate stretches of
the log, so each one causes exactly its own findings. Findings are counted per Kafka message:
a batched message with several offending rows is one finding.

Kinds (``FAULT_KINDS`` maps each to the rule it breaks):

* ``replay``: a restart re-sends a stretch of row messages after the watermark that covered
  them (rule ``allowed-duplicate``: an exact repeat, counted but allowed, §6.3);
* ``row-below-watermark``: a new row version at or below a watermark arrives after it;
* ``watermark-regression``: an older watermark is sent again after a newer one;
* ``missing-ddl`` / ``missing-watermark``: one partition lacks a broadcast DDL / watermark;
* ``wrong-partition``: a row message lands on a partition its dispatcher does not choose;
* ``reordered-versions``: a flush of a partition's rows is cut at a transaction boundary and
  its later part sent first, so older rows of a table follow newer ones; whole transactions
  move, so none is cut in two (each message of the part sent late that carries such an older
  row is a finding);
* ``corrupted-message``: a row message's value bytes no longer decode;
* ``missing-schema``: (Simple only) a DML names a schema version no BOOTSTRAP or DDL announces;
* ``oversized-batch``: (Open, Craft) a flush split by ``max-batch-size`` goes out as one message
  holding more rows than the limit (§2.2, §3.4);
* ``invalid-value``: one row message per type family holds a value its column type cannot
  hold (rule ``invalid-value``, docs/errors.md): which families, and how the value is broken
  per protocol, is in ``generators/_invalid_values.py``;
* ``oversized-message``: a row message grows past ``max-message-bytes`` (a BLOB or TEXT value
  of the row made longer), which TiCDC's producer would have refused (§1.5);
* ``wrong-topic``: a row message lands on a topic its table does not route to (needs routing
  rules, not Simple: ``generators/_topic_faults.py``);
* ``row-after-ddl``, ``insert-before-delete``, ``late-schema``, ``partial-bootstrap``,
  ``bad-checksum``: a row older than a DDL of its table after it, a transaction's INSERT moved
  before its DELETE, a DML whose schema comes right after it, a BOOTSTRAP on one partition
  only, a checksum that no longer verifies (``generators/_order_faults.py``);
* ``missing-claim-check``, ``swapped-claim-check``: a claim-check reference whose stored file
  is missing, or holds another row (``generators/_claim_check_faults.py``).

Which kinds apply to a log is decided in one place, ``inapplicable``: every fault is placed
between watermarks, so a protocol that writes none (Debezium without
``enable-tidb-extension``, §5.5) admits no fault; ``missing-schema`` needs Simple's schema
messages (§6.6), ``oversized-batch`` a protocol that batches rows, ``oversized-message`` a
``max-message-bytes`` among the encoder options (a record over the 10 MiB default would make a
dump that large), ``wrong-partition`` a second partition, ``late-schema`` and
``partial-bootstrap`` Simple with BOOTSTRAPs on every partition, ``bad-checksum`` Simple
with ``integrity-check-level=correctness``, ``invalid-value`` a protocol whose
decoders check values (all but Canal-JSON), the claim-check kinds
``large-message-handle-option=claim-check``.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ticdc_conformance.generators._claim_check_faults import (
    claim_check_inapplicable,
    missing_claim_check,
    swapped,
)
from ticdc_conformance.generators._invalid_values import families, invalid_values
from ticdc_conformance.generators._move_faults import reordered_versions, wrong_partition
from ticdc_conformance.generators._order_faults import (
    bad_checksum,
    insert_before_delete,
    late_schema,
    order_inapplicable,
    partial_bootstrap,
    row_after_ddl,
)
from ticdc_conformance.generators._placement import (
    FaultPlacementError,
    Injector,
    Mark,
)
from ticdc_conformance.generators._size_faults import oversized_batch, oversized_message
from ticdc_conformance.generators._topic_faults import topic_inapplicable, wrong_topic
from ticdc_conformance.generators.simulator import (
    DDL_TO_PARTITION_ZERO,
    StreamSettings,
    TopicLog,
)
from ticdc_conformance.reference import DecodeError, Message
from ticdc_conformance.reference.dispatch import partition_of
from ticdc_conformance.reference.events import ResolvedEvent

__all__ = [
    "FAULT_KINDS",
    "FaultPlacementError",
    "Finding",
    "InjectedFault",
    "applicable_kinds",
    "inapplicable",
    "inject_faults",
]

FAULT_KINDS: dict[str, str] = {
    "replay": "allowed-duplicate",
    "row-below-watermark": "row-after-watermark",
    "watermark-regression": "watermark-monotonic",
    "missing-ddl": "ddl-broadcast",
    "missing-watermark": "watermark-broadcast",
    "wrong-partition": "partition-affinity",
    "wrong-topic": "topic-routing",
    "reordered-versions": "commit-ts-order",
    "corrupted-message": "undecodable",
    "invalid-value": "invalid-value",
    "missing-schema": "schema-resolvable",
    "oversized-batch": "batch-size",
    "oversized-message": "message-size",
    "row-after-ddl": "row-before-ddl",
    "insert-before-delete": "split-update-order",
    "late-schema": "schema-before-dml",
    "partial-bootstrap": "bootstrap-broadcast",
    "bad-checksum": "checksum",
    "missing-claim-check": "claim-check",
    "swapped-claim-check": "claim-check",
}
"""Fault kind → the id of the stream rule it breaks."""

_BATCHING = ("open", "craft")
"""The protocols that put several rows in one message, up to ``max-batch-size`` (§2.2, §3.4)."""


def inapplicable(kind: str, settings: StreamSettings) -> str | None:
    """Why a fault of ``kind`` cannot go into a log made with ``settings``; ``None`` if it can.

    The one rule for which fault kinds a protocol (with its options) admits; ``ValueError``
    for an unknown kind.
    """
    if kind not in FAULT_KINDS:
        raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
    watermark = ResolvedEvent(commit_ts=1)
    if not settings.codec.encode([watermark], settings.codec_config()):
        # every fault lives between watermarks (the injector's zones), and the checker's
        # order rules hang on them: Debezium writes none without enable-tidb-extension (§5.5)
        return f"{kind} needs watermarks, and {settings.protocol} writes none with these options"
    if kind == "missing-ddl" and settings.protocol in DDL_TO_PARTITION_ZERO:
        return (
            f"{settings.protocol} writes each DDL to partition 0 only (§6.2): one missing there "
            "leaves no trace a stream checker can see"
        )
    reason = (
        order_inapplicable(kind, settings)
        or claim_check_inapplicable(kind, settings)
        or topic_inapplicable(kind, settings)
    )
    if reason is not None:
        return reason
    if kind == "oversized-batch" and settings.protocol not in _BATCHING:
        return "oversized-batch applies to the batching protocols only (Open, Craft)"
    if kind == "oversized-message" and "max-message-bytes" not in dict(settings.options):
        return "oversized-message needs max-message-bytes among the encoder options"
    if kind == "invalid-value" and not families(settings.protocol):
        return f"{settings.protocol}'s decoder checks no values (docs/errors.md)"
    if kind == "wrong-partition" and settings.partitions < 2:
        return "a wrong partition needs a topic of two partitions or more"
    return None


def applicable_kinds(settings: StreamSettings) -> list[str]:
    """The fault kinds that can go into a log made with ``settings``, in catalog order."""
    return [kind for kind in FAULT_KINDS if inapplicable(kind, settings) is None]


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One violation a checker must report."""

    rule: str
    partition: int
    offset: int | None
    """Offset of the offending record; ``None`` when the record is missing."""
    commit_ts: int
    """The smallest commit ts among the offending record's events (for an undecodable record,
    among the events it carried before it was corrupted; for a missing one, its own)."""
    topic: str | None = None
    """The record's topic; ``None``: the default topic (``StreamSettings.topic``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class InjectedFault:
    """A fault and the findings it causes."""

    kind: str
    findings: tuple[Finding, ...]


def _replay(inj: Injector, zone: int) -> list[Mark]:
    for p, _, end, rows in inj.stretches(zone):
        if rows:
            deliveries = inj.log.partitions[p]
            copies = [dataclasses.replace(deliveries[i]) for i in rows]
            deliveries[end + 1 : end + 1] = copies
            return [Mark("allowed-duplicate", p, c, inj.oldest(c)) for c in copies]
    raise FaultPlacementError("no row messages to replay")


def _row_below_watermark(inj: Injector, zone: int) -> list[Mark]:
    settings = inj.log.settings
    router = settings.router()  # each row partitioned by its own rule's dispatcher
    for p, _, end, rows in inj.stretches(zone):
        if rows:
            deliveries = inj.log.partitions[p]
            watermark = deliveries[end].commit_ts
            template = deliveries[rows[-1]]
            # a late row of the segment, again, as a new version stamped with the watermark;
            # one committed at the watermark would be the very same version (for a protocol
            # of one row per message, the same bytes: a replay, not this fault)
            late = next(
                (
                    dataclasses.replace(row, commit_ts=watermark)
                    for row in reversed(template.rows)
                    if row.commit_ts < watermark
                ),
                None,
            )
            if late is None:
                continue  # no older row
            rule = router.rule_for(late.table.schema, late.table.name).partition
            if partition_of(late, settings.partitions, rule, settings.profile) != p:
                continue  # the ts dispatcher would send it elsewhere
            added = inj.encode_rows(template, [late])
            deliveries[end + 1 : end + 1] = added
            return [Mark("row-after-watermark", p, d, watermark) for d in added]
    raise FaultPlacementError("no row to send below a watermark")


def _watermark_regression(inj: Injector, zone: int) -> list[Mark]:
    for p, start, end, _ in inj.stretches(zone):
        if start >= 0:
            deliveries = inj.log.partitions[p]
            old = dataclasses.replace(deliveries[start])
            deliveries.insert(end + 1, old)
            return [Mark("watermark-monotonic", p, old, old.commit_ts)]
    raise FaultPlacementError("no two watermarks on any partition")


_Inject = Callable[[Injector, int], list[Mark]]


def _missing(kind: str, rule: str) -> _Inject:
    def inject(inj: Injector, zone: int) -> list[Mark]:
        for p, start, end, _ in inj.stretches(zone):
            deliveries = inj.log.partitions[p]
            where = [i for i in range(start + 1, end + 1) if deliveries[i].kind == kind]
            if where:
                removed = deliveries.pop(where[0])
                return [Mark(rule, p, None, removed.commit_ts)]
        raise FaultPlacementError(f"no {kind} message to remove")

    return inject


def _corrupted(message: Message) -> list[Message]:
    value = message.value or b""
    return [
        dataclasses.replace(message, value=value[: len(value) // 2]),
        dataclasses.replace(message, value=b"\xff" + value[1:]),
        dataclasses.replace(message, value=b"{" + value),
        dataclasses.replace(message, key=b"\x00", value=b"\x00"),
    ]


def _corrupted_message(inj: Injector, zone: int) -> list[Mark]:
    for p, _, _, rows in inj.stretches(zone):
        for i in rows:
            deliveries = inj.log.partitions[p]
            for broken in _corrupted(deliveries[i].message):
                try:
                    inj.codec.decode(broken, compression=inj.compression)
                except DecodeError:
                    oldest = inj.oldest(deliveries[i])
                    deliveries[i] = dataclasses.replace(deliveries[i], message=broken)
                    return [Mark("undecodable", p, deliveries[i], oldest)]
    raise FaultPlacementError("no row message could be corrupted")


def _missing_schema(inj: Injector, zone: int) -> list[Mark]:
    known = inj.schema_versions()
    unknown = next(v for v in range(1, len(known) + 2) if v not in known)
    for p, _, _, rows in inj.stretches(zone):
        for i in rows:
            deliveries = inj.log.partitions[p]
            template = deliveries[i]
            if len(inj.codec.encode(template.rows, inj.config)) != len(template.rows):
                continue  # Simple writes one row per message; anything else is not Simple
            # one row per message: the k-th message of a flush carries its k-th row
            siblings = [d for d in deliveries if d.rows is template.rows]
            row = template.rows[next(k for k, d in enumerate(siblings) if d is template)]
            lost = dataclasses.replace(
                row, table=dataclasses.replace(row.table, schema_version=unknown)
            )
            (replacement,) = inj.encode_rows(template, [lost])
            deliveries[i] = replacement
            return [Mark("schema-resolvable", p, replacement, row.commit_ts)]
    raise FaultPlacementError("no DML message to strip of its schema")


_INJECTORS: dict[str, _Inject] = {
    "replay": _replay,
    "row-below-watermark": _row_below_watermark,
    "watermark-regression": _watermark_regression,
    "missing-ddl": _missing("ddl", "ddl-broadcast"),
    "missing-watermark": _missing("resolved", "watermark-broadcast"),
    "wrong-partition": wrong_partition,
    "wrong-topic": wrong_topic,
    "reordered-versions": reordered_versions,
    "corrupted-message": _corrupted_message,
    "invalid-value": invalid_values,
    "missing-schema": _missing_schema,
    "oversized-batch": oversized_batch,
    "oversized-message": oversized_message,
    "row-after-ddl": row_after_ddl,
    "insert-before-delete": insert_before_delete,
    "late-schema": late_schema,
    "partial-bootstrap": partial_bootstrap,
    "bad-checksum": bad_checksum,
    "missing-claim-check": missing_claim_check,
    "swapped-claim-check": swapped,
}


def inject_faults(log: TopicLog, kinds: Sequence[str], seed: int) -> list[InjectedFault]:
    """Inject one fault of each of ``kinds`` into ``log`` (in place) and label them.

    ``FaultPlacementError`` when the log is too short or a kind does not apply to it
    (``inapplicable``); ``ValueError`` for an unknown kind.
    """
    reasons = [inapplicable(kind, log.settings) for kind in kinds]
    for reason in reasons:
        if reason is not None:
            raise FaultPlacementError(reason)
    if not kinds:
        return []
    injector = Injector(log, random.Random(seed), len(kinds))
    marked = [(kind, _INJECTORS[kind](injector, zone)) for zone, kind in enumerate(kinds)]
    offsets = {
        (topic, p): {id(d): i for i, d in enumerate(deliveries)}
        for topic, partitions in log.topics.items()
        for p, deliveries in enumerate(partitions)
    }

    def finding(mark: Mark) -> Finding:
        where = (mark.topic or log.settings.topic, mark.partition)
        offset = None if mark.anchor is None else offsets[where][id(mark.anchor)]
        return Finding(
            rule=mark.rule,
            partition=mark.partition,
            offset=offset,
            commit_ts=mark.commit_ts,
            topic=mark.topic,
        )

    return [
        InjectedFault(kind=kind, findings=tuple(finding(m) for m in marks))
        for kind, marks in marked
    ]
