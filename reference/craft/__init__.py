"""TiCDC Craft (binary): reference encoder and decoder, byte-exact to classic TiCDC.

Rules (shared/research/ticdc-ground-truth.md §3; the seed 001_4d0609d93640b12c.txt describes a
different wire format, see §3.6 and docs/craft.md):

* Profile (§0): only ``tiflow``. Craft exists only in classic TiCDC (pingcap/tiflow); the new
  architecture never had a working Craft encoder and removed the package.
* Primitives (§3.1): uvarint (LEB128), ZigZag varint, reversed uvarint (the trailer), float64
  little-endian, length-prefixed bytes, and chunks of N elements whose N is never stored.
* Message (§3.2): uvarint version 1; columnar headers (commit ts as delta uvarint, event type
  1 row / 2 DDL / 3 resolved, partition as delta varint with −1 for none, schema and table as
  delta varints of term-dictionary IDs with −1 for null); the bodies; the term dictionary
  (uvarint count and a bytes chunk, omitted when empty; IDs in first-use order: header
  schemas, header tables, then column names); size tables (meta [headers, dictionary],
  body sizes, then one column-group table per row event), each a uvarint count and a delta
  *ZigZag* varint chunk; a reversed-uvarint trailer with the size tables' byte length. There
  is no event count, no row id, and the Kafka key is nil.
* Bodies (§3.2): a row is a new column group (0x01) and/or an old one (0x02): INSERT new,
  DELETE old, UPDATE always both; a group is the type byte, uvarint column count, names
  (delta varint term IDs), type codes and flags (uvarint chunks), values (nullable bytes
  chunk), in table column order, virtual generated columns left out. A DDL body is uvarint
  ActionType and the query; a resolved body is empty.
* Values (§3.3): text forms for DATE, DATETIME, TIMESTAMP, TIME, JSON, DECIMAL and VECTOR;
  uvarint for BIT, ENUM, SET; raw bytes for the string types; FLOAT widened to float64 and
  DOUBLE as 8 bytes little-endian; YEAR always ZigZag; integers uvarint under UnsignedFlag,
  else ZigZag; NULL, GEOMETRY and unknown type codes always NULL.
* Batching (§3.4): after each row, flush when the estimated size (per row 32 + schema +
  table bytes, per column name + value bytes + 16) exceeds ``max-message-bytes`` or the batch
  holds ``max-batch-size`` rows; the crossing row stays in the batch. DDL and resolved events
  are one message each.

The module offers the codec surface (``Codec``); the submodule ``primitives`` has the wire
primitives above as mirror pairs of writers and readers, for tools that take a message apart.
"""

from __future__ import annotations

from ticdc_conformance.reference.craft._config import (
    OPTIONS,
    PROFILES,
    PROTOCOL,
    Config,
    config_from_options,
)
from ticdc_conformance.reference.craft._decode import decode
from ticdc_conformance.reference.craft._encode import encode
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
