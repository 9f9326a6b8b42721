"""large-message-handle-compression: the codecs, and where each protocol applies it."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable

import cramjam
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference import (
    CODECS,
    ChangeEvent,
    ColumnInfo,
    DDLEvent,
    DecodeError,
    EncodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    simple_json,
)
from ticdc_conformance.reference.compression import (
    COMPRESSIONS,
    Compression,
    compress,
    decompress,
    xxh32,
)
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.reference.simple import read_claim_check

TABLE = TableInfo(
    schema="shop",
    name="items",
    table_id=7,
    schema_version=1,
    columns=(
        ColumnInfo(name="id", type="int", key="primary"),
        ColumnInfo(name="note", type="varchar", length=4000),
    ),
)
TS = 1 << 40
EVENTS: tuple[ChangeEvent, ...] = (
    DDLEvent(
        commit_ts=TS,
        schema="shop",
        table="items",
        query="CREATE TABLE items (id INT PRIMARY KEY, note VARCHAR(4000))",
        ddl_type=3,
        table_info=TABLE,
    ),
    RowChangedEvent(commit_ts=TS + 1, table=TABLE, op="insert", after=(1, "a note " * 20)),
    RowChangedEvent(
        commit_ts=TS + 2, table=TABLE, op="update", before=(1, "a note"), after=(1, "other")
    ),
    RowChangedEvent(commit_ts=TS + 3, table=TABLE, op="delete", before=(1, "other")),
    ResolvedEvent(commit_ts=TS + 4),
)
COMPRESSING = ("open", "simple-json", "simple-avro", "debezium", "canal-json")
"""The codecs that apply the option; Craft's TiCDC encoder never compresses."""
EXTRA = {
    "canal-json": {"enable-tidb-extension": "true"},
    "debezium": {"enable-tidb-extension": "true"},
}


def _messages(protocol: str, compression: Compression, **options: str) -> list[Message]:
    codec = CODECS[protocol]
    config = codec.config_from_options(
        {**EXTRA.get(protocol, {}), **options, "large-message-handle-compression": compression}
    )
    bootstrap = [codec.encode_bootstrap(TABLE, config)] if isinstance(codec, SchemaCodec) else []
    return [*bootstrap, *codec.encode(EVENTS, config)]


# --- the codecs ------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [b"", b"a", b"abc", b"0123456789abcdef" * 3, bytes(range(256))])
def test_xxh32_agrees_with_the_checksums_liblz4_writes(data: bytes) -> None:
    frame = bytes(cramjam.lz4.compress(data))  # another implementation's frame
    flags = frame[4]
    descriptor_end = 6 + (8 if flags & 0b1000 else 0)
    assert frame[descriptor_end] == (xxh32(frame[4:descriptor_end]) >> 8) & 0xFF
    assert int.from_bytes(frame[-4:], "little") == xxh32(data)


def test_lz4_frame_has_the_pierrec_writer_defaults() -> None:
    frame = compress("lz4", b"x" * 100)
    assert frame[:4] == b"\x04\x22\x4d\x18"
    flags, block = frame[4], frame[5]
    assert flags >> 6 == 1  # version 1
    assert flags & 0b0010_0000  # independent blocks
    assert not flags & 0b0001_0000  # no block checksum
    assert not flags & 0b0000_1000  # no content size
    assert flags & 0b0000_0100  # content checksum
    assert block >> 4 == 7  # 4 MiB blocks
    assert frame[-8:-4] == bytes(4)  # the end mark, then the content checksum
    assert bytes(cramjam.lz4.decompress(frame)) == b"x" * 100


def test_incompressible_lz4_block_is_stored() -> None:
    data = bytes(range(7))
    frame = compress("lz4", data)
    size = int.from_bytes(frame[7:11], "little")
    assert size == len(data) | 1 << 31
    assert frame[11 : 11 + len(data)] == data


def test_snappy_is_the_block_format() -> None:
    data = b"snappy " * 10
    block = compress("snappy", data)
    assert block[0] == len(data)  # a varint of the uncompressed length, no stream header
    assert bytes(cramjam.snappy.decompress_raw(block)) == data


@given(st.binary(max_size=2000), st.sampled_from(COMPRESSIONS))
def test_round_trip(data: bytes, compression: Compression) -> None:
    packed = compress(compression, data)
    assert decompress(compression, packed, protocol="t", part="value") == data


@given(st.binary(max_size=300), st.sampled_from(COMPRESSIONS[1:]))
def test_decompress_is_total(data: bytes, compression: Compression) -> None:
    try:
        decompress(compression, data, protocol="t", part="key", offset=5)
    except DecodeError as error:
        assert (error.part, error.offset) == ("key", 5)


def _flip_last(data: bytes) -> bytes:
    return data[:-1] + bytes([data[-1] ^ 1])


@pytest.mark.parametrize(
    ("compression", "corrupt", "reason"),
    [
        ("lz4", lambda d: d[:-6], "corrupt compressed bytes"),
        ("lz4", _flip_last, "corrupt compressed bytes"),
        ("lz4", lambda d: b"\x00" + d[1:], "no magic number"),
        ("lz4", lambda _: compress("snappy", b"{}"), "no magic number"),
        ("snappy", lambda d: b"\xff\xff\xff\x7f" + d[1:], "more than its"),
        ("snappy", lambda d: d[:-3], "corrupt compressed bytes"),
        ("snappy", lambda _: b"", "no length header"),
        ("snappy", lambda _: b"\x80\x80", "no length header"),
    ],
)
def test_corrupt_bytes_are_decode_errors(
    compression: Compression, corrupt: Callable[[bytes], bytes], reason: str
) -> None:
    data = compress(compression, b'{"a":"' + b"x" * 200 + b'"}')
    with pytest.raises(DecodeError, match=reason) as raised:
        decompress(compression, corrupt(data), protocol="t", part="value", offset=16)
    assert (raised.value.part, raised.value.offset) == ("value", 16)


