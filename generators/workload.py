"""A deterministic, seeded workload for large simulated streams (``generate``).

Not Hypothesis: a plain ``random.Random(seed)`` drives it, so a seed always gives the same
workload, and millions of events cost no more than the codecs' own work.

The workload ("shop"): three tables that between them hold the traps consumers get wrong —
``shop.orders`` (BIGINT primary key, DECIMAL, ENUM, nullable VARCHAR with HTML characters,
DATETIME(3), TIMESTAMP(6)), ``shop.customers`` (INT primary key, a NOT NULL unique email whose
change splits the UPDATE, DOUBLE, BIT(8), a nullable BLOB) and ``shop.samples`` (no primary key,
a NOT NULL unique (host, at) handle, FLOAT, BIGINT UNSIGNED up to 2^64 - 1). Transactions of one
to four rows insert new rows, update or delete live ones; a resolved event follows every
``resolved_every`` transactions; every ``ddl_every`` transactions an ``ALTER TABLE … COMMENT``
moves one table to a new schema version.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator

from ticdc_conformance.generators.simulator import Transaction, WorkloadItem
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    IndexInfo,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
)

__all__ = ["SHOP_TABLES", "START_TS", "shop_workload"]

START_TS = 1_767_225_600_000 << 18
"""2026-01-01T00:00:00Z as a TiDB TSO."""

_ORDERS = TableInfo(
    schema="shop", name="orders", table_id=101, schema_version=START_TS >> 1,
    columns=(
        ColumnInfo(name="id", type="bigint", key="primary", auto_increment=True),
        ColumnInfo(name="customer_id", type="int", nullable=False),
        ColumnInfo(name="amount", type="decimal", length=12, decimal=2, nullable=False),
        ColumnInfo(name="status", type="enum", elements=("new", "paid", "shipped")),
        ColumnInfo(name="note", type="varchar", length=64),
        ColumnInfo(name="created", type="datetime", decimal=3, nullable=False),
        ColumnInfo(name="updated", type="timestamp", decimal=6, on_update_now=True),
    ),
)  # fmt: skip
_CUSTOMERS = TableInfo(
    schema="shop", name="customers", table_id=102, schema_version=START_TS >> 1,
    columns=(
        ColumnInfo(name="id", type="int", key="primary"),
        ColumnInfo(name="email", type="varchar", length=128, nullable=False),
        ColumnInfo(name="name", type="varchar", length=64),
        ColumnInfo(name="balance", type="double", nullable=False),
        ColumnInfo(name="flags", type="bit", length=8, nullable=False),
        ColumnInfo(name="avatar", type="blob"),
    ),
    indexes=(IndexInfo(name="email", columns=("email",), unique=True),),
)  # fmt: skip
_SAMPLES = TableInfo(
    schema="shop", name="samples", table_id=103, schema_version=START_TS >> 1,
    columns=(
        ColumnInfo(name="host", type="varchar", length=32, nullable=False),
        ColumnInfo(name="at", type="datetime", nullable=False),
        ColumnInfo(name="value", type="float"),
        ColumnInfo(name="counter", type="bigint", unsigned=True, nullable=False),
    ),
    indexes=(IndexInfo(name="host_at", columns=("host", "at"), unique=True),),
)  # fmt: skip
SHOP_TABLES = (_ORDERS, _CUSTOMERS, _SAMPLES)

_NOTES = ("", "gift <wrap> & card", "leave at door", "call first", "fragile")
_NAMES = ("Ada", "Grace", "Linus", "Zoë", "Ngozi", "O'Brien")


def _datetime(rng: random.Random, fsp: int) -> str:
    text = (
        f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
        f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"
    )
    return text + ("." + "".join(str(rng.randint(0, 9)) for _ in range(fsp)) if fsp else "")


def _image(table: TableInfo, key: int, rng: random.Random) -> tuple[Value, ...]:
    if table.name == "orders":
        return (
            key,
            rng.randint(1, 5000),
            DecimalValue(f"{rng.randint(0, 99999)}.{rng.randint(0, 99):02d}"),
            rng.randint(1, 3),
            rng.choice((None, *_NOTES)),
            _datetime(rng, 3),
            rng.choice((None, TimestampValue(_datetime(rng, 6), "UTC"))),
        )
    if table.name == "customers":
        return (
            key,
            f"user{key}.{rng.randint(0, 3)}@example.com",
            rng.choice((None, *_NAMES)),
            rng.uniform(-1e6, 1e6),
            rng.randint(0, 255),
            rng.choice((None, b"", bytes(rng.randrange(256) for _ in range(rng.randint(1, 24))))),
        )
    counter = rng.choice((0, 2**63, 2**64 - 1, rng.randrange(2**64)))
    at = f"2026-01-01 {key // 3600 % 24:02d}:{key // 60 % 60:02d}:{key % 60:02d}"
    return (f"host-{key % 7}", at, rng.choice((None, 0.5, 1e-7, 3.25e10)), counter)


class _LiveRows:
    """The rows a table holds, with a random pick in constant time."""

    def __init__(self) -> None:
        self.keys: list[int] = []
        self.images: dict[int, tuple[Value, ...]] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def put(self, key: int, image: tuple[Value, ...]) -> None:
        if key not in self.images:
            self.keys.append(key)
        self.images[key] = image

    def pop_random(self, rng: random.Random) -> tuple[int, tuple[Value, ...]]:
        index = rng.randrange(len(self.keys))
        key, last = self.keys[index], self.keys.pop()
        if last != key:
            self.keys[index] = last
        return key, self.images.pop(key)


def shop_workload(
    seed: int, *, resolved_every: int = 8, ddl_every: int = 500
) -> Iterator[WorkloadItem]:
    """An endless, seeded stream of transactions over ``SHOP_TABLES`` (see the module doc)."""
    rng = random.Random(seed)
    tables = list(SHOP_TABLES)
    live = [_LiveRows() for _ in tables]
    next_key = [1, 1, 1]
    ts = START_TS
    count = 0
    while True:
        count += 1
        ts += rng.randint(1, 50) << 18
        rows = []
        for _ in range(rng.randint(1, 4)):
            which = rng.randrange(len(tables))
            table, rows_of = tables[which], live[which]
            choice = rng.random()
            if choice < 0.5 or len(rows_of) < 3:
                key = next_key[which]
                next_key[which] += 1
                after = _image(table, key, rng)
                rows_of.put(key, after)
                rows.append(RowChangedEvent(commit_ts=ts, table=table, op="insert", after=after))
                continue
            key, before = rows_of.pop_random(rng)
            if choice < 0.85:
                after = _image(table, key, rng)
                if table.name == "samples":  # the handle (host, at) stays; values change
                    after = (*before[:2], *after[2:])
                rows_of.put(key, after)
                rows.append(RowChangedEvent(commit_ts=ts, table=table, op="update",
                                            before=before, after=after))  # fmt: skip
            else:
                rows.append(RowChangedEvent(commit_ts=ts, table=table, op="delete",
                                            before=before))  # fmt: skip
        yield Transaction(commit_ts=ts, rows=tuple(rows))
        if count % ddl_every == 0:
            ts += 1 << 18
            which = rng.randrange(len(tables))
            old = tables[which]
            tables[which] = dataclasses.replace(old, schema_version=ts)
            yield DDLEvent(
                commit_ts=ts, schema=old.schema, table=old.name, ddl_type=17,
                query=f"ALTER TABLE `{old.schema}`.`{old.name}` COMMENT = 'v{count}'",
                table_info=tables[which], pre_table_info=old,
            )  # fmt: skip
        if count % resolved_every == 0:
            yield ResolvedEvent(commit_ts=ts)
