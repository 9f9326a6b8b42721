"""A Simple DML's row from its members (``Wire``) and its images as typed.

Shared by the decoder and the typing plans' compiled functions (``_compiled``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ticdc_conformance.reference.decoded import DecodedColumn, DecodedRow, decoded_row
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.simple._wire import Wire

if TYPE_CHECKING:
    from ticdc_conformance.reference.simple._plan import Plan

__all__ = ["OPS", "at_once", "row"]

OPS: dict[str, Operation] = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}


def row(
    wire: Wire, before: tuple[DecodedColumn, ...] | None, after: tuple[DecodedColumn, ...] | None
) -> DecodedRow:
    """The row of a DML's members and its images (an image the op has, if left out: empty)."""
    op = OPS[wire.type]
    if op in ("update", "delete") and before is None:
        before = ()  # an empty map is omitted on the JSON wire
    if op in ("insert", "update") and after is None:
        after = ()
    return decoded_row(  # DecodedRow's members by position
        wire.commit_ts,
        wire.database,
        wire.table,
        op,
        before,
        after,
        None,
        wire.table_id,
        None,
        wire.schema_version,
        wire.handle_key_only,
        wire.claim_check_location,
    )


def at_once(wire: Wire, plan: Plan) -> DecodedRow | None:
    """The row of a DML whose images are unchecked (``Wire.unchecked``), typed at once.

    ``None`` unless every value is one its column holds as it is (``Plan.parsed_image``).
    ``Plan.parsed_row`` is this, faster for an UPDATE of both images.
    """
    old, data = wire.old, wire.data
    if old is not None and data is not None:
        images = plan.parsed_update(data, old)
        return None if images is None else row(wire, images[1], images[0])
    before = None if old is None else plan.parsed_image(old)
    if before is None and old is not None:
        return None
    after = None if data is None else plan.parsed_image(data)
    if after is None and data is not None:
        return None
    return row(wire, before, after)
