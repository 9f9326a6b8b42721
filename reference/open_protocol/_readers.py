r"""One reader per column kind: the Open Protocol decoder's value and validity in one step.

A column kind is a type code and its flag bits; the decoder asks ``reader`` once per kind and
keeps the answer. A reader takes a parsed ``v`` that is not ``null`` and returns the ``Value``
``_columns.read_value`` returns for it, raises the ``ValueError`` that raises, and raises
``Invalid`` (the value attached) when the value is one TiCDC cannot have written for the kind
(``validation.code_check``, docs/errors.md).

Each reader first tries a test that is sufficient, never necessary: a value that passes it is
read as ``read_value`` reads it and is valid under ``validity`` for the type a type code and
flags state (no declared length, scale or members, §2.5). Everything else takes
``read_value`` and the validity check themselves, so every outcome is theirs:

* integers, YEAR, BIT, ENUM, SET: a JSON integer inside the type's range (YEAR 1901–2155,
  BIT and SET 64 bits, ENUM indexes up to 65,535);
* FLOAT, DOUBLE: a JSON float of at most float32's, float64's largest magnitude, or an
  integer of at most 21 digits (Go prints 2.0 as 2);
* CHAR, VARCHAR: ASCII text; BINARY, VARBINARY (BinaryFlag): Go-quoted ASCII holding only the
  escapes ``\a \b \f \n \r \t \v \\ \"`` and ``\xNN``, which Python's ``escape_decode``
  (the ``bytes`` literal's escapes) reads alike;
* TEXT and BLOB types: base64 that ``binascii``'s strict mode reads (it refuses everything
  ``b64decode(validate=True)`` refuses);
* DATE, DATETIME, TIME: text of a pattern no wider than validity's (days that exist, February
  29 in leap years only, hours up to 23 or 99 for TIME, at most 6 fractional digits);
  TIMESTAMP: the same, years 1970–2037;
* DECIMAL: decimal text of at most 31 characters (so at most 65 digits and 30 decimals);
* JSON: text orjson reads (where installed), holding at most 64 ``[`` and ``{``.
"""

from __future__ import annotations

import binascii
import re
import sys
from codecs import escape_decode
from collections.abc import Callable
from typing import NamedTuple
from weakref import WeakKeyDictionary

from ticdc_conformance.reference._fast_checks import (
    date_test,
    datetime_test,
    json_reads,
)
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.mysql import (
    BINARY_TYPES,
    INTEGER_TYPES,
    TEXT_TYPES,
    UINT64,
    integer_range,
)
from ticdc_conformance.reference.open_protocol._columns import form_of, is_known, read_value
from ticdc_conformance.reference.tables import BINARY_FLAG
from ticdc_conformance.reference.validation import code_check
from ticdc_conformance.reference.validity import FLOAT32_MAX, ColumnType
from ticdc_conformance.reference.values import (
    Value,
    valid_decimal,
    valid_timestamp,
)

__all__ = [
    "DECIMAL",
    "DECIMAL_CHARACTERS",
    "INTEGRAL_HIGH",
    "INTEGRAL_LOW",
    "KINDS_SEEN",
    "QUOTED",
    "TIME",
    "Invalid",
    "Quick",
    "Reader",
    "integer_bounds",
    "quick_form",
    "reader",
    "takes_floats",
    "takes_numbers",
]

Reader = Callable[[Json], Value]


class Quick(NamedTuple):
    """A reader's quick test, for a caller that makes it inline (``_image_readers``).

    ``form``: ``integer`` (an ``int`` with ``low <= v < high`` is the value), ``float`` (a
    ``float`` of at most ``high`` in magnitude is the value; an ``int`` strictly between
    ``INTEGRAL_LOW`` and ``INTEGRAL_HIGH`` is ``float`` of it), ``ascii`` (an ASCII ``str``
    is the value), ``text`` (a ``str`` that ``test`` matches is the value), ``timestamp`` (a
    ``str`` ``test`` matches: ``valid_timestamp`` of it), ``decimal`` (a ``str`` of at most
    ``DECIMAL_CHARACTERS`` that ``test`` matches: ``valid_decimal`` of it), ``call`` (none:
    the reader itself). Anything the test does not take is the reader's.
    """

    form: str
    test: Callable[[str], object] | None = None
    low: int = 0
    high: float = 0


