r"""JSON text exactly as TiCDC's two Go JSON writers produce it (ground truth §1.4).

Two styles:

* ``GO_STD``: Go ``encoding/json`` ``Marshal`` (Go 1.25, classic TiCDC). Strings: ``\"``,
  ``\\``, ``\b \f \n \r \t`` (two-character escapes since Go 1.22), other bytes below
  0x20 as ``\u00xx`` (lower-case hex); ``<`` ``>`` ``&`` as ``\u003c`` ``\u003e``
  ``\u0026``; U+2028/U+2029 escaped; every byte that is not part of valid UTF-8 becomes
  ``\ufffd``; DEL is written raw. Floats: shortest round-trip digits (32-bit shortest for
  FLOAT), ``'e'`` notation when |x| < 1e-6 or |x| ≥ 1e21, and ``e-07`` cleaned to ``e-7``.
* ``JSONITER``: json-iterator v1.1.12 ``Stream.WriteString`` with ``EscapeHTML: false``
  (new-arch TiCDC). Strings: ``\"``, ``\\``, ``\n \r \t``, every other byte below 0x20
  (including BS and FF) as ``\u00xx``; everything else, invalid UTF-8 and U+2028 included,
  copied raw. Floats: as ``GO_STD`` but without the exponent clean-up (``1e-07``).

The floats' text is ``reference/_gofloat.py``'s (``format_float``).

Text is handled as ``str`` in which bytes that are not valid UTF-8 are carried as the
surrogate-escape code points U+DC80–U+DCFF; ``to_bytes`` turns the finished JSON back into
the exact bytes.

Reading (``GoJsonReader``): both writers print a float ``-0.0`` as ``-0``, which Python's
``json`` reads as the integer ``0``, losing the sign; the reader reads ``-0`` as ``-0.0``
(never written for an integer) and refuses ``NaN`` and ``Infinity``, which Go never writes.

orjson, where installed (the ``fast`` extra), reads the documents ``decode_bytes`` is given
exactly as the plain path does, and only those: it is skipped for a reader with an object hook
(orjson keeps the last of two equal member names and calls no hook), for text holding ``-0``
(orjson reads it as the integer 0), an integer outside [-2⁶³, 2⁶⁴) (orjson turns it into a
float) or many ``[``/``{`` (the two nest to different depths), and whenever it raises, so
every error keeps the plain path's words and position. ``TICDC_CONFORMANCE_ORJSON=0`` in the
environment turns it off; ``plain_json_only`` does so for a block (the differential test
runs every golden case both ways).

``draft_loads`` is orjson's reading with only the cheap one of those checks (``-0``), for a
reader that confirms the rest on the document itself: a document it accepts only when every
float in it is of magnitude below 2⁶³ and it nests at most 512 deep is ``decode_bytes``'s
(an integer orjson would turn into a float is a float of magnitude 2⁶³ or more).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import Enum

from ticdc_conformance.reference.jsondoc import Json

__all__ = [
    "DRAFT_FLOAT_BOUND",
    "GoJsonReader",
    "JsonStyle",
    "draft_loads",
    "drafts",
    "from_json_text",
    "go_text",
    "json_accelerator",
    "may_hold_negative_zero",
    "orjson_active",
    "plain_json_only",
    "quote",
    "to_bytes",
]


class JsonStyle(Enum):
    """Which Go JSON writer to imitate."""

    GO_STD = "encoding/json"
    JSONITER = "jsoniter"


_GO_STD = JsonStyle.GO_STD
"""The member itself: comparing with it spares an attribute lookup on the enum per call."""
_GO_STD_SPECIAL = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\udc80-\udcff]')
_JSONITER_SPECIAL = re.compile('[\x00-\x1f"\\\\]')
_TWO_CHAR = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_GO_STD_TWO_CHAR = {**_TWO_CHAR, "\b": "\\b", "\f": "\\f"}


def _go_std_escape(char: str) -> str:
    if char in _GO_STD_TWO_CHAR:
        return _GO_STD_TWO_CHAR[char]
    if "\udc80" <= char <= "\udcff":
        return "\\ufffd"
    return f"\\u{ord(char):04x}"


def _jsoniter_escape(char: str) -> str:
    return _TWO_CHAR.get(char) or f"\\u{ord(char):04x}"


def _escapes(special: re.Pattern[str], escape: Callable[[str], str]) -> dict[int, str]:
    """A ``str.translate`` table: every character ``special`` matches → ``escape`` of it."""
    candidates = [*range(0x20), *map(ord, '"\\<>&\u2028\u2029'), *range(0xDC80, 0xDD00)]
    return {code: escape(chr(code)) for code in candidates if special.match(chr(code))}


_GO_STD_ESCAPES = _escapes(_GO_STD_SPECIAL, _go_std_escape)
_JSONITER_ESCAPES = _escapes(_JSONITER_SPECIAL, _jsoniter_escape)
"""One ``translate`` pass escapes a text, without a Python call per special character."""


def go_text(data: str | bytes) -> str:
    """A Go string (bytes) as text: bytes that are not valid UTF-8 kept as surrogate escapes.

    ``data`` itself when it is valid text.
    """
    if isinstance(data, bytes):
        return data.decode("utf-8", "surrogateescape")
    try:
        data.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates: Go sees their (invalid) UTF-8 bytes, one escape per byte.
        return data.encode("utf-8", "surrogatepass").decode("utf-8", "surrogateescape")
    return data


def quote(data: str | bytes, style: JsonStyle) -> str:
    """A JSON string literal for ``data``, quotes included, as ``style`` writes it."""
    text = data if type(data) is str and data.isascii() else go_text(data)  # ASCII: as it is
    # most text needs no escape: a search finds that sooner than a substitution
    if style is _GO_STD:
        if _GO_STD_SPECIAL.search(text) is None:
            return f'"{text}"'
        return f'"{text.translate(_GO_STD_ESCAPES)}"'
    if _JSONITER_SPECIAL.search(text) is None:
        return f'"{text}"'
    return f'"{text.translate(_JSONITER_ESCAPES)}"'


def to_bytes(json_text: str) -> bytes:
    """The bytes of finished JSON text (surrogate escapes become their raw bytes again)."""
    return json_text.encode("utf-8", "surrogateescape")


def from_json_text(text: str) -> str | bytes:
    """A decoded JSON string as a value: bytes when it carries raw bytes that were not UTF-8.

    The inverse of the surrogate-escape convention: jsoniter and goavro copy invalid UTF-8
    raw, and a decoder reading it with ``surrogateescape`` holds those bytes as surrogates.
    A lone surrogate the JSON spelled as an escape (backslash, ``ud800``) is no such byte: it
    becomes the bytes ``surrogatepass`` gives it, as ``values.string_bytes`` does.
    """
    if text.isascii():
        return text
    try:
        text.encode()
    except UnicodeEncodeError:
        try:
            return text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            return text.encode("utf-8", "surrogatepass")
    return text


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _int_or_negative_zero(text: str) -> int | float:
    return -0.0 if text == "-0" else int(text)


_NEGATIVE_ZERO = re.compile(r"-0(?![0-9.eE])")
"""Where ``-0`` may stand as a number (it may also match inside a string: harmless)."""

_NEGATIVE_ZERO_BYTES = re.compile(rb"-0(?![0-9.eE])")
_SHAPE = bytes.maketrans(b"123456789{", b"000000000[")
"""Every digit as ``0`` and every ``{`` as ``[``: one pass finds long numbers and openings."""
_NINETEEN_DIGITS = b"0" * 19
_ORJSON_INTEGERS = range(-(2**63), 2**64)
"""The integers orjson reads as integers; it turns larger ones into floats."""
_ORJSON_MAX_OPENINGS = 512
"""More ``[`` and ``{`` than this take the plain path: orjson reads 1,024 levels deep, the
plain scanner only as deep as the interpreter's recursion limit lets it, so a document that
deep could parse one way and not the other."""


def _orjson_reads_alike(data: bytes) -> bool:
    """Whether orjson reads ``data`` as the plain path does (module rules), cheaply.

    Every run of 19 or more digits is read as an integer and must fit orjson's; a run inside
    a string or a fraction only costs the plain path.
    """
    if b"-0" in data and _NEGATIVE_ZERO_BYTES.search(data):
        return False
    shape = data.translate(_SHAPE)
    # orjson reads a text only when every structural opening has its closing: one of at most
    # twice the limit's bytes is never nested deeper than the limit, whatever it counts
    if len(data) > 2 * _ORJSON_MAX_OPENINGS and shape.count(b"[") > _ORJSON_MAX_OPENINGS:
        return False
    start = shape.find(_NINETEEN_DIGITS)
    while start >= 0:
        end = start + 19
        while end < len(shape) and shape[end] == 0x30:
            end += 1
        number = int(data[start:end])
        if (-number if data[start - 1 : start] == b"-" else number) not in _ORJSON_INTEGERS:
            return False
        start = shape.find(_NINETEEN_DIGITS, end)
    return True


def _orjson_loads() -> Callable[[bytes | str], Json] | None:
    if os.environ.get("TICDC_CONFORMANCE_ORJSON", "1") == "0":
        return None
    try:
        import orjson
    except ImportError:
        return None
    loads: Callable[[bytes | str], Json] = orjson.loads
    return loads


_ACCELERATOR: list[Callable[[bytes | str], Json] | None] = [_orjson_loads()]
"""orjson's ``loads`` while it is in use (a one-element list: ``plain_json_only`` swaps it)."""


def json_accelerator() -> Callable[[bytes | str], Json] | None:
    """The accelerator's ``loads`` (orjson's) while readers may try it, else ``None``."""
    return _ACCELERATOR[0]


def orjson_active() -> bool:
    """Whether readers without an object hook try orjson first."""
    return _ACCELERATOR[0] is not None


@contextmanager
def plain_json_only() -> Iterator[None]:
    """Every ``GoJsonReader`` takes the plain path inside the block."""
    saved, _ACCELERATOR[0] = _ACCELERATOR[0], None
    try:
        yield
    finally:
        _ACCELERATOR[0] = saved


DRAFT_FLOAT_BOUND = 2.0**63
"""Floats of ``draft_loads``'s documents below this magnitude are the plain path's: orjson
turns an integer outside [-2⁶³, 2⁶⁴) into a float of at least this magnitude (-2⁶³ - 1
rounds to -2⁶³)."""


def draft_loads(data: bytes) -> Json | None:
    """The document orjson reads in ``data``, for a reader that confirms it (module rules).

    ``None`` when orjson is off, ``data`` may hold ``-0`` as a number, or orjson refuses it.

    Its documents differ from ``decode_bytes``'s only where ``data`` holds an integer
    outside [-2⁶³, 2⁶⁴) (read as a float of magnitude ``DRAFT_FLOAT_BOUND`` or more) or nests
    more than 512 deep (the plain path may refuse it): a reader that accepts a document only
    when every float in it is smaller and it nests no deeper has the plain path's document.
    """
    return None if may_hold_negative_zero(data) else _orjson_or_none(data)


def drafts(documents: list[bytes], *, zeros_checked: bool = True) -> list[Json | None]:
    """``draft_loads`` of each document, in one step.

    ``zeros_checked`` false: orjson's document even where the text may hold ``-0`` as a
    number, which orjson reads as the integer 0 (the plain path: -0.0). The caller then knows
    that no document holds one, or asks ``may_hold_negative_zero`` of each document where it
    accepted a number equal to 0.
    """
    fast = _ACCELERATOR[0]
    if fast is None:
        return [None] * len(documents)
    try:
        if zeros_checked:
            negative_zero = _NEGATIVE_ZERO_BYTES.search
            return [
                None if b"-0" in data and negative_zero(data) else fast(data) for data in documents
            ]
        return list(map(fast, documents))
    except ValueError:  # orjson refuses one: each on its own
        return list(map(draft_loads if zeros_checked else _orjson_or_none, documents))


def _orjson_or_none(data: bytes) -> Json | None:
    """The document orjson reads in ``data``; ``None`` when orjson is off or refuses it."""
    fast = _ACCELERATOR[0]
    try:
        return None if fast is None else fast(data)
    except ValueError:  # orjson.JSONDecodeError: the caller's full path words the error
        return None


def may_hold_negative_zero(data: bytes) -> bool:
    """Whether the JSON text ``data`` may hold ``-0`` as a number (orjson reads it as 0)."""
    return b"-0" in data and _NEGATIVE_ZERO_BYTES.search(data) is not None


_Scan = Callable[[str, int], tuple[Json, int]]
"""A JSON decoder's scanner: the value at an index and the index after it."""


class GoJsonReader:
    """Reads a JSON document a Go writer produced: ``-0`` stays ``-0.0``, no NaN/Infinity.

    ``decode`` raises what ``json.JSONDecoder.decode`` raises (``JSONDecodeError``, a
    ``ValueError`` for a constant, ``RecursionError``). Documents holding no ``-0`` take the
    plain C scanner; the rest are read again with a hook on integers. ``decode_bytes`` tries
    orjson first where it may (module rules).
    """

    __slots__ = ("_hooked", "_plain", "_plain_scan", "_signed", "_signed_scan")

    def __init__(
        self, *, object_pairs_hook: Callable[[list[tuple[str, Json]]], Json] | None = None
    ) -> None:
        self._hooked = object_pairs_hook is not None
        self._plain = json.JSONDecoder(
            parse_constant=_reject_constant, object_pairs_hook=object_pairs_hook
        )
        self._signed = json.JSONDecoder(
            parse_constant=_reject_constant,
            parse_int=_int_or_negative_zero,
            object_pairs_hook=object_pairs_hook,
        )
        # the decoders' own C scanners (``JSONDecoder.scan_once``, undeclared in the stubs)
        self._plain_scan: _Scan = self._plain.scan_once  # type: ignore[attr-defined]
        self._signed_scan: _Scan = self._signed.scan_once  # type: ignore[attr-defined]

    def decode(self, text: str) -> Json:
        """The document in ``text``."""
        decoder, scan = (
            (self._plain, self._plain_scan)
            if "-0" not in text or _NEGATIVE_ZERO.search(text) is None  # the regex only if needed
            else (self._signed, self._signed_scan)
        )
        if self._hooked:  # the hook may count what it sees: the document is read once
            hooked: Json = decoder.decode(text)
            return hooked
        # the C scanner straight away: what ``decoder.decode`` ends up doing for a document
        # with no white space around it; anything else (white space, extra data, a text that
        # does not start with a value) goes through ``decode`` itself, which words the error
        try:
            document, end = scan(text, 0)
        except StopIteration:
            end = -1
        if end != len(text):
            document = decoder.decode(text)
        return document

    def decode_bytes(self, data: bytes, *, raw_bytes: bool = False) -> Json:
        """The document in UTF-8 ``data``: ``decode`` of its text, or orjson where it may read it.

        ``raw_bytes``: bytes that are not UTF-8 are kept as surrogate escapes (jsoniter copies
        them raw) instead of raising ``UnicodeDecodeError``.
        """
        fast = _ACCELERATOR[0]
        if fast is not None and not self._hooked and _orjson_reads_alike(data):
            try:
                return fast(data)
            except ValueError:  # orjson.JSONDecodeError: the plain path words the error
                pass
        return self.decode(data.decode("utf-8", "surrogateescape" if raw_bytes else "strict"))
