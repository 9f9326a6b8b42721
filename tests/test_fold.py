"""Folding decoded row changes into final tables, per key in commit-ts order."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ticdc_conformance.reference import (
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.fold import fold_rows, handle_key_of
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG
from ticdc_conformance.reference.values import Value

KEYS = {("s", "t"): ("id",)}
Values = tuple[Value, Value]


def image(values: Values | None) -> tuple[DecodedColumn, ...] | None:
    if values is None:
        return None
    return (DecodedColumn("id", values[0]), DecodedColumn("v", values[1]))


def row(
    op: str, ts: int | None, before: Values | None = None, after: Values | None = None
) -> DecodedRow:
    return DecodedRow(
        commit_ts=ts,
        schema="s",
        table="t",
        op=op,  # type: ignore[arg-type]
        before=image(before),
        after=image(after),
    )


def ins(ts: int, after: Values) -> DecodedRow:
    return row("insert", ts, after=after)


def upd(ts: int, before: Values, after: Values) -> DecodedRow:
    return row("update", ts, before, after)


def dele(ts: int, before: Values) -> DecodedRow:
    return row("delete", ts, before=before)


CASES: list[tuple[str, list[DecodedEvent], dict[int, Value]]] = [
    ("insert then update", [ins(1, (1, "a")), upd(2, (1, "a"), (1, "b"))], {1: "b"}),
    ("insert then delete", [ins(1, (1, "a")), dele(2, (1, "a"))], {}),
    (
        "a key-changing update sent whole moves the row",
        [ins(1, (1, "a")), upd(2, (1, "a"), (2, "a"))],
        {2: "a"},
    ),
    (
        "split halves of one key, in either order (two partitions)",
        [ins(1, (1, "a")), row("insert", 2, after=(1, "b")), dele(2, (1, "a"))],
        {1: "b"},
    ),
    (
        "split halves of a moved key",
        [ins(1, (1, "a")), dele(2, (1, "a")), ins(2, (2, "a"))],
        {2: "a"},
    ),
    (
        "a replay after a newer version changes nothing",
        [ins(1, (1, "a")), upd(2, (1, "a"), (1, "b")), ins(1, (1, "a"))],
        {1: "b"},
    ),
    (
        "a replayed delete of a moved key changes nothing",
        [dele(2, (1, "a")), ins(2, (2, "a")), ins(3, (1, "c")), dele(2, (1, "a"))],
        {1: "c", 2: "a"},
    ),
    ("input out of commit-ts order", [upd(5, (1, "a"), (1, "b")), ins(1, (1, "a"))], {1: "b"}),
    (
        "an update without its old image keeps its key",
        [ins(1, (1, "a")), row("update", 2, after=(1, "b"))],
        {1: "b"},
    ),
    (
        "DDLs and watermarks change no row",
        [
            ins(1, (1, "a")),
            DecodedDDL(commit_ts=2, schema="s", table="t", query="TRUNCATE t"),
            DecodedResolved(commit_ts=3),
        ],
        {1: "a"},
    ),
]


@pytest.mark.parametrize(("events", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_fold(events: list[DecodedEvent], expected: dict[int, Value]) -> None:
    folded = fold_rows(events, KEYS)
    rows = folded.get(("s", "t"), {})
    assert {key[0]: {c.name: c.value for c in cols}["v"] for key, cols in rows.items()} == expected


def test_an_old_image_without_the_key_columns_keeps_the_key() -> None:
    # only-output-updated-columns: Open's 'p' holds the changed columns only
    partial = DecodedRow(
        commit_ts=2,
        schema="s",
        table="t",
        op="update",
        before=(DecodedColumn("v", "a"),),
        after=image((1, "b")),
    )
    assert list(fold_rows([ins(1, (1, "a")), partial], KEYS)[("s", "t")]) == [(1,)]


@pytest.mark.parametrize(
    "marked",
    [DecodedColumn("id", 1, handle_key=True), DecodedColumn("id", 1, flags=HANDLE_KEY_FLAG | 8)],
    ids=["open-h", "flags"],
)
def test_the_message_marks_the_handle_key(marked: DecodedColumn) -> None:
    event = replace(ins(1, (1, "a")), after=(marked, DecodedColumn("v", "a", flags=0)))
    assert list(fold_rows([event])[("s", "t")]) == [(1,)]


@pytest.mark.parametrize(
    ("event", "keys", "message"),
    [
        (ins(1, (1, "a")), None, "marks no handle-key column"),
        (row("insert", None, after=(1, "a")), KEYS, "without commit ts"),
        (replace(ins(1, (1, "a")), handle_key_only=True), KEYS, "handle-key-only"),
        (replace(ins(1, (1, "a")), after=(DecodedColumn("v", "a"),)), KEYS, "lacks a handle-key"),
    ],
)
def test_what_cannot_be_folded(
    event: DecodedRow, keys: dict[tuple[str, str], tuple[str, ...]] | None, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        fold_rows([event], keys)


def test_handle_key_of_follows_the_key_column_order() -> None:
    columns = (DecodedColumn("a", 1), DecodedColumn("b", 2))
    assert handle_key_of(columns, ("b", "a")) == (2, 1)
    assert handle_key_of(columns, ("c",)) is None
