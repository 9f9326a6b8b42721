"""Typing plans: how ``SimpleDecoder`` types the images of one table schema's DMLs (§4.3).

A plan is made once per table schema and kept: one reader per column (``_readers``), in
schema order, and the schema's column names. An image (``data`` or ``old``) holding exactly the
schema's columns, the usual case, is typed in one pass over the readers; anything else (a
handle-key-only image, an unknown column), and any value a reader refuses or finds invalid,
takes the full path, which says which value and why, column by column as TiCDC's consumer.
An UPDATE's old image is typed only where it differs from the new one (``parsed_update``).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from itertools import compress, repeat
from operator import call, itemgetter, ne

from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Fail, JsonObject
from ticdc_conformance.reference.mysql import MySQLType
from ticdc_conformance.reference.simple._json import timestamp_object
from ticdc_conformance.reference.simple._readers import (
    Invalid,
    Reader,
    column_reader,
    timestamp_test,
)
from ticdc_conformance.reference.simple._values import Raw
from ticdc_conformance.reference.simple._wire import Columns
from ticdc_conformance.reference.tables import TableInfo
from ticdc_conformance.reference.validation import info_type
from ticdc_conformance.reference.values import Value, valid_timestamp

__all__ = ["Found", "Plan", "decoded_column"]

Found = list[tuple[str, str, Value]]
"""Invalid values as found: the image (``old``, ``data``), the column, the value."""

decoded_column = partial(tuple.__new__, DecodedColumn)
"""A ``DecodedColumn`` from all its members in order, without ``__new__``'s keyword handling."""
_new_tuple = tuple.__new__
_COLUMN = repeat(DecodedColumn)
"""Endless ``DecodedColumn``: ``map(tuple.__new__, _COLUMN, members)`` makes columns without
the ``partial`` call of ``decoded_column`` for each one."""
_NONE = repeat(None)
"""Endless ``None``: the members of ``DecodedColumn`` Simple does not carry."""
_ABSENT = object()


def _picker(names: tuple[str, ...]) -> Callable[[Columns], tuple[Raw, ...]]:
    """The values of ``names`` in a map, in that order (``KeyError`` if one is missing)."""
    if len(names) > 1:
        return itemgetter(*names)
    if names:
        name = names[0]
        return lambda raw: (raw[name],)
    return lambda _: ()


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
    """How one table schema types a DML image: readers chosen per column, once."""

    __slots__ = (
        "_columns",
        "_count",
        "_indexes",
        "_json",
        "_names",
        "_objects",
        "_order",
        "_pick",
        "_readers",
        "_types",
    )

    def __init__(self, table: TableInfo, *, avro: bool) -> None:
        columns = table.columns
        self._order = tuple(column.name for column in columns)
        self._types: tuple[MySQLType, ...] = tuple(column.type for column in columns)
        ctypes = [info_type(column, raw_text=avro) for column in columns]
        self._readers: tuple[Reader, ...] = tuple(
            column_reader(column, ctype, avro=avro)
            for column, ctype in zip(columns, ctypes, strict=True)
        )
        self._objects = tuple(
            _from_object(read, timestamp_test(column, ctype))
            if column.type == "timestamp"
            else read
            for column, ctype, read in zip(columns, ctypes, self._readers, strict=True)
        )
        """The readers of a JSON image as parsed: TIMESTAMP as its ``{location, value}``."""
        self._columns = tuple(zip(self._order, self._types, self._readers, strict=True))
        self._names = frozenset(self._order)
        self._count = len(self._order)  # distinct names: TableInfo refuses a name twice
        self._pick = _picker(self._order)
        self._indexes = range(self._count)
        self._json = not avro
        """JSON images: equal values are equally valid (``parsed_update``)."""

    def image(
        self, member: str, raw: Columns, version: int, fail: Fail, found: Found
    ) -> tuple[DecodedColumn, ...]:
        """The typed columns of one image in schema order; invalid values go to ``found``.

        ``fail`` is called for an unknown column or a value its column cannot hold.
        """
        typed = self._at_once(raw, self._readers)
        return self._full(member, raw, version, fail, found) if typed is None else typed

    def parsed_image(self, raw: Columns) -> tuple[DecodedColumn, ...] | None:
        """A JSON image as parsed (``Wire.unchecked``) typed at once, or ``None``.

        ``None`` unless the image holds every column and every value is valid: the message is
        then read in full, which words any error. Every reader refuses a JSON array, number,
        boolean or object (but a TIMESTAMP column's object), so no value the full read would
        refuse passes.
        """
        return self._at_once(raw, self._objects)

    def parsed_update(
        self, data: Columns, old: Columns
    ) -> tuple[tuple[DecodedColumn, ...], tuple[DecodedColumn, ...]] | None:
        """An UPDATE's two JSON images as parsed, typed at once (``parsed_image``): new, old.

        An UPDATE mostly changes a few columns: where the old image holds the very value the
        new one does (equal JSON: a string, null or the same TIMESTAMP object), the old column
        is the new one, typed once. Only when most of them differ are both typed in full.

        JSON only: its readers take strings, null and TIMESTAMP objects of strings, where equal
        means the same value. Avro's numbers are equal across kinds (``0.0 == -0.0``,
        ``1 == True``), so an Avro plan answers ``None``.
        """
        if not self._json or len(data) != self._count or len(old) != self._count:
            return None
        try:
            news, olds = self._pick(data), self._pick(old)
        except KeyError:
            return None
        after = self._typed(news, self._objects)
        if after is None:
            return None
        changed = tuple(map(ne, olds, news))
        if sum(changed) * 2 > self._count:
            before = self._typed(olds, self._objects)
            return None if before is None else (after, before)
        typed = list(after)
        try:  # a value equal to a valid one is valid: only the changed ones are read
            values = map(call, compress(self._objects, changed), compress(olds, changed))
            names, types = compress(self._order, changed), compress(self._types, changed)
            members = zip(names, values, _NONE, _NONE, _NONE, types, _NONE, strict=False)
            columns = map(_new_tuple, _COLUMN, members)
            for index, column in zip(compress(self._indexes, changed), columns, strict=True):
                typed[index] = column
        except (Invalid, ValueError, KeyError):
            return None
        return after, tuple(typed)

    def _at_once(
        self, raw: Columns, readers: tuple[Reader, ...]
    ) -> tuple[DecodedColumn, ...] | None:
        if len(raw) != self._count:
            return None
        try:  # as many members as columns, none missing (else KeyError): the same names
            picked = self._pick(raw)
        except KeyError:
            return None
        return self._typed(picked, readers)

    def _typed(
        self, picked: tuple[Raw, ...], readers: tuple[Reader, ...]
    ) -> tuple[DecodedColumn, ...] | None:
        """The columns of an image's values in schema order, or ``None`` if one is refused."""
        try:
            values = map(call, readers, picked)
            members = zip(
                self._order, values, _NONE, _NONE, _NONE, self._types, _NONE, strict=False
            )
            return tuple(map(_new_tuple, _COLUMN, members))
        except (Invalid, ValueError, KeyError):
            return None  # the full path finds the value again and says what it is

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
