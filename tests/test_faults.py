"""Every fault kind is produced on demand, and its label points at the record it broke."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import pytest

from ticdc_conformance.generators.faults import (
    FAULT_KINDS,
    FaultPlacementError,
    Finding,
    applicable_kinds,
    inapplicable,
    inject_faults,
)
from ticdc_conformance.generators.simulator import StreamSettings, TopicLog, simulate
from ticdc_conformance.generators.workload import shop_workload
from ticdc_conformance.reference import (
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    Message,
)
from ticdc_conformance.reference.routing import RoutingRule
from ticdc_conformance.reference.simple import EncodingFormat, read_checksum
from ticdc_conformance.reference.validation import InvalidValueError

LIMIT = (("max-message-bytes", "16384"),)
SETTINGS = StreamSettings(protocol="open", partitions=3, options=LIMIT)
SIMPLE_KINDS = {"missing-schema", "late-schema", "partial-bootstrap", "bad-checksum"}
CLAIM_CHECK_KINDS = {"missing-claim-check", "swapped-claim-check"}
"""Kinds of logs with claim-check references: tests/test_stream_claim_check.py."""
ROUTED_KINDS = {"wrong-topic"}
"""Kinds that need routing rules (tests/test_stream_routing.py, and below)."""
KINDS = [k for k in FAULT_KINDS if k not in SIMPLE_KINDS | CLAIM_CHECK_KINDS | ROUTED_KINDS]


def clean_log() -> TopicLog:
    return simulate(shop_workload(5, ddl_every=40), SETTINGS, messages=1500)


def events_at(log: TopicLog, partition: int, offset: int) -> list[DecodedEvent]:
    return list(SETTINGS.codec.decode(log.partitions[partition][offset].message))


def decodable(message: Message) -> list[DecodedEvent]:
    """The events of a message; none for the one the corrupted-message fault broke."""
    try:
        return list(SETTINGS.codec.decode(message))
    except DecodeError:
        return []


def earlier(log: TopicLog, finding: Finding) -> list[DecodedEvent]:
    assert finding.offset is not None
    deliveries = log.partitions[finding.partition][: finding.offset]
    return [e for d in deliveries for e in decodable(d.message)]


def check_allowed_duplicate(log: TopicLog, finding: Finding) -> None:
    assert finding.offset is not None
    record = log.partitions[finding.partition][finding.offset].message
    before = log.partitions[finding.partition][: finding.offset]
    assert any(d.message == record for d in before)  # an exact repeat
    watermark = max(e.commit_ts for e in earlier(log, finding) if isinstance(e, DecodedResolved))
    rows = events_at(log, finding.partition, finding.offset)
    assert min(r.commit_ts or 0 for r in rows) == finding.commit_ts <= watermark


def check_row_after_watermark(log: TopicLog, finding: Finding) -> None:
    assert finding.offset is not None
    watermark = max(e.commit_ts for e in earlier(log, finding) if isinstance(e, DecodedResolved))
    (row,) = events_at(log, finding.partition, finding.offset)
    assert isinstance(row, DecodedRow)
    assert row.commit_ts == finding.commit_ts <= watermark
    old = log.partitions[finding.partition][: finding.offset]
    assert all(d.message != log.partitions[finding.partition][finding.offset].message for d in old)


def check_watermark_monotonic(log: TopicLog, finding: Finding) -> None:
    (event,) = events_at(log, finding.partition, finding.offset or 0)
    assert isinstance(event, DecodedResolved)
    previous = [e.commit_ts for e in earlier(log, finding) if isinstance(e, DecodedResolved)]
    assert event.commit_ts == finding.commit_ts < max(previous)


def check_missing(kind: type) -> Callable[[TopicLog, Finding], None]:
    def check(log: TopicLog, finding: Finding) -> None:
        assert finding.offset is None
        for partition in range(len(log.partitions)):
            present = {
                e.commit_ts
                for d in log.partitions[partition]
                for e in decodable(d.message)
                if isinstance(e, kind)
            }
            assert (finding.commit_ts in present) is (partition != finding.partition)

    return check


def check_partition_affinity(log: TopicLog, finding: Finding) -> None:
    rows = events_at(log, finding.partition, finding.offset or 0)
    assert rows
    for row in rows:
        assert isinstance(row, DecodedRow)
        home = zlib.crc32((row.schema + row.table).encode()) % len(log.partitions)
        assert home != finding.partition
    assert min(r.commit_ts or 0 for r in rows) == finding.commit_ts


def check_commit_ts_order(log: TopicLog, finding: Finding) -> None:
    rows = events_at(log, finding.partition, finding.offset or 0)
    newer_before = {
        e.table: e.commit_ts or 0 for e in earlier(log, finding) if isinstance(e, DecodedRow)
    }
    assert any(
        isinstance(r, DecodedRow) and (r.commit_ts or 0) < newer_before.get(r.table, 0)
        for r in rows
    )


def check_undecodable(log: TopicLog, finding: Finding) -> None:
    with pytest.raises(DecodeError):
        events_at(log, finding.partition, finding.offset or 0)


def check_batch_size(log: TopicLog, finding: Finding) -> None:
    rows = events_at(log, finding.partition, finding.offset or 0)
    assert len(rows) > 16  # the default max-batch-size
    assert all(isinstance(r, DecodedRow) for r in rows)
    assert min(r.commit_ts or 0 for r in rows) == finding.commit_ts
    # rows the clean log sends in several messages, in the same order: only the batching changed
    clean = [decodable(d.message) for d in clean_log().partitions[finding.partition]]
    flat = [e for events in clean for e in events]
    start = flat.index(rows[0])
    assert flat[start : start + len(rows)] == rows
    assert all(len(events) <= 16 for events in clean)


def check_message_size(log: TopicLog, finding: Finding) -> None:
    message = log.partitions[finding.partition][finding.offset or 0].message
    assert (
        message.length()
        > 16384
        >= max(d.message.length() for d in clean_log().partitions[finding.partition])
    )
    rows = events_at(log, finding.partition, finding.offset or 0)
    assert rows
    assert min(r.commit_ts or 0 for r in rows) == finding.commit_ts


def check_invalid_value(log: TopicLog, finding: Finding) -> None:
    message = log.partitions[finding.partition][finding.offset or 0].message
    with pytest.raises(InvalidValueError) as caught:
        SETTINGS.codec.decode(message)
    assert len(caught.value.findings) == 1  # one value broken per message
    assert caught.value.column is not None
    rows = caught.value.events
    assert rows
    assert all(isinstance(r, DecodedRow) for r in rows)
    assert min(r.commit_ts or 0 for r in rows) == finding.commit_ts


def check_row_before_ddl(log: TopicLog, finding: Finding) -> None:
    (row,) = events_at(log, finding.partition, finding.offset or 0)
    assert isinstance(row, DecodedRow)
    assert row.commit_ts == finding.commit_ts
    before = earlier(log, finding)
    watermark = max(e.commit_ts for e in before if isinstance(e, DecodedResolved))
    ddls = [
        e
        for e in before
        if isinstance(e, DecodedDDL) and (e.schema, e.table) == (row.schema, row.table)
    ]
    assert watermark < finding.commit_ts < max(e.commit_ts or 0 for e in ddls)


def check_split_update_order(log: TopicLog, finding: Finding) -> None:
    rows = events_at(log, finding.partition, finding.offset or 0)
    before = [e for e in earlier(log, finding) if isinstance(e, DecodedRow)]
    deletes = [r for r in rows if isinstance(r, DecodedRow) and r.op == "delete"]
    inserted = {(r.commit_ts, r.schema, r.table) for r in before if r.op == "insert"}
    inserted |= {
        (r.commit_ts, r.schema, r.table)
        for r in rows
        if isinstance(r, DecodedRow) and r.op == "insert"
    }
    assert any((d.commit_ts, d.schema, d.table) in inserted for d in deletes)
    assert min(d.commit_ts or 0 for d in deletes) == finding.commit_ts


CHECKS: dict[str, Callable[[TopicLog, Finding], None]] = {
    "allowed-duplicate": check_allowed_duplicate,
    "row-after-watermark": check_row_after_watermark,
    "watermark-monotonic": check_watermark_monotonic,
    "ddl-broadcast": check_missing(DecodedDDL),
    "watermark-broadcast": check_missing(DecodedResolved),
    "partition-affinity": check_partition_affinity,
    "commit-ts-order": check_commit_ts_order,
    "undecodable": check_undecodable,
    "batch-size": check_batch_size,
    "message-size": check_message_size,
    "invalid-value": check_invalid_value,
    "row-before-ddl": check_row_before_ddl,
    "split-update-order": check_split_update_order,
}


@pytest.mark.parametrize("kind", KINDS)
def test_each_fault_kind_alone_breaks_its_rule_where_labelled(kind: str) -> None:
    log = clean_log()
    (fault,) = inject_faults(log, [kind], seed=3)
    assert fault.kind == kind
    assert fault.findings
    for finding in fault.findings:
        assert finding.rule == FAULT_KINDS[kind]
        CHECKS[finding.rule](log, finding)


def test_all_kinds_together_keep_their_labels_true() -> None:
    log = clean_log()
    faults = inject_faults(log, KINDS, seed=9)
    assert [f.kind for f in faults] == KINDS
    for fault in faults:
        for finding in fault.findings:
            CHECKS[finding.rule](log, finding)


def test_same_seed_same_faults() -> None:
    first, second = clean_log(), clean_log()
    assert inject_faults(first, KINDS, seed=4) == inject_faults(second, KINDS, seed=4)
    assert list(first.records()) == list(second.records())


def test_refusals_are_clear() -> None:
    with pytest.raises(ValueError, match="unknown fault kind"):
        inject_faults(clean_log(), ["gremlins"], seed=1)
    with pytest.raises(FaultPlacementError, match="Simple protocol only"):
        inject_faults(clean_log(), ["missing-schema"], seed=1)
    short = simulate(shop_workload(5), SETTINGS, messages=20)
    with pytest.raises(FaultPlacementError, match="too few"):
        inject_faults(short, KINDS, seed=1)
    single = simulate(shop_workload(5), StreamSettings(partitions=1), messages=400)
    with pytest.raises(FaultPlacementError, match="two partitions"):
        inject_faults(single, ["wrong-partition"], seed=1)
    assert inject_faults(clean_log(), [], seed=1) == []


def test_which_kinds_apply_is_one_rule() -> None:
    every = [k for k in FAULT_KINDS if k not in CLAIM_CHECK_KINDS]
    simple = StreamSettings(protocol="simple-avro", options=LIMIT)
    plain = StreamSettings(protocol="debezium")
    extended = StreamSettings(protocol="debezium", options=(("enable-tidb-extension", "true"),))
    every = [k for k in every if k not in ROUTED_KINDS]
    assert applicable_kinds(SETTINGS) == [k for k in every if k not in SIMPLE_KINDS]
    assert applicable_kinds(StreamSettings(protocol="craft", options=LIMIT)) == applicable_kinds(
        SETTINGS
    )
    # without a max-message-bytes option the limit is 10 MiB: no message is grown that far
    assert applicable_kinds(StreamSettings(protocol="open")) == [
        k for k in every if k not in {*SIMPLE_KINDS, "oversized-message"}
    ]
    assert applicable_kinds(simple) == [
        k for k in every if k not in {"oversized-batch", "bad-checksum"}
    ]
    checksums = (*LIMIT, ("integrity-check-level", "correctness"))
    assert "bad-checksum" in applicable_kinds(
        StreamSettings(protocol="simple-json", options=checksums)
    )
    assert "bad-checksum" in applicable_kinds(
        StreamSettings(protocol="simple-avro", options=checksums)
    )
    assert "integrity-check-level" in (inapplicable("bad-checksum", simple) or "")
    only_zero = (*LIMIT, ("send-bootstrap-to-all-partition", "false"))
    zero = StreamSettings(protocol="simple-json", options=only_zero)
    assert not {"late-schema", "partial-bootstrap"} & set(applicable_kinds(zero))
    assert applicable_kinds(extended) == [
        k for k in every if k not in {*SIMPLE_KINDS, "oversized-batch", "oversized-message"}
    ]
    canal = StreamSettings(protocol="canal-json", options=(("enable-tidb-extension", "true"),))
    assert "invalid-value" not in applicable_kinds(canal)
    assert "checks no values" in (inapplicable("invalid-value", canal) or "")
    # without the TiDB extension Debezium writes no watermark (§5.5): nothing can be placed
    assert applicable_kinds(plain) == []
    assert "needs watermarks" in (inapplicable("replay", plain) or "")
    log = simulate(shop_workload(5), plain, messages=200)
    with pytest.raises(FaultPlacementError, match="needs watermarks"):
        inject_faults(log, ["replay"], seed=1)
    with pytest.raises(FaultPlacementError, match="batching protocols only"):
        inject_faults(simulate(shop_workload(5), simple, messages=200), ["oversized-batch"], 1)
    unlimited = simulate(shop_workload(5), StreamSettings(protocol="open"), messages=20)
    with pytest.raises(FaultPlacementError, match="max-message-bytes"):
        inject_faults(unlimited, ["oversized-message"], 1)
    with pytest.raises(ValueError, match="unknown fault kind"):
        inapplicable("gremlins", SETTINGS)


@pytest.mark.parametrize("protocol", ["craft", "simple-avro", "debezium"])
def test_every_kind_that_applies_is_placed_in_every_protocol(protocol: str) -> None:
    options = (("enable-tidb-extension", "true"),) if protocol == "debezium" else LIMIT
    settings = StreamSettings(protocol=protocol, options=options)
    kinds = applicable_kinds(settings)
    log = simulate(shop_workload(5, ddl_every=40), settings, messages=3000)
    faults = inject_faults(log, kinds, seed=2)
    assert [f.kind for f in faults] == kinds
    assert all(f.findings and {x.rule for x in f.findings} == {FAULT_KINDS[f.kind]} for f in faults)


def test_missing_schema_leaves_a_simple_dml_unresolved() -> None:
    settings = StreamSettings(protocol="simple-json", partitions=2)
    log = simulate(shop_workload(5), settings, messages=1500)
    (fault,) = inject_faults(log, ["missing-schema"], seed=3)
    (finding,) = fault.findings
    assert finding.rule == "schema-resolvable"
    decoder = settings.codec.new_decoder()  # type: ignore[attr-defined]
    for offset, delivery in enumerate(log.partitions[finding.partition]):
        decoder.feed(delivery.message, message_index=offset)
    (pending,) = decoder.pending()
    assert pending.message_index == finding.offset


@pytest.mark.parametrize("protocol", ["simple-json", "simple-avro"])
def test_bad_checksum_flips_one_bit_of_a_checksum_and_nothing_else(protocol: str) -> None:
    options = (*LIMIT, ("integrity-check-level", "correctness"))
    settings = StreamSettings(protocol=protocol, options=options)
    clean = simulate(shop_workload(5, ddl_every=40), settings, messages=600)
    log = simulate(shop_workload(5, ddl_every=40), settings, messages=600)
    (fault,) = inject_faults(log, ["bad-checksum"], seed=3)
    (finding,) = fault.findings
    assert finding.rule == "checksum"
    assert finding.offset is not None
    before = clean.partitions[finding.partition][finding.offset].message
    after = log.partitions[finding.partition][finding.offset].message
    encoding: EncodingFormat = "avro" if protocol == "simple-avro" else "json"
    old, new = (read_checksum(m, encoding=encoding) for m in (before, after))
    assert old is not None
    assert new is not None
    assert (old.current ^ new.current, old.previous ^ new.previous) in {(1, 0), (0, 1)}
    assert before.value != after.value
    assert settings.codec.decode(after) == settings.codec.decode(before)
    # every other record is untouched, and a consumer rejects that one row for its checksum
    faulted = [d.message for p in log.partitions for d in p]
    assert (
        sum(
            a != b
            for a, b in zip(faulted, [d.message for p in clean.partitions for d in p], strict=True)
        )
        == 1
    )
    decoder = settings.codec.new_decoder()  # type: ignore[attr-defined]
    for offset, delivery in enumerate(log.partitions[finding.partition]):
        decoder.feed(delivery.message, message_index=offset)
    (rejected,) = decoder.rejected()
    assert rejected.message_index == finding.offset
    assert rejected.reason.startswith("checksum:")


def test_wrong_topic_moves_a_row_message_to_a_topic_its_table_does_not_route_to() -> None:
    rule = RoutingRule(matcher=("shop.orders",), topic="orders")
    settings = StreamSettings(protocol="open", partitions=2, routes=(rule,))
    assert "routing rules" in (inapplicable("wrong-topic", SETTINGS) or "")
    log = simulate(shop_workload(5, ddl_every=40), settings, messages=1500)
    before = len(log)
    (fault,) = inject_faults(log, ["wrong-topic"], seed=3)
    (finding,) = fault.findings
    assert finding.rule == "topic-routing"
    assert len(log) == before
    topic = finding.topic or settings.topic
    assert finding.offset is not None
    moved = log.topics[topic][finding.partition][finding.offset]
    router = settings.router()
    rows = [r for r in settings.codec.decode(moved.message) if isinstance(r, DecodedRow)]
    assert rows
    elsewhere = {"orders", "ticdc-conformance"} - {topic}
    assert {router.topic_of_table(r.schema, r.table) for r in rows} == elsewhere
    assert min(r.commit_ts or 0 for r in rows) == finding.commit_ts
