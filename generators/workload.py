"""A deterministic, seeded workload for large simulated streams (``generate``).

Not Hypothesis: a plain ``random.Random(seed)`` drives it, so a seed always gives the same
workload, and millions of events cost no more than the codecs' own work.

The workload ("shop"): three tables, one for each way TiDB keeps a row, and between them the
traps consumers get wrong:

* ``shop.orders``: a BIGINT AUTO_INCREMENT primary key, clustered, so the id is the row key;
  DECIMAL, ENUM, nullable VARCHAR with HTML characters, DATETIME(3), TIMESTAMP(6).
* ``shop.customers``: an INT PRIMARY KEY NONCLUSTERED and a NOT NULL unique email; rows live
  under TiDB's hidden ``_tidb_rowid`` (the events' ``row_id``). DOUBLE, BIT(8), a nullable BLOB.
* ``shop.samples``: no primary key; the NOT NULL unique (host, at) is TiCDC's handle key, and
  rows live under ``_tidb_rowid``. FLOAT, BIGINT UNSIGNED up to 2^64 - 1.

A transaction runs one to four statements (insert, update, delete; a quarter of the updates
and deletes pick a row the transaction already touched), and the workload yields what TiCDC
reads of it, which follows TiDB's rules:

* One change per row key, the net effect of the statements: insert then update is an insert
  of the last image; update then update one update from the first old image to the last new
  one; update then delete a delete of the first old image; insert then delete nothing. A
  transaction left with no change writes nothing.
* Key changes: 15% of the updates of ``orders`` and ``customers`` give the row a new id, 15%
  of those of ``customers`` a new email, 20% of those of ``samples`` a new (host, at). A new
  clustered id is a new row key, so TiDB removes the row and adds it again (pingcap/tidb
  ``pkg/executor/write.go`` ``updateRecord``): TiCDC reads a DELETE and an INSERT. The others
  keep the row key and are UPDATEs whose key changes, which TiCDC splits unless
  ``output-raw-change-event`` (``ticdc_conformance.reference.updates``).
* Every id, email and (host, at) comes from a counter and is never used again, so handles and
  unique keys stay unique among live rows at any stream length, and no two changes of one
  transaction touch one handle.

A resolved event follows every ``resolved_every`` transactions; every ``ddl_every``
transactions an ``ALTER TABLE … COMMENT`` moves one table to a new schema version.

With ``large_blobs`` a quarter of the ``avatar`` values the workload writes are BLOBs of 4 to
6 KiB (``LARGE_BLOB``), 32 random bytes repeated. In Simple their row messages are larger than
any other message of the stream, BOOTSTRAP and DDL included, so a ``max-message-bytes``
between the two makes TiCDC's ``large-message-handle-option`` act on them alone
(docs/generators.md, "Large BLOBs"). A second generator seeded from the seed draws them, so
the main draws, and every other value, are the same as without the option.
"""

from __future__ import annotations

import dataclasses
import itertools
import random
import time
from collections.abc import Iterator
from typing import Any

from ticdc_conformance.generators._draws import MAKERS, below
from ticdc_conformance.generators._live_rows import ImageStore, LiveRows
from ticdc_conformance.generators.simulator import Transaction, WorkloadItem
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    IndexInfo,
    Operation,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    Value,
)
from ticdc_conformance.reference.drafts import draft_class
from ticdc_conformance.reference.events import valid_row_event

__all__ = ["LARGE_BLOB", "SHOP_TABLES", "SHOP_VERSION", "START_TS", "shop_workload"]

SHOP_VERSION = 2
"""The workload's version: a seed gives the same items as long as it stays. Version 2 writes
one net change per row key per transaction, key-changing updates and never-reused keys."""

START_TS = 1_767_225_600_000 << 18
"""2026-01-01T00:00:00Z as a TiDB TSO."""

_ORDERS = TableInfo(
    schema="shop",
    name="orders",
    table_id=101,
    schema_version=START_TS >> 1,
    columns=(
        ColumnInfo(name="id", type="bigint", key="primary", auto_increment=True),
        ColumnInfo(name="customer_id", type="int", nullable=False),
        ColumnInfo(name="amount", type="decimal", length=12, decimal=2, nullable=False),
        ColumnInfo(name="status", type="enum", elements=("new", "paid", "shipped")),
        ColumnInfo(name="note", type="varchar", length=64),
        ColumnInfo(name="created", type="datetime", decimal=3, nullable=False),
        ColumnInfo(name="updated", type="timestamp", decimal=6, on_update_now=True),
    ),
)
_CUSTOMERS = TableInfo(
    schema="shop",
    name="customers",
    table_id=102,
    schema_version=START_TS >> 1,
    columns=(
        ColumnInfo(name="id", type="int", key="primary"),
        ColumnInfo(name="email", type="varchar", length=128, nullable=False),
        ColumnInfo(name="name", type="varchar", length=64),
        ColumnInfo(name="balance", type="double", nullable=False),
        ColumnInfo(name="flags", type="bit", length=8, nullable=False),
        ColumnInfo(name="avatar", type="blob"),
    ),
    indexes=(IndexInfo(name="email", columns=("email",), unique=True),),
)
_SAMPLES = TableInfo(
    schema="shop",
    name="samples",
    table_id=103,
    schema_version=START_TS >> 1,
    columns=(
        ColumnInfo(name="host", type="varchar", length=32, nullable=False),
        ColumnInfo(name="at", type="datetime", nullable=False),
        ColumnInfo(name="value", type="float"),
        ColumnInfo(name="counter", type="bigint", unsigned=True, nullable=False),
    ),
    indexes=(IndexInfo(name="host_at", columns=("host", "at"), unique=True),),
)
SHOP_TABLES = (_ORDERS, _CUSTOMERS, _SAMPLES)

