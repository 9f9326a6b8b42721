"""The stream rules without Spark: clean dumps find nothing, each fault exactly its label."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from stream_helpers import CLEAN, FAULTY, comparable, dump, dump_with, labelled

from ticdc_conformance.generators.dump import read_dump, read_labels
from ticdc_conformance.generators.faults import FAULT_KINDS, inapplicable
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.reference import (
    CODECS,
    ColumnInfo,
    DDLEvent,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
)
from ticdc_conformance.reference.dispatch import DispatchRule, partition_of
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.suites.stream.plain import Outcome, check_records
from ticdc_conformance.suites.stream.rules import RULES, CheckSettings, Finding, PartitionChecker


def check(folder: Path, **overrides: object) -> Outcome:
    settings = CheckSettings.from_labels(read_labels(folder)["settings"], **overrides)
    records = ((r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(folder))
    return check_records(records, settings)


def coordinates(outcome: Outcome) -> list[tuple[str, int, int | None, int | None]]:
    return sorted((f.rule, f.partition, f.offset, f.commit_ts) for f in outcome.findings)


def test_catalog_covers_every_fault_kind() -> None:
    assert set(FAULT_KINDS.values()) <= set(RULES)
    assert {r.severity for r in RULES.values()} == {"error", "warning"}
    assert RULES["allowed-duplicate"].severity == "warning"
    assert all(r.doc.endswith(f"#{r.id}") and r.description for r in RULES.values())


@pytest.mark.parametrize("protocol", CLEAN)
def test_clean_dumps_have_no_findings(protocol: str) -> None:
    outcome = check(dump(protocol))
    assert outcome.findings == ()
    assert outcome.read == outcome.decoded > 0
    assert outcome.undecodable == 0


@pytest.mark.parametrize(("fault", "protocol"), sorted(FAULTY.items()))
def test_each_fault_is_found_exactly_where_labelled(fault: str, protocol: str) -> None:
    folder = dump(protocol, fault)
    outcome = check(folder)
    found = coordinates(outcome)
    expected = labelled(read_labels(folder))
    assert [f[0] for f in expected]
    assert {f[0] for f in expected} == {FAULT_KINDS[fault]}
    assert found == comparable(found, expected)
    assert outcome.decoded + outcome.undecodable == outcome.read


def test_cli_settings_override_the_labels() -> None:
    labels = {
        "protocol": "open",
        "partitions": 3,
        "options": {"max-batch-size": "16"},
        "dispatcher": {"partition": "ts"},
    }
    settings = CheckSettings.from_labels(labels, partitions=5, profile=None)
    assert settings.partitions == 5
    assert settings.dispatcher == DispatchRule(partition="ts")
    assert settings.max_batch_size == 16
    with pytest.raises(ValueError, match="no protocol"):
        CheckSettings.from_labels({})


def test_limits_are_checked_against_the_options_given() -> None:
    folder = dump("open")
    outcome = check(folder, options=(("max-batch-size", "2"), ("max-message-bytes", "2000")))
    rules = {f.rule for f in outcome.findings}
    assert rules == {"batch-size", "message-size"}


def test_a_wrong_partition_count_breaks_affinity() -> None:
    outcome = check(dump("open"), partitions=7)
    assert {f.rule for f in outcome.findings} >= {"partition-affinity"}


def test_watermarks_going_back_and_rows_below_them() -> None:
    codec = CODECS["open"]
    first, second = (codec.encode([ResolvedEvent(commit_ts=ts)])[0] for ts in (20, 10))
    checker = PartitionChecker(CheckSettings(protocol="open"), "t", 0)
    items = [*checker.feed(0, first.key, first.value), *checker.feed(1, second.key, second.value)]
    rules = [getattr(i, "rule", None) for i in items]
    assert rules == [None, None, "watermark-monotonic"]


TABLE = TableInfo(
    schema="s",
    name="t",
    columns=(ColumnInfo(name="id", type="int", key="primary"), ColumnInfo(name="v", type="int")),
)


OTHER = dataclasses.replace(TABLE, name="u")


def row(ts: int, v: int, table: TableInfo = TABLE) -> tuple[bytes | None, bytes | None]:
    event = RowChangedEvent(commit_ts=ts, table=table, op="insert", after=(1, v))
    (message,) = CODECS["craft"].encode([event])
    return message.key, message.value


@pytest.mark.parametrize(("second", "rule"), [(2, "duplicate-identical"), (1, "allowed-duplicate")])
def test_a_row_delivered_again_must_be_identical(second: int, rule: str) -> None:
    checker = PartitionChecker(CheckSettings(protocol="craft", partitions=1), "t", 0)
    first = [*checker.feed(0, *row(5, 1)), *checker.feed(1, *row(6, 1, OTHER))]
    again = list(checker.feed(2, *row(5, second)))
    assert first == []
    assert [(f.rule, f.offset, f.commit_ts) for f in again] == [(rule, 2, 5)]  # type: ignore[union-attr]


def test_ddl_missing_from_one_partition_is_found_with_no_offset() -> None:
    (ddl,) = CODECS["open"].encode(
        [DDLEvent(commit_ts=5, schema="s", table="t", query="CREATE TABLE t (a INT)", ddl_type=3)]
    )
    records = [("t", p, 0, ddl.key, ddl.value) for p in (0, 2)]
    outcome = check_records(records, CheckSettings(protocol="open", partitions=3))
    assert coordinates(outcome) == [("ddl-broadcast", 1, None, 5)]


def test_undecodable_messages_are_counted_and_reported() -> None:
    records = [("t", 0, 0, b"\x00", b"\x00"), ("t", 0, 1, *row(5, 1))]
    outcome = check_records(records, CheckSettings(protocol="craft"))
    assert (outcome.read, outcome.decoded, outcome.undecodable) == (2, 1, 1)
    assert coordinates(outcome) == [("undecodable", 0, 0, None)]


def test_a_row_changed_twice_in_one_transaction_is_no_duplicate() -> None:
    first = RowChangedEvent(commit_ts=5, table=TABLE, op="update", before=(1, 1), after=(1, 2))
    second = RowChangedEvent(commit_ts=5, table=TABLE, op="update", before=(1, 2), after=(1, 3))
    config = CODECS["craft"].config_from_options({"max-batch-size": "1"})
    messages = CODECS["craft"].encode([first, second], config)
    checker = PartitionChecker(CheckSettings(protocol="craft", partitions=1), "t", 0)
    assert len(messages) == 2
    assert [f for i, m in enumerate(messages) for f in checker.feed(i, m.key, m.value)] == []


def test_a_larger_clean_dump_over_six_partitions_has_no_findings() -> None:
    folder = dump_with(StreamSettings(protocol="open", partitions=6), messages=5000)
    assert check(folder).findings == ()


_DISPATCHED = [
    ("open", "index-value"),
    ("craft", "ts"),
    ("simple-json", "index-value"),
    ("simple-avro", "ts"),
]


@pytest.mark.parametrize(
    ("protocol", "dispatcher", "fault"),
    [
        *((p, d, f) for p, d in _DISPATCHED for f in (None, "wrong-partition")),
        # without the TiDB extension Debezium writes no watermarks, so no fault has a stretch
        # to go in: clean only
        ("debezium", "index-value", None),
    ],
)
def test_other_dispatchers(protocol: str, dispatcher: str, fault: str | None) -> None:
    folder = dump(protocol, fault, 600, dispatcher)
    assert coordinates(check(folder)) == labelled(read_labels(folder))


LATIN1_KEY = TableInfo(
    schema="s",
    name="t",
    columns=(ColumnInfo(name="k", type="varchar", charset="latin1", key="primary"),),
)


@pytest.mark.parametrize(
    ("protocol", "profile", "rules"),
    [
        ("open", "tiflow", ["affinity-unverifiable"]),  # written as U+FFFD: cannot re-hash
        ("open", "ticdc", []),  # copied raw: the same bytes hash the same
        ("simple-json", "tiflow", ["affinity-unverifiable"]),
        ("craft", "tiflow", []),
    ],
)
def test_text_the_encoder_replaced_is_counted_not_misplaced(
    protocol: str, profile: str, rules: list[str]
) -> None:
    index_value = DispatchRule(partition="index-value")
    settings = CheckSettings(
        protocol=protocol,
        profile=profile,  # type: ignore[arg-type]
        partitions=8,
        dispatcher=index_value,
    )
    codec = CODECS[protocol]
    config = codec.config_from_options({}, profile=profile)
    found: list[str] = []
    for value in (b"caf\xe9", b"na\xefve", b"\xff\xfe", b"plain"):
        event = RowChangedEvent(commit_ts=5, table=LATIN1_KEY, op="insert", after=(value,))
        partition = partition_of(event, 8, index_value, profile)  # type: ignore[arg-type]
        checker = PartitionChecker(settings, "t", partition)
        messages = codec.encode([event], config)
        if isinstance(codec, SchemaCodec):
            messages = [codec.encode_bootstrap(LATIN1_KEY, config), *messages]
        for offset, message in enumerate(messages):
            found += [
                f.rule
                for f in checker.feed(offset, message.key, message.value)
                if isinstance(f, Finding)
            ]
    assert found == rules * 3  # "plain" is valid UTF-8: checked, and in place


@pytest.mark.parametrize("fault", [None, "wrong-partition", "row-below-watermark"])
def test_debezium_with_watermarks_under_index_value(fault: str | None) -> None:
    folder = dump("debezium", fault, 600, "index-value", (("enable-tidb-extension", "true"),))
    expected = labelled(read_labels(folder))
    assert bool(expected) is (fault is not None)
    assert coordinates(check(folder)) == expected


def test_canal_json_ddl_belongs_on_partition_zero_only() -> None:
    """Canal-JSON writes a DDL to partition 0 alone (§6.2): elsewhere it breaks the rule."""
    codec = CODECS["canal-json"]
    config = codec.config_from_options({"enable-tidb-extension": "true"})
    (ddl,) = codec.encode(
        [DDLEvent(commit_ts=5, schema="s", table="t", query="CREATE TABLE t (a INT)", ddl_type=3)],
        config,
    )
    alone = check_records(
        [("t", 0, 0, ddl.key, ddl.value)], CheckSettings(protocol="canal-json", partitions=3)
    )
    assert alone.findings == ()
    spread = check_records(
        [("t", p, 0, ddl.key, ddl.value) for p in (0, 2)],
        CheckSettings(protocol="canal-json", partitions=3),
    )
    assert coordinates(spread) == [("ddl-broadcast", 2, 0, 5)]


CANAL_EXTENSION = (("enable-tidb-extension", "true"),)


@pytest.mark.parametrize(
    "fault",
    sorted(
        set(FAULT_KINDS)
        - {"missing-ddl", "missing-schema", "oversized-batch", "oversized-message", "invalid-value"}
        - {"late-schema", "partial-bootstrap", "bad-checksum"}  # Simple's
        - {"wrong-topic"}  # routing rules: tests/test_stream_routing.py
        # Canal-JSON writes DDLs to partition 0 alone, and this workload's one DDL is of a
        # table dispatched elsewhere: the stream fixtures (a DDL every 40 transactions) have it
        - {"row-after-ddl"}
        # claim-check options: tests/test_stream_claim_check.py
        - {"missing-claim-check", "swapped-claim-check"}
    ),
)
def test_canal_json_faults_are_found_exactly_where_labelled(fault: str) -> None:
    folder = dump("canal-json", fault, 600, "default", CANAL_EXTENSION)
    outcome = check(folder)
    expected = labelled(read_labels(folder))
    assert {f[0] for f in expected} == {FAULT_KINDS[fault]}
    found = coordinates(outcome)
    assert found == comparable(found, expected)


def test_canal_json_with_watermarks_is_clean() -> None:
    outcome = check(dump("canal-json", None, 600, "default", CANAL_EXTENSION))
    assert outcome.findings == ()
    assert outcome.read == outcome.decoded > 0


def test_canal_json_admits_no_missing_ddl_fault() -> None:
    settings = StreamSettings(protocol="canal-json", options=CANAL_EXTENSION)
    assert "partition 0 only" in (inapplicable("missing-ddl", settings) or "")
    assert inapplicable("missing-watermark", settings) is None
