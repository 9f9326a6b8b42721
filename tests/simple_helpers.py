"""Builders for the Simple protocol tests: tables, events, Avro primitives written by hand."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol
from unittest import mock

from ticdc_conformance.reference import (
    ColumnInfo,
    DecodedEvent,
    Message,
    RowChangedEvent,
    TableInfo,
    simple,
    simple_avro,
    simple_json,
)
from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.events import ChangeEvent
from ticdc_conformance.reference.message import Codec
from ticdc_conformance.reference.simple import EncodingFormat, _decoder, _json, _lazy
from ticdc_conformance.reference.simple._wire import Wire
from ticdc_conformance.reference.validation import InvalidValueError

TS = 447984084414103554  # commit ts of the seed's INSERT example
VERSION = 447984074911121426  # the seed's schemaVersion


def table(*columns: ColumnInfo, name: str = "t", version: int = VERSION, **kw: Any) -> TableInfo:
    """``test.<name>(id int primary key, …)`` with table id 20."""
    pk = ColumnInfo(name="id", type="int", key="primary", length=11)
    return TableInfo(
        schema="test", name=name, columns=(pk, *columns), table_id=20, schema_version=version, **kw
    )


def insert(t: TableInfo, *values: Any, ts: int = TS) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=ts, table=t, op="insert", after=(1, *values))


class SimpleCodec(Codec[simple.Config], Protocol):
    """The surface of ``simple_json`` and ``simple_avro``."""

    def encode_bootstrap(self, table: TableInfo, config: simple.Config | None = None) -> Message:
        """The BOOTSTRAP message of ``table``."""
        ...

    def encode_stream(
        self, events: Iterable[ChangeEvent], config: simple.Config | None = None
    ) -> Iterator[Message]:
        """One partition's messages with TiCDC's BOOTSTRAPs among them."""
        ...

    def new_decoder(self) -> simple.SimpleDecoder:
        """A fresh stateful decoder."""
        ...


def codec(encoding: str) -> SimpleCodec:
    return simple_json if encoding == "json" else simple_avro


def config(profile: str = "tiflow", **kw: Any) -> simple.Config:
    """A config of both encodings (the encoding is the codec)."""
    return simple.Config(profile=profile, **kw)  # type: ignore[arg-type]


def with_bootstrap(encoding: str, events: list[Any], cfg: simple.Config) -> list[Message]:
    """The BOOTSTRAP of the first event's table, then the events' messages (§6.6 order)."""
    first = events[0]
    assert isinstance(first, RowChangedEvent)
    return [
        codec(encoding).encode_bootstrap(first.table, cfg),
        *codec(encoding).encode(events, cfg),
    ]


def feed_all(encoding: str, messages: list[Message]) -> list[DecodedEvent]:
    """Decode a stream with a fresh SimpleDecoder; every row must resolve."""
    decoder = codec(encoding).new_decoder()
    events = [e for i, m in enumerate(messages) for e in decoder.feed(m, message_index=i)]
    assert decoder.pending() == ()
    assert decoder.rejected() == ()
    return events


_PARSE = _decoder.parse


def _full_parse(
    message: Message,
    encoding: EncodingFormat,
    index: int,
    compression: Compression = "none",
    **_: bool,
) -> Wire:
    return _PARSE(message, encoding, index, compression)


@contextmanager
def read_in_full() -> Iterator[None]:
    """Inside the block a ``SimpleDecoder`` reads every message in full, none lazily."""
    with (
        mock.patch.object(_decoder, "parse", _full_parse),
        mock.patch.object(_lazy, "parse", _json.parse),
    ):
        yield


def json_decoders(t: TableInfo) -> tuple[simple.SimpleDecoder, simple.SimpleDecoder]:
    """Two Simple-JSON decoders that know ``t``'s schema: to read lazily and in full."""
    bootstrap = simple_json.encode_bootstrap(t)
    lazy, full = simple_json.new_decoder(), simple_json.new_decoder()
    lazy.feed(bootstrap)
    full.feed(bootstrap)
    return lazy, full


def feed_outcome(decoder: simple.SimpleDecoder, message: Message) -> tuple[str, object]:
    """The events a decoder returns for a message, or the error it raises, as text."""
    try:
        return "events", decoder.feed(message)
    except InvalidValueError as error:
        return "invalid", (str(error), [str(f) for f in error.findings], error.events)
    except DecodeError as error:
        return "error", str(error)


# Avro primitives, written here independently of the codec under test (Avro 1.11 spec)
def zz(n: int) -> bytes:
    """A zigzag varint long."""
    u = (n << 1) ^ (n >> 63)
    out = bytearray()
    while True:
        byte = u & 0x7F
        u >>= 7
        if u:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def avro_str(data: str | bytes) -> bytes:
    raw = data.encode() if isinstance(data, str) else data
    return zz(len(raw)) + raw
