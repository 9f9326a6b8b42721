"""The decoded row of an Open Protocol row event, made by position (``decoded.decoded_row``)."""

from __future__ import annotations

from ticdc_conformance.reference.decoded import DecodedColumn, DecodedRow, decoded_row
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.open_protocol._keys import Key

__all__ = ["new_row"]

Columns = tuple[DecodedColumn, ...] | None


def new_row(key: Key, op: Operation, before: Columns, after: Columns) -> DecodedRow:
    """The row of the event with ``key``; the members Open never carries stay ``None``."""
    commit_ts, schema, table, _, row_id, partition_id, handle_key_only, location = key
    return decoded_row(
        commit_ts,
        schema,
        table,
        op,
        before,
        after,
        partition_id,
        None,
        row_id,
        None,
        handle_key_only,
        location,
    )