_CALL = Quick("call")
_QUICK: WeakKeyDictionary[Reader, Quick] = WeakKeyDictionary()
"""Each fast reader's quick test, while the reader lives."""


def quick_form(read: Reader) -> Quick:
    """The quick test ``read`` starts with (``call`` for a reader without one)."""
    return _QUICK.get(read, _CALL)


def takes_numbers(type_code: int) -> bool:
    """Whether a reader of ``type_code`` may take a JSON number.

    The integer kinds, YEAR, BIT, ENUM, SET, FLOAT, DOUBLE and GEOMETRY; every other reader
    refuses one, as ``read_value`` does.
    """
    return form_of(type_code) in (None, "integer", "float")


def takes_floats(type_code: int) -> bool:
    """Whether a reader of ``type_code`` may return a JSON float as it is.

    FLOAT, DOUBLE and GEOMETRY; every other reader refuses a float, as ``read_value`` does.
    """
    form = form_of(type_code)
    return form is None or form == "float"


class Invalid(Exception):  # noqa: N818 - a signal to the decoder, not an error it shows
    """The value read is one TiCDC cannot have written for the column's kind."""

    def __init__(self, value: Value) -> None:
        super().__init__()
        self.value = value


KINDS_SEEN: dict[tuple[int, int], Reader | None] = {}
"""``reader``'s answers so far, by type code and flags: the decoder looks here first."""
_MAX_KINDS = 4096
"""Kinds kept: the flags are the message's to choose, the memory is not."""


def reader(type_code: int, flags: int) -> Reader | None:
    """The reader of a column kind.

    ``None`` for a type code TiCDC never writes or ``flags`` outside uint64 (the decoder's
    checking path words those errors).
    """
    key = (type_code, flags)
    if key in KINDS_SEEN:
        return KINDS_SEEN[key]
    made = _make(type_code, flags)
    if len(KINDS_SEEN) < _MAX_KINDS:
        KINDS_SEEN[key] = made
    return made


def _general(type_code: int, flags: int) -> Reader:
    checked = code_check(type_code, flags)

    def read(raw: Json) -> Value:
        value = read_value(type_code, raw, flags)
        if checked is not None and value is not None and checked[1](value, checked[0]) is not None:
            raise Invalid(value)
        return value

    return read


def _make(type_code: int, flags: int) -> Reader | None:
    form = form_of(type_code)
    if flags not in UINT64 or not is_known(type_code):
        return None
    general = _general(type_code, flags)
    checked = code_check(type_code, flags)
    if form is None or checked is None:
        return general
    ctype = checked[0]
    if ctype.length is not None or ctype.scale is not None or ctype.elements is not None:
        return general  # a type code states none of them; kept for safety
    make = _FAST.get(form)
    fast = None if make is None else make(ctype, flags, general)
    return general if fast is None else fast


def integer_bounds(ctype: ColumnType) -> range | None:
    """The integers ``validity`` holds an integer-valued column's value in, else ``None``."""
    if ctype.name in INTEGER_TYPES and ctype.unsigned is not None:
        return integer_range(ctype.name, unsigned=ctype.unsigned)
    return _OTHER_INTEGERS.get(ctype.name)


