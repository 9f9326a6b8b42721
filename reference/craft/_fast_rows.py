"""A row written with its values checked in the same pass, for rows that are valid.

The encoder first checks every value of a row (``validation.check_row``), then writes the
chosen columns (``_rows``). ``fast_row`` does both in one pass over each image, with one
function per column chosen once per table: a cheap test that is sufficient, never necessary,
for the value to pass ``check_row``'s check of its column type *and* to be written by the
column's value writer without error, then the write; values the test does not judge take the
check and the writer themselves. ``fast_row`` answers only for rows it writes through: a row
with any value a test or check refuses, a writer that raises, NULL in a primary key column, an
image of another length than the table's columns, a table the full way refuses before any value
(no names, a partition outside int64, a name that is not Unicode, no column to write), or with
values unchecked (``validation.unchecked_values``) gives ``None``, and the encoder takes the
full way, which raises the error the row deserves. What it returns is what the full way
returns for the row: the same group tails and the same size estimate.

Cheap tests, for the column types ``validity`` states from a table (with the writers ``_values``
picks by type code):

* integers, YEAR, BIT, ENUM, SET: an ``int`` (not a ``bool``) inside both the type's range and
  the writer's (int64 ZigZag, or uint64);
* FLOAT, DOUBLE: a ``float`` of at most float32's, float64's largest magnitude;
* DATE, DATETIME: text ``_fast_checks`` proves valid (DATETIME's fsp 0–6); TIMESTAMP: the same,
  years 1970–2037, as text or a ``TimestampValue``;
* CHAR, VARCHAR, TEXT types: ASCII text, or bytes, no longer than a declared length;
  BINARY, VARBINARY, BLOB types: bytes no longer than a declared length;
* DECIMAL: a ``DecimalValue`` whose integer part's characters (sign and leading zeros
  counted) and decimals fit the declared and the greatest precision and scale;
* JSON: text ``_fast_checks.json_reads`` reads (with orjson installed).
"""

from __future__ import annotations

import struct
import sys
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ticdc_conformance.reference._fast_checks import MAX_FSP, is_date, is_datetime, json_reads
from ticdc_conformance.reference.craft._config import Config
from ticdc_conformance.reference.craft._rows import (
    HEADER_ESTIMATE,
    NEW_GROUP,
    NO_PARTITION,
    OLD_GROUP,
    ROW,
    Group,
    Header,
    Layout,
    Row,
    layout,
)
from ticdc_conformance.reference.craft._values import (
    Writer,
    _write_bytes,
    _write_decimal,
    _write_double,
    _write_float,
    _write_integer,
    _write_text,
    _write_uvarint,
    _write_year,
)
from ticdc_conformance.reference.craft.primitives import write_uvarint
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    INT64,
    INTEGER_TYPES,
    TEXT_TYPES,
    UINT64,
    integer_range,
)
from ticdc_conformance.reference.tables import UNSIGNED_FLAG, ColumnInfo, Profile, TableInfo
from ticdc_conformance.reference.validation import checking_values, info_type
from ticdc_conformance.reference.validity import (
    FLOAT32_MAX,
    MAX_DECIMAL_DIGITS,
    MAX_DECIMAL_SCALE,
    Check,
    ColumnType,
    check_of,
)
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["fast_row"]


class _Slow(Exception):  # noqa: N818 - a signal to take the full way, not an error shown
    """A value the one-pass write does not take."""


Put = Callable[[Value], bytes | None]
"""A column's check and write of a non-null value in one: the value bytes, or ``_Slow``."""

_new = tuple.__new__
"""``_new(Group, members)``: a named tuple from all its members, without its ``__new__``."""
_ONE_BYTE = [bytes((value,)) for value in range(0x80)]
_FLOAT64 = struct.Struct("<d")
_FLOAT32 = struct.Struct("<f")


def _uvarint(value: int) -> bytes:
    if value < 0x80:
        return _ONE_BYTE[value]
    out = bytearray()
    write_uvarint(out, value)
    return bytes(out)


class _Uvarints(dict[int, bytes]):
    """Uvarints by value, each made once (the values below 2^16: the memory stays bounded)."""

    def __missing__(self, value: int) -> bytes:
        made = _uvarint(value)
        if value < 1 << 16:
            self[value] = made
        return made


_UVARINTS = _Uvarints(enumerate(_ONE_BYTE))


def _checked(ctype: ColumnType, check: Check, write: Writer | None, flag: int) -> Put:
    """The check of ``ctype`` and ``write`` as they are (no cheap test)."""

    def put(value: Value) -> bytes | None:
        if check(value, ctype) is not None:
            raise _Slow
        return None if write is None else write(value, flag)

    return put


