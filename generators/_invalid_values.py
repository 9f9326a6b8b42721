"""The ``invalid-value`` fault: one value per type family that TiCDC cannot have written.

The machinery of ``ticdc_conformance.generators.faults``. A family is judged from the column
types of the log's own tables (the ``shop`` workload has integers, DECIMAL, ENUM, DATETIME,
TIMESTAMP, FLOAT, DOUBLE, BIT and text; no YEAR, DATE, TIME, SET or JSON column), and only
where the protocol's wire can carry the invalid value (docs/errors.md, "Invalid values"; the
must-reject cases of ``fixtures/builder/_invalid.py`` show the same split):

* the JSON protocols (Open, Simple JSON, Debezium with ``enable-tidb-extension``): the value
  of one column of one row is rewritten in the message's JSON as raw text (Open's batch of
  length-prefixed documents re-framed around the edited one);
* the binary ones (Craft, Simple Avro): the row is re-encoded with the invalid value and the
  encoders' checks off (``validation.unchecked_values``), or, where the encoder cannot write
  it (Avro's NaN DOUBLE, Craft's FLOAT beyond float32), with a marker value whose wire bytes
  are then replaced by the invalid ones, of the same length.

A value some decoder refuses outright is an ``undecodable`` message, not an invalid value, so
that family is left out there: Craft's non-finite DOUBLE (TiCDC writes 0, §1.1), Simple
JSON's and Avro's INT beyond its width (Simple checks widths as it reads, §4), Simple JSON's
DOUBLE beyond float64, Debezium's INT beyond int32 and DATETIME beyond 9999. Text that is
not UTF-8 is invalid only in Simple JSON: every other protocol carries such text as raw bytes
(§1.4). Key and indexed columns and the dispatcher's ``columns`` are never touched, so the
row still goes to its partition and keeps its identity: the only finding is the invalid value.
"""

from __future__ import annotations

import dataclasses
import json
import math
import struct
from collections.abc import Sequence

from ticdc_conformance.generators._placement import (
    FaultPlacementError,
    Injector,
    Mark,
    rows_carried,
)
from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    DecodeError,
    Message,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
)
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.reference.validation import InvalidValueError, unchecked_values

__all__ = ["FAMILIES", "families", "invalid_values"]

FAMILIES: dict[str, frozenset[str]] = {
    "integer": frozenset({"tinyint", "smallint", "mediumint", "int"}),
    "decimal": frozenset({"decimal"}),
    "enum": frozenset({"enum"}),
    "bit": frozenset({"bit"}),
    "float": frozenset({"float"}),
    "double": frozenset({"double"}),
    "datetime": frozenset({"datetime"}),
    "timestamp": frozenset({"timestamp"}),
    "text": frozenset({"varchar", "char", "tinytext", "text", "mediumtext", "longtext"}),
}
"""Type family → the column types it covers (those the fault knows how to corrupt)."""

_WIDTH = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32}
_SENTINEL = "@@invalid@@"


def _too_wide(column: ColumnInfo) -> int:
    """The first integer past the column's width (signed: 2^(w-1); unsigned: 2^w)."""
    width = _WIDTH.get(column.type, 64)  # only asked of the integer family's types
    return 1 << width if column.unsigned else 1 << (width - 1)


def _fraction(column: ColumnInfo) -> str:
    return "." + "0" * column.decimal if column.decimal else ""  # fsp


def _json_raw(protocol: str, family: str, column: ColumnInfo) -> str | None:
    """The raw JSON text of an invalid value of ``column`` in ``protocol``; ``None``: none."""
    frac = _fraction(column)
    if protocol == "open":
        raws = {
            "integer": str(_too_wide(column)),
            "decimal": '"1.' + "1" * 40 + '"',
            "enum": "70000",
            "bit": "-1",
            "float": "1e39",
            "double": "1e400",
            "datetime": f'"2024-01-01 25:00:00{frac}"',
            "timestamp": f'"2024-13-45 00:00:00{frac}"',
        }
    elif protocol == "simple-json":
        raws = {
            "decimal": '"1.' + "1" * ((column.decimal or 0) + 1) + '"',
            "enum": f'"{len(column.elements or ()) + 1}"',
            "bit": f'"{2 ** (column.length or 64)}"',
            "float": '"1' + "0" * 39 + '"',
            "datetime": f'"2024-01-01 25:00:00{frac}"',
            "timestamp": f'{{"location":"UTC","value":"2024-13-45 00:00:00{frac}"}}',
            "text": '"\\ud800"',
        }
    else:  # debezium, with tidb_type stating the column type
        # INT is an int32 and BIGINT an int64 on this wire: past those, the message is
        # undecodable, and so is a DATETIME past 9999; the narrower integers have room
        wire_wide = column.type != "int" or column.unsigned
        raws = {
            "integer": str(_too_wide(column)) if wire_wide else "",
            "float": "1e39",
            "double": "1e400",
            "timestamp": f'"2040-01-01T00:00:00{frac}Z"',
        }
    return raws.get(family) or None


