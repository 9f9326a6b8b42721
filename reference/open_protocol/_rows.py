"""Decoded rows built slot by slot: the decoder makes one per row event.

A frozen slotted dataclass's ``__init__`` takes its members by keyword and sets each through
``object.__setattr__``; the slots' own setters, called in order on a bare instance, make the
same object in about half the time. This holds only while ``DecodedRow`` has the members
listed here, in this order, and nothing to run after ``__init__``; otherwise ``new_row``
calls the class as usual.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields

from ticdc_conformance.reference.decoded import DecodedColumn, DecodedRow
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.open_protocol._keys import Key

__all__ = ["new_row"]

_MEMBERS = (
    "commit_ts",
    "schema",
    "table",
    "op",
    "before",
    "after",
    "partition_id",
    "table_id",
    "row_id",
    "schema_version",
    "handle_key_only",
    "claim_check_location",
    "cluster_id",
    "start_ts",
)
_UNSET = ("table_id", "schema_version", "cluster_id", "start_ts")
"""Members the Open Protocol never carries: their defaults (``None``) are set."""
_SLOTS = hasattr(DecodedRow, "__slots__") and not hasattr(DecodedRow, "__post_init__")
_SLOT_BY_SLOT = (
    _SLOTS
    and tuple(f.name for f in fields(DecodedRow)) == _MEMBERS
    and all(f.default is None for f in fields(DecodedRow) if f.name in _UNSET)
)
_SETTERS: tuple[Callable[[object, object], None], ...] = (
    tuple(vars(DecodedRow)[name].__set__ for name in _MEMBERS) if _SLOT_BY_SLOT else ()
)
_new = object.__new__

Columns = tuple[DecodedColumn, ...] | None


def new_row(key: Key, op: Operation, before: Columns, after: Columns) -> DecodedRow:
    """``DecodedRow(...)`` of the event with ``key``, the members Open never carries unset."""
    commit_ts, schema, table, _, row_id, partition_id, handle_key_only, location = key
    if not _SLOT_BY_SLOT:
        return DecodedRow(
            commit_ts=commit_ts,
            schema=schema,
            table=table,
            op=op,
            before=before,
            after=after,
            partition_id=partition_id,
            row_id=row_id,
            handle_key_only=handle_key_only,
            claim_check_location=location,
        )
    row = _new(DecodedRow)
    values = (commit_ts, schema, table, op, before, after, partition_id)
    for set_slot, value in zip(
        _SETTERS,
        (*values, None, row_id, None, handle_key_only, location, None, None),
        strict=True,
    ):
        set_slot(row, value)
    return row
