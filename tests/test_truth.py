"""The simulator's truth: folding any generated stream gives the workload's final tables.

This is the consumer check's oracle. For every protocol, profile and dispatcher, one partition
or several, with key-changing UPDATEs split or sent whole, with and without a replay (a fault
TiCDC may produce): folding the decoded stream per key in commit-ts order
(``reference.fold``) gives exactly the tables the workload left upstream
(``generators.truth``), as the protocol is documented to deliver them. In the same streams,
no transaction carries two changes of one key and no two live rows share a handle.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import replace
from itertools import islice

import pytest
from hypothesis import given, settings
from truth_helpers import (
    KEYS,
    GeneratedStream,
    OneChangePerKey,
    WindowedStream,
    decoded_rows,
    generated_streams,
    stream,
    windows,
)

from ticdc_conformance.generators.simulator import StreamSettings, Transaction, simulate
from ticdc_conformance.generators.truth import (
    Upstream,
    WorkloadError,
    expected_tables,
    final_tables,
    observed_tables,
    shop_truth,
)
from ticdc_conformance.generators.workload import SHOP_TABLES, shop_workload
from ticdc_conformance.reference import RowChangedEvent
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.fold import fold_rows


@settings(max_examples=60)
@given(generated=generated_streams())
def test_folding_a_generated_stream_gives_the_workload_final_tables(
    generated: GeneratedStream,
) -> None:
    protocol, profile, upstream, log = generated
    check = OneChangePerKey()
    folded = fold_rows(map(check.see, decoded_rows(log)), KEYS)
    assert check.twice == []
    assert observed_tables(folded, upstream.infos) == expected_tables(upstream, protocol, profile)
    assert upstream.transactions > 50


@pytest.mark.parametrize("protocol", ["open", "simple-json", "debezium"])
def test_a_consumer_that_keeps_the_old_key_of_a_whole_update_is_caught(protocol: str) -> None:
    # the fold is a real check: a tolerant upsert keyed by the new image ends with extra rows
    upstream, log = stream(protocol, "tiflow", "default", 2, raw=True, replay=False, seed=5)
    rows = list(decoded_rows(log))
    upserts = [replace(r, before=None) if r.op == "update" else r for r in rows]
    expected = expected_tables(upstream, protocol, "tiflow")
    assert observed_tables(fold_rows(rows, KEYS), upstream.infos) == expected
    assert observed_tables(fold_rows(upserts, KEYS), upstream.infos) != expected


def test_a_transaction_changing_a_key_twice_is_found_in_the_stream() -> None:
    _, log = stream("open", "ticdc", "ts", 1, raw=True, replay=True, seed=6)
    rows = list(decoded_rows(log))
    update = next(r for r in rows if r.op == "update")
    for broken, found in ((rows, False), ([*rows, replace(update, after=update.before)], True)):
        check = OneChangePerKey()
        for row in broken:
            check.see(row)
        assert bool(check.twice) is found


def test_the_labels_rebuild_the_truth() -> None:
    upstream, _ = stream("craft", "tiflow", "default", 3, raw=False, replay=False, seed=8)
    labels = {"name": "shop", "version": 2, "seed": 8, "ddl_every": 40, "items": upstream.items}
    again = shop_truth(labels)
    assert again.tables == upstream.tables
    assert again.transactions == upstream.transactions
    with pytest.raises(ValueError, match="'shop' version 2"):
        shop_truth({**labels, "version": 1})
    assert shop_truth({**labels, "large_blobs": False}).tables == upstream.tables
    assert shop_truth({**labels, "large_blobs": True}).tables != upstream.tables
    with pytest.raises(ValueError, match="large_blobs is true or false"):
        shop_truth({**labels, "large_blobs": "yes"})


ORDERS = SHOP_TABLES[0]
ROW = (1, 2, None, 1, None, "2026-01-01 00:00:00.000", None)


def change(
    op: str, before: tuple[object, ...] | None, after: tuple[object, ...] | None, ts: int = 9
) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=ts, table=ORDERS, op=op, before=before, after=after)  # type: ignore[arg-type]


MOVED = (2, *ROW[1:])
BROKEN = [
    (
        "a key changed twice",
        [change("insert", None, ROW, 1)],
        [change("update", ROW, MOVED), change("insert", None, ROW)],
        "changed twice",
    ),
    (
        "an insert onto a live handle",
        [change("insert", None, ROW, 1)],
        [change("insert", None, ROW)],
        "share handle",
    ),
    (
        "an old image that is not the live row",
        [change("insert", None, ROW, 1)],
        [change("delete", MOVED, None)],
        "not the live row",
    ),
]


@pytest.mark.parametrize(
    ("before", "rows", "message"), [c[1:] for c in BROKEN], ids=[c[0] for c in BROKEN]
)
def test_what_tidb_cannot_commit_is_a_workload_error(
    before: list[RowChangedEvent], rows: list[RowChangedEvent], message: str
) -> None:
    items = [Transaction(commit_ts=r.commit_ts, rows=(r,)) for r in before]
    with pytest.raises(WorkloadError, match=message):
        final_tables([*items, Transaction(commit_ts=9, rows=tuple(rows))])


def test_unique_keys_other_than_the_handle_are_checked() -> None:
    customers = SHOP_TABLES[1]
    one = (1, "a@x", None, 0.0, 0, None)
    other = (2, "a@x", None, 0.0, 0, None)
    items = [
        Transaction(
            commit_ts=ts,
            rows=(RowChangedEvent(commit_ts=ts, table=customers, op="insert", after=image),),
        )
        for ts, image in ((1, one), (2, other))
    ]
    with pytest.raises(WorkloadError, match="share the unique key"):
        final_tables(items)


def test_a_workload_simulated_window_by_window_writes_the_same_records() -> None:
    rule = DispatchRule(partition="index-value")
    settings = StreamSettings(protocol="open", partitions=4, dispatcher=rule)
    whole = simulate(islice(shop_workload(2), 3000), settings)
    parts = [simulate(w, settings) for w in windows(islice(shop_workload(2), 3000), 500)]
    assert len(parts) > 3
    for p, deliveries in enumerate(whole.partitions):
        assert [d.message for d in deliveries] == [
            d.message for part in parts for d in part.partitions[p]
        ]


SCALE = int(os.environ.get("TICDC_TRUTH_MESSAGES", "10000"))
"""Messages of the one large stream (``TICDC_TRUTH_MESSAGES=3000000`` for the scale check)."""


@pytest.mark.slow
def test_a_large_stream_keeps_tidb_rules_and_folds_to_the_truth(
    record_property: Callable[[str, object], None],
) -> None:
    started = time.perf_counter()
    rule = DispatchRule(partition="index-value")
    settings = StreamSettings(protocol="open", partitions=4, dispatcher=rule)
    upstream = Upstream()  # raises WorkloadError at the first transaction TiDB could not commit
    check = OneChangePerKey()
    stream = WindowedStream(upstream.track(shop_workload(1)), settings, SCALE, check)
    folded = fold_rows(stream, KEYS)
    assert check.twice == []
    assert stream.records >= SCALE
    for name in list(folded):  # table by table, to hold one table's reduced rows at a time
        expected = expected_tables(upstream, "open", "tiflow", tables=[name])
        assert observed_tables({name: folded.pop(name)}, upstream.infos) == expected
    # the measured numbers, in the JUnit XML report (--junitxml)
    record_property("messages", stream.records)
    record_property("rows", check.rows)
    record_property("transactions", upstream.transactions)
    record_property("seconds", round(time.perf_counter() - started))
    record_property("peak_rss_mib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
