"""The reference consumer (reference/consumer.py): TiCDC's consumer end state, per rule."""

from __future__ import annotations

import itertools
import json
from dataclasses import replace

import pytest
from hypothesis import given, settings
from truth_helpers import KEYS, GeneratedStream, generated_streams

from ticdc_conformance import fixtures
from ticdc_conformance.generators.dump import read_dump
from ticdc_conformance.generators.simulator import (
    Record,
    StreamSettings,
    TopicLog,
    Transaction,
    simulate,
)
from ticdc_conformance.generators.truth import expected_tables, observed_tables, shop_truth
from ticdc_conformance.generators.workload import shop_workload
from ticdc_conformance.reference import CODECS, DDLEvent, Message, RowChangedEvent
from ticdc_conformance.reference.claim_check import ClaimCheck
from ticdc_conformance.reference.consumer import AppliedChange, Coordinates, apply_log, consume
from ticdc_conformance.reference.decoded import DecodedResolved
from ticdc_conformance.suites.consumer.job import claim_check_of
from ticdc_conformance.suites.stream.rules import CheckSettings

ROOT = fixtures.default_root()
STREAMS = fixtures.load_manifest()["streams"]
ALLOWED = [s for s in STREAMS if s["fault"] in (None, "replay") and "without" not in s["id"]]
"""Streams TiCDC may write whose values say what the table holds (Debezium without the TiDB
extension leaves BIGINT UNSIGNED and BLOB values ambiguous)."""


URI = "file:///var/claim-check"


def _records(stream_id: str) -> list[Record]:
    [found] = [s for s in STREAMS if s["id"] == stream_id]
    return sorted(read_dump(ROOT / found["records"]), key=lambda r: (r.partition, r.offset))


def _messages(records: list[Record]) -> list[tuple[Coordinates, Message]]:
    return [
        (Coordinates(r.topic, r.partition, r.offset), Message(key=r.key, value=r.value))
        for r in records
    ]


@pytest.mark.parametrize("stream", ALLOWED, ids=[s["id"] for s in ALLOWED])
def test_the_expected_state_of_every_allowed_stream_is_its_truth(stream: dict[str, str]) -> None:
    # Canal-JSON marks only primary keys (pkNames): a table keyed by a unique index needs its
    # handle key given, as a Canal consumer configures it (docs/canal-json.md)
    labels = json.loads((ROOT / stream["labels"]).read_text())
    # ticdc's table routing: the consumer writes the target tables, each one source's
    router = CheckSettings.from_labels(labels["settings"]).router()
    target = {name: router.target_of(*name) if router else name for name in KEYS}
    source = {renamed: name for name, renamed in target.items()}
    keys = {target[n]: k for n, k in KEYS.items()} if stream["protocol"] == "canal-json" else None
    # a claim-check stream's references: the rows its stored files hold
    claim_check = claim_check_of(ROOT / stream["records"], labels=labels)
    assert (claim_check is None) is (stream["claim_check"] is None)
    messages = _messages(_records(stream["id"]))
    consumed = consume(stream["protocol"], messages, handle_keys=keys, claim_check=claim_check)
    upstream = shop_truth(labels["workload"])
    assert consumed.not_applied == ()
    assert consumed.pending == ()
    expected = expected_tables(upstream, stream["protocol"], stream["profile"])
    tables = {source[name]: rows for name, rows in consumed.tables.items()}
    assert observed_tables(tables, upstream.infos) == expected
    # the columns the messages mark, in wire order (Open sorts them by name)
    assert {source[name]: set(cols) for name, cols in consumed.handle_keys.items()} == {
        source[name]: set(KEYS[source[name]]) for name in consumed.handle_keys
    }


@pytest.mark.parametrize("protocol", ["open", "simple-json", "debezium"])
def test_a_replay_is_applied_once_at_its_first_delivery(protocol: str) -> None:
    clean = consume(protocol, _messages(_records(f"stream.{protocol}.tiflow.clean")))
    replayed = consume(protocol, _messages(_records(f"stream.{protocol}.tiflow.replay")))
    rows = [i for i in replayed.log if isinstance(i, AppliedChange)]
    assert [i.row for i in rows] == [i.row for i in clean.log if isinstance(i, AppliedChange)]
    again = [i for i in rows if i.deliveries > 1]
    assert again, "the replay fault redelivers rows"
    assert all(i.deliveries == 1 for i in clean.log if isinstance(i, AppliedChange))
    records = {(r.partition, r.offset) for r in _records(f"stream.{protocol}.tiflow.replay")}
    assert all((i.source.partition, i.source.offset) in records for i in again)


def test_rows_above_the_final_global_watermark_are_pending() -> None:
    records = _records("stream.open.tiflow.clean")
    messages = _messages(records)
    decode = CODECS["open"].decode
    last_on_0 = max(
        i
        for i, (where, message) in enumerate(messages)
        if where.partition == 0 and any(isinstance(e, DecodedResolved) for e in decode(message))
    )
    consumed = consume("open", messages[:last_on_0] + messages[last_on_0 + 1 :])
    full = consume("open", messages)
    assert consumed.watermark is not None
    assert full.watermark is not None
    assert consumed.watermark < full.watermark
    assert consumed.pending
    assert all(i.commit_ts > consumed.watermark for i in consumed.pending)
    assert all(i.commit_ts <= consumed.watermark for i in consumed.log)
    assert len(consumed.log) + len(consumed.pending) == len(full.log)