_ROWID_TABLES = frozenset({"customers", "samples"})
"""Tables whose rows live under ``_tidb_rowid`` rather than their primary key."""
_NEW_ID = {"orders": 0.15, "customers": 0.15}
"""Share of a table's updates that give the row a new primary key."""
_NEW_UNIQUE = {"customers": 0.15, "samples": 0.2}
"""Share of a table's updates that give the row a new unique key (email; (host, at))."""
_FIRST_SAMPLE = 1_767_225_600
"""2026-01-01T00:00:00Z, Unix seconds: the ``at`` of sample serial 0."""
LARGE_BLOB = (4096, 6144)
"""Bytes of a large ``avatar`` (``large_blobs``), at least and at most: a BLOB holds 65 535."""
_BLOB_PATTERN = 32
"""A large BLOB repeats random bytes of this length: the stored files compress, as the
fixture bundle needs, and no value equals another."""
_LARGE_SHARE = 0.25
"""Share of the ``avatar`` values that are large (``large_blobs``)."""


_DraftTransaction = draft_class(Transaction)


def _transaction(commit_ts: int, rows: tuple[RowChangedEvent, ...]) -> Transaction:
    """``Transaction(commit_ts=…, rows=…)`` without its checks (``reference.drafts``).

    The workload's rows are never empty and all carry the commit ts (``_Shop.commit``).
    """
    transaction: Any = object.__new__(_DraftTransaction)
    transaction.commit_ts = commit_ts
    transaction.rows = rows
    transaction.__class__ = Transaction
    return transaction  # type: ignore[no-any-return]


class _Unread:
    """A live image not read yet (``_Shop._set``)."""


_UNREAD = _Unread()

_Change = list[tuple[Value, ...] | None]
"""[image when the transaction began (None: the row did not exist), image now]."""


