"""Typing plans: how ``SimpleDecoder`` types the images of one table schema's DMLs (§4.3).

A plan is made once per table schema and kept: one reader per column (``_readers``), in schema
order, and the schema's column names. An image (``data`` or ``old``) holding exactly the
schema's columns, the usual case, is typed in one pass over the readers, compiled for the
schema (``_compiled``); anything else (a handle-key-only image, an unknown column), and any
value a reader refuses or finds invalid, takes the full path, which says which value and why,
column by column as TiCDC's consumer. An UPDATE's old image is typed only where it differs from
the new one (``parsed_update``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Fail, JsonObject
from ticdc_conformance.reference.simple._compiled import (
    Column,
    Image,
    Row,
    Update,
    image_function,
    row_function,
    update_function,
)
from ticdc_conformance.reference.simple._json import timestamp_object
from ticdc_conformance.reference.simple._readers import (
    Invalid,
    Quick,
    Reader,
    column_quick,
    timestamp_test,
)
from ticdc_conformance.reference.simple._rows import at_once
from ticdc_conformance.reference.simple._values import Raw
from ticdc_conformance.reference.simple._wire import Columns
from ticdc_conformance.reference.tables import ColumnInfo, TableInfo
from ticdc_conformance.reference.validation import info_type
from ticdc_conformance.reference.validity import ColumnType
from ticdc_conformance.reference.values import Value, valid_timestamp

__all__ = ["Found", "Plan", "decoded_column"]

Found = list[tuple[str, str, Value]]
"""Invalid values as found: the image (``old``, ``data``), the column, the value."""

decoded_column = partial(tuple.__new__, DecodedColumn)
"""A ``DecodedColumn`` from all its members in order, without ``__new__``'s keyword handling."""
_ABSENT = object()


def _no_update(data: Columns, old: Columns) -> None:
    """An Avro plan's ``parsed_update``: none (``Plan.parsed_update``)."""
    del data, old


def _object_column(reader: Column, column: ColumnInfo, ctype: ColumnType) -> Column:
    """A TIMESTAMP column of a JSON image as parsed: its reader takes the JSON object."""
    test = timestamp_test(column, ctype)
    quick = None if test is None else Quick("object", (test,))
    return Column(reader.name, reader.mysql_type, _from_object(reader.read, test), quick)


def _from_object(read: Reader, test: Callable[[str], object] | None) -> Reader:
    """``read`` of a TIMESTAMP column taking its JSON ``{location, value}`` object as parsed.

    An object whose text passes the reader's ``test`` is the value as it is: it is built at
    once (the text has ``TimestampValue``'s form); any other goes the whole way.
    """

    def read_object(raw: Raw | JsonObject) -> Value:
        if type(raw) is dict and test is not None and len(raw) == 2:
            # two members, both there and strings: exactly location and value
            text, zone = raw.get("value"), raw.get("location")
            if type(text) is str and type(zone) is str and test(text):
                return valid_timestamp(text, zone)
        if isinstance(raw, dict):
            return read(timestamp_object(raw))
        return read(raw)

    return read_object


class Plan:
    """How one table schema types a DML image: readers chosen per column, once.

    The one-pass typing of images is compiled for the schema (``_compiled``).
    """

    __slots__ = ("_columns", "_image", "_names", "parsed_image", "parsed_row", "parsed_update")

    def __init__(self, table: TableInfo, *, avro: bool) -> None:
        columns = table.columns
        ctypes = [info_type(column, raw_text=avro) for column in columns]
        made = [
            column_quick(column, ctype, avro=avro)
            for column, ctype in zip(columns, ctypes, strict=True)
        ]
        readers = [
            Column(column.name, column.type, read, quick)
            for column, (read, quick) in zip(columns, made, strict=True)
        ]
        self._columns = tuple((c.name, c.mysql_type, c.read) for c in readers)
        self._names = frozenset(column.name for column in columns)
        self._image = image_function(readers)
        self.parsed_image: Image = self._image
        """A JSON image as parsed (``Wire.unchecked``) typed at once, or ``None``.

        ``None`` unless the image holds every column and every value is valid: the message is
        then read in full, which words any error. Every reader refuses a JSON array, number,
        boolean or object (but a TIMESTAMP column's object), so no value the full read would
        refuse passes. (An Avro image as read is its own: the plan's one-pass image.)
        """
        self.parsed_update: Update = _no_update
        """An UPDATE's two JSON images as parsed, typed at once (``parsed_image``): new, old.

        An UPDATE mostly changes a few columns: where the old image holds the very value the
        new one does (equal JSON: a string, null or the same TIMESTAMP object), the old column
        is the new one, typed once.

        JSON only: its readers take strings, null and TIMESTAMP objects of strings, where equal
        means the same value. Avro's numbers are equal across kinds (``0.0 == -0.0``,
        ``1 == True``), so an Avro plan answers ``None``.
        """
        general: Row = partial(at_once, plan=self)
        self.parsed_row: Row = general
        """The row of a DML as parsed (``Wire.unchecked``), typed at once, or ``None``
        (``_rows.at_once``; a JSON UPDATE of both images in one compiled call)."""
        if not avro:
            # a JSON image as parsed holds TIMESTAMP as its {location, value} object
            objects = [
                _object_column(reader, column, ctype) if column.type == "timestamp" else reader
                for column, ctype, reader in zip(columns, ctypes, readers, strict=True)
            ]
            if objects != readers:  # else the image function made above reads them already
                self.parsed_image = image_function(objects)
            self.parsed_update = update_function(objects)
            self.parsed_row = row_function(objects, general)

    def image(
        self, member: str, raw: Columns, version: int, fail: Fail, found: Found
    ) -> tuple[DecodedColumn, ...]:
        """The typed columns of one image in schema order; invalid values go to ``found``.

        ``fail`` is called for an unknown column or a value its column cannot hold.
        """
        typed = self._image(raw)
        return self._full(member, raw, version, fail, found) if typed is None else typed

    def _full(
        self, member: str, raw: Columns, version: int, fail: Fail, found: Found
    ) -> tuple[DecodedColumn, ...]:
        unknown = raw.keys() - self._names
        if unknown:
            fail(
                f"column {min(unknown)!r} is not in schema version {version}",
                (member, min(unknown)),
            )
        typed = []
        for name, mysql_type, read in self._columns:  # TiCDC's consumer: schema order
            given = raw.get(name, _ABSENT)
            if given is _ABSENT:
                continue  # virtual generated, or not a handle-key column
            value: Value = None
            try:
                value = read(given)  # type: ignore[arg-type]  # a Raw: only _ABSENT is not
            except Invalid as invalid:
                value = invalid.value
                found.append((member, name, value))
            except ValueError as error:
                fail(f"{mysql_type}: {error}", (member, name))
            typed.append(decoded_column((name, value, None, None, None, mysql_type, None)))
        return tuple(typed)