def _integer(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    allowed = integer_bounds(ctype)
    if allowed is None:
        return None
    low, high = allowed.start, allowed.stop

    def read(raw: Json) -> Value:
        if type(raw) is int and low <= raw < high:
            return raw
        return general(raw)

    _QUICK[read] = Quick("integer", low=low, high=high)
    return read


_OTHER_INTEGERS: dict[str, range] = {
    "year": range(1901, 2156),
    "bit": range(2**64),
    "enum": range(65536),
    "set": range(2**64),
}
"""Ranges ``validity`` holds a value in when a type code and flags state the column."""


INTEGRAL_LOW, INTEGRAL_HIGH = -(10**21), 10**21
"""Integers Go writes for a float without an exponent (§1.4), all inside float32's range."""


def _float(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    largest = {"float": FLOAT32_MAX, "double": sys.float_info.max}.get(ctype.name)
    if largest is None:
        return None
    smallest = -largest

    def read(raw: Json) -> Value:
        if type(raw) is float:
            if smallest <= raw <= largest:
                return raw
        elif type(raw) is int and INTEGRAL_LOW < raw < INTEGRAL_HIGH:
            return float(raw)  # Go prints 2.0 as 2
        return general(raw)

    _QUICK[read] = Quick("float", high=largest)
    return read


_PLAIN = r"[ !#-\[\]-~]*+"
"""Printable ASCII but the double quote and the backslash: Go quotes it as it is."""
QUOTED = re.compile(rf'{_PLAIN}(?:(?:\\[abfnrtv\\"]|\\x[0-9a-fA-F]{{2}}){_PLAIN})*+')
"""Plain runs between the escapes ``escape_decode`` reads as Go does. Possessive: a run or an
escape never needs to give back what it took (a run holds no backslash, every escape starts
with one), and not keeping the states to backtrack to makes the match faster."""


def _string(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    if flags & BINARY_FLAG:
        if ctype.name not in BINARY_TYPES:
            return None
        quoted = QUOTED.fullmatch

        def read_bytes(raw: Json) -> Value:
            if type(raw) is str and raw.isascii():
                if "\\" not in raw and '"' not in raw and raw.isprintable():
                    return raw.encode()
                if quoted(raw):
                    return escape_decode(raw)[0]
            return general(raw)

        return read_bytes
    if ctype.name not in TEXT_TYPES:
        return None

    def read_text(raw: Json) -> Value:
        if type(raw) is str and raw.isascii():
            return raw
        return general(raw)

    _QUICK[read_text] = Quick("ascii")
    return read_text


def _base64(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    if ctype.name not in TEXT_TYPES | BINARY_TYPES or not ctype.raw_text:
        return None
    binary = bool(flags & BINARY_FLAG)
    decode = binascii.a2b_base64

    def read(raw: Json) -> Value:
        if type(raw) is not str:
            return general(raw)
        try:
            data = decode(raw, strict_mode=True)
        except (binascii.Error, ValueError):
            return general(raw)
        if binary:
            return data
        try:
            return data.decode()
        except UnicodeDecodeError:
            return data

    return read


TIME = re.compile(r"-?[0-9]{2}:[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?")
"""TIME text the fast test takes."""
_TEXT_TESTS: dict[str, Callable[[str], object]] = {
    "date": date_test(),
    "datetime": datetime_test(None),
    "time": TIME.fullmatch,
}
"""Each a match or ``None`` (``is_date``, ``is_datetime`` of any fsp, ``TIME``)."""


def _text(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del flags
    test = _TEXT_TESTS.get(ctype.name)
    if test is not None:

        def read(raw: Json) -> Value:
            if type(raw) is str and test(raw):
                return raw
            return general(raw)

        _QUICK[read] = Quick("text", test)
        return read
    if ctype.name != "json":
        return None

    def read_json(raw: Json) -> Value:
        if type(raw) is str and json_reads(raw):
            return raw
        return general(raw)

    return read_json


def _timestamp(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del ctype, flags
    test = datetime_test(None, timestamp=True)

    def read(raw: Json) -> Value:
        if type(raw) is str and test(raw):
            # the text has TimestampValue's own shape (is_datetime): built directly
            return valid_timestamp(raw)
        return general(raw)

    _QUICK[read] = Quick("timestamp", test)
    return read


DECIMAL = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
"""``DecimalValue``'s own pattern."""
DECIMAL_CHARACTERS = 31
"""The longest decimal text the fast test takes (65 digits and 30 decimals at most)."""


def _decimal(ctype: ColumnType, flags: int, general: Reader) -> Reader | None:
    del ctype, flags
    matches = DECIMAL.fullmatch

    def read(raw: Json) -> Value:
        if type(raw) is str and len(raw) <= DECIMAL_CHARACTERS and matches(raw):
            return valid_decimal(raw)
        return general(raw)

    _QUICK[read] = Quick("decimal", matches)
    return read


_FAST: dict[str, Callable[[ColumnType, int, Reader], Reader | None]] = {
    "integer": _integer,
    "float": _float,
    "string": _string,
    "base64": _base64,
    "text": _text,
    "timestamp": _timestamp,
    "decimal": _decimal,
}
