"""A transaction's rows as TiCDC sends them: the sorter's order, the split per profile (§6.5)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ticdc_conformance.reference import ColumnInfo, IndexInfo, RowChangedEvent, TableInfo
from ticdc_conformance.reference.updates import changes_key, sink_order, split_key_updates

TABLE = TableInfo(
    schema="s",
    name="t",
    columns=(
        ColumnInfo(name="id", type="int", key="primary"),
        ColumnInfo(name="email", type="varchar", nullable=False),
        ColumnInfo(name="note", type="varchar"),
    ),
    indexes=(IndexInfo(name="email", columns=("email",), unique=True),),
)


def update(before: tuple[object, ...], after: tuple[object, ...]) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=9, table=TABLE, op="update", before=before, after=after)  # type: ignore[arg-type]


def insert(ident: int) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=9, table=TABLE, op="insert", after=(ident, f"{ident}@x", None))


def delete(ident: int) -> RowChangedEvent:
    return RowChangedEvent(
        commit_ts=9, table=TABLE, op="delete", before=(ident, f"{ident}@x", None)
    )


NOTE_ONLY = update((1, "a", "x"), (1, "a", "y"))
NEW_ID = update((2, "b", None), (3, "b", None))
NEW_EMAIL = update((4, "c", None), (4, "d", None))


@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
def test_which_updates_change_a_key(profile: str) -> None:
    assert not changes_key(NOTE_ONLY, profile)  # type: ignore[arg-type]
    assert changes_key(NEW_ID, profile)  # type: ignore[arg-type]
    assert changes_key(NEW_EMAIL, profile)  # type: ignore[arg-type]
    assert not changes_key(insert(1), profile)  # type: ignore[arg-type]


def ops(rows: list[RowChangedEvent]) -> list[tuple[str, object]]:
    return [(r.op, (r.after or r.before or (None,))[0]) for r in rows]


def test_tiflow_sorts_deletes_updates_inserts_once_anything_split() -> None:
    rows = [insert(10), NOTE_ONLY, NEW_ID, delete(11)]
    assert ops(split_key_updates(rows, "tiflow")) == [
        ("delete", 2),
        ("delete", 11),
        ("update", 1),
        ("insert", 10),
        ("insert", 3),
    ]
    # nothing split: the transaction keeps its order
    assert split_key_updates([insert(10), NOTE_ONLY, delete(11)], "tiflow") == [
        insert(10),
        NOTE_ONLY,
        delete(11),
    ]


def test_ticdc_keeps_deletes_in_place_and_appends_inserts() -> None:
    rows = [insert(10), NEW_ID, NOTE_ONLY, NEW_EMAIL]
    assert ops(split_key_updates(rows, "ticdc")) == [
        ("insert", 10),
        ("delete", 2),
        ("update", 1),
        ("delete", 4),
        ("insert", 3),
        ("insert", 4),
    ]


def test_halves_keep_images_and_commit_ts() -> None:
    delete_half, insert_half = split_key_updates([NEW_ID], "ticdc")
    assert (delete_half.before, delete_half.after) == (NEW_ID.before, None)
    assert (insert_half.before, insert_half.after) == (None, NEW_ID.after)
    assert delete_half.commit_ts == insert_half.commit_ts == 9


OTHER = TableInfo(schema="s", name="u", columns=(ColumnInfo(name="id", type="int", key="primary"),))


def other(ident: int) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=9, table=OTHER, op="insert", after=(ident,))


# statement order in; per table: DELETEs, UPDATEs, INSERTs by row key (the sorter), then the split
SINK_ORDER = [
    ("tiflow", False, "d11 d2 d4 u1 i3 i4 i10 i12"),
    ("ticdc", False, "d11 u1 d2 d4 i10 i12 i3 i4"),
    ("tiflow", True, "d11 u1 u3 u4 i10 i12"),
    ("ticdc", True, "d11 u1 u3 u4 i10 i12"),
]


@pytest.mark.parametrize(("profile", "raw", "expected"), SINK_ORDER)
def test_sink_order(profile: str, raw: bool, expected: str) -> None:
    rows = [insert(12), NEW_EMAIL, other(7), delete(11), NOTE_ONLY, insert(10), NEW_ID, other(5)]
    sent = sink_order(rows, profile, output_raw_change_event=raw)  # type: ignore[arg-type]
    shown = [f"{r.table.name}.{op[0]}{key}" for r, (op, key) in zip(sent, ops(sent), strict=True)]
    # tables keep the order the transaction first touched them in
    assert shown == [f"t.{o}" for o in expected.split()] + ["u.i5", "u.i7"]


def test_rows_without_an_int_handle_keep_their_order_within_a_kind() -> None:
    table = TableInfo(schema="s", name="v", columns=(ColumnInfo(name="k", type="varchar"),))
    rows = [RowChangedEvent(commit_ts=9, table=table, op="insert", after=(k,)) for k in "ba"]
    assert sink_order(rows, "tiflow") == rows
    assert sink_order([*rows, replace(rows[0], row_id=1)], "ticdc")[0] == rows[0]
