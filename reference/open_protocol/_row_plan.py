"""Open Protocol rows of one table through a plan made once: key and value JSON (§2.3–§2.5).

The encoder's full path works a row out column by column: each value checked
(``validation.check_row``), each column's type code, flags, JSON prefix and writer looked
up, the tiflow order sorted. A ``RowPlan`` does all of that once per table and config: the
key's fixed members, the columns in output order, each with its JSON prefix and a writer
chosen for its type, and a ``str.format`` template that joins them.

A plan's writer takes only the values it can both vouch for and write itself: a value of
the type the writer expects that passes its column's check (what ``check_row`` asks of it),
and NULL outside the primary key. Its text is then the text ``_columns.write_value`` gives.
For any other value it raises ``Unplanned``, and the encoder takes the full path for that
row, whose checks and errors are the ones it always had. A table gets no plan when the plan
would have to decide anything else: a virtual column, no column, ``only-output-updated-
columns`` or ``delete-only-output-handle-key-columns``, a type whose writer is not among those
below (BINARY-flagged strings, GEOMETRY, NULL, unknown type codes), or a column whose check
and writer are of different families (a type code that is not the column type's).

``tests/test_open_protocol_row_plan.py`` checks plans against the full path.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from operator import itemgetter

from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle, quote
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.mysql import (
    CODE_ALIASES,
    INT64,
    INTEGER_TYPES,
    TYPE_OF_CODE,
    UINT64,
    MySQLType,
    integer_range,
    wrap_int64,
)
from ticdc_conformance.reference.open_protocol._columns import WRITERS
from ticdc_conformance.reference.open_protocol._config import Config
from ticdc_conformance.reference.tables import (
    BINARY_FLAG,
    HANDLE_KEY_FLAG,
    UNSIGNED_FLAG,
    ColumnInfo,
    TableInfo,
)
from ticdc_conformance.reference.validation import column_checks
from ticdc_conformance.reference.validity import Check, ColumnType
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value, string_bytes

__all__ = ["RowPlan", "Unplanned", "column_prefix", "plan_of"]


class Unplanned(Exception):  # noqa: N818 - a signal to take the full path, not an error
    """A value the plan leaves to the encoder's full path."""


Writer = Callable[[Value], str]

_PREFIXES: dict[JsonStyle, dict[tuple[str, int, int], str]] = {style: {} for style in JsonStyle}
"""A column's JSON up to its value, by style, then name, type code and flags."""
_MAX_PREFIXES = 4096
"""Prefixes kept per style: the names are the events' to choose, the memory is not."""


def column_prefix(kind: tuple[str, int, int], style: JsonStyle) -> str:
    """The JSON of a column up to its value: ``"name":{"t":…,["h":true,]"f":…,"v":``."""
    prefixes = _PREFIXES[style]
    prefix = prefixes.get(kind)
    if prefix is not None:
        return prefix
    name, type_code, flags = kind
    handle = '"h":true,' if flags & HANDLE_KEY_FLAG else ""
    prefix = f'{quote(name, style)}:{{"t":{type_code},{handle}"f":{flags},"v":'
    if len(prefixes) < _MAX_PREFIXES:
        prefixes[kind] = prefix
    return prefix


_FLOAT32_MAX = 3.4028234663852886e38
_FLOAT64_MAX = 1.7976931348623157e308
_FLOAT32_TEXTS: dict[JsonStyle, dict[float, str]] = {style: {} for style in JsonStyle}
"""FLOAT texts already worked out (the shortest float32 digits can take an exact search)."""
_MAX_FLOAT32_TEXTS = 4096


def _integer_writer(low: int, high: int, nullable: bool) -> Writer:
    def write(value: Value) -> str:
        if type(value) is int and low <= value < high:
            return str(value)
        if value is None and nullable:
            return "null"
        raise Unplanned

    return write


def _float_writer(bits: int, limit: float, style: JsonStyle, nullable: bool) -> Writer:
    texts = _FLOAT32_TEXTS[style] if bits == 32 else None

    def write(value: Value) -> str:
        if type(value) is float and -limit <= value <= limit:  # finite (NaN fails both)
            if texts is None:
                return format_float(value, bits, style)
            text = texts.get(value)
            if text is None:
                text = format_float(value, bits, style)
                # 0.0 and -0.0 are one key but two texts: neither is kept
                if value and len(texts) < _MAX_FLOAT32_TEXTS:
                    texts[value] = text
            return text
        if value is None and nullable:
            return "null"
        raise Unplanned

    return write


