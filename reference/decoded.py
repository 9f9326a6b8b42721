"""Decoded events: what a consumer extracts from messages (the decoders' output).

Every protocol decodes into these classes; members a protocol does not carry are ``None``.
Envelope members follow shared/design/architecture.md ("Two JSON forms"): ``commit_ts``,
``schema``, ``table``; rows add ``op`` and the ``before``/``after`` column lists in wire order.

The event classes are frozen and slotted, columns are named tuples; none is meant for
subclassing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ticdc_conformance.reference.drafts import draft_class
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.tables import TableInfo
from ticdc_conformance.reference.values import Value

__all__ = [
    "DecodedBootstrap",
    "DecodedColumn",
    "DecodedDDL",
    "DecodedEvent",
    "DecodedResolved",
    "DecodedRow",
    "decoded_row",
]


class DecodedColumn(NamedTuple):
    """One column of a decoded row image.

    A named tuple rather than a dataclass: decoders build one per column, and a frozen
    dataclass costs about four times as much to construct, which alone would exceed the
    ``json.loads`` floor of the Open Protocol decode benchmark (benchmarks/README.md).
    """

    name: str
    value: Value
    type_code: int | None = None
    """MySQL type code when the protocol carries it (Open ``t``, Craft)."""
    flags: int | None = None
    """Column flag bits when carried (Open ``f``; ``None`` for legacy messages without it)."""
    handle_key: bool | None = None
    """Whether the column is part of the handle key, when the protocol says (Open ``h``)."""
    mysql_type: str | None = None
    """MySQL type name when the protocol carries it (Simple, Debezium)."""
    ambiguity: str | None = None
    """Why ``value`` may differ from what the database holds, when the message cannot say
    (e.g. a Debezium int64 without ``tidb_type`` that may be a wrapped BIGINT UNSIGNED);
    ``None`` when the value is exactly what the message means."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodedRow:
    """A row change as the consumer sees it."""

    commit_ts: int | None
    """``None`` only when the message does not carry it (a real Debezium message)."""
    schema: str
    table: str
    op: Operation
    before: tuple[DecodedColumn, ...] | None
    after: tuple[DecodedColumn, ...] | None
    partition_id: int | None = None
    table_id: int | None = None
    row_id: int | None = None
    schema_version: int | None = None
    handle_key_only: bool = False
    """The message carries only handle-key columns (large-message ``handle-key-only``)."""
    claim_check_location: str | None = None
    """Where the full message was stored (large-message ``claim-check``)."""
    cluster_id: str | None = None
    """The TiCDC cluster that wrote the message, when the protocol says (Debezium)."""
    start_ts: int | None = None
    """The start ts of the row's transaction, when the message carries it (Debezium with
    ``debezium-include-start-ts``)."""


_Columns = tuple[DecodedColumn, ...] | None


_DraftRow = draft_class(DecodedRow)

_new = object.__new__


def decoded_row(  # noqa: PLR0917 - DecodedRow's members by position
    commit_ts: int | None,
    schema: str,
    table: str,
    op: Operation,
    before: _Columns,
    after: _Columns,
    partition_id: int | None = None,
    table_id: int | None = None,
    row_id: int | None = None,
    schema_version: int | None = None,
    handle_key_only: bool = False,
    claim_check_location: str | None = None,
    cluster_id: str | None = None,
    start_ts: int | None = None,
) -> DecodedRow:
    """``DecodedRow`` of its members by position, for a decoder's loop over row events.

    The same object as the keyword constructor's, in about a quarter of the time: made as a
    draft (``reference.drafts``), its members stored into a ``_DraftRow`` that then becomes a
    ``DecodedRow``. A test holds this signature to ``DecodedRow``'s fields.
    """
    row: Any = _new(_DraftRow)  # its members are DecodedRow's, which mypy sees only there
    row.commit_ts = commit_ts
    row.schema = schema
    row.table = table
    row.op = op
    row.before = before
    row.after = after
    row.partition_id = partition_id
    row.table_id = table_id
    row.row_id = row_id
    row.schema_version = schema_version
    row.handle_key_only = handle_key_only
    row.claim_check_location = claim_check_location
    row.cluster_id = cluster_id
    row.start_ts = start_ts
    row.__class__ = DecodedRow
    return row  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodedDDL:
    """A DDL as the consumer sees it."""

    commit_ts: int | None
    """``None`` only when the message does not carry it (a real Debezium message)."""
    schema: str
    table: str
    query: str
    ddl_type: int | None = None
    """TiDB ActionType when the protocol carries it (Open, Craft)."""
    ddl_kind: str | None = None
    """The protocol's own DDL class when it carries one (Simple ``type``, Debezium
    ``tableChanges[].type``)."""
    table_info: TableInfo | None = None
    """The table after the DDL, when the message describes it (Simple, Debezium)."""
    pre_table_info: TableInfo | None = None
    """The table before the DDL, when the message describes it (Simple ``preTableSchema``)."""
    cluster_id: str | None = None
    """The TiCDC cluster that wrote the message, when the protocol says (Debezium)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodedBootstrap:
    """A table's schema sent ahead of its rows (Simple BOOTSTRAP, ground truth §4.9, §6.6)."""

    commit_ts: int
    schema: str
    table: str
    table_info: TableInfo


@dataclass(frozen=True, slots=True, kw_only=True)
class DecodedResolved:
    """A checkpoint (resolved ts, watermark) as the consumer sees it."""

    commit_ts: int
    cluster_id: str | None = None
    """The TiCDC cluster that wrote the message, when the protocol says (Debezium)."""


DecodedEvent = DecodedRow | DecodedDDL | DecodedResolved | DecodedBootstrap
