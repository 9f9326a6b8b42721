"""TiCDC Simple protocol in Avro (``protocol=simple``, ``encoding-format=avro``): the codec.

The protocol's rules, its row checksum and its consumer-side decoder are in ``simple`` and
docs/simple.md. Beside the codec surface (``Codec``), Simple offers ``encode_bootstrap``,
``encode_stream`` and ``new_decoder`` (``SchemaCodec``): a DML message carries no column
types, and a consumer types it by the schema of an earlier BOOTSTRAP or DDL message.
"""

from __future__ import annotations

from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.simple import _codec
from ticdc_conformance.reference.simple._config import OPTIONS, PROFILES, Config

__all__ = [
    "OPTIONS",
    "PROFILES",
    "PROTOCOL",
    "Config",
    "DecodeError",
    "config_from_options",
    "decode",
    "encode",
    "encode_bootstrap",
    "encode_stream",
    "new_decoder",
]

_CODEC = _codec.SimpleCodec("avro")
PROTOCOL = _CODEC.protocol
config_from_options = _CODEC.config_from_options
encode = _CODEC.encode
encode_bootstrap = _CODEC.encode_bootstrap
encode_stream = _CODEC.encode_stream
decode = _CODEC.decode
new_decoder = _CODEC.new_decoder
