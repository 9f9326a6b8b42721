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
* BOOTSTRAP schedule (§6.6): ``BootstrapSchedule`` places TiCDC's BOOTSTRAPs by the four
  ``send-*bootstrap*`` options with commit time as the clock; the codecs' ``encode_stream``
  and the stream simulator both use it.
* Checksum (§4.6), large messages (§4.7), ``buildTs`` from an injectable clock (default 0:
  comparisons must ignore ``buildTs``).

The two codecs are the modules ``simple_json`` and ``simple_avro`` (protocol names
``simple-json``, ``simple-avro``); both take this package's ``Config`` and offer
``encode_bootstrap`` and ``new_decoder`` (a ``SimpleDecoder``). This package holds what both
encodings share and what a consumer needs beyond the codec surface: the row checksum, the
claim-check reader, the schema-typed ``SimpleDecoder`` and TiDB's type and DDL names.
"""

from __future__ import annotations

from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.simple._bootstrap import (
    BootstrapSchedule,
    bootstraps_at_start,
    sends_bootstraps,
)
from ticdc_conformance.reference.simple._checksum import Checksum, row_checksum, verify_checksum
from ticdc_conformance.reference.simple._claim import read_claim_check
from ticdc_conformance.reference.simple._config import Config, EncodingFormat
from ticdc_conformance.reference.simple._decoder import UNTYPED, Pending, SimpleDecoder, parse
from ticdc_conformance.reference.simple._encode import event_checksum
from ticdc_conformance.reference.simple._schema import ddl_kind, mysql_type

__all__ = [
    "UNTYPED",
    "BootstrapSchedule",
    "Checksum",
    "Config",
    "EncodingFormat",
    "Pending",
    "SimpleDecoder",
    "bootstraps_at_start",
    "ddl_kind",
    "event_checksum",
    "mysql_type",
    "read_checksum",
    "read_claim_check",
    "row_checksum",
    "sends_bootstraps",
    "verify_checksum",
]


def read_checksum(
    message: Message, *, encoding: EncodingFormat, message_index: int = 0
) -> Checksum | None:
    """The ``checksum`` member of a DML message, if it has one."""
    return parse(message, encoding, message_index).checksum
