"""Change events: what TiCDC holds before it encodes (the encoders' input).

Three kinds, named as TiCDC names them: ``RowChangedEvent`` (one row of a committed
transaction), ``DDLEvent`` and ``ResolvedEvent`` (a checkpoint: every change with a commit ts
at or below it has been sent). Row images are tuples aligned with ``table.columns``; a virtual
generated column is not stored, so its slot is always ``None`` and no codec outputs it.

The classes are frozen and slotted and are not meant for subclassing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from ticdc_conformance.reference.drafts import draft_class
from ticdc_conformance.reference.mysql import INTEGER_TYPES, wrap_int64
from ticdc_conformance.reference.tables import TableInfo
from ticdc_conformance.reference.values import Value, check_value

__all__ = [
    "OPERATIONS",
    "ChangeEvent",
    "DDLEvent",
    "Operation",
    "ResolvedEvent",
    "RowChangedEvent",
    "operation",
    "valid_row_event",
]

Operation = Literal["insert", "update", "delete"]
OPERATIONS: tuple[Operation, ...] = ("insert", "update", "delete")

_UINT64 = 2**64
_IMAGES = {"insert": (False, True), "update": (True, True), "delete": (True, False)}
_IMAGE_NAMES = {"insert": "an after image", "update": "both images", "delete": "a before image"}


def operation(name: str) -> Operation:
    """The ``Operation`` called ``name`` (``ValueError`` for another name)."""
    for op in OPERATIONS:
        if name == op:
            return op
    raise ValueError(f"unknown operation {name!r}")


def _check_ts(name: str, ts: object) -> None:
    if isinstance(ts, bool) or not isinstance(ts, int) or not 0 <= ts < _UINT64:
        raise ValueError(f"{name} must be a uint64, got {ts!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RowChangedEvent:
    """One changed row; ``before``/``after`` follow ``op`` as in TiCDC's RowChangedEvent."""

    commit_ts: int
    table: TableInfo
    op: Operation
    before: tuple[Value, ...] | None = None
    """Old image: required for ``update`` and ``delete``, absent for ``insert``."""
    after: tuple[Value, ...] | None = None
    """New image: required for ``insert`` and ``update``, absent for ``delete``."""
    row_id: int | None = None
    """TiDB's int row handle (Open ``rid``); ``None`` derives it from an integer primary key."""
    start_ts: int | None = None
    """The start ts of the row's transaction, below ``commit_ts``; ``None``: not known. Only
    Debezium with ``debezium-include-start-ts`` (profile ``ticdc``) writes it."""

    def __post_init__(self) -> None:
        _check_ts("commit_ts", self.commit_ts)
        if self.start_ts is not None:
            _check_ts("start_ts", self.start_ts)
            if not 0 < self.start_ts < self.commit_ts:
                raise ValueError("start_ts must be above 0 and below commit_ts")
        images = (self.before is not None, self.after is not None)
        if images != _IMAGES[operation(self.op)]:
            raise ValueError(f"{self.op} takes {_IMAGE_NAMES[self.op]} only")
        for image in (self.before, self.after):
            if image is None:
                continue
            if len(image) != len(self.table.columns):
                raise ValueError("a row image needs one value per column")
            for column, value in zip(self.table.columns, image, strict=True):
                problem = check_value(value)
                if problem:
                    raise ValueError(f"column {column.name!r}: {problem}")
        if self.row_id is not None and not -(2**63) <= self.row_id < 2**63:
            raise ValueError("row_id must be an int64")

    @property
    def image(self) -> tuple[Value, ...]:
        """The new image, or the old one of a delete: what TiCDC keys and routes a row by."""
        if self.after is not None:
            return self.after
        return () if self.before is None else self.before  # every operation has an image

    def effective_row_id(self) -> int:
        """TiCDC's RowID: explicit, else the value of a single integer primary key, else 0.

        An integer primary key is the row handle in TiDB (PKIsHandle); clustered non-integer
        keys have no int handle, so TiCDC leaves RowID at 0 (ground truth §2.3). TiDB keeps
        an UNSIGNED BIGINT handle as the int64 with the same bits, so values above 2^63 - 1
        come out negative.
        """
        if self.row_id is not None:
            return self.row_id
        primary = self.table.primary_key()
        if len(primary) != 1:
            return 0
        column = self.table.columns[primary[0]]
        value = self.image[primary[0]]
        if column.type in INTEGER_TYPES and isinstance(value, int):
            return wrap_int64(value)
        return 0


_DraftEvent = draft_class(RowChangedEvent)


def valid_row_event(  # noqa: PLR0917 - RowChangedEvent's members by position
    commit_ts: int,
    table: TableInfo,
    op: Operation,
    before: tuple[Value, ...] | None = None,
    after: tuple[Value, ...] | None = None,
    row_id: int | None = None,
    start_ts: int | None = None,
) -> RowChangedEvent:
    """``RowChangedEvent`` of its members by position, **without the constructor's checks**.

    For a producer whose rows hold the checks by construction (the generators' workload,
    whose every row the checks cost a fifth of its time): the same object the constructor
    makes of valid members, made as a draft (``reference.drafts``; the members in
    declaration order, a test holds this signature to the class's fields). Anything else
    builds events with the constructor.
    """
    event: Any = object.__new__(_DraftEvent)
    event.commit_ts = commit_ts
    event.table = table
    event.op = op
    event.before = before
    event.after = after
    event.row_id = row_id
    event.start_ts = start_ts
    event.__class__ = RowChangedEvent
    return event  # type: ignore[no-any-return]


@dataclass(frozen=True, slots=True, kw_only=True)
class DDLEvent:
    """A DDL statement that TiDB finished at ``commit_ts``."""

    commit_ts: int
    schema: str
    table: str
    query: str
    ddl_type: int
    """TiDB ActionType (ground truth §1.7): any byte value, not only the documented 1–36."""
    table_info: TableInfo | None = None
    """The table after the DDL; ``None`` for database-level DDLs (Simple ``tableSchema``)."""
    pre_table_info: TableInfo | None = None
    """The table before the DDL, when TiCDC has it (Simple ``preTableSchema``, §4.2)."""

    def __post_init__(self) -> None:
        _check_ts("commit_ts", self.commit_ts)
        if isinstance(self.ddl_type, bool) or not 0 <= self.ddl_type <= 255:
            raise ValueError(f"ddl_type {self.ddl_type!r} is not an ActionType byte")


@dataclass(frozen=True, slots=True, kw_only=True)
class ResolvedEvent:
    """A checkpoint: everything with a commit ts at or below ``commit_ts`` has been sent."""

    commit_ts: int

    def __post_init__(self) -> None:
        _check_ts("commit_ts", self.commit_ts)


ChangeEvent = RowChangedEvent | DDLEvent | ResolvedEvent
