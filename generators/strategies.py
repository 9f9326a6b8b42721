"""Hypothesis strategies for change events of every MySQL type TiCDC replicates.

Strategies produce change events, never bytes; the bytes come from the reference encoders.
Values stay inside what TiDB can hold for the column (ranges, fsp digits, ENUM/SET members)
and deliberately include the traps of ground truth §1.4 and consumers-and-pain.md: unsigned
64-bit extremes, FLOAT values whose float64 text differs, HTML characters, U+2028, control
characters, text that is not valid UTF-8, and every byte value in binary columns.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hypothesis import strategies as st

from ticdc_conformance.generators._column_values import (
    DECLARED_LENGTHS,
    TEXTS,
    column_values,
    non_null_values,
)
from ticdc_conformance.generators.simulator import Transaction
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    IndexInfo,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    Value,
    mysql,
)
from ticdc_conformance.reference.events import OPERATIONS
from ticdc_conformance.reference.mysql import (
    INTEGER_TYPES,
    TEXT_TYPES,
    MySQLType,
)

__all__ = [
    "MYSQL_TYPES",
    "OPERATIONS",
    "change_events",
    "column_infos",
    "column_values",
    "commit_timestamps",
    "ddl_events",
    "ddl_sequences",
    "json_documents",
    "resolved_events",
    "row_changed_events",
    "table_infos",
    "transactions",
]

MYSQL_TYPES: tuple[MySQLType, ...] = tuple(
    name for name in mysql.MYSQL_TYPES if name not in ("geometry", "null")
)
"""Every type name the strategies draw from (GEOMETRY is not replicated; NULL is synthetic)."""

commit_timestamps = st.integers(min_value=0, max_value=2**64 - 1)
_names = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)


_CHARSETS = st.sampled_from(
    [
        (None, None),
        ("utf8mb4", "utf8mb4_bin"),
        ("utf8mb4", "utf8mb4_general_ci"),
        ("latin1", "latin1_swedish_ci"),
        ("gbk", "gbk_chinese_ci"),
    ]
)
_NO_LITERAL_DEFAULT = frozenset(
    {
        "tinytext",
        "text",
        "mediumtext",
        "longtext",
        "tinyblob",
        "blob",
        "mediumblob",
        "longblob",
        "json",
        "vector",
    }
)


def _length(draw: st.DrawFn, mysql_type: str) -> int | None:
    if mysql_type == "bit":
        return draw(st.integers(1, 64))
    if mysql_type in DECLARED_LENGTHS:
        return draw(st.integers(1, DECLARED_LENGTHS[mysql_type]))
    if mysql_type == "decimal":
        return draw(st.sampled_from([65, 10, 1]) | st.integers(1, 65))  # precision
    return None


@st.composite
def column_infos(draw: st.DrawFn, name: str | None = None) -> ColumnInfo:
    """A column of any replicated type with realistic TiDB metadata.

    Lengths (CHAR/BINARY ≤ 255, DECIMAL precision ≤ 65 with scale ≤ 30, BIT 1–64), fsp 0–6,
    charsets and collations of text columns, ENUM/SET members, defaults drawn from the type's
    own values, and now and then a generated column.
    """
    mysql_type = draw(st.sampled_from(MYSQL_TYPES))
    length = _length(draw, mysql_type)
    if mysql_type == "decimal" and length is not None:  # a DECIMAL always has a precision
        scale: int | None = draw(st.integers(0, min(30, length)))
    elif mysql_type in ("datetime", "timestamp", "time"):
        scale = draw(st.integers(0, 6))
    elif mysql_type == "float":
        scale = draw(st.none() | st.integers(0, 6))  # FLOAT(M,D) when set
    else:
        scale = None
    elements = None
    if mysql_type in ("enum", "set"):
        # a SET member cannot hold a comma (TiDB rejects it); an ENUM member can
        names = _names.filter(lambda n: "," not in n) if mysql_type == "set" else _names
        elements = tuple(draw(st.lists(names, min_size=1, max_size=5, unique=True)))
    charset, collation = draw(_CHARSETS) if mysql_type in TEXT_TYPES else (None, None)
    column = ColumnInfo(
        name=name if name is not None else draw(_names),
        type=mysql_type,
        unsigned=mysql_type in INTEGER_TYPES and draw(st.booleans()),
        nullable=draw(st.booleans()),
        charset=charset,
        collation=collation,
        length=length,
        decimal=scale,
        elements=elements,
        zerofill=mysql_type in INTEGER_TYPES and draw(st.booleans()),
        auto_increment=mysql_type in INTEGER_TYPES and draw(st.booleans()),
        on_update_now=mysql_type in ("datetime", "timestamp") and draw(st.booleans()),
        comment=draw(st.none() | TEXTS),
        generated=draw(st.sampled_from([None] * 6 + ["stored", "virtual"])),
    )
    # TiDB takes no literal DEFAULT for BLOB, TEXT, JSON and VECTOR columns (as MySQL)
    if mysql_type not in _NO_LITERAL_DEFAULT and draw(st.integers(0, 3)) == 0:
        default = draw(non_null_values(column))
        if mysql_type == "enum" and default == 0:
            default = 1  # the invalid member '' (index 0) is no default TiDB accepts
        if mysql_type in TEXT_TYPES and isinstance(default, bytes):
            default = default.decode("utf-8", "replace")  # a text default is valid text
        column = dataclasses.replace(column, default=default)
    return column


@st.composite
def table_infos(draw: st.DrawFn) -> TableInfo:
    """A table with 1–8 columns, maybe a primary key or a unique index, maybe partitioned."""
    names = draw(st.lists(_names, min_size=1, max_size=8, unique=True))
    columns = [draw(column_infos(name=name)) for name in names]
    if all(c.generated for c in columns):  # generated columns are computed from stored ones
        columns[0] = dataclasses.replace(columns[0], generated=None)
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
    stored = [c.name for c in columns if c.generated is None]
    if key_shape in ("pk-index", "unique") and stored:
        members = draw(st.lists(st.sampled_from(stored), min_size=1, max_size=3, unique=True))
        indexes.append(
            IndexInfo(
                name="k", columns=tuple(members), primary=key_shape == "pk-index", unique=True
            )
        )
    if draw(st.booleans()):  # a secondary index, composite or not
        members = draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True))
        indexes.append(IndexInfo(name="i", columns=tuple(members)))
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
    # a virtual generated column is not stored: TiCDC never has its value
    return tuple(
        None if column.is_virtual else draw(column_values(column)) for column in table.columns
    )


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
    return RowChangedEvent(
        commit_ts=draw(commit_timestamps), table=table, op=op, before=before, after=after
    )


ddl_events = st.builds(
    DDLEvent,
    commit_ts=commit_timestamps,
    schema=st.text(max_size=8),
    table=st.text(max_size=8),
    query=TEXTS,
    ddl_type=st.integers(0, 255),
    table_info=st.none() | table_infos(),
    pre_table_info=st.none() | table_infos(),
)
resolved_events = st.builds(ResolvedEvent, commit_ts=commit_timestamps)


def change_events() -> st.SearchStrategy[RowChangedEvent | DDLEvent | ResolvedEvent]:
    """Any change event, rows most often."""
    return st.one_of(row_changed_events(), row_changed_events(), ddl_events, resolved_events)


@st.composite
def transactions(draw: st.DrawFn, tables: Sequence[TableInfo] | None = None) -> Transaction:
    """One upstream transaction: 1–5 rows over one to three tables, sharing a commit ts."""
    pool = list(tables) if tables else draw(st.lists(table_infos(), min_size=1, max_size=3))
    commit_ts = draw(commit_timestamps)
    rows = draw(st.lists(st.sampled_from(pool).flatmap(row_changed_events), min_size=1, max_size=5))
    return Transaction(
        commit_ts=commit_ts,
        rows=tuple(dataclasses.replace(row, commit_ts=commit_ts) for row in rows),
    )


_COLUMN_DDLS = {5: "ADD COLUMN", 6: "DROP COLUMN", 12: "MODIFY COLUMN", 17: "COMMENT"}


@st.composite
def ddl_sequences(draw: st.DrawFn, max_size: int = 6) -> list[DDLEvent]:
    """The DDL history of one table, each DDL with its table info before and after.

    CREATE TABLE, then ALTERs (add, drop, modify a column, comment), RENAMEs and TRUNCATEs,
    maybe a final DROP; commit ts and schema versions rise.
    """
    table = draw(table_infos())
    ts = draw(st.integers(1, 2**62))
    table = dataclasses.replace(table, schema_version=ts)
    history = [
        DDLEvent(
            commit_ts=ts,
            schema=table.schema,
            table=table.name,
            ddl_type=3,
            query=f"CREATE TABLE `{table.name}` (...)",
            table_info=table,
        )
    ]
    for _ in range(draw(st.integers(0, max_size - 1))):
        ts += draw(st.integers(1, 2**20))
        ddl_type = draw(st.sampled_from([5, 6, 12, 17, 14, 11]))
        before = table
        if ddl_type == 5:
            extra = draw(column_infos(name=f"c{len(table.columns)}_{ts % 1000}"))
            table = dataclasses.replace(
                table, columns=(*table.columns, extra), indexes=table.indexes
            )
        elif ddl_type == 6 and len(table.columns) > 1:
            kept = table.columns[:-1]
            names = {c.name for c in kept}
            indexes = tuple(i for i in table.indexes if set(i.columns) <= names)
            table = dataclasses.replace(table, columns=kept, indexes=indexes)
        elif ddl_type == 14:
            table = dataclasses.replace(table, name=table.name + "_renamed")
        table = dataclasses.replace(table, schema_version=ts)
        verb = {14: "RENAME TABLE", 11: "TRUNCATE TABLE"}.get(ddl_type, "ALTER TABLE")
        query = f"{verb} `{before.name}` {_COLUMN_DDLS.get(ddl_type, '')}".rstrip()
        history.append(
            DDLEvent(
                commit_ts=ts,
                schema=table.schema,
                table=table.name,
                ddl_type=ddl_type,
                query=query,
                table_info=table,
                pre_table_info=before,
            )
        )
    if draw(st.booleans()):
        ts += 1
        drop = f"DROP TABLE `{table.name}`"
        history.append(
            DDLEvent(
                commit_ts=ts,
                schema=table.schema,
                table=table.name,
                ddl_type=4,
                query=drop,
                pre_table_info=table,
            )
        )
    return history


def json_documents(max_leaves: int = 20) -> st.SearchStrategy[object]:
    """Arbitrary JSON documents (objects, arrays, scalars) for decoder totality checks."""
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(2**70), 2**70),
        st.floats(allow_nan=False, allow_infinity=False),
        TEXTS,
    )
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=4), st.dictionaries(TEXTS, children, max_size=4)
        ),
        max_leaves=max_leaves,
    )
