"""What the encoders lose of a change, for tools that compare decoded rows with the changes.

Rules (shared/research/ticdc-ground-truth.md §1.4, §2.5, §4.3):

* Go ``encoding/json`` writes every byte of text that is not part of valid UTF-8 as U+FFFD.
  It writes Open Protocol under profile ``tiflow`` and Simple JSON under both profiles. Open
  Protocol carries only CHAR and VARCHAR as JSON strings (the TEXT types travel as base64, so
  their bytes survive); Simple JSON carries every text type as a string, and so does
  Canal-JSON, whose easyjson writer (both profiles) replaces such bytes the same way. A
  column of charset ``binary`` holds bytes, never text.
* jsoniter (Open Protocol ``ticdc``, Debezium), Craft and Avro keep such bytes as they are.

The other documented losses (Debezium's DECIMAL as a double, NULL written as the column
default, zero dates; docs/debezium.md) are values each codec writes, and its decoder marks
them in ``DecodedColumn.ambiguity`` where the message cannot settle them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ticdc_conformance.reference.mysql import TEXT_TYPES, MySQLType

__all__ = ["replace_invalid_utf8", "replaced_text_types"]

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
"""A byte that is not valid UTF-8, as ``surrogateescape`` holds it."""
_REPLACED: Mapping[tuple[str, str], frozenset[MySQLType]] = {
    ("open", "tiflow"): frozenset({"char", "varchar"}),
    ("simple-json", "tiflow"): TEXT_TYPES,
    ("simple-json", "ticdc"): TEXT_TYPES,
    ("canal-json", "tiflow"): TEXT_TYPES,
    ("canal-json", "ticdc"): TEXT_TYPES,
}


def replaced_text_types(protocol: str, profile: str) -> frozenset[MySQLType]:
    """The text types whose invalid UTF-8 the encoder writes as U+FFFD (none: it keeps it)."""
    return _REPLACED.get((protocol, profile), frozenset())


def replace_invalid_utf8(data: bytes) -> bytes:
    """``data`` as Go ``encoding/json`` writes text: each byte of invalid UTF-8 as U+FFFD.

    One U+FFFD per byte, as Go decodes (Python's ``"replace"`` may take several bytes for one).
    """
    text = data.decode("utf-8", "surrogateescape")
    return _ESCAPED_BYTE.sub("\ufffd", text).encode()
