"""Column values as TiCDC holds them, shared by every protocol.

A value is one of (shared/design/architecture.md, "Two JSON forms"):

* ``None``: SQL NULL;
* ``int``: every integer type, YEAR, BIT, ENUM (1-based index) and SET (bitmask), exact over
  the whole int64 and uint64 range;
* ``float``: FLOAT and DOUBLE (never NaN or infinite: TiCDC's mounter turns those into 0 before
  any codec sees them, ground truth §1.1);
* ``str``: text (CHAR, VARCHAR, TEXT), DATE, DATETIME, TIME, JSON and VECTOR in their TiDB text
  forms;
* ``bytes``: binary strings (BINARY, VARBINARY, BLOB) and text that is not valid UTF-8;
* ``DecimalValue``: DECIMAL as its exact digits, scale kept (``"129012.1230000"``);
* ``TimestampValue``: TIMESTAMP text plus the time zone it is rendered in, when known.

The last two are tagged because JSON alone cannot tell them from text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from ticdc_conformance.reference.drafts import draft_class

__all__ = [
    "DecimalValue",
    "TimestampValue",
    "Value",
    "check_value",
    "string_bytes",
    "valid_decimal",
    "valid_timestamp",
]

_DECIMAL_TEXT = re.compile(r"-?[0-9]+(\.[0-9]+)?")
_TIMESTAMP_TEXT = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?"
)


@dataclass(frozen=True, slots=True)
class DecimalValue:
    """A DECIMAL as TiDB's ``MyDecimal.String()`` prints it: digits, scale preserved."""

    text: str
    """Optional minus sign, integer digits, then a dot and the fraction when the scale is > 0."""

    def __post_init__(self) -> None:
        if not _DECIMAL_TEXT.fullmatch(self.text):
            raise ValueError(f"not a decimal text: {self.text!r}")


@dataclass(frozen=True, slots=True)
class TimestampValue:
    """A TIMESTAMP as TiCDC renders it: text in the TiCDC server's time zone (ground truth §1.1)."""

    text: str
    """``YYYY-MM-DD HH:MM:SS`` plus ``.`` and exactly *fsp* digits when fsp > 0."""
    zone: str | None = None
    """The IANA zone the text is rendered in, or ``None`` when the message does not say."""

    def __post_init__(self) -> None:
        if not _TIMESTAMP_TEXT.fullmatch(self.text):
            raise ValueError(f"not a timestamp text: {self.text!r}")


_new = object.__new__
_DraftDecimal = draft_class(DecimalValue)
_DraftTimestamp = draft_class(TimestampValue)


def valid_decimal(text: str) -> DecimalValue:
    """``DecimalValue(text)`` **without the constructor's check**.

    For a reader whose own test of ``text`` implies it: the same object, made as a draft
    (``reference.drafts``; a test holds it to the constructor).
    """
    value: Any = _new(_DraftDecimal)
    value.text = text
    value.__class__ = DecimalValue
    return value  # type: ignore[no-any-return]


def valid_timestamp(text: str, zone: str | None = None) -> TimestampValue:
    """``TimestampValue(text, zone)`` **without the constructor's check**, as ``valid_decimal``."""
    value: Any = _new(_DraftTimestamp)
    value.text = text
    value.zone = zone
    value.__class__ = TimestampValue
    return value  # type: ignore[no-any-return]


Value = None | int | float | str | bytes | DecimalValue | TimestampValue


def check_value(value: object) -> str | None:
    """Return why ``value`` is not a ``Value``, or ``None`` when it is one."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return "text must be valid Unicode; give bytes that are not UTF-8 as bytes"
        return None
    if value is None or isinstance(value, bytes | DecimalValue | TimestampValue):
        return None
    if isinstance(value, bool):
        return "booleans are not column values; BOOL is TINYINT(1), use 0 or 1"
    if isinstance(value, int):
        if not -(2**63) <= value < 2**64:
            return f"integer {value} is outside the int64/uint64 range"
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else "NaN and infinities never reach a codec"
    return f"{type(value).__name__} is not a column value"


def string_bytes(value: Value) -> bytes:
    """The bytes TiCDC holds for a string column's value: bytes as they are, text as UTF-8.

    ``ValueError`` for any other value. Lone surrogates, which no valid text holds, become the
    bytes ``surrogatepass`` gives them rather than an encoding error.
    """
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass")
    raise ValueError(f"expected text or bytes, got {type(value).__name__}")
