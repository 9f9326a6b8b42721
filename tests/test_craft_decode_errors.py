"""Messages TiCDC's Craft encoder cannot have written: each is a located ``DecodeError``.

Built part by part with ``craft_builders.build`` (sizes computed from the parts), so that each
case breaks exactly one rule of ground truth §3.1–§3.3 or of the decoder's checks.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from craft_builders import GOLDEN, build

from ticdc_conformance.reference import DecodeError, Message, craft
from ticdc_conformance.reference.craft import primitives

RESOLVED, DDL, INSERT = GOLDEN
BIG = 2**62


def uv(value: int) -> bytes:
    out = bytearray()
    primitives.write_uvarint(out, value)
    return bytes(out)


def headers(
    ts: Sequence[int] = (1,),
    kinds: Sequence[int] = (1,),
    partitions: Sequence[int] = (-1,),
    schemas: Sequence[int] = (0,),
    tables: Sequence[int] = (1,),
    tail: bytes = b"",
) -> bytes:
    out = bytearray()
    primitives.write_delta_uvarint_chunk(out, ts)
    primitives.write_uvarint_chunk(out, kinds)
    primitives.write_delta_varint_chunk(out, partitions)
    primitives.write_delta_varint_chunk(out, schemas)
    primitives.write_delta_varint_chunk(out, tables)
    return bytes(out) + tail


def group(
    kind: int = 1,
    ids: Sequence[int] = (2,),
    types: Sequence[int] = (15,),
    flags: Sequence[int] = (0,),
    values: Sequence[bytes | None] = (b"aa",),
    count: int | None = None,
    tail: bytes = b"",
) -> bytes:
    out = bytearray([kind])
    primitives.write_uvarint(out, len(ids) if count is None else count)
    primitives.write_delta_varint_chunk(out, ids)
    primitives.write_uvarint_chunk(out, types)
    primitives.write_uvarint_chunk(out, flags)
    primitives.write_nullable_bytes_chunk(out, values)
    return bytes(out) + tail


def ddl_body(action: int = 1, query: bytes = b"q") -> bytes:
    out = bytearray(uv(action))
    primitives.write_bytes(out, query)
    return bytes(out)


TERMS = [b"s", b"t", b"a"]
ROW_HEADERS = headers()


def row_message(
    *groups: bytes, terms: Sequence[bytes] = TERMS, sizes: list[int] | None = None
) -> bytes:
    return build(ROW_HEADERS, [b"".join(groups)], terms, [sizes or [len(g) for g in groups]])


def with_tables(tables: list[list[int]], middle: bytes = b"") -> bytes:
    out = bytearray(RESOLVED[:14] + middle)
    primitives.write_size_tables(out, tables)
    return bytes(out)


CASES: list[tuple[str, bytes, str, int | None]] = [
    ("empty", b"", "uvarint runs past the end", 0),
    ("version-2", b"\x02" + RESOLVED[1:], "version 2, only version 1 exists", 0),
    ("version-0", b"\x00" + RESOLVED[1:], "version 0", 0),
    ("trailer-too-large", RESOLVED[:-1] + b"\x7f", "claims 127 bytes of size tables, 18", 19),
    ("trailer-unterminated", b"\x01\x80\x80", "runs past the start", 1),
    ("only-meta-table", with_tables([[13, 0]]), "size tables begin with [headers, dictionary]", 14),
    ("meta-of-three", with_tables([[13, 0, 0], [0]]), "size tables begin with", 14),
    ("negative-size", with_tables([[13, -1], [1]]), "negative size", 14),
    ("gap-before-tables", with_tables([[13, 0], [0]], b"\x00"), "do not fill the 14 bytes", 15),
    ("empty-size-table", RESOLVED[:14] + b"\x02\x1a\x19\x00\x01\x00\x06", "has no elements", 17),
    (
        "bytes-after-headers",
        build(headers(kinds=[3], schemas=[-1], tables=[-1], tail=b"\x00"), [b""]),
        "1 bytes after the headers",
        6,
    ),
    ("event-type-4", build(headers(kinds=[4], schemas=[-1], tables=[-1]), [b""]), "type 4", 2),
    (
        "ddl-and-resolved",
        build(headers([1, 1], [2, 3], [-1, -1], [-1, -1], [-1, -1]), [ddl_body(), b""]),
        "only rows share a message",
        3,
    ),
    (
        "term-out-of-order",
        build(headers(kinds=[2], schemas=[1], tables=[0]), [ddl_body()], [b"a", b"b"]),
        "term id 1 (element 0) comes before id 0",
        4,
    ),
    (
        "term-not-in-dictionary",
        build(headers(kinds=[2], schemas=[5]), [ddl_body()], [b"a", b"b"]),
        "term id 5 (element 0) is not in the dictionary",
        4,
    ),
    (
        "term-unused",
        build(headers(kinds=[2]), [ddl_body()], [b"a", b"b", b"c"]),
        "term 2 of the dictionary is never used",
        9,
    ),
    ("term-repeated", build(headers(kinds=[2]), [ddl_body()], [b"a", b"a"]), "repeats a term", 9),
    (
        "term-not-utf8",
        build(headers(kinds=[2], tables=[0]), [ddl_body()], [b"\xff"]),
        "term 0 is not UTF-8",
        9,
    ),
    (
        "dictionary-present-but-empty",
        build(headers(kinds=[2], schemas=[-1], tables=[-1]), [ddl_body()], dictionary=b"\x00"),
        "holds one term at least",
        9,
    ),
    (
        "dictionary-trailing",
        build(headers(kinds=[2], tables=[0]), [ddl_body()], dictionary=b"\x01\x01ax"),
        "1 bytes after the term dictionary",
        12,
    ),
    (
        "dictionary-count-2^62",
        build(headers(kinds=[2], tables=[0]), [ddl_body()], dictionary=uv(BIG) + b"a"),
        "a chunk of 4611686018427387904 elements, but only 1",
        18,
    ),
    (
        "resolved-with-body",
        build(headers(kinds=[3], schemas=[-1], tables=[-1]), [b"\x00"]),
        "a resolved event has null schema and table and an empty body",
        6,
    ),
    (
        "resolved-with-names",
        build(headers(kinds=[3]), [b""], [b"a", b"b"]),
        "a resolved event has",
        6,
    ),
    (
        "ddl-partition",
        build(headers(kinds=[2], partitions=[6]), [ddl_body()], [b"a", b"b"]),
        "has partition 6, not -1",
        1,
    ),
    (
        "ddl-trailing",
        build(headers(kinds=[2]), [ddl_body() + b"\x00"], [b"a", b"b"]),
        "1 bytes after the DDL query",
        9,
    ),
    (
        "ddl-type-256",
        build(headers(kinds=[2]), [ddl_body(256)], [b"a", b"b"]),
        "not an ActionType byte",
        6,
    ),
    (
        "ddl-query-2^62",
        build(headers(kinds=[2]), [b"\x01" + uv(BIG) + b"q"], [b"a", b"b"]),
        "length 4611686018427387904 exceeds the 1 bytes left",
        7,
    ),
    (
        "ddl-query-not-utf8",
        build(headers(kinds=[2]), [ddl_body(query=b"\xff")], [b"a", b"b"]),
        "the DDL query is not UTF-8",
        7,
    ),
    (
        "row-without-schema",
        build(headers(schemas=[-1], tables=[0]), [group(ids=[1])], [b"t", b"a"], [[8]]),
        "row 0 has no schema or table name",
        1,
    ),
    (
        "row-without-group-table",
        build(ROW_HEADERS, [group()], TERMS),
        "0 column-group size tables for 1 rows",
        21,
    ),
    (
        "group-sizes-short",
        row_message(group(), sizes=[7]),
        "column groups of 7 bytes in a body of 8",
        6,
    ),
    ("group-of-0-bytes", row_message(group(), sizes=[0, 8]), "a column group of 0 bytes", 6),
    ("group-type-3", row_message(group(kind=3)), "column group type 3; 1 new, 2 old", 6),
    ("old-then-new", row_message(group(kind=2), group(kind=1)), "column groups [2, 1]", 6),
    ("two-new-groups", row_message(group(), group()), "column groups [1, 1]", 6),
    (
        "no-columns",
        row_message(group(ids=[], types=[], flags=[], values=[])),
        "one column at least",
        7,
    ),
    (
        "column-count-2^62",
        row_message(group(count=BIG)),
        "a chunk of 4611686018427387904 elements",
        16,
    ),
    ("type-code-256", row_message(group(types=[256])), "type code 256, above 255", 9),
    ("group-trailing", row_message(group(tail=b"\x00")), "1 bytes after the column group", 14),
    (
        "nullable-below-minus-1",
        row_message(group(values=[b""])[:-1] + b"\x03"),
        "-2 is below -1",
        11,
    ),
    (
        "value-trailing",
        row_message(group(types=[3], values=[b"\x02\x00"])),
        "column 'a': 1 bytes after the varint",
        12,
    ),
    (
        "value-not-utf8-date",
        row_message(group(types=[10], values=[b"\xff"])),
        "column 'a': value is not UTF-8",
        12,
    ),
]


@pytest.mark.parametrize(
    ("value", "reason", "offset"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_rejected(value: bytes, reason: str, offset: int | None) -> None:
    with pytest.raises(DecodeError) as caught:
        craft.decode(Message(key=None, value=value), message_index=7)
    error = caught.value
    assert reason in error.reason
    assert (error.protocol, error.part, error.message_index) == ("craft", "value", 7)
    assert error.offset == offset
    assert f"craft: message 7, value byte {offset}: " in str(error)


def test_builder_makes_valid_messages() -> None:
    # the builder itself reproduces the golden bytes from their parts
    assert build(RESOLVED[1:14], [b""]) == RESOLVED
    assert row_message(group(values=[None])) != b""
    assert len(craft.decode(Message(key=None, value=row_message(group())))) == 1


def test_a_key_is_rejected() -> None:
    with pytest.raises(DecodeError) as caught:
        craft.decode(Message(key=b"", value=RESOLVED))
    assert (caught.value.part, caught.value.offset) == ("key", 0)
