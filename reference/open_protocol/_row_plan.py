"""Open Protocol rows of one table through a plan made once: key and value JSON (§2.3–§2.5).

The encoder's full path works a row out column by column: each value checked
(``validation.check_row``), each column's type code, flags, JSON prefix and writer looked
up, the tiflow order sorted. A ``RowPlan`` does all of that once per table and config: the
key's fixed members, the columns in output order, each with its JSON prefix and a writer
chosen for its type, and the JSON text between the values, joined by one f-string.

A plan's writer (``_plan_writers``) takes only the values it can both vouch for and write
itself: a value of the type the writer expects that passes its column's check (what
``check_row`` asks of it), and NULL outside the primary key. Its text is then the text
``_columns.write_value`` gives. For any other value it raises ``Unplanned``, and the encoder
takes the full path for that row, whose checks and errors are the ones it always had. A
table gets no plan when the plan would have to decide anything else: a virtual column, no
column, ``only-output-updated-columns`` or ``delete-only-output-handle-key-columns``, or a
column without a plan writer (BINARY-flagged strings, GEOMETRY, NULL, unknown type codes, a
number type code on a column of another type).

``tests/test_open_protocol_row_plan.py`` checks plans against the full path.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from dataclasses import fields

from ticdc_conformance.reference._gojson import JsonStyle, quote
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.mysql import INTEGER_TYPES, wrap_int64
from ticdc_conformance.reference.open_protocol._config import Config
from ticdc_conformance.reference.open_protocol._plan_writers import (
    Quick,
    Unplanned,
    Writer,
    column_writer,
    quick_form,
)
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG, TableInfo
from ticdc_conformance.reference.validation import column_checks
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["RowPlan", "Unplanned", "column_prefix", "plan_of"]


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
        # the image's JSON around its values, in output order: before each value, then the end
        texts = ["{" + prefixes[0], *("}," + p for p in prefixes[1:]), "}}"]
        self.image = _image_function(texts, [(i, writers[i]) for i in order])
        """The JSON object of an image (``Unplanned`` for a value the plan leaves)."""
        self.old_values = config.output_old_value
        """Whether an UPDATE's value has ``p`` (its old image is checked either way)."""
        self.row_id_column = _row_id_column(table)
        self.row_ids = config.profile == "tiflow"
        """Whether the key has ``rid`` (tiflow's key; the new architecture's has none)."""
        self.key_middle, self.key_end = _key_members(table, config.profile, style)

    def encode(self, event: RowChangedEvent) -> tuple[str, str]:
        """The key and value JSON of a row (``Unplanned`` for a value the plan leaves)."""
        after, before, image = event.after, event.before, self.image
        if after is not None:
            if before is None:
                value = f'{{"u":{image(after)}}}'
            else:  # an update: "p" unless output-old-value is off
                new, old = image(after), image(before)  # the old one checked even if not written
                value = f'{{"u":{new},"p":{old}}}' if self.old_values else f'{{"u":{new}}}'
        else:
            assert before is not None
            value = f'{{"d":{image(before)}}}'
        if self.row_ids:
            row_id = event.row_id
            if row_id is None and self.row_id_column is not None:
                row_id = _row_id(event, self.row_id_column)
            if row_id:
                middle = f'{self.key_middle},"rid":{row_id}'
                return f'{{"ts":{event.commit_ts}{middle}{self.key_end}', value
        return f'{{"ts":{event.commit_ts}{self.key_middle}{self.key_end}', value


def _image_function(
    texts: Sequence[str], columns: Sequence[tuple[int, Writer]]
) -> Callable[[tuple[Value, ...]], str]:
    """A function writing an image's JSON: ``texts`` with each column's text between them.

    Made as Python source and compiled once per plan, so each value costs its writer's call
    only where its quick form (``quick_form``), tested inline, does not take it. The source
    holds positions, integer bounds and local names only: no name, type or value of the
    table's, which reach the function as objects.
    """
    names: dict[str, object] = {
        **{f"s{j}": text for j, text in enumerate(texts)},
        # names of the plan's own start with an underscore, a column's are a letter and its
        # position: they never meet
        "_Timestamp": TimestampValue,
        "_Decimal": DecimalValue,
        "_b64": base64.b64encode,
    }
    lines = ["def image(image):"]
    for j, (position, writer) in enumerate(columns):
        names[f"w{j}"] = writer
        lines.append(f"    v = image[{position}]")
        lines += _quick_lines(j, quick_form(writer), names)
    joined = "".join(f"{{s{j}}}{{t{j}}}" for j in range(len(columns)))
    lines.append(f"    return f'{joined}{{s{len(columns)}}}'")  # one f-string: names only
    source = "\n".join(lines)  # positions, bounds and local names: nothing of the table's
    exec(compile(source, "<open-protocol row plan>", "exec"), names)  # noqa: S102
    function: Callable[[tuple[Value, ...]], str] = names["image"]  # type: ignore[assignment]
    return function


