"""What the encoders lose: invalid UTF-8 written as U+FFFD, checked against the encoders."""

from __future__ import annotations

import pytest

from ticdc_conformance.reference import (
    CODECS,
    ColumnInfo,
    DecodedRow,
    RowChangedEvent,
    TableInfo,
)
from ticdc_conformance.reference.losses import replace_invalid_utf8, replaced_text_types
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.reference.mysql import TEXT_TYPES

INVALID = b"a\xe2\x82b\xff"  # a truncated three-byte sequence, then a byte no UTF-8 has


def test_each_invalid_byte_becomes_one_replacement_character() -> None:
    assert replace_invalid_utf8(INVALID) == "a\ufffd\ufffdb\ufffd".encode()
    assert replace_invalid_utf8("测试".encode()) == "测试".encode()


def _read_back(protocol: str, profile: str, column: ColumnInfo) -> object:
    """The value a consumer reads back after ``protocol`` encodes INVALID in ``column``."""
    table = TableInfo(schema="s", name="t", columns=(column,))
    event = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(INVALID,))
    codec = CODECS[protocol]
    config = codec.config_from_options({}, profile=profile)
    if isinstance(codec, SchemaCodec):
        decoder = codec.new_decoder()
        decoder.feed(codec.encode_bootstrap(table, config))
        decoded = [e for m in codec.encode([event], config) for e in decoder.feed(m)]
    else:
        decoded = [e for m in codec.encode([event], config) for e in codec.decode(m)]
    [row] = [e for e in decoded if isinstance(e, DecodedRow)]
    assert row.after is not None
    value = row.after[0].value
    return value.encode() if isinstance(value, str) else value


@pytest.mark.parametrize(
    ("protocol", "profile"),
    [
        (protocol, profile)
        for protocol, codec in sorted(CODECS.items())
        for profile in codec.PROFILES
    ],
)
@pytest.mark.parametrize("text_type", sorted(TEXT_TYPES))
def test_the_encoders_lose_exactly_what_is_said(
    protocol: str, profile: str, text_type: str
) -> None:
    column = ColumnInfo(name="c", type=text_type)  # type: ignore[arg-type]
    expected = INVALID
    if column.type in replaced_text_types(protocol, profile):
        expected = replace_invalid_utf8(INVALID)
    assert _read_back(protocol, profile, column) == expected
