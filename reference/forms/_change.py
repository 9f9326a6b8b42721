"""The change-event form (docs/change-events.md)."""

from __future__ import annotations

from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import (
    ChangeEvent,
    DDLEvent,
    ResolvedEvent,
    RowChangedEvent,
    operation,
)
from ticdc_conformance.reference.forms._common import (
    Json,
    at_line,
    ddl_members,
    fail,
    kind_of,
    members,
    read_value,
    write_ddl,
    write_value,
)
from ticdc_conformance.reference.jsondoc import Members, Path
from ticdc_conformance.reference.mysql import MySQLType, type_named
from ticdc_conformance.reference.tables import (
    ColumnInfo,
    Generated,
    IndexInfo,
    KeyKind,
    TableInfo,
)
from ticdc_conformance.reference.values import Value

__all__ = [
    "read_change_event",
    "read_optional_table",
    "read_table",
    "write_change_event",
    "write_table",
]

_FLOAT_TYPES = frozenset({"float", "double"})
_COLUMN_OPTIONAL = {
    "unsigned",
    "nullable",
    "charset",
    "collation",
    "length",
    "decimal",
    "elements",
    "default",
    "generated",
    "key",
    "type_code",
    "flags",
    "zerofill",
    "auto_increment",
    "on_update_now",
    "comment",
    "column_id",
}
_TABLE_OPTIONAL = ("table_id", "partition_id", "schema_version", "charset")
_TABLE_INFOS = ("table_info", "pre_table_info")
_GENERATED: tuple[Generated, ...] = ("stored", "virtual")
_KEYS: tuple[KeyKind, ...] = ("primary", "unique", "multiple")


def _type(name: str, path: Path) -> MySQLType:
    known = type_named(name)
    if known is None:
        fail(f"unknown MySQL type {name!r}", path)
    return known


def _read_column(raw: Json, path: Path) -> ColumnInfo:
    column = members(raw, path, ("name", "type"), _COLUMN_OPTIONAL)
    elements = column.optional_strings("elements")
    try:
        return ColumnInfo(
            name=column.get("name", str),
            type=_type(column.get("type", str), path),
            unsigned=column.get_or("unsigned", bool, default=False),
            nullable=column.optional("nullable", bool),
            charset=column.optional("charset", str),
            collation=column.optional("collation", str),
            length=column.optional("length", int),
            decimal=column.optional("decimal", int),
            elements=elements,
            default=read_value(column.obj.get("default"), column.at("default")),
            generated=column.choice("generated", _GENERATED),
            key=column.choice("key", _KEYS),
            type_code=column.optional("type_code", int),
            flags=column.optional("flags", int),
            zerofill=column.get_or("zerofill", bool, default=False),
            auto_increment=column.get_or("auto_increment", bool, default=False),
            on_update_now=column.get_or("on_update_now", bool, default=False),
            comment=column.optional("comment", str),
            column_id=column.optional("column_id", int),
        )
    except FormError:
        raise
    except ValueError as error:
        fail(str(error), path)


def _write_column(column: ColumnInfo) -> dict[str, Json]:
    out: dict[str, Json] = {"name": column.name, "type": column.type}
    defaults = ColumnInfo(name="", type="int")
    for name in sorted(_COLUMN_OPTIONAL):
        value = getattr(column, name)
        if value != getattr(defaults, name):
            out[name] = list(value) if isinstance(value, tuple) else write_value(value)
    return out


def _read_index(raw: Json, path: Path) -> IndexInfo:
    index = members(raw, path, ("name", "columns"), ("primary", "unique"))
    names = index.strings("columns")
    return IndexInfo(
        name=index.get("name", str),
        columns=names,
        primary=index.get_or("primary", bool, default=False),
        unique=index.get_or("unique", bool, default=False),
    )


def read_table(raw: Json, path: Path) -> TableInfo:
    """Table metadata from its JSON form (docs/change-events.md#table-metadata)."""
    table = members(raw, path, ("schema", "name", "columns"), ("indexes", *_TABLE_OPTIONAL))
    columns = table.array("columns")
    indexes = table.array("indexes") if "indexes" in table else []
    index_infos = tuple(_read_index(item, (*path, "indexes", i)) for i, item in enumerate(indexes))
    column_infos = tuple(_read_column(c, (*path, "columns", i)) for i, c in enumerate(columns))
    try:
        return TableInfo(
            schema=table.get("schema", str),
            name=table.get("name", str),
            columns=column_infos,
            indexes=index_infos,
            table_id=table.optional("table_id", int),
            partition_id=table.optional("partition_id", int),
            schema_version=table.optional("schema_version", int),
            charset=table.optional("charset", str),
        )
    except FormError:
        raise
    except ValueError as error:
        fail(str(error), path)


