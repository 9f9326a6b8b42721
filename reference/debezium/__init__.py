"""TiCDC's Debezium protocol (JSON): reference encoder and decoder for both producer profiles.

Rules (shared/research/ticdc-ground-truth.md §5; the seed 004_0f99c0d942670616.txt is stale
where §5.7 says):

* One Kafka message per row, DDL and WATERMARK; key and value are JSON objects with
  ``payload`` and, unless debezium-disable-schema, ``schema``. jsoniter writes them (§1.4):
  fixed member order, no HTML escaping, invalid UTF-8 copied raw.
* Row key (§5.1): the handle-key columns (none: ``{}``), schema ``<c>.<db>.<t>.Key``.
* Row value (§5.2): ``source`` (connector ``TiCDC``, ``commit_ts`` and ``cluster_id`` always),
  ``ts_ms`` (wall clock, injected), ``transaction:null``, ``op`` ``c``/``u``/``d``, then
  ``before``/``after``; an UPDATE without output-old-value has no ``before`` member at all.
* Values (§5.3): NULL becomes the column DEFAULT; DECIMAL is a double; BIGINT UNSIGNED max is
  ``-1`` and values above 2^63 - 1 wrap; binary strings are base64 under schema type
  ``string``; BIT(1) is a boolean, BIT(n) little-endian bytes; DATE days, DATETIME epoch ms or
  µs as UTC, TIME µs, TIMESTAMP a UTC string; ENUM/SET member names.
* DDL (§5.4): ``SchemaChangeKey``/``SchemaChangeValue`` with ``tableChanges``; DDL kinds
  outside CREATE/ALTER/DROP produce no message.
* WATERMARK (§5.5): ``op:"m"``, only with enable-tidb-extension; otherwise no message.
* The decoder reads both profiles and real Debezium MySQL-connector messages; it converts
  Debezium's numbers back to TiDB text and marks what the message cannot settle (``ambiguity``).
"""

from __future__ import annotations

from ticdc_conformance.reference.debezium._config import (
    OPTIONS,
    PROFILES,
    PROTOCOL,
    Config,
    config_from_options,
)
from ticdc_conformance.reference.debezium._decode import decode
from ticdc_conformance.reference.debezium._encode import encode
from ticdc_conformance.reference.errors import DecodeError

__all__ = [
    "OPTIONS",
    "PROFILES",
    "PROTOCOL",
    "Config",
    "DecodeError",
    "config_from_options",
    "decode",
    "encode",
]
