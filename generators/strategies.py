"""Hypothesis strategies for change events of every MySQL type TiCDC replicates.

Strategies produce change events, never bytes; the bytes come from the reference encoders.
Values stay inside what TiDB can hold for the column (ranges, fsp digits, ENUM/SET members)
and deliberately include the traps of ground truth §1.4 and consumers-and-pain.md: unsigned
64-bit extremes, FLOAT values whose float64 text differs, HTML characters, U+2028, control
characters, text that is not valid UTF-8, and every byte value in binary columns.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    IndexInfo,
    Operation,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
)

__all__ = [
    "change_events",
    "column_infos",
    "column_infos_with_defaults",
    "column_values",
    "ddl_events",
    "json_documents",
    "resolved_events",
    "row_changed_events",
    "table_infos",
]

_INTEGER_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_TEXT_TYPES = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext")
_BINARY_TYPES = ("binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob")
_OTHER_TYPES = ("float", "double", "decimal", "date", "datetime", "timestamp", "time", "year",
                "enum", "set", "bit", "json", "vector")  # fmt: skip
MYSQL_TYPES = (*_INTEGER_BITS, *_TEXT_TYPES, *_BINARY_TYPES, *_OTHER_TYPES)
"""Every type name the strategies draw from (GEOMETRY is not replicated; NULL is synthetic)."""

OPERATIONS: tuple[Operation, ...] = ("insert", "update", "delete")
commit_timestamps = st.integers(min_value=0, max_value=2**64 - 1)
_names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
_trap_text = st.sampled_from(["<a&b>", "\u2028", "\b\f\x00\x1f", '"\\', "\x7f", "测试", "é"])
_texts = st.one_of(_trap_text, st.text(max_size=20))
_invalid_utf8 = st.binary(min_size=1, max_size=8).filter(lambda b: not _is_utf8(b))


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True


@st.composite
def column_infos(draw: st.DrawFn, name: str | None = None) -> ColumnInfo:
    """A column of any replicated type with plausible TiDB metadata."""
    mysql_type = draw(st.sampled_from(MYSQL_TYPES))
    fsp = draw(st.integers(0, 6)) if mysql_type in ("datetime", "timestamp", "time") else None
    scale = draw(st.integers(0, 30)) if mysql_type == "decimal" else fsp
    elements = None
    if mysql_type in ("enum", "set"):
        elements = tuple(draw(st.lists(_names, min_size=1, max_size=5, unique=True)))
    return ColumnInfo(
        name=name if name is not None else draw(_names),
        type=mysql_type,
        unsigned=mysql_type in _INTEGER_BITS and draw(st.booleans()),
        nullable=draw(st.booleans()),
        length=draw(st.integers(1, 64)) if mysql_type == "bit" else None,
        decimal=scale,
        elements=elements,
        zerofill=mysql_type in _INTEGER_BITS and draw(st.booleans()),
        auto_increment=mysql_type in _INTEGER_BITS and draw(st.booleans()),
        on_update_now=mysql_type in ("datetime", "timestamp") and draw(st.booleans()),
        comment=draw(st.none() | _texts),
    )


def _decimal_texts(scale: int) -> st.SearchStrategy[Value]:
    whole = st.integers(-(10**35) + 1, 10**35 - 1)
    fraction = st.integers(0, 10**scale - 1)
    return st.builds(
        lambda w, f: DecimalValue(f"{w}.{f:0{scale}d}" if scale else str(w)), whole, fraction
    )


def _fraction(fsp: int) -> st.SearchStrategy[str]:
    if not fsp:
        return st.just("")
    return st.integers(0, 10**fsp - 1).map(lambda f: f".{f:0{fsp}d}")


def _datetimes(fsp: int) -> st.SearchStrategy[str]:
    return st.builds(
        lambda d, f: d.strftime("%Y-%m-%d %H:%M:%S") + f,
        st.datetimes(),
        _fraction(fsp),
    ).map(lambda text: text.zfill(19 + (fsp and fsp + 1)))


def column_values(column: ColumnInfo) -> st.SearchStrategy[Value]:
    """Values TiDB can hold in ``column`` (NULL only when the column is nullable)."""
    base = _non_null_values(column)
    return st.one_of(st.none(), base) if column.nullable else base


def _non_null_values(column: ColumnInfo) -> st.SearchStrategy[Value]:
    kind = column.type
    fsp = column.decimal or 0
    if kind in _INTEGER_BITS:
        bits = _INTEGER_BITS[kind]
        if column.unsigned:
            return st.integers(0, 2**bits - 1)
        return st.integers(-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if kind in _TEXT_TYPES:
        return st.one_of(_texts, _invalid_utf8)
    if kind in _BINARY_TYPES:
        return st.one_of(st.binary(max_size=24), st.just(bytes(range(256))))
    simple: dict[str, st.SearchStrategy[Value]] = {
        "float": st.floats(width=32, allow_nan=False, allow_infinity=False),
        "double": st.floats(allow_nan=False, allow_infinity=False),
        "date": st.one_of(
            st.dates().map(lambda d: d.strftime("%Y-%m-%d").zfill(10)), st.just("0000-00-00")
        ),
        "datetime": _datetimes(fsp),
        "timestamp": _datetimes(fsp).map(lambda text: TimestampValue(text, None)),
        "time": st.builds(
            lambda sign, h, m, s, f: f"{sign}{h:02d}:{m:02d}:{s:02d}{f}",
            st.sampled_from(["", "-"]),
            st.integers(0, 838),
            st.integers(0, 59),
            st.integers(0, 59),
            _fraction(fsp),
        ),
        "year": st.one_of(st.just(0), st.integers(1901, 2155)),
        "enum": st.integers(0, len(column.elements or ())),
        "set": st.integers(0, 2 ** len(column.elements or ()) - 1),
        "bit": st.integers(0, 2 ** (column.length or 1) - 1),
        "json": st.sampled_from(['{"key1": "value1"}', "[1, 2]", '"<&>"', "null", "3.5"]),
        "vector": st.lists(st.integers(-5, 5), max_size=4).map(
            lambda xs: "[" + ",".join(map(str, xs)) + "]"
        ),
    }
    if kind == "decimal":
        return _decimal_texts(fsp)
    return simple[kind]


@st.composite
def table_infos(draw: st.DrawFn) -> TableInfo:
    """A table with 1–8 columns, maybe a primary key or a unique index, maybe partitioned."""
    names = draw(st.lists(_names, min_size=1, max_size=8, unique=True))
    columns = [draw(column_infos(name=name)) for name in names]
    indexes: list[IndexInfo] = []
    key_shape = draw(st.sampled_from(["none", "int-pk", "pk-index", "unique"]))
    if key_shape == "int-pk":
        columns[0] = ColumnInfo(
            name=names[0],
            type="bigint",
            key="primary",
            nullable=False,
            unsigned=draw(st.booleans()),
        )
    elif key_shape in ("pk-index", "unique"):
        members = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
        indexes.append(
            IndexInfo(
                name="k", columns=tuple(members), primary=key_shape == "pk-index", unique=True
            )
        )
    return TableInfo(
        schema=draw(_names),
        name=draw(_names),
        columns=tuple(columns),
        indexes=tuple(indexes),
        table_id=draw(st.none() | st.integers(1, 2**40)),
        partition_id=draw(st.none() | st.integers(0, 2**40)),
        schema_version=draw(st.none() | commit_timestamps),
        charset=draw(st.none() | st.sampled_from(["utf8mb4", "latin1", "binary"])),
    )


def _image(draw: st.DrawFn, table: TableInfo) -> tuple[Value, ...]:
    return tuple(draw(column_values(column)) for column in table.columns)


@st.composite
def row_changed_events(draw: st.DrawFn, table: TableInfo | None = None) -> RowChangedEvent:
    """An insert, update or delete on ``table`` (a drawn one when not given)."""
    table = table if table is not None else draw(table_infos())
    op = draw(st.sampled_from(OPERATIONS))
    before = _image(draw, table) if op != "insert" else None
    after = _image(draw, table) if op != "delete" else None
    if op == "update" and before is not None and after is not None:
        # updates that change nothing, some columns, or everything (only-updated-columns)
        keep = draw(st.sampled_from(["all", "some", "none"]))
        if keep != "none":
            kept = [keep == "all" or draw(st.booleans()) for _ in table.columns]
            after = tuple(
                old if k else new for old, new, k in zip(before, after, kept, strict=True)
            )
    return RowChangedEvent(commit_ts=draw(commit_timestamps), table=table, op=op,
                           before=before, after=after)  # fmt: skip


ddl_events = st.builds(
    DDLEvent,
    commit_ts=commit_timestamps,
    schema=st.text(max_size=8),
    table=st.text(max_size=8),
    query=_texts,
    ddl_type=st.integers(0, 255),
    table_info=st.none() | table_infos(),
    pre_table_info=st.none() | table_infos(),
)
resolved_events = st.builds(ResolvedEvent, commit_ts=commit_timestamps)


def change_events() -> st.SearchStrategy[RowChangedEvent | DDLEvent | ResolvedEvent]:
    """Any change event, rows most often."""
    return st.one_of(row_changed_events(), row_changed_events(), ddl_events, resolved_events)


@st.composite
def column_infos_with_defaults(draw: st.DrawFn, name: str | None = None) -> ColumnInfo:
    """A column of any replicated type whose DEFAULT is a value it can hold (or none)."""
    column = draw(column_infos(name=name))
    default = draw(st.none() | _non_null_values(column))
    return replace(column, default=default)


def json_documents(max_leaves: int = 20) -> st.SearchStrategy[object]:
    """Arbitrary JSON documents (objects, arrays, scalars) for decoder totality checks."""
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False), _texts,
    )  # fmt: skip
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(_texts, children, max_size=4)
        ),
        max_leaves=max_leaves,
    )
