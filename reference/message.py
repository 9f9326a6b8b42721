"""Kafka messages and the surface every protocol module offers.

A ``Message`` is what TiCDC hands to the Kafka producer: key and value bytes (either may be
absent; Craft and Simple bootstraps have no key). When the large-message option
``claim-check`` is on, the message also says what TiCDC wrote to external storage.

Every codec module (``open_protocol``, ``craft``, ``simple_json``, ``simple_avro``,
``debezium``) satisfies ``Codec`` and exports exactly its names: the constants ``PROTOCOL``,
``PROFILES`` and ``OPTIONS``, a frozen ``Config`` and ``config_from_options`` that builds one
from TiCDC's sink option names, ``encode`` (change events → messages), ``decode`` (one message
→ events) and the ``DecodeError`` it raises. Simple's two add ``SchemaCodec``
(``encode_bootstrap``, ``new_decoder``); other extras live in submodules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from ticdc_conformance.reference.errors import DecodeError

if TYPE_CHECKING:
    from ticdc_conformance.reference.compression import Compression
    from ticdc_conformance.reference.decoded import DecodedEvent
    from ticdc_conformance.reference.events import ChangeEvent
    from ticdc_conformance.reference.tables import TableInfo

__all__ = [
    "CODEC_SURFACE",
    "RECORD_OVERHEAD",
    "SCHEMA_CODEC_SURFACE",
    "ClaimCheckObject",
    "Codec",
    "HeldRow",
    "Message",
    "SchemaCodec",
    "StreamDecoder",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimCheckObject:
    """A file TiCDC writes to external storage for one oversized message (ground truth §1.5)."""

    location: str
    """Storage URI without trailing slash, ``/``, then the file name."""
    content: bytes
    """The file's bytes."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """One Kafka message."""

    key: bytes | None
    value: bytes | None
    claim_checks: tuple[ClaimCheckObject, ...] = ()
    """Files TiCDC stored elsewhere for rows of this message it replaced by a reference."""

    def length(self) -> int:
        """TiCDC's size accounting: key, value and the 36-byte record overhead (§1.5)."""
        return len(self.key or b"") + len(self.value or b"") + RECORD_OVERHEAD


RECORD_OVERHEAD = 36
"""``MaxRecordOverhead`` = 5 × MaxVarintLen32 + MaxVarintLen64 + 1 (ground truth §1.5)."""


ConfigT = TypeVar("ConfigT")


class Codec(Protocol[ConfigT]):
    """The surface of a codec module; ``ConfigT`` is the module's ``Config``."""

    Config: type[ConfigT]
    """The frozen encoder options, one field per TiCDC sink option (``_`` for ``-``)."""
    DecodeError: type[DecodeError]
    """What ``decode`` raises, and nothing else."""

    @property
    def PROTOCOL(self) -> str:  # noqa: N802 - a module constant
        """The protocol's name as TiCDC's sink URI spells it (``protocol=open``)."""
        ...

    @property
    def PROFILES(self) -> tuple[str, ...]:  # noqa: N802 - a module constant
        """The producer profiles the encoder can imitate."""
        ...

    @property
    def OPTIONS(self) -> Mapping[str, str]:  # noqa: N802 - a module constant
        """TiCDC option name → one-line help, for the options ``config_from_options`` takes."""
        ...

    def config_from_options(
        self, options: Mapping[str, str], *, profile: str | None = None
    ) -> ConfigT:
        """Build a config from TiCDC sink option names and their text values."""
        ...

    def encode(self, events: Iterable[ChangeEvent], config: ConfigT | None = None) -> list[Message]:
        """Encode change events into Kafka messages exactly as the profile's TiCDC would."""
        ...

    def decode(
        self, message: Message, *, message_index: int = 0, compression: Compression = "none"
    ) -> Sequence[DecodedEvent]:
        """Decode one message; raise only ``DecodeError``.

        ``compression`` is the consumer's ``large-message-handle-compression``.
        """
        ...


CODEC_SURFACE = frozenset(
    {
        "PROTOCOL",
        "PROFILES",
        "OPTIONS",
        "Config",
        "config_from_options",
        "encode",
        "decode",
        "DecodeError",
    }
)
"""The names every codec module exports (``Codec``)."""
SCHEMA_CODEC_SURFACE = frozenset({"encode_bootstrap", "encode_stream", "new_decoder"})
"""The names a codec of schema-less rows exports besides (``SchemaCodec``)."""


class HeldRow(Protocol):
    """A row a ``StreamDecoder`` has not typed, and why."""

    @property
    def message_index(self) -> int:
        """Index of the message that carried it."""
        ...

    @property
    def reason(self) -> str:
        """Why it is held or rejected."""
        ...


class StreamDecoder(Protocol):
    """A consumer's decoder that keeps state across the messages of one partition."""

    def feed(self, message: Message, *, message_index: int = 0) -> Sequence[DecodedEvent]:
        """Decode one message; return the events now resolvable (``DecodeError`` if invalid)."""
        ...

    def pending(self) -> Sequence[HeldRow]:
        """Rows still held back, each with its message index and reason."""
        ...

    def rejected(self) -> Sequence[HeldRow]:
        """Rows that can never be resolved, each with its message index and reason."""
        ...

    def table_info(self, database: str, table: str, schema_version: int) -> TableInfo | None:
        """The schema seen for (database, table, schemaVersion), if any."""
        ...


@runtime_checkable
class SchemaCodec(Protocol):
    """The extra surface of a codec whose rows carry no types (Simple, ground truth §4.9, §6.6).

    A BOOTSTRAP encoder, the stream encoder that places BOOTSTRAPs as TiCDC does, and a
    stateful decoder that types rows by the schemas it has seen.
    """

    def encode_bootstrap(self, table: TableInfo, config: Any = None) -> Message:  # noqa: ANN401 - each codec's own Config
        """The BOOTSTRAP message of ``table``."""
        ...

    def encode_stream(self, events: Iterable[ChangeEvent], config: Any = None) -> Iterator[Message]:  # noqa: ANN401 - each codec's own Config
        """One partition's messages: ``events`` with the BOOTSTRAPs TiCDC sends among them."""
        ...

    def new_decoder(self, *, compression: Compression = "none") -> StreamDecoder:
        """A fresh stateful decoder (``compression``: as for ``decode``)."""
        ...
