"""Malformed Open Protocol messages: each is rejected with ``DecodeError`` at the right place."""

from __future__ import annotations

import pytest
from helpers import frame

from ticdc_conformance.reference import DecodeError, Message, open_protocol

KEY = b'{"ts":1,"scm":"s","tbl":"t","t":1}'
INT = b'{"u":{"c":{"t":3,"f":65,"v":%s}}}'


def row(value: bytes, key: bytes = KEY) -> Message:
    return frame([key], [value])


def col(body: bytes) -> Message:
    return row(b'{"u":{"c":' + body + b"}}")


VERSION_2 = Message(key=(2).to_bytes(8, "big"), value=b"")
SHORT_LENGTH = Message(key=(1).to_bytes(8, "big") + b"\x00\x00\x00", value=b"")
HUGE_LENGTH = Message(key=(1).to_bytes(8, "big") + (2**62).to_bytes(8, "big"), value=b"")
EXTRA_VALUE = Message(key=row(INT % b"1").key, value=(row(INT % b"1").value or b"") + bytes(8))

CASES = [
    # (id, message, part, offset, path, reason fragment)
    ("no-key", Message(key=None, value=b""), "key", 0, None, "8-byte version"),
    ("short-version", Message(key=b"\x00" * 7, value=b""), "key", 0, None, "8-byte version"),
    ("version-2", VERSION_2, "key", 0, None, "version 2"),
    ("short-length", SHORT_LENGTH, "key", 8, None, "3 bytes left"),
    ("length-beyond-end", HUGE_LENGTH, "key", 8, None, "exceeds the 0 bytes left"),
    ("key-json-truncated", row(INT % b"1", key=b'{"ts":'), "key", 22, None, "invalid JSON"),
    ("key-not-object", row(INT % b"1", key=b"[1]"), "key", 16, "", "JSON object"),
    (
        "key-unknown-member",
        row(INT % b"1", key=b'{"ts":1,"t":1,"x":0}'),
        "key",
        16,
        "/x",
        "unknown",
    ),
    ("key-bad-kind", row(INT % b"1", key=b'{"ts":1,"t":4}'), "key", 16, "/t", "1 (row)"),
    ("key-bool-kind", row(INT % b"1", key=b'{"ts":1,"t":true}'), "key", 16, "/t", "1 (row)"),
    ("key-negative-ts", row(INT % b"1", key=b'{"ts":-1,"t":1}'), "key", 16, "/ts", "integer"),
    ("key-string-ts", row(INT % b"1", key=b'{"ts":"1","t":1}'), "key", 16, "/ts", "integer"),
    ("key-no-ts", row(INT % b"1", key=b'{"t":1}'), "key", 16, "", "no ts"),
    (
        "key-ohk-text",
        row(INT % b"1", key=b'{"ts":1,"t":1,"ohk":"y"}'),
        "key",
        16,
        "/ohk",
        "boolean",
    ),
    (
        "key-rid-too-big",
        row(INT % b"1", key=b'{"ts":1,"t":1,"rid":9223372036854775808}'),
        "key",
        16,
        "/rid",
        "integer",
    ),
    ("key-nan", row(INT % b"1", key=b'{"ts":NaN,"t":1}'), "key", 16, None, "NaN"),
    (
        "key-utf16",
        row(INT % b"1", key='{"ts":1,"t":1}'.encode("utf-16")),
        "key",
        16,
        None,
        "invalid JSON",
    ),
    ("value-missing", Message(key=row(INT).key, value=b""), "value", 0, None, "no value entry"),
    ("value-extra", EXTRA_VALUE, "value", 40, None, "more entries"),
    ("resolved-with-bytes", frame([b'{"ts":1,"t":3}'], [b"{}"]), "value", 8, "", "must be empty"),
    ("row-not-object", row(b"[]"), "value", 8, "", "JSON object"),
    ("row-unknown-member", row(b'{"x":{}}'), "value", 8, "/x", "unknown"),
    ("row-empty", row(b"{}"), "value", 8, "", "needs u"),
    ("row-u-and-d", row(b'{"u":{},"d":{}}'), "value", 8, "", "cannot come with"),
    ("row-columns-not-object", row(b'{"u":[]}'), "value", 8, "/u", "object of columns"),
    ("column-not-object", col(b"1"), "value", 8, "/u/c", "must be an object"),
    ("column-unknown-member", col(b'{"t":3,"v":1,"z":1}'), "value", 8, "/u/c/z", "unknown"),
    ("column-no-v", col(b'{"t":3,"f":0}'), "value", 8, "/u/c", "no v"),
    ("column-type-code-300", col(b'{"t":300,"f":0,"v":1}'), "value", 8, "/u/c/t", "0..255"),
    (
        "column-type-code-unknown",
        col(b'{"t":99,"f":0,"v":1}'),
        "value",
        8,
        "/u/c/v",
        "unknown type",
    ),
    (
        "column-type-code-unknown-null",
        col(b'{"t":200,"f":0,"v":null}'),
        "value",
        8,
        "/u/c/v",
        "unknown type",
    ),
    ("column-flags-null", col(b'{"t":3,"f":null,"v":1}'), "value", 8, "/u/c/f", "uint64"),
    ("column-flags-negative", col(b'{"t":3,"f":-1,"v":1}'), "value", 8, "/u/c/f", "uint64"),
    ("column-h-false", col(b'{"t":3,"h":false,"f":0,"v":1}'), "value", 8, "/u/c/h", "true"),
    ("int-as-text", row(INT % b'"1"'), "value", 8, "/u/c/v", "integer"),
    ("int-as-float", row(INT % b"1.0"), "value", 8, "/u/c/v", "integer"),
    ("int-beyond-uint64", row(INT % b"18446744073709551616"), "value", 8, "/u/c/v", "range"),
    ("float-as-text", col(b'{"t":5,"f":1,"v":"1"}'), "value", 8, "/u/c/v", "number"),
    ("decimal-as-number", col(b'{"t":246,"f":1,"v":1.5}'), "value", 8, "/u/c/v", "string"),
    ("decimal-bad-text", col(b'{"t":246,"f":1,"v":"1e5"}'), "value", 8, "/u/c/v", "decimal"),
    ("blob-bad-base64", col(b'{"t":252,"f":1,"v":"***"}'), "value", 8, "/u/c/v", "base64"),
    ("binary-bad-escape", col(b'{"t":254,"f":1,"v":"\\\\q"}'), "value", 8, "/u/c/v", "escape"),
    ("binary-bare-quote", col(b'{"t":254,"f":1,"v":"\\""}'), "value", 8, "/u/c/v", "quote"),
    ("null-type-with-value", col(b'{"t":6,"f":1,"v":1}'), "value", 8, "/u/c/v", "NULL"),
    ("date-as-number", col(b'{"t":10,"f":1,"v":1}'), "value", 8, "/u/c/v", "string"),
    (
        "pointer-escaping",
        row(b'{"u":{"a/b~c":{"t":3,"f":0,"v":"x"}}}'),
        "value",
        8,
        "/u/a~1b~0c/v",
        "integer",
    ),
    (
        "ddl-type-as-string",
        frame([b'{"ts":1,"t":2}'], [b'{"q":"x","t":"3"}']),
        "value",
        8,
        "/t",
        "ActionType",
    ),
    ("ddl-missing-query", frame([b'{"ts":1,"t":2}'], [b'{"t":3}']), "value", 8, "", "exactly q"),
    ("deep-nesting", row(b"[" * 100_000), "value", 8, None, "too deeply"),
]


@pytest.mark.parametrize(
    ("case_id", "message", "part", "offset", "path", "reason"), CASES, ids=[c[0] for c in CASES]
)
def test_rejects_with_location(
    case_id: str, message: Message, part: str, offset: int, path: str | None, reason: str
) -> None:
    del case_id
    with pytest.raises(DecodeError) as info:
        open_protocol.decode(message, message_index=4)
    error = info.value
    assert (error.protocol, error.message_index) == ("open", 4)
    assert (error.part, error.offset, error.pointer) == (part, offset, path)
    assert reason in error.reason
    assert str(error).startswith(f"open: message 4, {part} byte {offset}")


def test_error_text_names_path() -> None:
    with pytest.raises(DecodeError, match=r"^open: message 0, value byte 8, at /u/c/v: expected"):
        open_protocol.decode(row(INT % b'"x"'))
