"""Decoders and encoders applying the value-validity checks of ``validity``.

Decoding: a decoder collects every invalid value of a message as its own ``DecodeError``
(column, type and value named, with the byte offset or JSON path of the value) and, once the
whole message is decoded, raises ``InvalidValueError``: a ``DecodeError`` that also carries
every finding and the events decoded anyway. A strict caller stops there like at any
``DecodeError``; a lenient one (``decoding.PartitionDecoder(lenient=True)``, ``decode
--lenient``) keeps the events and reports the findings as warnings (docs/errors.md).

Encoding: ``check_row`` refuses a change event holding a value its column type cannot hold,
with the project's ``EncodeError`` naming the event, column, type and value; every encoder calls
it first, so the protocols agree (docs/errors.md, "Encoding").
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

from ticdc_conformance.reference.decoded import DecodedEvent
from ticdc_conformance.reference.errors import DecodeError, EncodeError, Part
from ticdc_conformance.reference.events import RowChangedEvent
from ticdc_conformance.reference.jsondoc import Path
from ticdc_conformance.reference.tables import ColumnInfo, TableInfo
from ticdc_conformance.reference.validity import Check, ColumnType, check_of, describe, problem
from ticdc_conformance.reference.values import Value

__all__ = [
    "InvalidValueError",
    "check_row",
    "checking_values",
    "code_check",
    "code_type",
    "column_checks",
    "finding",
    "info_type",
    "raise_findings",
    "unchecked_values",
]


class InvalidValueError(DecodeError):
    """A message holding values TiCDC cannot have written; the first one is its own location."""

    def __init__(self, findings: Sequence[DecodeError], events: Sequence[DecodedEvent]) -> None:
        first = findings[0]
        more = f" (and {len(findings) - 1} more invalid values)" if len(findings) > 1 else ""
        super().__init__(
            first.reason + more,
            protocol=first.protocol,
            part=first.part,
            offset=first.offset,
            path=first.path,
            message_index=first.message_index,
        )
        self.findings = tuple(findings)
        """Every invalid value of the message, each a ``DecodeError`` with its location."""
        self.events = tuple(events)
        """The message's events decoded anyway, invalid values kept as read."""
        self.column = first.column if isinstance(first, ColumnValueError) else None


class ColumnValueError(DecodeError):
    """One invalid value: a ``DecodeError`` that also names its column."""

    def __init__(self, reason: str, *, column: str, **where: object) -> None:
        super().__init__(reason, **where)  # type: ignore[arg-type]
        self.column = column


def finding(
    column: str,
    ctype: ColumnType | None,
    value: Value,
    *,
    protocol: str,
    message_index: int,
    part: Part = "value",
    offset: int | None = None,
    path: Path | None = None,
) -> DecodeError | None:
    """The finding for ``value`` in ``column``, or ``None`` when the value is valid.

    ``ctype`` ``None`` is a column whose type the message does not state: nothing to check.
    """
    why = None if ctype is None else problem(value, ctype)
    if why is None:
        return None
    return ColumnValueError(
        f"invalid value: column {column!r}: {ctype} value {describe(value)} {why}",
        column=column,
        protocol=protocol,
        part=part,
        offset=offset,
        path=path,
        message_index=message_index,
    )


@cache
def code_type(type_code: int | None, flags: int | None) -> ColumnType | None:
    """The column type an Open Protocol or Craft column states by its type code and flags.

    Both copy text that is not UTF-8 as raw bytes (Open: the new architecture, §2.5; Craft
    writes the bytes as they are, §3.3), so such text is valid there.
    """
    return None if type_code is None else ColumnType.of_code(type_code, flags, raw_text=True)


@cache
def code_check(type_code: int | None, flags: int | None) -> tuple[ColumnType, Check] | None:
    """``code_type`` and the check of that type: decoders look both up once per kind of column."""
    ctype = code_type(type_code, flags)
    return None if ctype is None else (ctype, check_of(ctype))


@cache
def info_type(column: ColumnInfo, *, raw_text: bool) -> ColumnType:
    """The column type a table schema states (cached: decoders ask once per value)."""
    return ColumnType.of_column(column, raw_text=raw_text)


def raise_findings(findings: Sequence[DecodeError], events: Sequence[DecodedEvent]) -> None:
    """Raise ``InvalidValueError`` when there are findings."""
    if findings:
        raise InvalidValueError(findings, events)


_CHECKING: ContextVar[bool] = ContextVar("checking_values", default=True)


@contextmanager
def unchecked_values() -> Iterator[None]:
    """Within: encoders write invalid values as given (to build must-reject cases and faults)."""
    token = _CHECKING.set(False)
    try:
        yield
    finally:
        _CHECKING.reset(token)


def checking_values() -> bool:
    """Whether ``check_row`` checks values here (``False`` within ``unchecked_values``)."""
    return _CHECKING.get()


_TYPES_KEPT = 64
"""Tables whose column types ``check_row`` keeps (an encode call meets a few, a workload a
handful); past this many it starts again."""
_types_by_table: dict[int, tuple[TableInfo, tuple[tuple[ColumnType, Check], ...]]] = {}


def column_checks(table: TableInfo) -> tuple[tuple[ColumnType, Check], ...]:
    """Each column's type and check, as ``check_row`` uses them; once per ``TableInfo`` object.

    Kept by the object's identity, the object itself beside them, so a new table that takes
    a collected one's ``id`` is never mistaken for it (hashing a ``TableInfo`` per row would
    cost about what working the types out does).
    """
    kept = _types_by_table.get(id(table))
    if kept is not None and kept[0] is table:
        return kept[1]
    types = tuple(
        (ctype, check_of(ctype))
        for ctype in (info_type(column, raw_text=True) for column in table.columns)
    )
    if len(_types_by_table) >= _TYPES_KEPT:
        _types_by_table.clear()
    _types_by_table[id(table)] = (table, types)
    return types


def check_row(event: RowChangedEvent, protocol: str) -> None:
    """``EncodeError`` at the first invalid value of ``event``.

    Invalid: a value its column type cannot hold, or NULL in a primary key column (TiDB's
    primary key columns are NOT NULL).

    Text that is not UTF-8 is given as bytes (``values``) and is valid: a column's charset
    may be another than UTF-8, and the encoders write such bytes as TiCDC does.
    """
    if not _CHECKING.get():
        return
    columns = event.table.columns
    types = column_checks(event.table)
    for image in (event.before, event.after):
        for column, (ctype, check), value in zip(columns, types, image or (), strict=False):
            if value is None:
                if column.key == "primary":
                    raise EncodeError(
                        f"column {column.name!r}: NULL in a primary key column", protocol=protocol
                    )
                continue  # NULL is no value a type can refuse
            why = check(value, ctype)
            if why is not None:
                raise EncodeError(
                    f"column {column.name!r}: {ctype} value {describe(value)} {why}",
                    protocol=protocol,
                )
