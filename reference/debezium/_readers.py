"""Column readers chosen once per field schema: ``read_column`` and its validity type, fused.

A Debezium message carries its schema, and a table's messages carry the same one. The
decoder asks ``column_reader`` once per field schema for a reader that does what
``read_column`` then ``field_type`` do for each value of that field, with everything the field
schema alone settles (``tidb_type``, the logical type and its reader, the MySQL type and its
code, the column type a value is checked against, whether a value may stand for the default)
worked out once. A reader returns the decoded column and, when its value is not valid for the
column type the field states (``validity.problem``), that type; ``None`` when the value is
valid or no check applies (a NULL, a default TiCDC may have left unconverted, a field without
a MySQL type). It raises ``ValueError`` exactly where ``read_column`` does. The check is
chosen once too, and left out where the reader's values are valid by construction.

``schema_text`` finds the text of a document's ``schema`` member, the key under which the
decoder keeps the readers it chose for that schema, and the schema itself: a document whose
schema text is a known one has only the part before it read (``known_schema``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial

from ticdc_conformance.reference._gojson import GoJsonReader
from ticdc_conformance.reference.debezium._read import (
    LOGICAL_TYPES,
    SCHEMA_TYPES,
    Read,
    field_type,
    read_column,
    settled_read,
)
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Json, JsonObject
from ticdc_conformance.reference.mysql import TYPE_CODES, type_named
from ticdc_conformance.reference.validity import Check, ColumnType, check_of, problem
from ticdc_conformance.reference.values import Value

__all__ = [
    "Reader",
    "column_reader",
    "json_decoder",
    "keep_schema",
    "known_schema",
    "schema_text",
    "twice_count",
    "whole_value",
]

Reader = Callable[[str, Json, "bool | None"], tuple[DecodedColumn, "ColumnType | None"]]
"""(column name, payload value, handle key) → the column and, if its value is invalid, its type."""

_YEAR = "io.debezium.time.Year"
_SCHEMA_MEMBER = ',"schema":'


def _untyped(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
    # a field schema without a type: the JSON scalar as it is (read_column's untyped path)
    del field, tidb
    column = read_column("", raw, None, None)
    return column.value, column.ambiguity


def _unknown(schema_type: Json) -> Read:
    def unknown(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
        del raw, field, tidb
        raise ValueError(f"unknown schema type {schema_type!r}")

    return unknown


def _value_reader(field: JsonObject, logical: Json) -> Read:
    """``_read._value``'s choice for a non-null value, made once."""
    if type(logical) is str and logical in LOGICAL_TYPES:
        return LOGICAL_TYPES[logical][1]
    if "type" not in field:
        return _untyped
    schema_type = field["type"]
    read = SCHEMA_TYPES.get(schema_type) if type(schema_type) is str else None
    return _unknown(schema_type) if read is None else read


def _slow(field: JsonObject) -> Reader:
    """The reader for a field schema whose parts do not settle once: per value, as before."""

    def slow(
        name: str, raw: Json, handle_key: bool | None
    ) -> tuple[DecodedColumn, ColumnType | None]:
        column = read_column(name, raw, field, handle_key)
        if column.value is None or column.ambiguity == "null-or-default":
            return column, None
        if "default" in field and column.mysql_type == "year":
            value = column.value
            if type(value) is int and value < 100:
                return column, None
        ctype = field_type(field, column.mysql_type)
        if ctype is None or problem(column.value, ctype) is None:
            return column, None
        return column, ctype

    return slow


_column = partial(tuple.__new__, DecodedColumn)
_ALWAYS_VALID: dict[str, str] = {
    "io.debezium.time.Date": "date",
    "io.debezium.time.Timestamp": "datetime",
    "io.debezium.time.MicroTimestamp": "datetime",
}
"""Logical types whose every value is valid for one column type, when Debezium's field schema
states it (its types have no fsp): ``read_date`` and ``read_datetime`` give a real calendar
date of year 0–9999 (they raise otherwise), a time of day, and 3 or 6 fraction digits."""


_MEMBER_TYPES = ("io.debezium.data.Enum", "io.debezium.data.EnumSet")


