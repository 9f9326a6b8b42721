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
"""

from __future__ import annotations

import json
import math
import os
import re
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Context, Decimal
from enum import Enum
from fractions import Fraction

from ticdc_conformance.reference.jsondoc import Json

__all__ = [
    "GoJsonReader",
    "JsonStyle",
    "format_float",
    "format_float_positional",
    "from_json_text",
    "go_text",
    "json_accelerator",
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
    if len(data) > _ORJSON_MAX_OPENINGS and shape.count(b"[") > _ORJSON_MAX_OPENINGS:
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


def _float32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


_F32_SMALL = _float32(1e-6)
_F32_LARGE = _float32(1e21)


def _float32_bits(x: float) -> int:
    return int(struct.unpack("<I", struct.pack("<f", x))[0])


def _float32_from_bits(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


_F32_LARGEST = 3.4028234663852886e38
_REPR_LOW, _REPR_HIGH = 1e-4, 1e16
"""Where ``repr`` of a float has no exponent."""
_F32_WHOLE = float(2**24)
"""Below it every whole number is a float32, and float32 spaces them by at most 1."""


def _is_float32_midpoint(y: float) -> bool:
    """Whether float64 ``y`` lies exactly halfway between two float32 values."""
    low = _float32(y)
    if low == y:
        return False
    bits = _float32_bits(low)
    other = _float32_from_bits(bits + 1 if (y > low) == (low > 0) else bits - 1)
    return (low + other) / 2 == y


def _shortest_float32(x: float) -> Decimal:
    """Fewest significant digits that read back as float32 ``x`` (x > 0), nearest first.

    Fast path: where x's rounding interval is symmetric (its mantissa is not zero), the nearest
    candidate of each length is the only one that can read back, and reading it through
    float64 rounds like reading it directly unless it lands exactly on a float32 midpoint
    (float64 rounding cannot cross one). A whole number below 2**24 is its own digits: float32
    spaces the numbers around it by at most 1, so any other number of fewer digits (a whole
    number too, at least 1 away) reads back as another float32; this covers the powers of two,
    whose asymmetric interval the fast path above leaves to the exact one. Everything else
    takes the exact path below.
    """
    if x < _F32_WHOLE and x.is_integer():
        return Decimal(int(x))
    if _float32_bits(x) & 0x7FFFFF and x < _F32_LARGEST:
        for digits in range(1, 10):
            candidate = Decimal(f"{x:.{digits - 1}e}")
            as_float64 = float(candidate)
            if as_float64 >= _F32_LARGEST or _is_float32_midpoint(as_float64):
                break  # near the top of the range struct cannot round: take the exact path
            if _float32(as_float64) == x:
                return candidate
    return _shortest_float32_exact(x)


def _shortest_float32_exact(x: float) -> Decimal:
    """Fewest significant digits that read back as float32 ``x`` (x > 0), nearest first.

    Exact: the candidates are tested against x's rounding interval with rationals, so no
    double rounding through float64 can creep in.
    """
    bits = _float32_bits(x)
    exact = Fraction(x)
    lower = Fraction(_float32_from_bits(bits - 1)) if bits > 1 else Fraction(0)
    if bits + 1 < 0x7F800000:
        upper = Fraction(_float32_from_bits(bits + 1))
    else:
        upper = exact + (exact - lower)
    low, high = (exact + lower) / 2, (exact + upper) / 2
    inclusive = bits % 2 == 0  # round-half-even: midpoints go to the even neighbour

    def reads_back(candidate: Decimal) -> bool:
        value = Fraction(candidate)
        if inclusive:
            return low <= value <= high
        return low < value < high

    for digits in range(1, 10):
        candidates = {
            Context(prec=digits, rounding=rounding).plus(Decimal(x))
            for rounding in (ROUND_FLOOR, ROUND_CEILING, ROUND_HALF_EVEN)
        }
        good = [c for c in candidates if reads_back(c)]
        if good:
            nearest = Context(prec=digits, rounding=ROUND_HALF_EVEN).plus(Decimal(x))
            return nearest if nearest in good else min(good, key=lambda c: abs(Fraction(c) - exact))
    return Decimal(x)  # unreachable: 9 digits always identify a float32


def _digits(x: float, bits: int) -> tuple[str, int]:
    """Shortest digits ``d`` and exponent ``e`` with |x| ≈ int(d) × 10**e (x ≠ 0)."""
    magnitude = abs(x)
    number = _shortest_float32(magnitude) if bits == 32 else Decimal(repr(magnitude))
    _, digit_tuple, exponent = number.normalize().as_tuple()
    if not isinstance(exponent, int):  # NaN or an infinity: x is finite
        raise ValueError(f"{x!r} has no digits")
    return "".join(map(str, digit_tuple)), exponent


def format_float(x: float, bits: int, style: JsonStyle) -> str:
    """``x`` as the Go JSON writer prints a float of ``bits`` (32 for FLOAT, 64 for DOUBLE).

    A DOUBLE from 1e-4 up to 1e16 is ``repr``'s text without its ``.0``: ``repr`` writes the
    same shortest digits without an exponent there, where Go writes none either.
    """
    if bits == 64 and type(x) is float and _REPR_LOW <= abs(x) < _REPR_HIGH:
        text = repr(x)
        return text.removesuffix(".0")
    if bits == 32:
        x = _float32(x)
    sign = "-" if x < 0 or (x == 0 and str(x).startswith("-")) else ""
    if x == 0:
        return sign + "0"
    digits, exponent = _digits(x, bits)
    magnitude = abs(x)
    # Go compares in the float's own width: float32(abs) < 1e-6 converts the constant too.
    small, large = (_F32_SMALL, _F32_LARGE) if bits == 32 else (1e-6, 1e21)
    if magnitude < small or magnitude >= large:
        point = exponent + len(digits) - 1
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        exp_text = f"{abs(point):02d}"
        if style is JsonStyle.GO_STD and point < 0 and exp_text.startswith("0"):
            exp_text = exp_text[1:]  # encoding/json cleans e-07 to e-7; jsoniter does not
        return f"{sign}{mantissa}e{'-' if point < 0 else '+'}{exp_text}"
    return sign + _positional(digits, exponent)


def _positional(digits: str, exponent: int) -> str:
    if exponent >= 0:
        return digits + "0" * exponent
    whole = len(digits) + exponent
    if whole > 0:
        return f"{digits[:whole]}.{digits[whole:]}"
    return f"0.{'0' * -whole}{digits}"


def format_float_positional(x: float, bits: int) -> str:
    """Go ``strconv.FormatFloat(x, 'f', -1, bits)``: shortest digits, never an exponent."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "+Inf" if x > 0 else "-Inf"
    if bits == 32:
        x = _float32(x)
    sign = "-" if math.copysign(1.0, x) < 0 else ""
    if x == 0:
        return sign + "0"
    return sign + _positional(*_digits(x, bits))