def _integer(ctype: ColumnType, write: Writer, flag: int) -> Put | None:
    name = ctype.name
    if name in INTEGER_TYPES and write is _write_integer:
        if ctype.unsigned is None:  # validity takes either range: together, one span
            signed = integer_range(name, unsigned=False)
            allowed = range(signed.start, integer_range(name, unsigned=True).stop)
        else:
            allowed = integer_range(name, unsigned=ctype.unsigned)
        zigzag = not flag & UNSIGNED_FLAG
        written = UINT64 if not zigzag else INT64
    elif name == "year" and write is _write_year:
        allowed, zigzag, written = range(1901, 2156), True, INT64  # and 0, below
    elif write is _write_uvarint and name in ("bit", "enum", "set"):
        zigzag, written = False, UINT64
        members = None if ctype.elements is None else len(ctype.elements)
        if name == "bit":
            width = 64 if ctype.length is None else ctype.length
            if not 1 <= width <= 64:
                return None
            allowed = range(2**width)
        elif name == "enum":
            allowed = range(65536 if members is None else members + 1)
        else:
            allowed = range(2 ** (64 if members is None else members))
    else:
        return None
    low, high = max(allowed.start, written.start), min(allowed.stop, written.stop)
    zero = name == "year"

    def put(value: Value) -> bytes | None:
        if type(value) is not int or not (low <= value < high or (zero and value == 0)):
            raise _Slow
        if zigzag:
            value = (value << 1) ^ (value >> 63)
        return _UVARINTS[value]

    return put


def _float(ctype: ColumnType, write: Writer) -> Put | None:
    if ctype.name == "double" and write is _write_double:
        largest, narrow = sys.float_info.max, False
    elif ctype.name == "float" and write is _write_float:
        largest, narrow = FLOAT32_MAX, True
    else:
        return None
    smallest = -largest
    pack, pack32, unpack32 = _FLOAT64.pack, _FLOAT32.pack, _FLOAT32.unpack

    def put(value: Value) -> bytes | None:
        if type(value) is not float or not smallest <= value <= largest:  # NaN fails too
            raise _Slow
        # TiCDC holds FLOAT as float32 and widens it to float64 on the wire (§3.3)
        return pack(unpack32(pack32(value))[0] if narrow else value)

    return put


def _temporal(ctype: ColumnType, write: Writer) -> Put | None:
    if write is not _write_text:
        return None
    fsp = ctype.scale
    if ctype.name == "date":

        def put_date(value: Value) -> bytes | None:
            if type(value) is str and is_date(value):
                return value.encode()
            raise _Slow

        return put_date
    if ctype.name not in ("datetime", "timestamp") or (fsp is not None and fsp > MAX_FSP):
        return None
    stamp = ctype.name == "timestamp"

    def put(value: Value) -> bytes | None:
        text = value.text if stamp and type(value) is TimestampValue else value
        if (
            type(text) is str
            and (not stamp or "1970" <= text[:4] <= "2037")
            and is_datetime(text, fsp)
        ):
            return text.encode()
        raise _Slow

    return put


def _string(ctype: ColumnType, write: Writer) -> Put | None:
    if write is not _write_bytes:
        return None
    limit = sys.maxsize if ctype.length is None else ctype.length
    if ctype.name in BINARY_TYPES:

        def put_bytes(value: Value) -> bytes | None:
            if type(value) is bytes and len(value) <= limit:
                return value
            raise _Slow

        return put_bytes
    if ctype.name not in TEXT_TYPES or not ctype.raw_text:
        return None

    def put_text(value: Value) -> bytes | None:
        if type(value) is str:
            if value.isascii() and len(value) <= limit:
                return value.encode()
        elif type(value) is bytes and len(value) <= limit:  # the bound: 4 bytes a character
            return value
        raise _Slow

    return put_text


def _decimal(ctype: ColumnType, write: Writer) -> Put | None:
    if ctype.name != "decimal" or write is not _write_decimal:
        return None
    scale, length = ctype.scale, ctype.length
    most_decimals = MAX_DECIMAL_SCALE if scale is None else min(scale, MAX_DECIMAL_SCALE)
    most_whole = MAX_DECIMAL_DIGITS if length is None else length - (scale or 0)

    def put(value: Value) -> bytes | None:
        if type(value) is DecimalValue:
            text = value.text
            dot = text.find(".")
            # the integer part's characters, with sign and leading zeros: at least its digits
            whole, decimals = (len(text), 0) if dot < 0 else (dot, len(text) - dot - 1)
            if (
                decimals <= most_decimals
                and whole <= most_whole
                and whole + decimals <= MAX_DECIMAL_DIGITS
            ):
                return text.encode()
        raise _Slow

    return put


def _json(ctype: ColumnType, write: Writer) -> Put | None:
    if ctype.name != "json" or write is not _write_text:
        return None

    def put(value: Value) -> bytes | None:
        if type(value) is str and json_reads(value):
            return value.encode()
        raise _Slow

    return put