def _memo(read: Read) -> Read:
    """``read`` for one field schema, remembering what each text it read gave.

    An ENUM or SET member's index depends only on its text and the field's ``allowed`` list,
    and a column holds a few distinct members: each is placed once (a value that raises is
    not kept, and raises again).
    """
    seen: dict[str, tuple[Value, str | None]] = {}

    def memo(raw: Json, field: JsonObject, tidb: str | None) -> tuple[Value, str | None]:
        if type(raw) is str:
            known = seen.get(raw)
            if known is not None:
                return known
            result = read(raw, field, tidb)
            if len(seen) < _MEMO_SIZE:
                seen[raw] = result
            return result
        return read(raw, field, tidb)

    return memo


_MEMO_SIZE = 256


def _mysql_type(field: JsonObject, logical: Json, tidb: str | None) -> str | None:
    # read_column's _mysql_type: tidb_type, else the logical type's, else bit for a boolean
    mysql_type = tidb
    if type(logical) is str and not tidb:
        entry = LOGICAL_TYPES.get(logical)
        mysql_type = None if entry is None else entry[0]
    if mysql_type is None and field.get("type") == "boolean":
        mysql_type = "bit"
    return mysql_type


def column_reader(field: JsonObject) -> Reader:
    """The reader for the values of one field schema (module docstring)."""
    tidb = field.get("tidb_type")
    if tidb is not None and type(tidb) is not str:
        return _slow(field)  # read_column raises for every value
    logical = field.get("name")
    mysql_type = _mysql_type(field, logical, tidb)
    known = type_named(mysql_type.removesuffix(" unsigned")) if mysql_type else None
    type_code = None if known is None else TYPE_CODES[known]
    try:
        ctype = field_type(field, mysql_type)
    except Exception:  # noqa: BLE001  # whatever it raises, it raises per value, as before
        return _slow(field)
    check = None if ctype is None else check_of(ctype)
    if ctype is not None and type(logical) is str and _ALWAYS_VALID.get(logical) == ctype.name:
        check = None
    settled = settled_read(field, logical, tidb)
    # a NULL is written as the column's default (§5.3), which TiCDC does not convert: a YEAR
    # default 5 stays 5 while the schema says 2005; such a value is not checked
    year_default = "default" in field and mysql_type == "year"
    has_default = field.get("optional") is True and "default" in field
    column = type_code, mysql_type, ctype, check
    if settled is None or logical == _YEAR or has_default or year_default:
        return _full_reader(field, logical, tidb, settled, column)
    return _settled_reader(*settled, column)


_Kind = tuple[int | None, str | None, ColumnType | None, Check | None]
"""What a field schema settles for its column: type code, MySQL type, column type, check."""


def _full_reader(
    field: JsonObject,
    logical: Json,
    tidb: str | None,
    settled: tuple[Callable[[Json], Value], str | None] | None,
    column_kind: _Kind,
) -> Reader:
    """``read_column`` and the check, with everything the field settles worked out."""
    type_code, mysql_type, ctype, check = column_kind
    read = _value_reader(field, logical)
    if logical in _MEMBER_TYPES:
        read = _memo(read)
    exact, settled_ambiguity = (None, None) if settled is None else settled
    year_text = logical == _YEAR  # only classic's default for a NULL is a string
    has_default = field.get("optional") is True and "default" in field
    default = field.get("default")
    default_type = type(default)
    year_default = "default" in field and mysql_type == "year"

    def reader(
        name: str, raw: Json, handle_key: bool | None
    ) -> tuple[DecodedColumn, ColumnType | None]:
        if raw is None:
            return _column((name, None, type_code, None, handle_key, mysql_type, None)), None
        if exact is not None:
            value, ambiguity = exact(raw), settled_ambiguity
        else:
            value, ambiguity = read(raw, field, tidb)
        if (year_text and type(raw) is str) or (
            has_default and default == raw and default_type is type(raw)
        ):
            ambiguity = "null-or-default"
        column = _column((name, value, type_code, None, handle_key, mysql_type, ambiguity))
        if (
            check is None
            or value is None
            or ambiguity == "null-or-default"
            or (year_default and type(value) is int and value < 100)
            or check(value, ctype) is None  # type: ignore[arg-type]  # (set with check)
        ):
            return column, None
        return column, ctype

    return reader


