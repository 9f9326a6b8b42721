"""The stream simulator: dispatch, broadcast, batching and UPDATE split (ground truth §6)."""

from __future__ import annotations

import zlib
from collections import defaultdict
from functools import cache

import pytest

from ticdc_conformance.generators.simulator import StreamSettings, TopicLog, Transaction, simulate
from ticdc_conformance.generators.workload import SHOP_TABLES, shop_workload
from ticdc_conformance.reference import (
    CODECS,
    DecodedColumn,
    DecodedDDL,
    DecodedResolved,
    DecodedRow,
    EncodeError,
    ResolvedEvent,
    RowChangedEvent,
)
from ticdc_conformance.reference.dispatch import DispatchRule

Decoded = list[list[tuple[int, list[object]]]]


@cache
def run(settings: StreamSettings, messages: int = 600, seed: int = 1) -> tuple[TopicLog, Decoded]:
    log = simulate(shop_workload(seed), settings, messages=messages)
    codec = settings.codec
    decoded = [
        [(offset, list(codec.decode(d.message))) for offset, d in enumerate(deliveries)]
        for deliveries in log.partitions
    ]
    return log, decoded  # type: ignore[return-value]


def rows_by_partition(decoded: Decoded) -> list[list[DecodedRow]]:
    return [[e for _, events in p for e in events if isinstance(e, DecodedRow)] for p in decoded]


@pytest.mark.parametrize("protocol", sorted(CODECS))
def test_ddl_and_resolved_reach_every_partition_in_order(protocol: str) -> None:
    # Simple and Debezium write one message per row (§4.1, §5): the first DDL (every 500
    # transactions) comes later; Debezium writes WATERMARKs only with the TiDB extension (§5.5)
    # Canal-JSON writes a DDL to partition 0 only, and watermarks with the extension (§6.2)
    one_per_row = protocol.startswith("simple") or protocol in ("debezium", "canal-json")
    extended = protocol in ("debezium", "canal-json")
    options = (("enable-tidb-extension", "true"),) if extended else ()
    settings = StreamSettings(protocol=protocol, partitions=4, options=options)
    log, decoded = run(settings, messages=3000 if one_per_row else 600)
    broadcasts = [
        [
            (type(e).__name__, e.commit_ts)
            for _, events in p
            for e in events
            if isinstance(e, DecodedDDL | DecodedResolved)
        ]
        for p in decoded
    ]
    assert broadcasts[0]
    assert any(kind == "DecodedDDL" for kind, _ in broadcasts[0])
    if protocol == "canal-json":
        watermarks = [b for b in broadcasts[0] if b[0] == "DecodedResolved"]
        assert all(b == watermarks for b in broadcasts[1:])
        return
    assert all(b == broadcasts[0] for b in broadcasts)
    assert len(log) >= 600


def test_table_dispatcher_keeps_a_table_on_its_crc32_partition() -> None:
    _, decoded = run(StreamSettings(partitions=5))
    seen = defaultdict(set)
    for partition, rows in enumerate(rows_by_partition(decoded)):
        for row in rows:
            seen[(row.schema, row.table)].add(partition)
    assert set(seen) == {(t.schema, t.name) for t in SHOP_TABLES}
    for (schema, table), partitions in seen.items():
        assert partitions == {zlib.crc32((schema + table).encode()) % 5}


def test_index_value_dispatcher_keeps_a_handle_key_on_one_partition() -> None:
    _, decoded = run(StreamSettings(partitions=4, dispatcher=DispatchRule(partition="index-value")))
    seen = defaultdict(set)
    for partition, rows in enumerate(rows_by_partition(decoded)):
        for row in rows:
            image = row.after if row.after is not None else row.before
            assert image is not None
            key = tuple(repr(c.value) for c in image if c.handle_key)
            seen[(row.table, key)].add(partition)
    assert all(len(p) == 1 for p in seen.values())
    assert len({p for ps in seen.values() for p in ps}) == 4  # keys spread over partitions


def test_batches_obey_max_batch_size_and_max_message_bytes() -> None:
    options = (("max-batch-size", "3"), ("max-message-bytes", "1500"))
    log, decoded = run(StreamSettings(partitions=2, options=options))
    sizes = [len(events) for p in decoded for _, events in p]
    assert max(sizes) == 3
    assert all(d.message.length() <= 1500 for p in log.partitions for d in p)


def test_a_craft_batch_over_max_message_bytes_stops_the_changefeed() -> None:
    # Craft flushes by a size estimate and sends the crossing row in the batch it made too
    # large (§3.4); the producer, given the same limit, refuses the record (§1.5)
    settings = StreamSettings(protocol="craft", options=(("max-message-bytes", "400"),))
    with pytest.raises(EncodeError, match="over max-message-bytes 400"):
        simulate(shop_workload(1), settings, messages=200)
    roomy = StreamSettings(protocol="craft", options=(("max-message-bytes", "1500"),))
    log = simulate(shop_workload(1), roomy, messages=200)
    assert all(d.message.length() <= 1500 for p in log.partitions for d in p)


