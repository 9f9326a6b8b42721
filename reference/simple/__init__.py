"""TiCDC Simple protocol: reference codec for JSON and Avro, and the consumer's schema state.

Rules (shared/research/ticdc-ground-truth.md §4, §6.6; the seed 002 is stale where §4.11 says):

* One event per Kafka message, nil key (§4.1). Message types: WATERMARK, BOOTSTRAP (a table's
  schema, commitTs 0), DDL (``type`` CREATE, RENAME, CINDEX, DINDEX, ERASE, TRUNCATE, ALTER or
  QUERY from the TiDB ActionType, §4.5) and DML (INSERT, UPDATE, DELETE).
* JSON envelope (§4.2): fixed member order, empty members omitted; DML ``tableID`` is the
  physical table id, ``schemaVersion`` the table info's UpdateTS; DDL messages carry no
  database or table members, only ``tableSchema``/``preTableSchema`` when TiCDC has them.
* Values (§4.3): strings, TIMESTAMP ``{"location","value"}``, binary strings base64, FLOAT and
  DOUBLE never in exponent form; Avro uses the map value union of §4.8.
* TableSchema (§4.4): columns, ``dataType`` and indexes with a synthetic ``primary`` index
  for a primary key TiDB keeps as the row handle; ``schema`` in JSON, ``database`` in Avro.
* Avro (§4.8): the 12-record union schema ``reference/schemas/simple-message.avsc``; every
  value starts with ``0x16``; BIGINT UNSIGNED is ``UnsignedBigint`` (wrapping above 2^63).
* Profiles (§4.10): ``tiflow`` writes BIT as an Avro long and orders TableSchema columns by
  column id; ``ticdc`` writes BIT as an Avro string, keeps table order, and maps
  ExchangeTablePartition to ALTER (``tiflow``: QUERY).
* Checksum (§4.6), large messages (§4.7), ``buildTs`` from an injectable clock (default 0:
  comparisons must ignore ``buildTs``).

``JSON`` and ``AVRO`` are the two codecs (protocol names ``simple-json``, ``simple-avro``);
each also offers ``encode_bootstrap`` and ``new_decoder`` (a ``SimpleDecoder``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ticdc_conformance.reference.decoded import DecodedEvent
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.simple import _encode
from ticdc_conformance.reference.simple._checksum import Checksum, row_checksum, verify_checksum
from ticdc_conformance.reference.simple._config import (
    OPTIONS,
    PROFILES,
    Config,
    EncodingFormat,
    config_from_options,
    no_clock,
)
from ticdc_conformance.reference.simple._decoder import (
    UNTYPED,
    Pending,
    SimpleDecoder,
    decode,
    parse,
    read_claim_check,
)
from ticdc_conformance.reference.simple._encode import event_checksum
from ticdc_conformance.reference.simple._schema import ddl_kind, mysql_type
from ticdc_conformance.reference.tables import Profile, TableInfo

__all__ = [
    "AVRO",
    "JSON",
    "OPTIONS",
    "PROFILES",
    "UNTYPED",
    "Checksum",
    "Config",
    "Pending",
    "SimpleCodec",
    "SimpleDecoder",
    "config_from_options",
    "ddl_kind",
    "decode",
    "event_checksum",
    "mysql_type",
    "no_clock",
    "read_checksum",
    "read_claim_check",
    "row_checksum",
    "verify_checksum",
]


@dataclass(frozen=True, slots=True)
class SimpleCodec:
    """One encoding of the Simple protocol, with the surface every protocol module has."""

    encoding_format: EncodingFormat
    PROFILES: tuple[Profile, ...] = PROFILES
    OPTIONS: Mapping[str, str] = field(default_factory=lambda: OPTIONS)

    @property
    def PROTOCOL(self) -> str:  # noqa: N802 - the Codec surface's constant
        """``simple-json`` or ``simple-avro``."""
        return f"simple-{self.encoding_format}"

    def config_from_options(
        self, options: Mapping[str, str], *, profile: str | None = None
    ) -> Config:
        """A ``Config`` of this encoding from TiCDC option names and text values."""
        return config_from_options(options, profile=profile, encoding_format=self.encoding_format)

    def _config(self, config: Config | None) -> Config:
        if config is None:
            return Config(encoding_format=self.encoding_format)
        if config.encoding_format != self.encoding_format:
            raise EncodeError(f"the config is for {config.protocol}", protocol=self.PROTOCOL)
        return config

    def encode(self, events: Iterable[ChangeEvent], config: Config | None = None) -> list[Message]:
        """Encode change events into Simple messages as the profile's TiCDC would."""
        return _encode.encode(events, self._config(config))

    def encode_bootstrap(self, table: TableInfo, config: Config | None = None) -> Message:
        """The BOOTSTRAP message of ``table`` (§4.9)."""
        return _encode.encode_bootstrap(table, self._config(config))

    def decode(self, message: Message, *, message_index: int = 0) -> list[DecodedEvent]:
        """Decode one message on its own (DML values untyped); raise only ``DecodeError``."""
        return decode(message, encoding=self.encoding_format, message_index=message_index)

    def new_decoder(self) -> SimpleDecoder:
        """A stateful decoder that types DML against cached schemas (the consumer's view)."""
        return SimpleDecoder(self.encoding_format)


JSON = SimpleCodec("json")
AVRO = SimpleCodec("avro")


def read_checksum(message: Message, *, encoding: EncodingFormat, message_index: int = 0
                  ) -> Checksum | None:  # fmt: skip
    """The ``checksum`` member of a DML message, if it has one."""
    return parse(message, encoding, message_index).checksum