def test_a_stream_without_watermarks_is_flushed_at_its_end() -> None:
    decode = CODECS["open"].decode
    messages = [
        (where, message)
        for where, message in _messages(_records("stream.open.tiflow.clean"))
        if not any(isinstance(e, DecodedResolved) for e in decode(message))
    ]
    consumed = consume("open", messages)
    full = consume("open", _messages(_records("stream.open.tiflow.clean")))
    assert consumed.watermark is None
    assert consumed.pending == ()
    assert consumed.tables == full.tables


def _first_insert() -> RowChangedEvent:
    for item in shop_workload(1):
        if isinstance(item, Transaction):
            for row in item.rows:
                if row.op == "insert" and row.table.name == "customers":
                    return row
    raise AssertionError  # pragma: no cover - the workload inserts customers


def _at(partition: int, offset: int, event: object) -> tuple[Coordinates, Message]:
    [message] = CODECS["open"].encode([event])  # type: ignore[list-item]
    return Coordinates("t", partition, offset), message


def test_split_halves_from_two_partitions_apply_delete_first() -> None:
    insert = _first_insert()
    ts = insert.commit_ts + 10
    delete = RowChangedEvent(commit_ts=ts, table=insert.table, op="delete", before=insert.after)
    again = replace(insert, commit_ts=ts)
    consumed = consume(
        "open",
        [_at(0, 0, insert), _at(0, 1, again), _at(1, 0, delete)],  # the INSERT half came first
        handle_keys=KEYS,
    )
    assert [i.row.op for i in consumed.log if isinstance(i, AppliedChange)] == [
        "insert",
        "delete",
        "insert",
    ]
    assert len(consumed.tables[("shop", "customers")]) == 1


def test_truncate_table_empties_the_table_at_its_commit_ts() -> None:
    insert = _first_insert()
    truncate = DDLEvent(
        commit_ts=insert.commit_ts + 1,
        schema="shop",
        table="customers",
        query="TRUNCATE TABLE `shop`.`customers`",
        ddl_type=11,
    )
    later = replace(insert, commit_ts=insert.commit_ts + 2)
    only_truncated = consume("open", [_at(0, 0, insert), _at(0, 1, truncate)], handle_keys=KEYS)
    assert only_truncated.tables == {("shop", "customers"): {}}
    refilled = consume(
        "open", [_at(0, 0, insert), _at(0, 1, truncate), _at(0, 2, later)], handle_keys=KEYS
    )
    assert len(refilled.tables[("shop", "customers")]) == 1


@pytest.mark.parametrize(
    "stream_id",
    ["stream.open.tiflow.corrupted-message", "stream.simple-json.tiflow.missing-schema"],
)
def test_every_message_is_applied_or_named_with_its_coordinates(stream_id: str) -> None:
    records = _records(stream_id)
    [found] = [s for s in STREAMS if s["id"] == stream_id]
    consumed = consume(found["protocol"], _messages(records))
    assert consumed.messages == len(records)
    [not_applied] = consumed.not_applied
    assert (not_applied.source.partition, not_applied.source.offset) in {
        (r.partition, r.offset) for r in records
    }
    assert not_applied.reason


@settings(max_examples=25, deadline=None)
@given(generated=generated_streams())
def test_the_expected_state_of_a_generated_stream_is_the_workload_truth(
    generated: GeneratedStream,
) -> None:
    protocol, profile, upstream, log = generated
    keys = KEYS if protocol == "canal-json" else None  # pkNames marks primary keys only
    consumed = consume(protocol, _log_messages(log), handle_keys=keys)
    assert consumed.not_applied == ()
    # a stream cut at 200 messages may end above its last watermark: those rows are pending,
    # and once flushed they complete the truth
    assert all(i.commit_ts > (consumed.watermark or 0) for i in consumed.pending)
    flushed = apply_log((*consumed.log, *consumed.pending))
    applied = observed_tables({k: v for k, v in flushed.items() if v}, upstream.infos)
    assert applied == expected_tables(upstream, protocol, profile)


def _log_messages(log: TopicLog) -> list[tuple[Coordinates, Message]]:
    return [
        (Coordinates("t", partition, offset), delivery.message)
        for partition, deliveries in enumerate(log.partitions)
        for offset, delivery in enumerate(deliveries)
    ]


@pytest.mark.parametrize(
    ("protocol", "options"),
    [
        ("open", (("max-message-bytes", "600"),)),
        ("canal-json", (("max-message-bytes", "700"), ("enable-tidb-extension", "true"))),
    ],
)
def test_claim_check_references_apply_the_rows_their_storage_holds(
    protocol: str, options: tuple[tuple[str, str], ...]
) -> None:
    items = list(itertools.islice(shop_workload(2, ddl_every=40), 400))
    large = (("large-message-handle-option", "claim-check"), ("claim-check-storage-uri", URI))
    claimed = simulate(items, StreamSettings(protocol=protocol, options=(*options, *large)))
    whole = simulate(items, StreamSettings(protocol=protocol, options=options[1:]))
    files = {
        s.location: s.content for p in claimed.partitions for d in p for s in d.message.claim_checks
    }
    assert len(files) > 10
    keys = KEYS if protocol == "canal-json" else None
    storage = ClaimCheck(storage=files.__getitem__)
    resolved = consume(protocol, _log_messages(claimed), handle_keys=keys, claim_check=storage)
    expected = consume(protocol, _log_messages(whole), handle_keys=keys)
    assert resolved.not_applied == expected.not_applied == ()
    assert resolved.tables == expected.tables
    assert len(resolved.log) == len(expected.log)
    # without the storage every reference is accounted for, never applied from its key alone
    bare = consume(protocol, _log_messages(claimed), handle_keys=keys)
    assert len(bare.not_applied) == len(files)
    assert all("a claim-check reference" in n.reason for n in bare.not_applied)
