"""Flag bits and handle keys derived from table metadata (ground truth §1.2, §1.3)."""

from __future__ import annotations

import pytest

from ticdc_conformance.reference import ColumnInfo, IndexInfo, TableInfo


def table(*columns: ColumnInfo, indexes: tuple[IndexInfo, ...] = ()) -> TableInfo:
    return TableInfo(schema="s", name="t", columns=columns, indexes=indexes)


@pytest.mark.parametrize(
    ("columns", "indexes", "tiflow", "ticdc"),
    [
        # TestMaxMessageBytes: utf8mb4 VARCHAR primary key f=10, plain VARCHAR f=64 (§7.2)
        (
            [
                ColumnInfo(name="a", type="varchar", key="primary"),
                ColumnInfo(name="b", type="varchar"),
            ],
            (),
            (10, 64),
            (10, 64),
        ),
        # an integer primary key: Binary|HandleKey|PrimaryKey = 11 (ticdc#1227's classic value)
        ([ColumnInfo(name="id", type="int", key="primary")], (), (11,), (11,)),
        # every non-string column has charset binary, so BinaryFlag (§1.2, O11)
        (
            [
                ColumnInfo(name="d", type="date"),
                ColumnInfo(name="t", type="text"),
                ColumnInfo(name="b", type="blob"),
                ColumnInfo(name="e", type="enum"),
            ],
            (),
            (65, 64, 65, 64),
            (65, 64, 65, 64),
        ),
        ([ColumnInfo(name="u", type="bigint", unsigned=True, nullable=False)], (), (129,), (129,)),
        ([ColumnInfo(name="c", type="varchar", charset="binary")], (), (65,), (65,)),
        # a primary index over two columns: PrimaryKey, MultipleKey and the handle
        (
            [ColumnInfo(name="a", type="int"), ColumnInfo(name="b", type="varchar")],
            (IndexInfo(name="PRIMARY", columns=("a", "b"), primary=True),),
            (43, 42),
            (43, 42),
        ),
        # no primary key: the NOT NULL unique index is the handle (§1.3)
        (
            [ColumnInfo(name="a", type="int", nullable=False), ColumnInfo(name="b", type="int")],
            (IndexInfo(name="u", columns=("a",), unique=True),),
            (19, 65),
            (19, 65),
        ),
        # a nullable unique index cannot be the handle
        (
            [ColumnInfo(name="a", type="int")],
            (IndexInfo(name="u", columns=("a",), unique=True),),
            (81,),
            (81,),
        ),
        # a plain two-column index: MultipleKey on both
        (
            [ColumnInfo(name="a", type="int"), ColumnInfo(name="b", type="int")],
            (IndexInfo(name="i", columns=("a", "b")),),
            (97, 97),
            (97, 97),
        ),
        # new-arch drops the index bits of generated columns (§1.2 TC quirk)
        (
            [ColumnInfo(name="g", type="int", generated="stored")],
            (IndexInfo(name="i", columns=("g",), unique=True),),
            (85,),
            (69,),
        ),
    ],
    ids=[
        "varchar-pk",
        "int-pk",
        "charset-binary",
        "unsigned",
        "explicit-charset",
        "composite-pk",
        "unique-handle",
        "nullable-unique",
        "multiple",
        "generated",
    ],
)
def test_column_flags(
    columns: list[ColumnInfo],
    indexes: tuple[IndexInfo, ...],
    tiflow: tuple[int, ...],
    ticdc: tuple[int, ...],
) -> None:
    info = table(*columns, indexes=indexes)
    assert info.column_flags("tiflow") == tiflow
    assert info.column_flags("ticdc") == ticdc


def test_handle_key_prefers_fewest_columns_then_first_index() -> None:
    columns = [ColumnInfo(name=n, type="int", nullable=False) for n in "abc"]
    info = table(
        *columns,
        indexes=(
            IndexInfo(name="ab", columns=("a", "b"), unique=True),
            IndexInfo(name="c", columns=("c",), unique=True),
            IndexInfo(name="b", columns=("b",), unique=True),
        ),
    )
    assert info.handle_key() == (2,)


def test_virtual_columns_cannot_be_the_handle() -> None:
    info = table(
        ColumnInfo(name="v", type="int", nullable=False, generated="virtual"),
        indexes=(IndexInfo(name="u", columns=("v",), unique=True),),
    )
    assert info.handle_key() == ()


def test_explicit_flags_and_type_code_win() -> None:
    column = ColumnInfo(name="x", type="varchar", type_code=253, flags=0)
    assert (column.effective_type_code, table(column).column_flags("tiflow")) == (253, (0,))


@pytest.mark.parametrize(
    "make",
    [
        lambda: ColumnInfo(name="x", type="varchar2"),  # type: ignore[arg-type]
        lambda: ColumnInfo(name="x", type="int", flags=-1),
        lambda: ColumnInfo(name="x", type="int", type_code=256),
        lambda: table(ColumnInfo(name="x", type="int"), ColumnInfo(name="x", type="int")),
        lambda: table(
            ColumnInfo(name="x", type="int"), indexes=(IndexInfo(name="i", columns=("y",)),)
        ),
    ],
    ids=["type", "flags", "type-code", "duplicate-name", "index-column"],
)
def test_invalid_metadata_is_rejected(make: object) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - each message is specific to its case
        make()  # type: ignore[operator]
