r"""Values as text on both sides of the consumer check, and their type-aware comparison.

The expected state holds each value as one text plus its column's *kind* (docs/consumers.md,
"The expected state on disk"): NULL is null; an integer its digits; FLOAT and DOUBLE the
shortest text that reads back as the same double; DECIMAL its exact digits, scale kept;
text itself; binary ``\x`` and lower-case hex (PostgreSQL's ``bytea`` output); DATE, DATETIME
and TIME their TiDB text; TIMESTAMP its text in the zone the column's messages name.

A consumer's value reaches the check as text too: ``actual_text`` renders what a reader
returns (Parquet, CSV, JSON Lines, PostgreSQL) the way Spark's casts render the same column
(``spark.actual_columns``), so most values compare as equal text and only the rest go through
``same_value``, which compares meaning by kind:

* ``int``: the same integer (``1``, ``1.0`` and ``true`` are 1);
* ``float``: the same double, or the same once both are rounded to float32 (a FLOAT column
  stored as ``real``);
* ``decimal``: the same number (``1.50`` and ``1.5``); ``json``: the same JSON document;
* ``timestamp``: the same instant when the consumer's text carries a zone or offset, read in
  the column's zone; without one, the same wall-clock text;
* ``temporal`` and ``timestamp``: a fraction's trailing zeros do not matter (``10:00:00.500``
  and ``10:00:00.5``; a ``T`` separator and a space are the same);
* ``bytes``: the same bytes, from ``\x`` hex, or text that encodes to them as UTF-8;
* ``text``: the same text, or binary that decodes to it.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
import struct
from collections.abc import Callable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["KINDS", "Kind", "actual_text", "kind_of", "same_value", "value_text"]

Kind = Literal["int", "float", "decimal", "text", "bytes", "temporal", "timestamp", "json"]
KINDS: tuple[Kind, ...] = (
    "int",
    "float",
    "decimal",
    "text",
    "bytes",
    "temporal",
    "timestamp",
    "json",
)
_TEMPORAL = re.compile(
    r"-?[0-9]{1,4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?)?"
    r"|-?[0-9]{1,3}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?"
)
_ZONED = re.compile(r"(.*[0-9])(Z|[+-][0-9]{2}:?[0-9]{2})")


def kind_of(value: Value, mysql_type: str | None = None) -> Kind | None:
    """The kind of a column whose values include ``value``; ``None`` for NULL."""
    if mysql_type == "json":
        return "json"
    if value is None:
        return None
    if isinstance(value, bool | int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, DecimalValue):
        return "decimal"
    if isinstance(value, TimestampValue):
        return "timestamp"
    if isinstance(value, bytes):
        return "bytes"
    return "temporal" if _TEMPORAL.fullmatch(value) else "text"


def _bytes_text(value: bytes) -> str:
    return "\\x" + value.hex()


def value_text(value: Value) -> str | None:
    """The expected state's text of ``value`` (the module doc)."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return _bytes_text(value)
    if isinstance(value, DecimalValue | TimestampValue):
        return value.text
    if isinstance(value, bool):
        return str(int(value))
    return repr(value) if isinstance(value, float) else str(value)


def _temporal_text(value: dt.date | dt.time | dt.timedelta) -> str:
    if isinstance(value, dt.timedelta):  # a TIME read as an interval
        sign = "-" if value < dt.timedelta(0) else ""
        micros = abs(value) // dt.timedelta(microseconds=1)
        seconds, fraction = divmod(micros, 1_000_000)
        text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        return f"{text}.{fraction:06d}" if fraction else text
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        utc = value.astimezone(dt.UTC).replace(tzinfo=None)
        return utc.isoformat(sep=" ") + "Z"
    return value.isoformat(sep=" ") if isinstance(value, dt.datetime) else value.isoformat()


def actual_text(value: object) -> str | None:
    """A reader's value as text, rendered as the Spark path renders the same column."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return _bytes_text(bytes(value))
    if isinstance(value, dt.date | dt.time | dt.timedelta):
        return _temporal_text(value)
    if isinstance(value, dict | list):  # jsonb, or a JSON Lines member that is not text
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, float | int | Decimal):
        return value_text(value if not isinstance(value, Decimal) else DecimalValue(str(value)))
    return str(value)


def _number(text: str) -> Decimal | None:
    try:
        number = Decimal(text.strip())
    except InvalidOperation:
        return None
    return number if number.is_finite() else None


def _same_int(expected: str, actual: str) -> bool:
    if actual.lower() in {"true", "false"}:
        actual = str(int(actual.lower() == "true"))
    number = _number(actual)
    return number is not None and number == Decimal(expected)


def _float32(value: float) -> bytes:
    return struct.pack("<f", value) if abs(value) <= 3.4e38 else b""


def _same_float(expected: str, actual: str) -> bool:
    try:
        want, got = float(expected), float(actual)
    except ValueError:
        return False
    if want == got or not (math.isfinite(want) and math.isfinite(got)):
        return want == got
    return _float32(want) == _float32(got) != b""


def _same_decimal(expected: str, actual: str) -> bool:
    want, got = _number(expected), _number(actual)
    return want is not None and want == got


def _trimmed(text: str) -> str:
    text = text.replace("T", " ", 1)
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def _same_temporal(expected: str, actual: str) -> bool:
    return _trimmed(expected) == _trimmed(actual)


def _in_zone(text: str, zone: str | None) -> str | None:
    match = _ZONED.fullmatch(text.strip())
    if match is None or zone is None:
        return None
    body, offset = match.groups()
    try:
        instant = dt.datetime.fromisoformat(body.replace(" ", "T") + offset.replace("Z", "+00:00"))
        return instant.astimezone(ZoneInfo(zone)).replace(tzinfo=None).isoformat(sep=" ")
    except (ValueError, ZoneInfoNotFoundError):
        return None


def _same_timestamp(expected: str, actual: str, zone: str | None) -> bool:
    local = _in_zone(actual, zone)
    return _same_temporal(expected, actual if local is None else local)


def _same_json(expected: str, actual: str) -> bool:
    try:
        return bool(json.loads(expected) == json.loads(actual))
    except ValueError:
        return expected == actual


def _as_bytes(text: str) -> bytes:
    if text.startswith("\\x"):
        try:
            return bytes.fromhex(text[2:])
        except ValueError:
            pass
    return text.encode("utf-8", "surrogateescape")


def _same_bytes(expected: str, actual: str) -> bool:
    return _as_bytes(expected) == _as_bytes(actual)


_BY_KIND: Mapping[str, Callable[[str, str], bool]] = {
    "int": _same_int,
    "float": _same_float,
    "decimal": _same_decimal,
    "temporal": _same_temporal,
    "json": _same_json,
    "bytes": _same_bytes,
    "text": _same_bytes,
}


def same_value(
    expected: str | None, actual: str | None, kind: str | None, zone: str | None
) -> bool:
    """Whether the consumer's text ``actual`` means the expected text (the module doc)."""
    if expected is None or actual is None:
        return expected is actual
    if expected == actual:
        return True
    if kind == "timestamp":
        return _same_timestamp(expected, actual, zone)
    same = _BY_KIND.get(kind or "text", _same_bytes)
    return same(expected, actual)
