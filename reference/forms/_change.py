"""The change-event form (docs/change-events.md)."""

from __future__ import annotations

from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, ResolvedEvent, RowChangedEvent
from ticdc_conformance.reference.forms._common import (
    Json,
    at_line,
    ddl_fields,
    fail,
    kind_of,
    object_with,
    read_value,
    typed,
    with_commit_ts,
    write_ddl,
    write_value,
)
from ticdc_conformance.reference.tables import ColumnInfo, IndexInfo, TableInfo
from ticdc_conformance.reference.values import Value

__all__ = [
    "read_change_event", "read_optional_table", "read_table", "write_change_event", "write_table",
]  # fmt: skip

_FLOAT_TYPES = frozenset({"float", "double"})
_COLUMN_OPTIONAL = {
    "unsigned", "nullable", "charset", "collation", "length", "decimal", "elements",
    "default", "generated", "key", "type_code", "flags", "zerofill", "auto_increment",
    "on_update_now", "comment", "column_id",
}  # fmt: skip
_TABLE_OPTIONAL = ("table_id", "partition_id", "schema_version", "charset")
_TABLE_INFOS = {"table_info", "pre_table_info"}


def _read_column(raw: Json, path: str) -> ColumnInfo:
    obj = object_with(raw, path, {"name", "type"}, _COLUMN_OPTIONAL)
    elements = obj.get("elements")
    if elements is not None and not (
        isinstance(elements, list) and all(isinstance(e, str) for e in elements)
    ):
        fail("expected a list of strings", f"{path}/elements")
    try:
        return ColumnInfo(
            name=typed(obj, "name", str, path, default=""),
            type=typed(obj, "type", str, path, default=""),
            unsigned=typed(obj, "unsigned", bool, path, default=False),
            nullable=typed(obj, "nullable", bool, path, default=None),
            charset=typed(obj, "charset", str, path, default=None),
            collation=typed(obj, "collation", str, path, default=None),
            length=typed(obj, "length", int, path, default=None),
            decimal=typed(obj, "decimal", int, path, default=None),
            elements=None if elements is None else tuple(elements),
            default=read_value(obj.get("default"), f"{path}/default"),
            generated=typed(obj, "generated", str, path, default=None),  # type: ignore[arg-type]
            key=typed(obj, "key", str, path, default=None),  # type: ignore[arg-type]
            type_code=typed(obj, "type_code", int, path, default=None),
            flags=typed(obj, "flags", int, path, default=None),
            zerofill=typed(obj, "zerofill", bool, path, default=False),
            auto_increment=typed(obj, "auto_increment", bool, path, default=False),
            on_update_now=typed(obj, "on_update_now", bool, path, default=False),
            comment=typed(obj, "comment", str, path, default=None),
            column_id=typed(obj, "column_id", int, path, default=None),
        )
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


def read_table(raw: Json, path: str) -> TableInfo:
    """Table metadata from its JSON form (docs/change-events.md#table-metadata)."""
    obj = object_with(raw, path, {"schema", "name", "columns"}, {"indexes", *_TABLE_OPTIONAL})
    columns = obj["columns"]
    if not isinstance(columns, list):
        fail("expected a list", f"{path}/columns")
    indexes = obj.get("indexes", [])
    if not isinstance(indexes, list):
        fail("expected a list", f"{path}/indexes")
    index_infos = []
    for i, index in enumerate(indexes):
        at = f"{path}/indexes/{i}"
        fields = object_with(index, at, {"name", "columns"}, {"primary", "unique"})
        names = fields["columns"]
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            fail("expected a list of column names", f"{at}/columns")
        index_infos.append(
            IndexInfo(
                name=typed(fields, "name", str, at, default=""),
                columns=tuple(names),
                primary=typed(fields, "primary", bool, at, default=False),
                unique=typed(fields, "unique", bool, at, default=False),
            )
        )
    column_infos = tuple(_read_column(c, f"{path}/columns/{i}") for i, c in enumerate(columns))
    try:
        return TableInfo(
            schema=typed(obj, "schema", str, path, default=""),
            name=typed(obj, "name", str, path, default=""),
            columns=column_infos,
            indexes=tuple(index_infos),
            table_id=typed(obj, "table_id", int, path, default=None),
            partition_id=typed(obj, "partition_id", int, path, default=None),
            schema_version=typed(obj, "schema_version", int, path, default=None),
            charset=typed(obj, "charset", str, path, default=None),
        )
    except ValueError as error:
        fail(str(error), path)


def read_optional_table(obj: dict[str, Json], name: str) -> TableInfo | None:
    """The table metadata member ``name`` of a DDL, absent or null meaning none."""
    raw = obj.get(name)
    return None if raw is None else read_table(raw, f"/{name}")


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


def _read_image(raw: Json, table: TableInfo, path: str) -> tuple[Value, ...]:
    if not isinstance(raw, dict):
        fail("expected an object of column values", path)
    unknown = [name for name in raw if table.position(name) is None]
    if unknown:
        fail("no such column in the table", f"{path}/{unknown[0]}")
    image: list[Value] = []
    for column in table.columns:
        if column.name not in raw:
            if column.is_virtual:
                image.append(None)
                continue
            fail(f"missing column {column.name!r}", path)
        value = read_value(raw[column.name], f"{path}/{column.name}")
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


def read_change_event(raw: Json, *, line: int | None = None) -> ChangeEvent:
    """A change event from its JSON form."""
    with at_line(line):
        kind = kind_of(raw)
        if kind == "resolved":
            return ResolvedEvent(commit_ts=with_commit_ts(raw, {"kind", "commit_ts"}, set())[1])
        if kind == "ddl":
            obj, commit_ts, schema, table_name, query, ddl_type = ddl_fields(
                raw, set(), _TABLE_INFOS
            )
            if ddl_type is None:
                fail("expected int", "/ddl_type")
            return DDLEvent(
                commit_ts=commit_ts, schema=schema, table=table_name, query=query,
                ddl_type=ddl_type, table_info=read_optional_table(obj, "table_info"),
                pre_table_info=read_optional_table(obj, "pre_table_info"),
            )  # fmt: skip
        if kind == "row":
            obj, commit_ts = with_commit_ts(
                raw, {"kind", "commit_ts", "table", "op"}, {"before", "after", "row_id"}
            )
            table = read_table(obj["table"], "/table")
            before, after = obj.get("before"), obj.get("after")
            return RowChangedEvent(
                commit_ts=commit_ts,
                table=table,
                op=typed(obj, "op", str, "", default=""),  # type: ignore[arg-type]
                before=None if before is None else _read_image(before, table, "/before"),
                after=None if after is None else _read_image(after, table, "/after"),
                row_id=typed(obj, "row_id", int, "", default=None),
            )
        raise FormError("kind must be row, ddl or resolved", path="/kind")


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
        "kind": "row", "commit_ts": event.commit_ts, "table": write_table(event.table),
        "op": event.op,
    }  # fmt: skip
    if event.before is not None:
        out["before"] = _write_image(event.table, event.before)
    if event.after is not None:
        out["after"] = _write_image(event.table, event.after)
    if event.row_id is not None:
        out["row_id"] = event.row_id
    return out
