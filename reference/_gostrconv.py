r"""Go's ``strconv.Quote`` and ``strconv.Unquote`` for byte strings (ground truth §2.5).

Open Protocol writes BINARY/VARBINARY values as ``strconv.Quote(string(bytes))`` with the
surrounding quotes removed, and its decoder reverses that with ``strconv.Unquote``.

``quote``: printable runes (Unicode letters, marks, numbers, punctuation, symbols and the
ASCII space) stay as they are; ``"`` and ``\`` get a backslash; BEL BS FF LF CR TAB VT become
``\a \b \f \n \r \t \v``; other bytes below 0x20, DEL and every byte that is not part
of valid UTF-8 become ``\xNN``; other non-printable runes ``\uNNNN`` or ``\UNNNNNNNN``.
Hex digits are lower case. Python's ``str.isprintable`` uses the same categories as Go's
``IsPrint``; the two may differ only for code points assigned between their Unicode versions.

``unquote`` accepts exactly what Go's ``Unquote`` accepts inside a double-quoted literal:
the escapes above plus ``\NNN`` (octal byte) and ``\"``; a bare ``"`` or newline is an error,
and so is ``\'``.
"""

from __future__ import annotations

import re

__all__ = ["quote", "unquote"]

_NAMED = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    '"': '\\"',
    "\\": "\\\\",
}
_UNNAMED = {
    "a": b"\a",
    "b": b"\b",
    "f": b"\f",
    "n": b"\n",
    "r": b"\r",
    "t": b"\t",
    "v": b"\v",
    "\\": b"\\",
    '"': b'"',
}
_ESCAPE = re.compile(
    r"\\(?:([abfnrtv\\\"])|x([0-9a-fA-F]{2})|([0-7]{3})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))"
)
_PLAIN_ASCII = re.compile(r"[ !#-\[\]-~]*")
_RAW_INVALID = re.compile("[\udc80-\udcff]")


def _quote_rune(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    if "\udc80" <= char <= "\udcff":  # a byte that is not valid UTF-8
        return f"\\x{code - 0xDC00:02x}"
    if char.isprintable():
        return char
    if code < 0x20 or code == 0x7F:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


class _Quoted(dict[int, str]):
    """Each code point's quoted text, worked out on first use (``str.translate``'s table).

    Code points below U+10000 are kept once met (at most 65,536 short strings); the rare ones
    above are worked out each time.
    """

    def __missing__(self, code: int) -> str:
        quoted = _quote_rune(chr(code))
        if code < 0x10000:
            self[code] = quoted
        return quoted


_QUOTED = _Quoted()


def quote(data: bytes) -> str:
    """Go ``strconv.Quote(string(data))`` without the surrounding quotes."""
    text = data.decode("utf-8", "surrogateescape")
    if _PLAIN_ASCII.fullmatch(text):
        return text
    return text.translate(_QUOTED)  # one table lookup per rune, in C


def unquote(text: str) -> bytes:
    """Go ``strconv.Unquote`` of ``text`` wrapped in double quotes; ``ValueError`` if invalid."""
    if _PLAIN_ASCII.fullmatch(text):
        return text.encode()
    out = bytearray()
    position = 0
    while position < len(text):
        slash = text.find("\\", position)
        plain = text[position : len(text) if slash < 0 else slash]
        if '"' in plain or "\n" in plain:
            raise ValueError("unescaped quote or newline in literal")
        # Go reads a raw byte that is not valid UTF-8 as U+FFFD and appends that rune.
        out += _RAW_INVALID.sub("\ufffd", plain).encode()
        if slash < 0:
            break
        match = _ESCAPE.match(text, slash)
        if match is None:
            raise ValueError(f"invalid escape at character {slash}")
        named, hex_byte, octal, short, long = match.groups()
        if named is not None:
            out += _UNNAMED[named]
        elif hex_byte is not None:
            out.append(int(hex_byte, 16))
        elif octal is not None:
            if int(octal, 8) > 255:
                raise ValueError(f"octal escape out of range at character {slash}")
            out.append(int(octal, 8))
        else:
            code = int(short or long, 16)
            if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
                raise ValueError(f"escape is not a valid rune at character {slash}")
            out += chr(code).encode()
        position = match.end()
    return bytes(out)
