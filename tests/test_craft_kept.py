"""The Craft codec compiles a group header's readers and a table's writer only for what recurs.

``_kept.Kept`` makes a value at its key's second sighting, keeps values within a budget of
columns and drops the least recently used first: a header or table met once is never compiled,
a rotation of many tables within the budget compiles each once, and memory stays bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from itertools import count

from test_craft_decode_errors import group, row_message
from test_craft_fast_paths import _both_decodings, switched_off

from ticdc_conformance.reference import ColumnInfo, Message, RowChangedEvent, TableInfo, craft
from ticdc_conformance.reference.craft import _fast_groups, _fast_rows
from ticdc_conformance.reference.craft._kept import Kept


def _table(i: int, columns: int = 10) -> TableInfo:
    """Table ``i``: its columns' types (int or bigint) spell ``i`` in binary, so that tables of
    one column count have group headers of their own (the names' IDs are the same)."""
    return TableInfo(
        schema="s",
        name=f"t{i}",
        columns=(
            ColumnInfo(name="id", type="int", key="primary"),
            *(
                ColumnInfo(name=f"c{j}", type="bigint" if i >> j & 1 else "int")
                for j in range(columns - 1)
            ),
        ),
    )


def _insert(table: TableInfo, ts: int = 1) -> RowChangedEvent:
    image = tuple(range(len(table.columns)))
    return RowChangedEvent(commit_ts=ts, table=table, op="insert", before=None, after=image)


def _counted(made: list[int], module: object, name: str) -> AbstractContextManager[None]:
    """``module``'s function ``name`` switched to one that appends to ``made`` each call."""
    make: Callable[..., object] = getattr(module, name)

    def counted(*args: object) -> object:
        made.append(1)
        return make(*args)

    return switched_off(module, name, counted)


def _decode(value: bytes) -> None:
    craft.decode(Message(key=None, value=value))


def test_a_header_is_compiled_at_its_second_sighting() -> None:
    made: list[int] = []
    one = craft.encode([_insert(_table(1))])[0].value or b""
    two = craft.encode([_insert(_table(2)), _insert(_table(2), 2)])[0].value or b""
    _fast_groups._HEADERS.clear()
    with _counted(made, _fast_groups, "group_reader"):
        _decode(one)
        assert not made  # met once: read the full way
        _decode(one)
        _decode(one)
        assert len(made) == 1  # met again (another message): compiled once
        _decode(two)
        assert len(made) == 2  # two groups of one message: its second group compiles it


def test_a_rotation_of_headers_within_the_budget_compiles_each_once() -> None:
    made: list[int] = []
    # 40 tables of 10 columns, one count: more than the 16 headers a count used to keep
    values = [craft.encode([_insert(_table(100 + i))])[0].value or b"" for i in range(40)]
    _fast_groups._HEADERS.clear()
    with _counted(made, _fast_groups, "group_reader"):
        for _ in range(5):
            for value in values:
                _decode(value)
    assert len(made) == 40


def test_kept_headers_stay_within_the_budget() -> None:
    values = [craft.encode([_insert(_table(i, 20))])[0].value or b"" for i in range(300)]
    _fast_groups._HEADERS.clear()
    for value in values:
        _decode(value)
        _decode(value)
    kept = _fast_groups._HEADERS
    assert 0 < len(kept) * 20 <= _fast_groups._BUDGET


def test_a_rotation_of_tables_within_the_budget_writes_each_plan_once() -> None:
    made: list[int] = []
    tables = [_table(i, 9) for i in range(100)]  # more than the 64 plans once kept
    _fast_rows._plans.clear()
    with _counted(made, _fast_rows, "image_writer"):
        craft.encode([_insert(tables[0])])
        assert not made  # met once: the full way
        for _ in range(5):
            for table in tables:
                craft.encode([_insert(table)])
    assert len(made) == 100
    assert len(_fast_rows._plans) * 9 <= _fast_rows._BUDGET


def test_kept_makes_room_by_generations() -> None:
    kept: Kept[int, int] = Kept(10, lambda value: value)
    for key in range(5):
        kept.keep(key, 1)
    assert len(kept) == 5
    kept.keep(5, 1)  # the recent generation full: it becomes the older one
    assert kept.recent == {5: 1}
    assert kept.older(0) == 1  # moved to the recent one
    assert kept.recent == {5: 1, 0: 1}
    assert kept.older(0) is None
    for key in range(6, 12):
        kept.keep(key, 1)
    assert 1 not in kept.recent
    assert kept.older(1) is None  # two generations on: dropped
    assert len(kept) <= 10


def test_kept_sightings() -> None:
    kept: Kept[str, int] = Kept(10, lambda value: value)
    assert not kept.sighted_before("a")
    assert kept.sighted_before("a")  # no mark: each sighting a new one
    assert not kept.sighted_before("a")  # remembered afresh once made
    message, other = object(), object()
    assert not kept.sighted_before("b", (message, 5))
    assert not kept.sighted_before("b", (message, 5))  # the same group read again
    assert kept.sighted_before("b", (message, 9))  # another group of the message
    assert not kept.sighted_before("c", (message, 5))
    assert kept.sighted_before("c", (other, 5))  # another message
    numbers = count()
    for _ in range(5000):  # forgotten at a bound: never more than that remembered
        kept.sighted_before(f"k{next(numbers)}")
    assert len(kept._sighted) <= 4096


def test_headers_of_the_same_first_bytes_decode_as_the_full_way() -> None:
    # flags 128 and 256 take two bytes each (80 01, 80 02): the headers' first 3 × count
    # bytes, their key, are the same
    first, second = row_message(group(flags=[0x80])), row_message(group(flags=[0x100]))
    _fast_groups._HEADERS.clear()
    for value in [first, second] * 3:
        fast, full = _both_decodings(value)
        assert repr(fast) == repr(full)
    made: list[int] = []
    with _counted(made, _fast_groups, "group_reader"):
        for value in [first, second] * 3:
            _decode(value)
    assert not made  # both kept, each under its own key: neither made again