def _checked_writer(
    kinds: tuple[type, ...],
    text: Callable[[Value], str],
    check: Check,
    ctype: ColumnType,
    nullable: bool,
) -> Writer:
    """Values of ``kinds`` that pass ``check``, written by ``text``; NULL if ``nullable``."""

    def write(value: Value) -> str:
        if type(value) in kinds and check(value, ctype) is None:
            return text(value)
        if value is None and nullable:
            return "null"
        raise Unplanned

    return write


def _integer_bounds(ctype: ColumnType) -> tuple[int, int] | None:
    """The integers the column's check takes, as one range (``None``: not an integer type)."""
    name = ctype.name
    if name in INTEGER_TYPES:
        signed, unsigned = integer_range(name, unsigned=False), integer_range(name, unsigned=True)
        if ctype.unsigned is None:
            return signed.start, unsigned.stop
        allowed = unsigned if ctype.unsigned else signed
        return allowed.start, allowed.stop
    if name == "year":
        return 1901, 2156  # 0 is a YEAR too: the full path writes it
    if name == "bit":
        width = ctype.length if ctype.length is not None else 64
        return (0, 2**width) if 1 <= width <= 64 else (0, 0)
    if name == "enum":
        return 0, (65535 if ctype.elements is None else len(ctype.elements)) + 1
    if name == "set":
        return 0, 2 ** (64 if ctype.elements is None else len(ctype.elements))
    return None


def _writer(
    column: ColumnInfo, flags: int, checked: tuple[ColumnType, Check], style: JsonStyle
) -> Writer | None:
    """The plan's writer of a column, or ``None`` when its values need the full path."""
    ctype, check = checked
    code = column.effective_type_code
    name = TYPE_OF_CODE.get(code) or CODE_ALIASES.get(code)
    writer = None if name is None else WRITERS.get(name)
    nullable = column.key != "primary"
    if writer is None or name is None:
        return None
    if writer is WRITERS["bigint"] or writer is WRITERS["bit"] or name in {"float", "double"}:
        return _number_writer(name, flags, ctype, style, nullable)
    if writer is WRITERS["decimal"]:
        return _checked_writer(
            (DecimalValue,), lambda value: _decimal_text(value, style), check, ctype, nullable
        )
    if writer is WRITERS["varchar"]:
        if flags & BINARY_FLAG:
            return None
        return _checked_writer(
            (str, bytes), lambda value: _string_text(value, style), check, ctype, nullable
        )
    if writer is WRITERS["blob"]:
        return _checked_writer((bytes, str), _base64_text, check, ctype, nullable)
    if writer is WRITERS["datetime"]:
        return _checked_writer(
            (str, TimestampValue), lambda value: _text(value, style), check, ctype, nullable
        )
    return None


def _number_writer(
    name: MySQLType, flags: int, ctype: ColumnType, style: JsonStyle, nullable: bool
) -> Writer | None:
    """Integer types, YEAR, BIT, ENUM and SET; FLOAT and DOUBLE: their checks' ranges here.

    ``None`` when the column's type is of another family than its type code.
    """
    if name in {"float", "double"}:
        if ctype.name not in {"float", "double"}:
            return None
        limit = _FLOAT32_MAX if ctype.name == "float" else _FLOAT64_MAX
        return _float_writer(32 if name == "float" else 64, limit, style, nullable)
    bounds = _integer_bounds(ctype)
    if bounds is None:
        return None
    # BIT, ENUM and SET are written as uint64 whatever the flags (§1.1)
    wide = WRITERS[name] is WRITERS["bit"] or flags & UNSIGNED_FLAG
    written = UINT64 if wide else INT64
    low, high = max(bounds[0], written.start), min(bounds[1], written.stop)
    return _integer_writer(low, high, nullable)


def _decimal_text(value: Value, style: JsonStyle) -> str:
    assert isinstance(value, DecimalValue)
    return quote(value.text, style)


def _string_text(value: Value, style: JsonStyle) -> str:
    assert isinstance(value, str | bytes)
    return quote(value, style)


def _base64_text(value: Value) -> str:
    return '"' + base64.b64encode(string_bytes(value)).decode("ascii") + '"'


def _text(value: Value, style: JsonStyle) -> str:
    assert isinstance(value, str | TimestampValue)
    return quote(value.text if isinstance(value, TimestampValue) else value, style)