def test_rows_of_a_table_arrive_in_commit_ts_order_on_each_partition() -> None:
    _, decoded = run(StreamSettings(partitions=3, dispatcher=DispatchRule(partition="index-value")))
    for rows in rows_by_partition(decoded):
        last: dict[str, int] = {}
        for row in rows:
            assert row.commit_ts is not None
            assert row.commit_ts >= last.get(row.table, 0)
            last[row.table] = row.commit_ts


@pytest.mark.parametrize(("raw", "splits"), [(False, True), (True, False)])
def test_key_changing_updates_split_unless_raw(raw: bool, splits: bool) -> None:
    email_changed = sum(
        1
        for item in _first_items(400)
        if isinstance(item, Transaction)
        for row in item.rows
        if row.table.name == "customers"
        and row.op == "update"
        and row.before is not None
        and row.after is not None
        and row.before[1] != row.after[1]
    )
    assert email_changed
    settings = StreamSettings(partitions=1, output_raw_change_event=raw)
    log = simulate(_first_items(400), settings)
    rows = [
        e
        for d in log.partitions[0]
        for e in settings.codec.decode(d.message)
        if isinstance(e, DecodedRow) and e.table == "customers" and e.op == "update"
    ]
    changed = [r for r in rows if r.before and r.after and email(r.before) != email(r.after)]
    assert bool(changed) is not splits


def email(columns: tuple[DecodedColumn, ...]) -> object:
    return next(c.value for c in columns if c.name == "email")


def _first_items(count: int) -> list[Transaction | ResolvedEvent]:
    items = []
    for item in shop_workload(7):
        items.append(item)
        if len(items) == count:
            return items  # type: ignore[return-value]
    raise AssertionError


def test_a_seed_always_gives_the_same_log() -> None:
    settings = StreamSettings(partitions=3)
    first = list(simulate(shop_workload(11), settings, messages=200).records())
    again = list(simulate(shop_workload(11), settings, messages=200).records())
    other = list(simulate(shop_workload(12), settings, messages=200).records())
    assert first == again
    assert first != other


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown protocol"):
        StreamSettings(protocol="canal")
    with pytest.raises(ValueError, match="at least one partition"):
        StreamSettings(partitions=0)
    with pytest.raises(ValueError, match="at least one row"):
        Transaction(commit_ts=1, rows=())
    row = RowChangedEvent(
        commit_ts=2, table=SHOP_TABLES[2], op="delete", before=("h", "2026-01-01 00:00:00", None, 0)
    )
    with pytest.raises(ValueError, match="transaction's commit ts"):
        Transaction(commit_ts=1, rows=(row,))


SIMPLE = StreamSettings(protocol="simple-json", partitions=3)


def kinds(log: TopicLog, partition: int) -> list[str]:
    return [d.kind for d in log.partitions[partition]]


def test_simple_bootstrap_precedes_a_tables_first_row_on_every_partition() -> None:
    log = simulate(_first_items(60), SIMPLE)
    first_bootstraps = [kinds(log, p).index("bootstrap") for p in range(3)]
    for partition in range(3):
        assert "rows" not in kinds(log, partition)[: first_bootstraps[partition]]
        # every partition sees a BOOTSTRAP of each of the three tables
        assert kinds(log, partition).count("bootstrap") >= len(SHOP_TABLES)
    decoder = SIMPLE.codec.new_decoder()  # type: ignore[attr-defined]
    for offset, delivery in enumerate(log.partitions[0]):
        decoder.feed(delivery.message, message_index=offset)
    assert decoder.pending() == ()


def test_simple_bootstrap_to_partition_zero_only() -> None:
    settings = StreamSettings(
        protocol="simple-json",
        partitions=3,
        options=(("send-bootstrap-to-all-partition", "false"),),
    )
    log = simulate(_first_items(60), settings)
    assert kinds(log, 0).count("bootstrap") >= len(SHOP_TABLES)
    assert "bootstrap" not in kinds(log, 1) + kinds(log, 2)


def test_simple_bootstrap_resent_by_batch_count_and_at_start() -> None:
    settings = StreamSettings(
        protocol="simple-json",
        partitions=1,
        options=(("send-bootstrap-in-msg-count", "2"), ("send-all-bootstrap-at-start", "true")),
    )
    log = simulate(_first_items(120), settings, tables=SHOP_TABLES)
    assert kinds(log, 0)[:3] == ["bootstrap"] * 3
    plain = simulate(_first_items(120), StreamSettings(protocol="simple-json", partitions=1))
    assert kinds(log, 0).count("bootstrap") > kinds(plain, 0).count("bootstrap") + 3
    disabled = StreamSettings(
        protocol="simple-json", partitions=1, options=(("send-bootstrap-in-msg-count", "0"),)
    )
    assert "bootstrap" not in kinds(simulate(_first_items(120), disabled), 0)
    # other protocols have no bootstrap at all
    assert "bootstrap" not in kinds(simulate(_first_items(120), StreamSettings(partitions=1)), 0)