def _open_documents(value: bytes) -> list[bytes]:
    """Open's value: 8-byte big-endian lengths, each followed by one JSON document (§2.1)."""
    documents, at = [], 0
    while at < len(value):
        size = int.from_bytes(value[at : at + 8], "big")
        documents.append(value[at + 8 : at + 8 + size])
        at += 8 + size
    return documents


def _edit_document(document: bytes, path: tuple[str, ...], raw: str) -> bytes | None:
    parsed = json.loads(document)
    inner = parsed
    for token in path[:-1]:
        inner = inner.get(token) if isinstance(inner, dict) else None
        if not isinstance(inner, dict):
            return None
    if path[-1] not in inner or inner[path[-1]] is None:
        return None  # a NULL has no type to break; another row will do
    inner[path[-1]] = _SENTINEL
    text = json.dumps(parsed, separators=(",", ":"), ensure_ascii=False)
    return text.replace(json.dumps(_SENTINEL), raw).encode()


def _json_edit(
    protocol: str, message: Message, *, row: int, image: str, name: str, raw: str
) -> Message | None:
    """``message`` with the value of column ``name`` of its ``row``-th row set to ``raw``."""
    value = message.value or b""
    if protocol == "open":
        documents = _open_documents(value)
        key = "u" if image == "after" else "p"
        edited = _edit_document(documents[row], (key, name, "v"), raw)
        if edited is None:
            return None
        documents[row] = edited
        framed = b"".join(len(d).to_bytes(8, "big") + d for d in documents)
        return dataclasses.replace(message, value=framed)
    path: tuple[str, ...] = ("data" if image == "after" else "old", name)
    if protocol == "debezium":
        path = ("payload", image, name)
    edited = _edit_document(value, path, raw)
    return None if edited is None else dataclasses.replace(message, value=edited)


_F64, _F32_MARKER = struct.Struct("<d"), 2.0**100  # exact in float32
_DOUBLE_MARKER = 1.2345678901234567e300


def _binary(protocol: str, family: str, column: ColumnInfo) -> tuple[Value, bytes, bytes] | None:
    """(value to encode, its wire bytes to replace, the invalid bytes); empty bytes: none."""
    frac = _fraction(column)
    direct: dict[str, Value] = {
        "decimal": DecimalValue("9" * 66),
        "enum": 70000,
        "datetime": f"2024-01-01 25:00:00{frac}",
        "timestamp": TimestampValue(f"2024-13-45 00:00:00{frac}", "UTC"),
    }
    if protocol == "craft":
        direct["integer"] = _too_wide(column) if column.type in _WIDTH else None
        # a non-finite DOUBLE is no invalid value in Craft but an undecodable message
        marked = {"float": (_F32_MARKER, _F64.pack(_F32_MARKER), _F64.pack(1e39))}
    else:  # simple-avro
        direct |= {"bit": 2 ** (column.length or 64), "float": 1e39}
        marked = {"double": (_DOUBLE_MARKER, _F64.pack(_DOUBLE_MARKER), _F64.pack(math.nan))}
    if family in marked:
        return marked[family]
    value = direct.get(family)
    return None if value is None else (value, b"", b"")


_JSON = ("open", "simple-json", "debezium")
_CARRIED = {
    "open": ("integer", "decimal", "enum", "bit", "float", "double", "datetime", "timestamp"),
    "craft": ("integer", "decimal", "enum", "float", "datetime", "timestamp"),
    "simple-json": ("decimal", "enum", "bit", "float", "datetime", "timestamp", "text"),
    "simple-avro": ("decimal", "enum", "bit", "float", "double", "datetime", "timestamp"),
    "debezium": ("integer", "float", "double", "timestamp"),
}
"""Protocol → the families whose invalid values its wire can carry (and this fault writes)."""


def families(protocol: str) -> tuple[str, ...]:
    """The type families the fault corrupts in ``protocol`` (none: it does not apply)."""
    return _CARRIED.get(protocol, ())


