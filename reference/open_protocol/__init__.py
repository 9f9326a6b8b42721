"""TiCDC Open Protocol: reference encoder and decoder for both producer profiles.

Rules (shared/research/ticdc-ground-truth.md §2; the seeds 000/003 are stale where noted):

* Framing (§2.1): key = 8-byte big-endian version 1, then per event an 8-byte big-endian length
  and the key JSON; value = per event an 8-byte length and the value bytes, no version. The
  i-th key entry pairs with the i-th value entry. A resolved event's value entry is a zero
  length (8 zero bytes), not "None" as the seeds say (§2.8 O4). The decoder also takes legacy
  batches of several resolved or DDL events and the empty batch (version only, empty value).
* Batching (§2.2): rows accumulate into one message until it holds ``max-batch-size`` rows or
  the next row would push ``length + len(key) + len(value) + 16`` past the limit
  (``max-message-bytes``; profile ``ticdc`` uses ``max-batched-bytes``). A single row whose
  ``len(key) + len(value) + 36 + 16 + 8`` exceeds ``max-message-bytes`` is an error unless a
  large-message option applies (§2.6). DDL and resolved events are one message each.
* Key JSON (§2.3): ``tiflow`` writes ``ts, scm, tbl, rid, ptn, t, ohk, ccl`` and omits empty
  members; ``ticdc`` writes ``ts, scm, tbl, t, [ohk], [ohk:false, ccl], [ptn]``, always
  ``scm``/``tbl`` on rows and DDL, and never ``rid``.
* Value JSON (§2.4): ``u`` (new image: insert, update), ``p`` (old image of an update, only with
  ``output-old-value``), ``d`` (old image of a delete); each column is ``{"t","h","f","v"}``
  with ``h`` only present, as ``true``, on handle-key columns and ``f`` always present.
  ``tiflow`` sorts columns by name, ``ticdc`` keeps table order; virtual generated columns are
  never written. DDL value: ``{"q": query, "t": ActionType number}`` (§2.8 O2).
* Values (§2.5): CHAR/VARCHAR are plain strings (§2.8 O1: the seeds' base64 is from 2020);
  BINARY/VARBINARY (BinaryFlag) are Go-quoted; TEXT and BLOB types (249–252) are base64;
  DECIMAL, dates and times, JSON and VECTOR are strings; integers, BIT, ENUM, SET and YEAR are
  JSON integers; FLOAT uses 32-bit shortest digits.
* JSON text (§1.4): ``tiflow`` is Go ``encoding/json`` (HTML-escaped, invalid UTF-8 replaced),
  ``ticdc`` is jsoniter (no HTML escaping, raw bytes kept).

The module offers the codec surface (``Codec``); ``claim_check.read_claim_check`` reads back
the message a claim-check file stores.
"""

from __future__ import annotations

from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.open_protocol._config import (
    OPTIONS,
    PROFILES,
    PROTOCOL,
    Config,
    config_from_options,
)
from ticdc_conformance.reference.open_protocol._decode import decode
from ticdc_conformance.reference.open_protocol._encode import encode

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
