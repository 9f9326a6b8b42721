r"""The cross-protocol oracle: what every protocol keeps of a row change, and what it loses.

One change goes through every protocol's encoder and decoder; each decoded row is compared with
a protocol-independent projection of the change, after the losses that protocol is documented
to have (and only those). A disagreement is a bug in one codec or an undocumented loss.

The projection compares meaning, not text: integers, FLOAT as its float32, DOUBLE, DECIMAL as
a number, text and binary as bytes, temporal values as their text without trailing zeros in the
fraction (Debezium's numbers carry no fsp). Virtual generated columns are never written.

Documented losses (ground truth sections):

* Go ``encoding/json`` replaces every byte of invalid UTF-8 in text with U+FFFD (§1.4); which
  encoders and text types, ``reference.losses`` says (Canal-JSON's easyjson does the same).
* Debezium (§5.3, run here with ``enable-tidb-extension`` so types are named): DECIMAL is a
  double; NULL becomes the column DEFAULT; a zero DATE/DATETIME becomes NULL, or the epoch in a
  NOT NULL column; a zero TIMESTAMP becomes the epoch, but a NULL whose default is the zero
  TIMESTAMP stays NULL in a nullable column; DATE/DATETIME years 1–69 gain 2000 and 70–99
  gain 1900. An ENUM member comes back as its name, not its index, when TiCDC's ``allowed``
  list leaves its place open: that escaping folds ``''`` and ``\'`` into ``'`` and does not
  escape backslashes, so ``\,`` is a comma inside a member or a member ending in ``\``.

Values are compared by type first, so an index never meets a name's bytes in ``==``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from ticdc_conformance.reference import (
    CODECS,
    ColumnInfo,
    DecimalValue,
    DecodedColumn,
    DecodedRow,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
)
from ticdc_conformance.reference.debezium._types import enum_allowed
from ticdc_conformance.reference.losses import replace_invalid_utf8, replaced_text_types
from ticdc_conformance.reference.message import SchemaCodec

__all__ = [
    "ORACLE_CONFIGS",
    "Canonical",
    "disagreements",
    "enum_readings",
    "observed",
    "observed_image",
    "projected",
    "projected_image",
]

Canonical = None | int | float | Decimal | bytes | str
"""A value reduced to its meaning (see the module docstring)."""

ORACLE_CONFIGS: dict[str, dict[str, str]] = {
    "open": {},
    "craft": {},
    "simple-json": {},
    "simple-avro": {},
    "debezium": {"enable-tidb-extension": "true"},
    "canal-json": {"enable-tidb-extension": "true"},
}
"""Encoder options per protocol for the oracle (Debezium names its types with the extension;
Canal-JSON carries the commit ts only in it)."""

_TEMPORAL = frozenset({"date", "datetime", "timestamp", "time"})
_ZERO = re.compile(r"^0000-00-00")
_TWO_DIGIT_YEAR = re.compile(r"^00([0-9]{2})(-.*)$")


def _float32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


def _temporal_text(text: str) -> str:
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def canonical(column: ColumnInfo, value: Value) -> Canonical:
    """``value`` of ``column`` reduced to its meaning."""
    if value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        if column.type == "decimal":  # Debezium's double
            return Decimal(repr(value))
        return _float32(value) if column.type == "float" else value
    if isinstance(value, DecimalValue):
        return Decimal(value.text)
    if isinstance(value, TimestampValue):
        return _temporal_text(value.text)
    if isinstance(value, str):
        return _temporal_text(value) if column.type in _TEMPORAL else value.encode()
    return value


_Loss = Callable[[ColumnInfo, Canonical, str], Canonical]


def _json_text_loss(protocol: str) -> _Loss:
    def loss(column: ColumnInfo, value: Canonical, profile: str) -> Canonical:
        binary = column.effective_charset == "binary"
        replaced = column.type in replaced_text_types(protocol, profile)
        if replaced and not binary and isinstance(value, bytes):
            return replace_invalid_utf8(value)
        return value

    return loss


def enum_readings(elements: tuple[str, ...], name: str) -> frozenset[int]:
    r"""Every 1-based index a reader of TiCDC's ENUM ``allowed`` list may give member ``name``.

    Walks every way of reading the list: a comma after a backslash separates members or sits
    inside one, any other comma separates; wherever a member reads as ``name``'s escaped form,
    its position counts.
    """
    allowed, target = enum_allowed(elements), enum_allowed((name,))
    commas = [i for i, char in enumerate(allowed) if char == ","] + [len(allowed)]

    @cache
    def walk(start: int, members: int) -> frozenset[int]:
        found: set[int] = set()
        for end in (i for i in commas if i >= start):
            if allowed[start:end] == target:
                found.add(members + 1)
            if end < len(allowed):
                found |= walk(end + 1, members + 1)
            if end == len(allowed) or end == 0 or allowed[end - 1] != "\\":
                break  # a comma not after a backslash always separates
        return frozenset(found)

    return walk(0, 0)


def _debezium_loss(column: ColumnInfo, value: Canonical, profile: str) -> Canonical:
    del profile
    if value is None and column.default is not None:
        value = canonical(column, column.default)
        if column.type == "timestamp" and isinstance(value, str) and _ZERO.match(value):
            # a zero TIMESTAMP default stands in for NULL only in a NOT NULL column
            return "1970-01-01 00:00:00" if column.nullable is False else None
    elements = column.elements or ()
    if column.type == "enum" and isinstance(value, int) and 1 <= value <= len(elements):
        name = elements[value - 1]
        return value if enum_readings(elements, name) == {value} else name.encode()
    if isinstance(value, Decimal):
        return Decimal(repr(float(value)))
    if isinstance(value, str) and column.type in ("date", "datetime"):
        if _ZERO.match(value):
            epoch = "1970-01-01" if column.type == "date" else "1970-01-01 00:00:00"
            return epoch if column.nullable is False else None
        two_digit = _TWO_DIGIT_YEAR.match(value)
        if two_digit and int(two_digit[1]) > 0:
            year = int(two_digit[1])
            return f"{year + (2000 if year < 70 else 1900)}{two_digit[2]}"
    if isinstance(value, str) and column.type == "timestamp" and _ZERO.match(value):
        return "1970-01-01 00:00:00"
    return value


def _lossless(column: ColumnInfo, value: Canonical, profile: str) -> Canonical:
    del column, profile
    return value


_LOSSES: dict[str, _Loss] = {
    "open": _json_text_loss("open"),
    "craft": _lossless,
    "simple-json": _json_text_loss("simple-json"),
    "simple-avro": _lossless,
    "debezium": _debezium_loss,
    "canal-json": _json_text_loss("canal-json"),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Projection:
    """The parts of a row change every protocol carries."""

    op: str
    commit_ts: int | None
    schema: str
    table: str
    before: dict[str, Canonical] | None
    after: dict[str, Canonical] | None


def projected_image(
    table: TableInfo, values: Sequence[Value], protocol: str, profile: str
) -> dict[str, Canonical]:
    """A row image of ``table`` as ``protocol`` is documented to deliver it, by column name."""
    loss = _LOSSES[protocol]
    return {
        column.name: loss(column, canonical(column, value), profile)
        for column, value in zip(table.columns, values, strict=True)
        if not column.is_virtual
    }


def observed_image(table: TableInfo, decoded: Sequence[DecodedColumn]) -> dict[str, Canonical]:
    """A decoded row image reduced the same way, typed by ``table``'s columns."""
    columns = {column.name: column for column in table.columns}
    return {c.name: canonical(columns[c.name], c.value) for c in decoded}