class RowPlan:
    """One table's rows under one config, as key and value JSON (see the module doc)."""

    def __init__(self, table: TableInfo, config: Config, writers: Sequence[Writer]) -> None:
        style = JsonStyle.GO_STD if config.profile == "tiflow" else JsonStyle.JSONITER
        columns = table.columns
        flags = table.column_flags(config.profile)
        order = list(range(len(columns)))
        if config.profile == "tiflow":  # a Go map: encoding/json sorts its keys (§2.4)
            order.sort(key=lambda i: columns[i].name)
        prefixes = [
            column_prefix((columns[i].name, columns[i].effective_type_code, flags[i]), style)
            for i in order
        ]
        self.writers = tuple(writers[i] for i in order)
        self.values: Callable[[tuple[Value, ...]], tuple[Value, ...]] = (
            itemgetter(*order) if len(order) > 1 else lambda image: (image[order[0]],)
        )
        braces = [p.replace("{", "{{").replace("}", "}}") for p in prefixes]
        self.template = "{{" + "}},".join(f"{p}{{}}" for p in braces) + "}}}}"
        """The image's JSON with a ``{}`` for each value, in output order."""
        self.old_member = '"p":' if config.output_old_value else None
        self.row_id_column = _row_id_column(table)
        self.row_ids = config.profile == "tiflow"
        """Whether the key has ``rid`` (tiflow's key; the new architecture's has none)."""
        self.key_middle, self.key_end = _key_members(table, config.profile, style)

    def image(self, image: tuple[Value, ...]) -> str:
        """The JSON object of an image (``Unplanned`` for a value the plan leaves)."""
        return self.template.format(
            *[write(value) for write, value in zip(self.writers, self.values(image), strict=False)]
        )

    def encode(self, event: RowChangedEvent) -> tuple[str, str]:
        """The key and value JSON of a row (``Unplanned`` for a value the plan leaves)."""
        after, before = event.after, event.before
        if after is not None:
            value = '{"u":' + self.image(after)
            if before is not None:  # an update: "p" unless output-old-value is off
                old = self.image(before)  # checked even when not written
                if self.old_member is not None:
                    value += ',"p":' + old
            value += "}"
        else:
            assert before is not None
            value = '{"d":' + self.image(before) + "}"
        key = f'{{"ts":{event.commit_ts}{self.key_middle}'
        if self.row_ids and (self.row_id_column is not None or event.row_id is not None):
            row_id = _row_id(event, self.row_id_column)
            if row_id:
                key += f',"rid":{row_id}'
        return key + self.key_end, value


def _row_id_column(table: TableInfo) -> int | None:
    """The single integer primary key column, whose value is the row id (``effective_row_id``)."""
    primary = table.primary_key()
    if len(primary) == 1 and table.columns[primary[0]].type in INTEGER_TYPES:
        return primary[0]
    return None


def _row_id(event: RowChangedEvent, column: int | None) -> int:
    """``event.effective_row_id()`` with the table's primary key column found once."""
    if event.row_id is not None:
        return event.row_id
    assert column is not None
    value = event.image[column]
    return wrap_int64(value) if isinstance(value, int) else 0


def _key_members(table: TableInfo, profile: str, style: JsonStyle) -> tuple[str, str]:
    """The key's members between ``ts`` and ``rid``, and after it (§2.3): (middle, end)."""
    partition = "" if table.partition_id is None else f',"ptn":{table.partition_id}'
    if profile == "tiflow":  # empty names left out; rid (per row) before ptn
        middle = (f',"scm":{quote(table.schema, style)}' if table.schema else "") + (
            f',"tbl":{quote(table.name, style)}' if table.name else ""
        )
        return middle, partition + ',"t":1}'
    middle = f',"scm":{quote(table.schema, style)},"tbl":{quote(table.name, style)},"t":1'
    return middle + partition + "}", ""


_PLANS: dict[int, tuple[TableInfo, Config, RowPlan | None]] = {}
_PLANS_KEPT = 64
"""Tables whose plans are kept (an encode call meets a few, a workload a handful)."""


def plan_of(table: TableInfo, config: Config) -> RowPlan | None:
    """The plan of ``table``'s rows under ``config``; ``None`` when rows need the full path.

    Kept by the table's and the config's identity, both held beside the plan, so a new
    object that takes a collected one's ``id`` is never mistaken for it.
    """
    kept = _PLANS.get(id(table))
    if kept is not None and kept[0] is table and kept[1] is config:
        return kept[2]
    plan = _make_plan(table, config)
    if len(_PLANS) >= _PLANS_KEPT:
        _PLANS.clear()
    _PLANS[id(table)] = (table, config, plan)
    return plan


def _make_plan(table: TableInfo, config: Config) -> RowPlan | None:
    columns = table.columns
    if (
        not columns
        or any(column.is_virtual for column in columns)
        or config.only_output_updated_columns
        or config.delete_only_output_handle_key_columns
    ):
        return None
    style = JsonStyle.GO_STD if config.profile == "tiflow" else JsonStyle.JSONITER
    flags = table.column_flags(config.profile)
    checks = column_checks(table)
    writers = [_writer(column, flags[i], checks[i], style) for i, column in enumerate(columns)]
    if any(writer is None for writer in writers):
        return None
    return RowPlan(table, config, [w for w in writers if w is not None])
