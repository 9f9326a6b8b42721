"""One encoding of the Simple protocol with the codec surface (``simple_json``, ``simple_avro``).

``SimpleCodec`` binds the shared encoder and decoders to an encoding; the codec modules
``simple_json`` and ``simple_avro`` export its bound methods, so both encodings have one
implementation and the same surface.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.decoded import DecodedEvent
from ticdc_conformance.reference.events import ChangeEvent
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.simple import _bootstrap, _config, _decoder, _encode
from ticdc_conformance.reference.simple._config import Config, EncodingFormat
from ticdc_conformance.reference.simple._decoder import SimpleDecoder
from ticdc_conformance.reference.tables import TableInfo

__all__ = ["SimpleCodec"]


@dataclass(frozen=True, slots=True)
class SimpleCodec:
    """The Simple protocol in one encoding."""

    encoding: EncodingFormat

    @property
    def protocol(self) -> str:
        """``simple-json`` or ``simple-avro``."""
        return f"{_config.PROTOCOL}-{self.encoding}"

    def config_from_options(
        self, options: Mapping[str, str], *, profile: str | None = None
    ) -> Config:
        """A ``Config`` from TiCDC option names and text values (``EncodeError`` if invalid)."""
        return _config.config_from_options(options, profile=profile, encoding=self.encoding)

    def encode(self, events: Iterable[ChangeEvent], config: Config | None = None) -> list[Message]:
        """Encode change events into Simple messages as the profile's TiCDC would.

        One message per event, never a BOOTSTRAP of its own accord (see ``encode_stream``).
        """
        return _encode.encode(events, config or Config(), self.encoding)

    def encode_stream(
        self, events: Iterable[ChangeEvent], config: Config | None = None
    ) -> Iterator[Message]:
        """One partition's messages: ``events`` with TiCDC's BOOTSTRAPs among them (§6.6).

        The ``send-*bootstrap*`` options of ``config`` decide where; time is commit time.
        """
        return _bootstrap.encode_stream(events, config or Config(), self.encoding)

    def encode_bootstrap(self, table: TableInfo, config: Config | None = None) -> Message:
        """The BOOTSTRAP message of ``table``: its schema, commitTs 0, nil key (§4.9)."""
        return _encode.encode_bootstrap(table, config or Config(), self.encoding)

    def decode(
        self, message: Message, *, message_index: int = 0, compression: Compression = "none"
    ) -> list[DecodedEvent]:
        """Decode one message on its own (DML values untyped); raise only ``DecodeError``."""
        return _decoder.decode(
            message, encoding=self.encoding, message_index=message_index, compression=compression
        )

    def new_decoder(self, *, compression: Compression = "none") -> SimpleDecoder:
        """A stateful decoder that types DML against cached schemas (the consumer's view)."""
        return SimpleDecoder(self.encoding, compression=compression)
