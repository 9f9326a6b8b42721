"""``generate``'s fast paths make what the general ones make.

Records, deliveries and the workload's transactions are made through their slots' setters
(the constructors' objects); the simulator queues a fixed-partition table's rows without the
per-row topic and rule lookups (the per-row loop's queues and active tables); ``sink_order``
skips sorting and key tests it does not need (the plain algorithm's order); ``generate`` runs
the cycle collector rarely and gives the thresholds back.
"""

from __future__ import annotations

import dataclasses
import gc
import inspect
import warnings
from collections.abc import Sequence
from itertools import islice
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.generators import _log, generate, simulator
from ticdc_conformance.generators.simulator import (
    Delivery,
    Record,
    StreamSettings,
    Transaction,
    physical_ms,
)
from ticdc_conformance.generators.strategies import row_changed_events, table_infos
from ticdc_conformance.generators.workload import SHOP_TABLES, shop_workload
from ticdc_conformance.reference import Message, RowChangedEvent
from ticdc_conformance.reference.dispatch import DispatchRule, column_value_string
from ticdc_conformance.reference.routing import RoutingRule
from ticdc_conformance.reference.tables import Profile
from ticdc_conformance.reference.updates import _watched, sink_order

BYTES = st.one_of(st.none(), st.binary(max_size=20))


@given(
    topic=st.text(max_size=10),
    partition=st.integers(0, 100),
    offset=st.integers(0, 2**63 - 1),
    timestamp=st.integers(0, 2**45),
    key=BYTES,
    value=BYTES,
    headers=st.lists(st.tuples(st.text(max_size=5), BYTES), max_size=2).map(tuple),
)
def test_new_record_is_the_constructors_record(
    topic: str,
    partition: int,
    offset: int,
    timestamp: int,
    key: bytes | None,
    value: bytes | None,
    headers: tuple[tuple[str, bytes | None], ...],
) -> None:
    made = _log.new_record(topic, partition, offset, timestamp, key, value, headers, ())
    expected = Record(
        topic=topic,
        partition=partition,
        offset=offset,
        timestamp=timestamp,
        key=key,
        value=value,
        headers=headers,
    )
    assert made == expected
    for member in dataclasses.fields(Record):
        assert getattr(made, member.name) == getattr(expected, member.name)


def test_the_slot_makers_take_the_members_in_declaration_order() -> None:
    names = list(inspect.signature(_log.new_record).parameters)
    assert names == [f.name for f in dataclasses.fields(Record)]
    names = list(inspect.signature(_log.new_delivery).parameters)
    assert names == [f.name for f in dataclasses.fields(Delivery) if f.name != "timestamp"]


@given(
    kind=st.sampled_from(["rows", "ddl", "resolved", "bootstrap"]),
    commit_ts=st.integers(0, 2**63 - 1),
    key=BYTES,
)
def test_new_delivery_is_the_constructors_delivery(
    kind: simulator.DeliveryKind, commit_ts: int, key: bytes | None
) -> None:
    message = Message(key=key, value=b"v")
    made = _log.new_delivery(kind, message, commit_ts, ())
    expected = Delivery(
        kind=kind, message=message, commit_ts=commit_ts, timestamp=physical_ms(commit_ts)
    )
    assert made == expected
    assert made.rows == ()


def test_the_workloads_transactions_are_the_constructors() -> None:
    for item in islice(shop_workload(3, ddl_every=20), 600):
        if isinstance(item, Transaction):
            assert item == Transaction(commit_ts=item.commit_ts, rows=item.rows)


def _queue_each(producer: simulator._Producer, rows: Sequence[RowChangedEvent]) -> None:
    """The per-row loop ``queue_rows`` stands for: topic, rule and partition of every row."""
    for row in rows:
        topic, rule = producer.topics.row(row)
        producer.queued.of(topic)[producer.partition(row, rule)].append(row)


