"""Cheap tests that prove a value valid, shared by the column readers of the decoders.

A decoder's column reader first asks one of these; ``True`` means the full read and validity
check (``reference/validity.py``) would accept the value as it is, so the reader returns it;
``False`` (or ``None``: not judged here) sends the value down the full path, which also
builds the error or finding. Each is a sufficient test only: it never accepts what the full
path refuses, and the readers' differential tests hold them to that.
"""

from __future__ import annotations

from datetime import date, datetime

from ticdc_conformance.reference._gojson import json_accelerator

__all__ = ["MAX_FSP", "is_date", "is_datetime", "json_reads"]

MAX_FSP = 6
"""The most fractional-second digits MySQL keeps."""
_MAX_OPENINGS = 64
"""Arrays and objects a JSON text may open for orjson's verdict to stand: deeper nesting is
left to the full path, whose limits differ."""
_from_date = date.fromisoformat
_from_datetime = datetime.fromisoformat


def is_date(raw: str) -> bool:
    """Whether ``raw`` is ``YYYY-MM-DD`` of a day that exists (years 1–9999).

    ``date.fromisoformat`` judges the numbers once the shape is that one (it reads other
    ISO 8601 shapes too).
    """
    if len(raw) != 10 or raw[4] != "-" or raw[7] != "-" or not raw.isascii():
        return False
    try:
        _from_date(raw)
    except ValueError:
        return False
    return True


def is_datetime(raw: str, fsp: int | None = None) -> bool:
    """Whether ``raw`` is ``YYYY-MM-DD HH:MM:SS[.f]`` of a day that exists and a time of day.

    ``fsp``: exactly that many fractional digits (0: none); ``None``: none or 1 to 6. Hours
    up to 23 are checked here (newer Pythons read 24:00 as the next midnight), the rest by
    ``datetime.fromisoformat`` once the shape is that one.
    """
    size = len(raw)
    if fsp is None:
        shaped = size == 19 or (21 <= size <= 20 + MAX_FSP and raw[19] == ".")
    else:
        shaped = size == 19 if fsp == 0 else (size == 20 + fsp and raw[19] == ".")
    if (
        not shaped
        or raw[4:17:3] != "-- ::"  # the separators at 4, 7, 10, 13 and 16 in one slice
        or raw[11:13] > "23"
        or not raw.isascii()
        or (size > 19 and not raw[20:].isdigit())
    ):
        return False
    try:
        return _from_datetime(raw).tzinfo is None
    except ValueError:
        return False


def json_reads(raw: str) -> bool | None:
    """Whether orjson reads ``raw`` as JSON.

    ``None`` when orjson is not installed, or the text nests too deep for its verdict to be
    the full path's.
    """
    loads = json_accelerator()
    if loads is None or raw.count("[") + raw.count("{") > _MAX_OPENINGS:
        return None
    try:
        loads(raw)  # orjson reads text as well as bytes
    except ValueError:
        return False
    return True
