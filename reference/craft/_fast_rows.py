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

The per-column functions and their cheap tests are in ``_puts``; each plan's image writer,
compiled once with those tests written out, in ``_put_code``.
"""

from __future__ import annotations

from typing import NamedTuple

from ticdc_conformance.reference.craft._config import Config
from ticdc_conformance.reference.craft._kept import Kept
from ticdc_conformance.reference.craft._put_code import ImageWriter, image_writer
from ticdc_conformance.reference.craft._puts import Slow, put_of
from ticdc_conformance.reference.craft._rows import (
    HEADER_ESTIMATE,
    NEW_GROUP,
    NO_PARTITION,
    OLD_GROUP,
    ROW,
    Group,
    Header,
    Row,
    layout,
    row_layout,
)
from ticdc_conformance.reference.craft._scalars import UVARINT_BYTES
from ticdc_conformance.reference.craft._values import Writer
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.mysql import INT64
from ticdc_conformance.reference.tables import Profile, TableInfo
from ticdc_conformance.reference.validation import checking_values

__all__ = ["fast_row"]

_new = tuple.__new__
"""``_new(Row, members)``: a named tuple from all its members, without its ``__new__``."""


class _Lengths(dict[int, bytes]):
    """A value length's ZigZag varint (``2 × length`` as a uvarint), by the length."""

    def __missing__(self, length: int) -> bytes:
        made = UVARINT_BYTES[length << 1]
        if length < 1 << 13:  # the ones of one and two bytes, kept
            self[length] = made
        return made


_LENGTHS = _Lengths()


class _Plan(NamedTuple):
    """One table's one-pass writing of its images (for one profile and keys-only choice)."""

    header_size: int
    schema: bytes
    name: bytes
    partition: int
    write: ImageWriter
    """The compiled writer of an image (``_put_code``)."""
    layouts: dict[int, tuple[object, ...]]
    """The layouts of rows whose groups are all this plan's (``_rows.row_layout``), by their
    kinds together: 1 new only, 2 old only, 3 new and old."""


_BUDGET = 4096
"""Columns of kept plans at most (``_kept``): a compiled writer holds some 2 KB of code a
column, 8 MB in all; two generations of 2048 columns hold some 200 tables of 10 columns."""

_plans: Kept[tuple[int, Profile, bool], tuple[TableInfo, _Plan | None]] = Kept(
    _BUDGET, lambda kept: max(1, len(kept[0].columns))
)
"""Recent tables' plans by (id of the table, profile, keys only), ``None`` for a table the
full way writes; a table is kept beside its plan, so the id is not reused while it lives. A
plan is made at a table's second sighting (the first row takes the full way)."""


def _plan(table: TableInfo, profile: Profile, *, keys_only: bool) -> _Plan | None:
    key = (id(table), profile, keys_only)
    cached = _plans.recent.get(key) or _plans.older(key)
    if cached is not None and cached[0] is table:
        return cached[1]
    if not _plans.sighted_before(key):
        return None
    plan = _make_plan(table, profile, keys_only)
    _plans.keep(key, (table, plan))
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
        put_of(column, write, flag)
        for column, write, flag in zip(table.columns, writers, flags, strict=True)
    )
    keys = tuple(i for i, column in enumerate(table.columns) if column.key == "primary")
    header_size = HEADER_ESTIMATE + len(schema) + len(name)
    image = image_writer(
        puts,
        made.chosen,
        keys,
        made.names,
        made.types_and_flags,
        made.names_estimate,
        _LENGTHS,
    )
    return _Plan(header_size, schema, name, partition, image, {})


def fast_row(event: RowChangedEvent, config: Config) -> Row | None:
    """The row the encoder writes for ``event``, or ``None`` to take the full way (above)."""
    if not checking_values():
        return None
    table, after, before = event.table, event.after, event.before
    profile = config.profile
    keys_only = event.op == "delete" and config.delete_only_output_handle_key_columns
    groups: tuple[Group, ...]
    one_plan = True  # every group written by ``plan``
    try:
        if after is not None:
            plan = _plan(table, profile, keys_only=False)
            if plan is None:
                return None
            new = plan.write(NEW_GROUP, after)
            if before is None:
                groups, size = (new,), new.size
            else:
                if keys_only:  # else the new image's plan is the old one's
                    plan = _plan(table, profile, keys_only=True)
                    if plan is None:
                        return None
                    one_plan = False
                old = plan.write(OLD_GROUP, before)
                groups, size = (new, old), new.size + old.size
        elif before is not None:
            plan = _plan(table, profile, keys_only=keys_only)
            if plan is None:
                return None
            old = plan.write(OLD_GROUP, before)
            groups, size = (old,), old.size
        else:
            return None
    except (Slow, ValueError):
        return None
    header = _new(Header, (event.commit_ts, ROW, plan.partition, plan.schema, plan.name))
    kept = None
    if one_plan:  # the plan's header and groups: the same layout for every row of these kinds
        kinds = groups[0].kind | groups[-1].kind
        kept = plan.layouts.get(kinds)
        if kept is None:
            kept = plan.layouts[kinds] = row_layout(header, groups)
    layout = row_layout(header, groups) if kept is None else kept
    return _new(Row, (header, groups, plan.header_size + size, layout))