RULES = st.sampled_from(
    [
        DispatchRule(),
        DispatchRule(partition="table"),
        DispatchRule(partition="index-value"),
        DispatchRule(partition="ts"),
        DispatchRule(partition="unknown"),
    ]
)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    partitions=st.integers(1, 4),
    rule=RULES,
    routed=st.booleans(),
    profile=st.sampled_from(["tiflow", "ticdc"]),
)
def test_queued_rows_are_the_per_row_loops(
    seed: int, partitions: int, rule: DispatchRule, routed: bool, profile: Profile
) -> None:
    # a DDL every 3 transactions: new table objects, past the queues kept
    routes = (
        (RoutingRule(matcher=("shop.orders",), topic="orders", partition=DispatchRule()),)
        if routed
        else ()
    )
    settings = StreamSettings(
        protocol="open", partitions=partitions, dispatcher=rule, routes=routes, profile=profile
    )

    def run() -> tuple[list[Record], list[tuple[str, str]]]:
        producer = simulator._Producer(settings)
        workload = shop_workload(seed, ddl_every=3)
        for _ in simulator._run(
            producer, workload, messages=400, tables=SHOP_TABLES, progress=None
        ):
            pass
        return list(producer.log.records()), list(producer.topics.active)

    fast = run()
    with mock.patch.object(simulator._Producer, "queue_rows", _queue_each):
        assert run() == fast


_ORDER = {"delete": 0, "update": 1, "insert": 2}


def _plain_changes_key(row: RowChangedEvent, profile: Profile) -> bool:
    if row.op != "update" or row.before is None or row.after is None:
        return False
    for i in _watched(row.table, profile):
        column, old, new = row.table.columns[i], row.before[i], row.after[i]
        if profile == "tiflow":
            if column_value_string(column, old) != column_value_string(column, new):
                return True
        elif old != new:
            return True
    return False


def _halves(row: RowChangedEvent) -> list[RowChangedEvent]:
    return [
        dataclasses.replace(row, op="delete", after=None),
        dataclasses.replace(row, op="insert", before=None),
    ]


def _plain_sink_order(
    rows: Sequence[RowChangedEvent], profile: Profile, *, raw: bool
) -> list[RowChangedEvent]:
    """The module doc's rules, one step each: group, sort every group, split (§6.5)."""
    tables: dict[tuple[str, str, int | None], list[RowChangedEvent]] = {}
    for row in rows:
        table = row.table
        tables.setdefault((table.schema, table.name, table.partition_id), []).append(row)
    out: list[RowChangedEvent] = []
    for group in tables.values():
        group.sort(key=lambda r: (_ORDER[r.op], r.effective_row_id()))
        if raw:
            out.extend(group)
        elif profile == "tiflow":
            split = [
                h for r in group for h in (_halves(r) if _plain_changes_key(r, profile) else [r])
            ]
            changed = any(_plain_changes_key(r, profile) for r in group)
            out.extend(sorted(split, key=lambda r: _ORDER[r.op]) if changed else split)
        else:
            kept = [
                h
                for r in group
                for h in (_halves(r)[:1] if _plain_changes_key(r, profile) else [r])
            ]
            inserts = [_halves(r)[1] for r in group if _plain_changes_key(r, profile)]
            out.extend(kept + inserts)
    return out


@st.composite
def transactions(draw: st.DrawFn) -> list[RowChangedEvent]:
    """Rows of one or two tables; some updates keep values as the same objects."""
    tables = draw(st.lists(table_infos(), min_size=1, max_size=2))
    rows = []
    for _ in range(draw(st.integers(1, 5))):
        row = draw(row_changed_events(draw(st.sampled_from(tables))))
        if row.before is not None and row.after is not None and draw(st.booleans()):
            kept = draw(st.lists(st.booleans(), min_size=len(row.after), max_size=len(row.after)))
            after = tuple(
                b if k else a for a, b, k in zip(row.after, row.before, kept, strict=True)
            )
            row = dataclasses.replace(row, after=after)
        rows.append(row)
    return rows


@settings(max_examples=300)
@given(rows=transactions(), profile=st.sampled_from(["tiflow", "ticdc"]), raw=st.booleans())
def test_sink_order_is_the_plain_algorithms(
    rows: list[RowChangedEvent], profile: Profile, raw: bool
) -> None:
    with warnings.catch_warnings():  # text against bytes is a change, as Python has it
        warnings.simplefilter("ignore", BytesWarning)
        expected = _plain_sink_order(list(rows), profile, raw=raw)
        assert sink_order(rows, profile, output_raw_change_event=raw) == expected


def test_generate_runs_the_collector_rarely_and_gives_its_thresholds_back() -> None:
    before = gc.get_threshold()
    with generate._rare_collections():
        assert gc.get_threshold()[0] >= generate._YOUNG_OBJECTS
        assert gc.get_threshold()[1:] == before[1:]
    assert gc.get_threshold() == before
    with pytest.raises(KeyError), generate._rare_collections():
        raise KeyError
    assert gc.get_threshold() == before