# --- the protocols ---------------------------------------------------------------------------


@pytest.mark.parametrize("compression", ["snappy", "lz4"])
@pytest.mark.parametrize("protocol", COMPRESSING)
def test_compressed_messages_decode_to_the_same_events(protocol: str, compression: str) -> None:
    plain = _messages(protocol, "none")
    packed = _messages(protocol, compression)  # type: ignore[arg-type]
    assert packed != plain
    expected = decode_messages(protocol, plain)
    assert decode_messages(protocol, packed, compression=compression) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("protocol", COMPRESSING)
def test_the_consumer_needs_the_producers_option(protocol: str) -> None:
    with pytest.raises(DecodeError):  # compressed bytes read as plain ones
        decode_messages(protocol, _messages(protocol, "snappy"))
    with pytest.raises(DecodeError, match="snappy"):  # plain bytes read as compressed ones
        decode_messages(protocol, _messages(protocol, "none"), compression="snappy")
    with pytest.raises(DecodeError, match="lz4"):  # the other codec
        decode_messages(protocol, _messages(protocol, "snappy"), compression="lz4")


def _entries(data: bytes) -> list[bytes]:
    entries, position = [], 0
    while position < len(data):
        size = int.from_bytes(data[position : position + 8], "big")
        entries.append(data[position + 8 : position + 8 + size])
        position += 8 + size
    return entries


@pytest.mark.parametrize("profile", ["tiflow", "ticdc"])
def test_open_compresses_values_only(profile: str) -> None:
    config = CODECS["open"].config_from_options(
        {"large-message-handle-compression": "lz4"}, profile=profile
    )
    ddl, rows, resolved = CODECS["open"].encode(EVENTS, config)
    for message in (ddl, rows):
        assert message.key is not None
        assert message.value is not None
        for key in _entries(message.key[8:]):
            json.loads(key)  # keys stay plain JSON
        values = _entries(message.value)  # length prefixes count the compressed bytes
        assert [bytes(cramjam.lz4.decompress(v))[:1] for v in values] == [b"{"] * len(values)
    assert resolved.value == bytes(8)  # a resolved entry stays empty


def test_debezium_compresses_keys_too() -> None:
    for message in _messages("debezium", "snappy"):
        assert message.key is not None
        assert message.value is not None
        json.loads(bytes(cramjam.snappy.decompress_raw(message.key)))
        json.loads(bytes(cramjam.snappy.decompress_raw(message.value)))


def test_craft_refuses_the_option() -> None:
    with pytest.raises(EncodeError, match="never compresses"):
        CODECS["craft"].config_from_options({"large-message-handle-compression": "snappy"})


@pytest.mark.parametrize("protocol", ["open", "simple-json", "canal-json"])
def test_max_message_bytes_counts_compressed_bytes(protocol: str) -> None:
    big = RowChangedEvent(commit_ts=TS, table=TABLE, op="insert", after=(1, "z" * 3000))
    options = {**EXTRA.get(protocol, {}), "max-message-bytes": "1000"}
    codec = CODECS[protocol]
    with pytest.raises(EncodeError, match="max-message-bytes"):
        codec.encode([big], codec.config_from_options(options))
    config = codec.config_from_options({**options, "large-message-handle-compression": "snappy"})
    (message,) = codec.encode([big], config)
    assert message.length() <= 1000


def test_claim_check_stores_the_compressed_value() -> None:
    digits = "".join(f"{i * 7919 % 10007:05d}" for i in range(200))  # compresses little
    big = RowChangedEvent(commit_ts=TS, table=TABLE, op="insert", after=(1, digits))
    codec = simple_json
    options = {
        "max-message-bytes": "600",
        "large-message-handle-option": "claim-check",
        "claim-check-storage-uri": "s3://bucket/cc",
        "large-message-handle-compression": "lz4",
    }
    (message,) = codec.encode([big], codec.config_from_options(options))
    (stored,) = message.claim_checks
    original = read_claim_check(stored.content)
    assert original.value is not None
    assert original.value.startswith(b"\x04\x22\x4d\x18")
    bootstrap = codec.encode_bootstrap(TABLE, codec.config_from_options(options))
    (_, row) = decode_messages("simple-json", [bootstrap, original], compression="lz4")
    plain = [codec.encode_bootstrap(TABLE), *codec.encode([big])]
    assert row == decode_messages("simple-json", plain)[1]


_PACKED = {(p, c): _messages(p, c) for p in COMPRESSING for c in ("snappy", "lz4")}


@settings(max_examples=300, deadline=None)
@given(
    st.sampled_from(sorted(_PACKED)),
    st.integers(min_value=0),
    st.integers(min_value=0, max_value=255),
    st.booleans(),
)
def test_decoders_stay_total_on_spoiled_compressed_messages(
    which: tuple[str, str], at: int, byte: int, cut: bool
) -> None:
    protocol, compression = which
    *before, last = _PACKED[which]
    value = last.value or b""
    at %= max(len(value), 1)
    spoiled = value[:at] if cut else value[:at] + bytes([byte]) + value[at + 1 :]
    messages = [*before, dataclasses.replace(last, value=spoiled)]
    try:
        decode_messages(protocol, messages, compression=compression)  # type: ignore[arg-type]
    except DecodeError as error:
        assert error.protocol == protocol
