r"""JSON strings as TiCDC's Canal-JSON writers produce them.

Rows are written member by member with easyjson's ``jwriter.Writer`` (HTML escaping on), DDLs
and watermarks with goccy/go-json ``Marshal`` (``pkg/sink/codec/canal/canal_json_*encoder.go``
in pingcap/tiflow and pingcap/ticdc). Both escape strings as Go's ``encoding/json`` did before
Go 1.22: ``\"``, ``\\``, ``\n \r \t``, every other byte below 0x20 (BS and FF included) as
``\u00xx`` in lower-case hex, ``<`` ``>`` ``&`` as ``\u003c`` ``\u003e`` ``\u0026``, U+2028
and U+2029 escaped, each byte that is not part of valid UTF-8 as ``\ufffd``; DEL and every
other character are written raw.
"""

from __future__ import annotations

import re

from ticdc_conformance.reference._gojson import go_text

__all__ = ["quote"]

_SPECIAL = re.compile('[\x00-\x1f"\\\\<>&\u2028\u2029\udc80-\udcff]')
_TWO_CHAR = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _TWO_CHAR:
        return _TWO_CHAR[char]
    if "\udc80" <= char <= "\udcff":
        return "\\ufffd"
    return f"\\u{ord(char):04x}"


def quote(data: str | bytes) -> str:
    """A JSON string literal for ``data`` (a Go string), quotes included."""
    return f'"{_SPECIAL.sub(_escape, go_text(data))}"'
