"""JSON text as TiCDC's jsoniter writer emits it (§1.4), from plain Python structures.

Members keep insertion order; ``Pairs`` allows a member name twice (one TiCDC quirk needs it,
see ``_types``). ``Float32`` marks a value jsoniter writes with 32-bit shortest digits; other
floats use 64-bit digits. ``Raw`` is text spliced in as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ticdc_conformance.reference._gofloat import format_float
from ticdc_conformance.reference._gojson import JsonStyle, quote

__all__ = [
    "Float32",
    "Pairs",
    "Raw",
    "dump",
    "float32_text",
    "float64_text",
    "member",
    "quote_text",
]


@dataclass(frozen=True, slots=True)
class Float32:
    """A float jsoniter writes as float32."""

    value: float


@dataclass(frozen=True, slots=True)
class Raw:
    """Finished JSON text."""

    text: str


class Pairs(list[tuple[str, object]]):
    """An object whose member names may repeat."""


def dump(value: object) -> str:
    """The JSON text of ``value`` (dict, Pairs, list, str, bytes as text, int, float, ...)."""
    if type(value) is str:  # the common kinds first, by exact type
        return quote(value, JsonStyle.JSONITER)
    if type(value) is dict:
        return "{" + ",".join([f"{_key(k)}:{dump(v)}" for k, v in value.items()]) + "}"
    if type(value) is int:
        return str(value)
    if type(value) is Pairs:
        return "{" + ",".join([f"{_key(k)}:{dump(v)}" for k, v in value]) + "}"
    return _dump_other(value)


def quote_text(text: str | bytes) -> str:
    """A JSON string literal as jsoniter writes it (``dump`` of a string)."""
    return quote(text, JsonStyle.JSONITER)


def float64_text(x: float) -> str:
    """``dump`` of a float: jsoniter's float64 text."""
    return format_float(x, 64, JsonStyle.JSONITER)


def float32_text(x: float) -> str:
    """``dump`` of ``Float32(x)``: jsoniter's float32 text."""
    return format_float(x, 32, JsonStyle.JSONITER)


def member(name: str, value: object) -> str:
    """The text of one object member, ``"name":value``."""
    return f"{_quoted_name(name)}:{dump(value)}"


def _key(name: object) -> str:
    return _quoted_name(name) if type(name) is str else dump(name)


@lru_cache(maxsize=4096)
def _quoted_name(name: str) -> str:
    """A member name, quoted: the same few names recur in every message."""
    return quote(name, JsonStyle.JSONITER)


def _dump_other(value: object) -> str:  # noqa: PLR0911 - one return per JSON type, as a type switch
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str | bytes):
        return quote(value, JsonStyle.JSONITER)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float64_text(float(value))
    if isinstance(value, Float32):
        return float32_text(value.value)
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        value = Pairs(value.items())
    if isinstance(value, Pairs):
        return "{" + ",".join(f"{dump(k)}:{dump(v)}" for k, v in value) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(map(dump, value)) + "]"
    raise TypeError(f"cannot write {type(value).__name__}")
