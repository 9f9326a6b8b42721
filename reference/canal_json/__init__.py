"""TiCDC's Canal-JSON protocol: reference encoder and decoder for both producer profiles.

Rules (docs/canal-json.md; pingcap/tiflow and pingcap/ticdc ``pkg/sink/codec/canal``):

* One Kafka message per row, DDL and TIDB_WATERMARK, with a null key; the value is one JSON
  object in a fixed member order (``_encode``), every column value a string (``_types``).
* Rows carry ``pkNames``, ``sqlType`` (java.sql.Types codes, raised for large UNSIGNED
  values), ``mysqlType`` (type names, or full column types with content-compatible), ``old``
  only for UPDATE (only changed columns with only-output-updated-columns) and ``data``.
* enable-tidb-extension adds ``_tidb`` (``commitTs``; ``onlyHandleKey`` and
  ``claimCheckLocation`` for large messages) and TIDB_WATERMARK messages.
* DDL ``type`` is mapped from TiDB's ActionType (``DDL_TYPES`` in ``_encode``).
* The decoder reads both profiles and Alibaba Canal's flat messages (``_decode``).
"""

from __future__ import annotations

from ticdc_conformance.reference.canal_json._config import (
    OPTIONS,
    PROFILES,
    PROTOCOL,
    Config,
    config_from_options,
)
from ticdc_conformance.reference.canal_json._decode import decode
from ticdc_conformance.reference.canal_json._encode import encode
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