def _put(column: ColumnInfo, write: Writer | None, flag: int) -> Put:
    ctype = info_type(column, raw_text=True)
    check = check_of(ctype)
    if write is not None:
        for fast in (
            _integer(ctype, write, flag),
            _float(ctype, write),
            _temporal(ctype, write),
            _string(ctype, write),
            _decimal(ctype, write),
            _json(ctype, write),
        ):
            if fast is not None:
                return fast
    return _checked(ctype, check, write, flag)


class _Plan(NamedTuple):
    """One table's one-pass writing of its images (for one profile and keys-only choice)."""

    puts: tuple[Put, ...]
    """Every column's check and write; columns not written are only checked."""
    chosen: list[int] | None
    """The columns written, ``None`` for all of them."""
    keys: tuple[int, ...]
    """Primary key columns: NULL there is refused."""
    made: Layout
    names: tuple[bytes, ...]
    header_size: int
    schema: bytes
    name: bytes
    partition: int


_plans: dict[tuple[int, Profile, bool], tuple[TableInfo, _Plan | None]] = {}
"""Recent tables' plans by (id of the table, profile, keys only), ``None`` for a table the
full way writes; a table is kept beside its plan, so the id is not reused while it lives."""


def _plan(table: TableInfo, profile: Profile, *, keys_only: bool) -> _Plan | None:
    key = (id(table), profile, keys_only)
    cached = _plans.get(key)
    if cached is not None and cached[0] is table:
        return cached[1]
    plan = _make_plan(table, profile, keys_only)
    if len(_plans) >= 64:
        _plans.clear()
    _plans[key] = (table, plan)
    return plan


def _make_plan(table: TableInfo, profile: Profile, keys_only: bool) -> _Plan | None:
    partition = NO_PARTITION if table.partition_id is None else table.partition_id
    if not table.schema or not table.name or partition not in INT64:
        return None
    try:
        schema, name = table.schema.encode(), table.name.encode()
    except UnicodeEncodeError:
        return None
    made = layout(table, profile, keys_only)
    if not made.chosen or made.names is None:
        return None
    writers: list[Writer | None] = [None] * len(table.columns)
    flags = [0] * len(table.columns)
    for i, write, flag in zip(made.chosen, made.writers, made.chosen_flags, strict=True):
        writers[i], flags[i] = write, flag
    puts = tuple(
        _put(column, write, flag)
        for column, write, flag in zip(table.columns, writers, flags, strict=True)
    )
    chosen = None if len(made.chosen) == len(table.columns) else made.chosen
    keys = tuple(i for i, column in enumerate(table.columns) if column.key == "primary")
    header_size = HEADER_ESTIMATE + len(schema) + len(name)
    return _Plan(puts, chosen, keys, made, made.names, header_size, schema, name, partition)


def _group(kind: int, plan: _Plan, image: Sequence[Value]) -> Group:
    if len(image) != len(plan.puts):
        raise _Slow
    for key in plan.keys:
        if image[key] is None:
            raise _Slow
    values = [None if v is None else put(v) for put, v in zip(plan.puts, image, strict=False)]
    if plan.chosen is not None:
        values = [values[i] for i in plan.chosen]
    # the nullable bytes chunk (as _rows.tail): ZigZag lengths, 1 for NULL, then the values
    lengths = [1 if value is None else len(value) << 1 for value in values]
    nulls = lengths.count(1)  # a length of n bytes is the even 2n
    one_byte = max(lengths) < 0x80  # one byte each: in one go
    chunk = bytes(lengths) if one_byte else b"".join(map(_UVARINTS.__getitem__, lengths))
    data = b"".join(filter(None, values))  # empty values add nothing either
    made = plan.made
    size = made.names_estimate + ((sum(lengths) - nulls) >> 1)
    return _new(Group, (kind, plan.names, made.types_and_flags, chunk + data, size))


def fast_row(event: RowChangedEvent, config: Config) -> Row | None:
    """The row the encoder writes for ``event``, or ``None`` to take the full way (above)."""
    if not checking_values():
        return None
    table, after, before = event.table, event.after, event.before
    profile = config.profile
    keys_only = event.op == "delete" and config.delete_only_output_handle_key_columns
    groups: list[Group] = []
    plan = None
    try:
        if after is not None:
            plan = _plan(table, profile, keys_only=False)
            if plan is None:
                return None
            groups.append(_group(NEW_GROUP, plan, after))
        if before is not None:
            plan = _plan(table, profile, keys_only=keys_only)
            if plan is None:
                return None
            groups.append(_group(OLD_GROUP, plan, before))
    except (_Slow, ValueError):
        return None
    if plan is None:
        return None
    header = _new(Header, (event.commit_ts, ROW, plan.partition, plan.schema, plan.name))
    size = plan.header_size + sum([group.size for group in groups])
    return _new(Row, (header, tuple(groups), size))