def _quick_lines(j: int, quick: Quick | None, names: dict[str, object]) -> list[str]:
    """Column ``j``'s text ``t{j}`` of value ``v``, as source.

    By its quick form's inline tests, else (or when it has none) by its writer ``w{j}``.
    """
    tests: list[tuple[str, str]] = []
    if quick is not None:
        if quick.ints is not None:
            low, high = quick.ints
            tests.append((f"type(v) is int and {low} <= v < {high}", "str(v)"))
        if quick.text is not None:
            names[f"m{j}"] = quick.text.fullmatch
            tests.append((f"type(v) is str and m{j}(v) is not None", "'\"' + v + '\"'"))
            if quick.timestamps:
                test = f"type(v) is _Timestamp and m{j}(v.text) is not None"
                tests.append((test, "'\"' + v.text + '\"'"))
        if quick.decimals is not None:
            names[f"d{j}"] = quick.decimals.fullmatch
            test = f"type(v) is _Decimal and d{j}(v.text) is not None"
            tests.append((test, "'\"' + v.text + '\"'"))
        if quick.base64:
            tests.append(("type(v) is bytes", "'\"' + _b64(v).decode('ascii') + '\"'"))
        if quick.null:
            tests.append(("v is None", "'null'"))
    lines = []
    for number, (test, text) in enumerate(tests):
        lines.append(f"    {'if' if number == 0 else 'elif'} {test}:")
        lines.append(f"        t{j} = {text}")
    if not tests:
        return [f"    t{j} = w{j}(v)"]
    return [*lines, "    else:", f"        t{j} = w{j}(v)"]


def _row_id_column(table: TableInfo) -> int | None:
    """The single integer primary key column, whose value is the row id (``effective_row_id``)."""
    primary = table.primary_key()
    if len(primary) == 1 and table.columns[primary[0]].type in INTEGER_TYPES:
        return primary[0]
    return None


def _row_id(event: RowChangedEvent, column: int) -> int:
    """``event.effective_row_id()`` of an event without a row id.

    Its table's single integer primary key is at ``column`` (found once per table).
    """
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
_SHAPES: dict[tuple[tuple[object, ...], Config], RowPlan | None] = {}
"""Plans by a table's members but its schema version, which no plan reads: a DDL that only
moves a table to a new version (a new ``TableInfo``) keeps its plan."""
_SHAPE_FIELDS = tuple(f.name for f in fields(TableInfo) if f.compare and f.name != "schema_version")


def plan_of(table: TableInfo, config: Config) -> RowPlan | None:
    """The plan of ``table``'s rows under ``config``; ``None`` when rows need the full path.

    Kept by the table's identity, the table and the config held beside the plan: the table
    lives as long as its entry, so no other object takes its ``id`` meanwhile, and another
    config's plan replaces it. A new table object equal to a known one but for its schema
    version takes the known one's plan.
    """
    kept = _PLANS.get(id(table))
    if kept is not None and kept[0] is table and kept[1] is config:
        return kept[2]
    shape = (tuple([getattr(table, name) for name in _SHAPE_FIELDS]), config)
    try:  # one lookup, not a test and a read: another thread may clear the dict between them
        plan = _SHAPES[shape]
    except KeyError:
        plan = _make_plan(table, config)
        if len(_SHAPES) >= _PLANS_KEPT:
            _SHAPES.clear()
        _SHAPES[shape] = plan
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
    writers = [
        column_writer(column, flags[i], checks[i], style) for i, column in enumerate(columns)
    ]
    if any(writer is None for writer in writers):
        return None
    return RowPlan(table, config, [w for w in writers if w is not None])
