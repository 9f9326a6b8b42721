"""Pure-Python, sans-IO reference codecs for TiCDC's Kafka message protocols.

No Kafka, files or clocks here: codecs turn change events into ``Message`` objects and
messages into decoded events. Every decoder raises only ``DecodeError``.

Codec modules, one per protocol, each with exactly the surface ``Codec`` describes (Simple's
two add ``SchemaCodec``): ``open_protocol``, ``craft``, ``simple_json``, ``simple_avro``,
``debezium``, ``canal_json``; ``CODECS`` names them. Shared by the codecs: ``mysql`` (the
MySQL type model), ``jsondoc`` (JSON documents, paths and typed members), ``simple`` (what
both Simple encodings share), ``losses`` (what the encoders are documented to lose), ``forms``
(the kit's JSON forms), ``compression`` (``large-message-handle-compression``: snappy, LZ4).
"""

from __future__ import annotations

from typing import Any

from ticdc_conformance.reference import (
    canal_json,
    craft,
    debezium,
    open_protocol,
    simple,
    simple_avro,
    simple_json,
)
from ticdc_conformance.reference.decoded import (
    DecodedBootstrap,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
)
from ticdc_conformance.reference.errors import (
    DecodeError,
    EncodeError,
    ExitCode,
    FormError,
    ProtocolError,
    RunBrokenError,
    UsageError,
)
from ticdc_conformance.reference.events import (
    ChangeEvent,
    DDLEvent,
    Operation,
    ResolvedEvent,
    RowChangedEvent,
)
from ticdc_conformance.reference.message import ClaimCheckObject, Codec, Message
from ticdc_conformance.reference.tables import ColumnInfo, IndexInfo, Profile, TableInfo
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "CODECS",
    "ChangeEvent",
    "ClaimCheckObject",
    "Codec",
    "ColumnInfo",
    "DDLEvent",
    "DecimalValue",
    "DecodeError",
    "DecodedBootstrap",
    "DecodedColumn",
    "DecodedDDL",
    "DecodedEvent",
    "DecodedResolved",
    "DecodedRow",
    "EncodeError",
    "ExitCode",
    "FormError",
    "IndexInfo",
    "Message",
    "Operation",
    "Profile",
    "ProtocolError",
    "ResolvedEvent",
    "RowChangedEvent",
    "RunBrokenError",
    "TableInfo",
    "TimestampValue",
    "UsageError",
    "Value",
    "canal_json",
    "craft",
    "debezium",
    "open_protocol",
    "simple",
    "simple_avro",
    "simple_json",
]

CODECS: dict[str, Codec[Any]] = {
    open_protocol.PROTOCOL: open_protocol,
    craft.PROTOCOL: craft,
    simple_json.PROTOCOL: simple_json,
    simple_avro.PROTOCOL: simple_avro,
    debezium.PROTOCOL: debezium,
    canal_json.PROTOCOL: canal_json,
}
"""Protocol name → codec module, for tools that pick a protocol by name."""