def projected(event: RowChangedEvent, protocol: str, profile: str) -> Projection:
    """The change as ``protocol`` is documented to deliver it."""

    def image(values: Sequence[Value] | None) -> dict[str, Canonical] | None:
        return None if values is None else projected_image(event.table, values, protocol, profile)

    return Projection(
        op=event.op,
        commit_ts=event.commit_ts,
        schema=event.table.schema,
        table=event.table.name,
        before=image(event.before),
        after=image(event.after),
    )


def observed(row: DecodedRow, event: RowChangedEvent) -> Projection:
    """A decoded row reduced the same way, typed by the change's table."""

    def image(decoded: Sequence[DecodedColumn] | None) -> dict[str, Canonical] | None:
        return None if decoded is None else observed_image(event.table, decoded)

    return Projection(
        op=row.op,
        commit_ts=row.commit_ts,
        schema=row.schema,
        table=row.table,
        before=image(row.before),
        after=image(row.after),
    )


def decoded_rows(event: RowChangedEvent, protocol: str, profile: str) -> list[DecodedRow]:
    """The rows a consumer of ``protocol`` reads back for ``event``."""
    codec = CODECS[protocol]
    config = codec.config_from_options(ORACLE_CONFIGS[protocol], profile=profile)
    messages = codec.encode([event], config)
    if isinstance(codec, SchemaCodec):  # Simple: the consumer learns the schema from a BOOTSTRAP
        decoder = codec.new_decoder()
        decoder.feed(codec.encode_bootstrap(event.table, config))
        events = [e for i, m in enumerate(messages) for e in decoder.feed(m, message_index=i)]
    else:
        events = [e for i, m in enumerate(messages) for e in codec.decode(m, message_index=i)]
    return [e for e in events if isinstance(e, DecodedRow)]


def _same(expected: object, actual: object) -> bool:
    """``==``, but bytes equal only bytes (``python -b`` warns when bytes meet int or str)."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            _same(value, actual[key]) for key, value in expected.items()
        )
    if isinstance(expected, bytes) != isinstance(actual, bytes):
        return False
    return bool(expected == actual)


def disagreements(event: RowChangedEvent, protocol: str, profile: str) -> list[str]:
    """How ``protocol`` under ``profile`` fails to deliver ``event`` as documented."""
    rows = decoded_rows(event, protocol, profile)
    if len(rows) != 1:
        return [f"{protocol}/{profile}: {len(rows)} rows decoded, expected 1"]
    want, got = projected(event, protocol, profile), observed(rows[0], event)
    problems = []
    for part in ("op", "commit_ts", "schema", "table", "before", "after"):
        expected, actual = getattr(want, part), getattr(got, part)
        if not _same(expected, actual):
            problems.append(f"{protocol}/{profile} {part}: expected {expected!r}, got {actual!r}")
    return problems