class _Shop:
    """TiDB's side of the workload: the live rows, the counters and the open transaction."""

    def __init__(self, seed: int, *, large_blobs: bool = False) -> None:
        self.rng = random.Random(seed)
        self.blobs = random.Random(f"shop-large-blobs-{seed}") if large_blobs else None
        """The large BLOBs' own draws (``large_blobs``): the main ones stay as they are."""
        self.tables = list(SHOP_TABLES)
        self.by_rowid = [table.name in _ROWID_TABLES for table in self.tables]
        """Whether a table's rows live under ``_tidb_rowid`` (a DDL keeps its name)."""
        self.store = ImageStore()
        self.live = [LiveRows(self.store) for _ in self.tables]
        self.ids = [itertools.count(1) for _ in self.tables]
        self.rowids = [itertools.count(1) for _ in self.tables]
        self.serials = itertools.count(1)
        """Emails and (host, at) handles: every value is new."""
        self.changes: dict[tuple[int, int], _Change] = {}

    def _unique(self, table: str) -> tuple[Value, ...]:
        """A new email, or a new (host, at): never used before."""
        serial = next(self.serials)
        if table == "customers":
            return (f"user{serial}@example.com",)
        at = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(_FIRST_SAMPLE + serial))
        return (f"host-{serial % 7}", at)

    def _set(
        self,
        which: int,
        key: int,
        image: tuple[Value, ...] | None,
        now: tuple[Value, ...] | _Unread | None = _UNREAD,
    ) -> None:
        """One statement's write of a row key, folded into the transaction's net change.

        ``now``: the row key's live image, when the caller has it (it is read otherwise).
        """
        live = self.live[which]
        change = self.changes.get((which, key))
        if change is None:  # the row key's first write in the transaction: its image before
            before = live.image(key) if isinstance(now, _Unread) else now
            change = self.changes[which, key] = [before, None]
        change[1] = image
        if image is None:
            live.remove(key)
        else:
            live.put(key, image)

    def _values(self, table: str) -> tuple[Value, ...]:
        """A row's values after its key columns (``_draws.MAKERS``).

        With ``large_blobs`` a quarter of the ``avatar`` values are large.
        """
        values = MAKERS[table](self.rng)
        blobs = self.blobs
        if blobs is None:
            return values
        if table != "customers" or blobs.random() >= _LARGE_SHARE:
            return values
        size, pattern = blobs.randint(*LARGE_BLOB), blobs.randbytes(_BLOB_PATTERN)
        return (*values[:-1], (pattern * (size // _BLOB_PATTERN + 1))[:size])

    def _insert(self, which: int) -> None:
        name = self.tables[which].name
        values = self._values(name)
        # every row key is new: no live image to read
        if name == "samples":
            self._set(which, next(self.rowids[which]), (*self._unique(name), *values), None)
            return
        ident = next(self.ids[which])
        if name == "orders":
            self._set(which, ident, (ident, *values), None)
        else:
            image = (ident, *self._unique(name), *values)
            self._set(which, next(self.rowids[which]), image, None)

    def _update(self, which: int, key: int) -> None:
        name = self.tables[which].name
        before = self.live[which].image(key)
        assert before is not None
        roll = self.rng.random()
        keys = before[:1] if name == "orders" else before[:2]
        if roll < _NEW_ID.get(name, 0):
            keys = (next(self.ids[which]), *keys[1:])
        elif roll < _NEW_ID.get(name, 0) + _NEW_UNIQUE.get(name, 0):
            keys = (keys[0], *self._unique(name)) if name == "customers" else self._unique(name)
        after = (*keys, *self._values(name))
        if name == "orders" and keys[0] != key:  # a new clustered key: a new row key
            self._set(which, key, None, before)
            assert isinstance(keys[0], int)
            self._set(which, keys[0], after, None)
            return
        self._set(which, key, after, before)

    def _statement(self) -> None:
        # the draws of randrange, random and choice, made directly (``_draws``)
        rng = self.rng
        bits = rng.getrandbits
        count = len(self.tables)  # below(bits, count), written out
        which = bits(count.bit_length())
        while which >= count:
            which = bits(count.bit_length())
        live = self.live[which]
        choice = rng.random()
        keys = live.keys
        if choice < 0.5 or len(keys) < 3:  # len(live), without its call
            self._insert(which)
            return
        spans = live.spans  # ``k in live``, without its call per key
        touched = [k for w, k in self.changes if w == which and k < len(spans) and spans[k] >= 0]
        if touched and rng.random() < 0.25:
            key = touched[below(bits, len(touched))]
        else:  # _draws.below(bits, len(keys)), written out
            live_count = len(keys)
            index = bits(live_count.bit_length())
            while index >= live_count:
                index = bits(live_count.bit_length())
            key = keys[index]
        if choice < 0.85:
            self._update(which, key)
        else:
            self._set(which, key, None)

    def transaction(self, ts: int) -> list[RowChangedEvent]:
        """One transaction's statements, and the net changes TiCDC reads, at commit ts ``ts``."""
        bits = self.rng.getrandbits
        statements = bits(3)  # randint(1, 4): 1 + below(bits, 4)
        while statements >= 4:
            statements = bits(3)
        for _ in range(1 + statements):
            self._statement()
        return self.commit(ts)

    def commit(self, ts: int) -> list[RowChangedEvent]:
        """The open transaction's net change of each row key it wrote, at commit ts ``ts``."""
        rows = []
        tables, by_rowid = self.tables, self.by_rowid
        for (which, key), (before, after) in self.changes.items():
            if before == after:  # nothing written, or nothing left (insert then delete)
                continue
            op: Operation = "insert" if before is None else "delete" if after is None else "update"
            row_id = key if by_rowid[which] else None
            rows.append(valid_row_event(ts, tables[which], op, before, after, row_id))
        self.changes.clear()
        return rows


def shop_workload(
    seed: int, *, resolved_every: int = 8, ddl_every: int = 500, large_blobs: bool = False
) -> Iterator[WorkloadItem]:
    """An endless, seeded stream of transactions over ``SHOP_TABLES`` (see the module doc)."""
    shop = _Shop(seed, large_blobs=large_blobs)
    try:
        yield from _items(shop, resolved_every=resolved_every, ddl_every=ddl_every)
    finally:  # the workload's end, or its collection: the rows' file goes at once
        shop.store.close()


def _items(shop: _Shop, *, resolved_every: int, ddl_every: int) -> Iterator[WorkloadItem]:
    rng, tables = shop.rng, shop.tables
    ts = START_TS
    count = 0
    while True:
        count += 1
        step = rng.getrandbits(6)  # randint(1, 50): 1 + below(bits, 50)
        while step >= 50:
            step = rng.getrandbits(6)
        ts += (1 + step) << 18
        rows = shop.transaction(ts)
        if rows:
            yield _transaction(ts, tuple(rows))
        if count % ddl_every == 0:
            ts += 1 << 18
            which = below(rng.getrandbits, len(tables))
            old = tables[which]
            tables[which] = dataclasses.replace(old, schema_version=ts)
            yield DDLEvent(
                commit_ts=ts,
                schema=old.schema,
                table=old.name,
                ddl_type=17,
                query=f"ALTER TABLE `{old.schema}`.`{old.name}` COMMENT = 'v{count}'",
                table_info=tables[which],
                pre_table_info=old,
            )
        if count % resolved_every == 0:
            yield ResolvedEvent(commit_ts=ts)