def read_optional_table(obj: Members, name: str) -> TableInfo | None:
    """The table metadata member ``name`` of a DDL, absent or null meaning none."""
    raw = obj.obj.get(name)
    return None if raw is None else read_table(raw, (name,))


def write_table(table: TableInfo) -> dict[str, Json]:
    """The JSON form of table metadata."""
    out: dict[str, Json] = {
        "schema": table.schema,
        "name": table.name,
        "columns": [_write_column(c) for c in table.columns],
    }
    if table.indexes:
        out["indexes"] = [
            {"name": i.name, "columns": list(i.columns), "primary": i.primary, "unique": i.unique}
            for i in table.indexes
        ]
    for name in _TABLE_OPTIONAL:
        if getattr(table, name) is not None:
            out[name] = getattr(table, name)
    return out


def _read_image(raw: Json, table: TableInfo, path: Path) -> tuple[Value, ...]:
    if type(raw) is not dict:
        fail("expected an object of column values", path)
    unknown = [name for name in raw if table.position(name) is None]
    if unknown:
        fail("no such column in the table", (*path, unknown[0]))
    image: list[Value] = []
    for column in table.columns:
        if column.name not in raw:
            if column.is_virtual:
                image.append(None)
                continue
            fail(f"missing column {column.name!r}", path)
        value = read_value(raw[column.name], (*path, column.name))
        if column.type in _FLOAT_TYPES and isinstance(value, int):
            value = float(value)
        image.append(value)
    return tuple(image)


def _write_image(table: TableInfo, image: tuple[Value, ...]) -> dict[str, Json]:
    return {
        column.name: write_value(value)
        for column, value in zip(table.columns, image, strict=True)
        if not column.is_virtual
    }


def read_change_event(raw: object, *, line: int | None = None) -> ChangeEvent:
    """A change event from its JSON form."""
    with at_line(line):
        kind = kind_of(raw)
        if kind == "resolved":
            obj = members(raw, (), ("kind", "commit_ts"), ())
            return ResolvedEvent(commit_ts=obj.get("commit_ts", int))
        if kind == "ddl":
            obj = ddl_members(raw, (), _TABLE_INFOS)
            return DDLEvent(
                commit_ts=obj.get("commit_ts", int),
                schema=obj.get("schema", str),
                table=obj.get("table", str),
                query=obj.get("query", str),
                ddl_type=obj.get("ddl_type", int),
                table_info=read_optional_table(obj, "table_info"),
                pre_table_info=read_optional_table(obj, "pre_table_info"),
            )
        if kind == "row":
            obj = members(
                raw,
                (),
                ("kind", "commit_ts", "table", "op"),
                ("before", "after", "row_id", "start_ts"),
            )
            commit_ts = obj.get("commit_ts", int)
            table = read_table(obj.obj["table"], ("table",))
            before, after = obj.obj.get("before"), obj.obj.get("after")
            return RowChangedEvent(
                commit_ts=commit_ts,
                table=table,
                op=operation(obj.get("op", str)),
                before=None if before is None else _read_image(before, table, ("before",)),
                after=None if after is None else _read_image(after, table, ("after",)),
                row_id=obj.optional("row_id", int),
                start_ts=obj.optional("start_ts", int),
            )
        raise FormError("kind must be row, ddl or resolved", path=("kind",))


def write_change_event(event: ChangeEvent) -> dict[str, Json]:
    """The JSON form of a change event."""
    if isinstance(event, ResolvedEvent):
        return {"kind": "resolved", "commit_ts": event.commit_ts}
    if isinstance(event, DDLEvent):
        ddl = write_ddl(event)
        for name in sorted(_TABLE_INFOS):
            info = getattr(event, name)
            if info is not None:
                ddl[name] = write_table(info)
        return ddl
    out: dict[str, Json] = {
        "kind": "row",
        "commit_ts": event.commit_ts,
        "table": write_table(event.table),
        "op": event.op,
    }
    if event.before is not None:
        out["before"] = _write_image(event.table, event.before)
    if event.after is not None:
        out["after"] = _write_image(event.table, event.after)
    if event.row_id is not None:
        out["row_id"] = event.row_id
    if event.start_ts is not None:
        out["start_ts"] = event.start_ts
    return out