def _settled_reader(
    exact: Callable[[Json], Value], ambiguity: str | None, column_kind: _Kind
) -> Reader:
    """The common field's reader: ``_full_reader`` with what such a field leaves out.

    A settled value (its ambiguity never ``null-or-default``), no default a NULL may stand
    for, not a YEAR.
    """
    type_code, mysql_type, ctype, check = column_kind

    def reader(
        name: str, raw: Json, handle_key: bool | None
    ) -> tuple[DecodedColumn, ColumnType | None]:
        if raw is None:
            return _column((name, None, type_code, None, handle_key, mysql_type, None)), None
        value = exact(raw)
        column = _column((name, value, type_code, None, handle_key, mysql_type, ambiguity))
        if check is None or value is None or check(value, ctype) is None:  # type: ignore[arg-type]
            return column, None
        return column, ctype

    return reader


def schema_text(text: str) -> str | None:
    """The text after the last ``,"schema":`` up to the closing brace, if the text ends so.

    In a valid JSON document ``,"schema":`` can stand only as a member name (the quote after a
    comma opens a string, and a string followed by a colon is a name). When the rest up to the
    document's last character is one whole JSON value (``whole_value``), that member belongs to
    the top-level object, so the text is its ``schema`` — unless the name stands there twice.
    """
    at = text.rfind(_SCHEMA_MEMBER)
    if at < 0 or not text.endswith("}"):
        return None
    return text[at + len(_SCHEMA_MEMBER) : -1]


_scanner = json.JSONDecoder()


def whole_value(text: str) -> bool:
    """Whether ``text`` is one JSON value from its first character to its last."""
    try:
        return _scanner.raw_decode(text)[1] == len(text)
    except (ValueError, RecursionError):
        return False


_twice = [0]
"""How many objects with a name twice have been read: a document that adds to it has its
schema read afresh (``_decode``)."""


def _first_wins(pairs: list[tuple[str, Json]]) -> Json:
    # classic TiCDC can write a member twice (a binary column's default, see _payload); the
    # first one is the value the schema describes
    members: JsonObject = dict(pairs)
    if len(members) == len(pairs):
        return members  # no name twice: the common case, built in C
    _twice[0] += 1
    members = {}
    for name, value in pairs:
        members.setdefault(name, value)
    return members


json_decoder = GoJsonReader(object_pairs_hook=_first_wins)
"""Reads a document; a member name twice keeps its first value and adds to ``twice_count``."""


def twice_count() -> int:
    """How many objects with a name twice have been read so far."""
    return _twice[0]


def keep_schema(key: str, schema: Json) -> bool:
    """Keep ``schema`` (an object) under its text ``key``; whether it was kept."""
    if type(schema) is not dict:
        return False
    if len(_SCHEMAS) >= 256:
        _SCHEMAS.clear()
    _SCHEMAS[key] = schema
    return True


_SCHEMAS: dict[str, JsonObject] = {}
"""Schemas by their text, each read once: a table's messages share their schema."""


def known_schema(text: str, key: str) -> JsonObject | None:
    """The document read without its schema, when that schema is a known one (``_SCHEMAS``).

    ``text`` ends in ``,"schema":`` ``key`` ``}``; what comes before, closed by a brace, must
    read as an object with a payload and no other schema member (a name twice: the first one
    is the value). Then ``text`` is that object with ``key`` as its last member, the only
    ``schema``. Otherwise (``None``) the whole text is read as it is, with its own errors.
    """
    schema = _SCHEMAS.get(key)
    if schema is None:
        return None
    try:
        document = json_decoder.decode(text[: len(text) - len(key) - 11] + "}")
    except (ValueError, RecursionError):
        return None
    if type(document) is not dict or "payload" not in document or "schema" in document:
        return None
    document["schema"] = schema
    return document