def _family_of(column: ColumnInfo) -> str | None:
    if column.key is not None:
        return None
    return next((f for f, types in FAMILIES.items() if column.type in types), None)


def invalid_values(inj: Injector, zone: int) -> list[Mark]:
    """One row message per family the log's tables and the protocol carry, one value broken."""
    protocol = inj.log.settings.protocol
    wanted = list(families(protocol))
    settings = inj.log.settings
    # columns a dispatcher hashes stay valid: the row keeps its partition
    routed = {
        *settings.dispatcher.columns,
        *(column for rule in settings.routes for column in rule.partition.columns),
    }
    marks: list[Mark] = []
    done: set[str] = set()
    for p, _, _, rows in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in rows:
            if len(done) == len(wanted):
                return marks
            delivery = deliveries[i]
            if any(m.anchor is delivery for m in marks):
                continue
            carried = _carried(inj, p, i)
            broken = _break_one(
                inj, delivery.message, carried=carried, wanted=wanted, done=done, routed=routed
            )
            if broken is None:
                continue
            family, message = broken
            oldest = inj.oldest(delivery)
            deliveries[i] = dataclasses.replace(delivery, message=message)
            done.add(family)
            marks.append(Mark("invalid-value", p, deliveries[i], oldest))
    if not marks:
        raise FaultPlacementError("no row message with a value this protocol can carry broken")
    return marks


def _indexed(row: RowChangedEvent) -> set[str]:
    return {c for index in row.table.indexes for c in index.columns}


def _carried(inj: Injector, partition: int, index: int) -> list[RowChangedEvent]:
    deliveries = inj.log.partitions[partition]
    return rows_carried(deliveries, deliveries[index], inj)  # type: ignore[return-value]


def _break_one(
    inj: Injector,
    original: Message,
    *,
    carried: list[RowChangedEvent],
    wanted: list[str],
    done: set[str],
    routed: set[str],
) -> tuple[str, Message] | None:
    """The first value of ``carried`` of a family still wanted, broken, and its family."""
    for k, row in enumerate(carried):
        spared = routed | _indexed(row)
        image = "after" if row.after is not None else "before"
        values = row.after if row.after is not None else row.before
        assert values is not None
        for c, column in enumerate(row.table.columns):
            family = _family_of(column)
            if family is None or column.name in spared or values[c] is None:
                continue
            if family in done or family not in wanted:
                continue
            message = _broken(inj, original, carried=carried, k=k, image=image, c=c, family=family)
            tables = [r.table for r in carried]
            if message is not None and _invalid_in(inj, message, tables) == {column.name}:
                return family, message
    return None


def _invalid_in(inj: Injector, message: Message, tables: Sequence[TableInfo]) -> set[str]:
    """The columns the decoder finds invalid values in (``?``: not decodable at all).

    Simple types its values by the table schema: its BOOTSTRAP messages go first.
    """
    codec, messages = inj.codec, [message]
    if isinstance(codec, SchemaCodec):
        messages = [
            *(codec.encode_bootstrap(t, inj.config) for t in dict.fromkeys(tables)),
            message,
        ]
    try:
        decode_messages(inj.log.settings.protocol, messages, compression=inj.compression)
    except InvalidValueError as error:
        return {getattr(f, "column", None) or "?" for f in error.findings}
    except DecodeError:
        return {"?"}
    return set()


def _broken(
    inj: Injector,
    original: Message,
    *,
    carried: list[RowChangedEvent],
    k: int,
    image: str,
    c: int,
    family: str,
) -> Message | None:
    protocol = inj.log.settings.protocol
    row = carried[k]
    column = row.table.columns[c]
    if protocol in _JSON:
        raw = _json_raw(protocol, family, column)
        if raw is None:
            return None
        return _json_edit(protocol, original, row=k, image=image, name=column.name, raw=raw)
    spec = _binary(protocol, family, column)
    if spec is None:
        return None
    value, old, new = spec
    values = list(getattr(row, image))
    values[c] = value
    changed = (
        dataclasses.replace(row, after=tuple(values))
        if image == "after"
        else dataclasses.replace(row, before=tuple(values))
    )
    with unchecked_values():
        messages = inj.codec.encode([*carried[:k], changed, *carried[k + 1 :]], inj.config)
    if len(messages) != 1:
        return None
    (message,) = messages
    if old:
        payload = message.value or b""
        if payload.count(old) != 1:
            return None
        message = dataclasses.replace(message, value=payload.replace(old, new))
    return message
