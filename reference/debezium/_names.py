"""Schema names: TiCDC's Avro-safe sanitising of cluster, database and table names (§5).

``sanitize_name`` (Avro names): a first character outside ``[A-Za-z_]`` becomes ``_``, and a
digit there is kept after it (``1x`` → ``_1x``); a later character outside ``[A-Za-z0-9_]``
becomes ``_``. ``sanitize_topic_name`` (table part): any character outside ``[A-Za-z0-9_.]``
becomes ``_``. Both work per code point, so each non-ASCII character is one ``_``
(``helper_test`` fact, §7.2).
"""

from __future__ import annotations

import re

__all__ = ["sanitize_name", "sanitize_topic_name", "schema_topic_name"]

_LATER = re.compile(r"[^A-Za-z0-9_]")
_TOPIC = re.compile(r"[^A-Za-z0-9_.]")
_FIRST_OK = re.compile(r"[A-Za-z_]")


def sanitize_name(name: str) -> str:
    """TiCDC's ``SanitizeName``."""
    if not name:
        return name
    first = name[0]
    if not _FIRST_OK.fullmatch(first):
        first = "_" + first if first.isascii() and first.isdigit() else "_"
    return first + _LATER.sub("_", name[1:])


def sanitize_topic_name(name: str) -> str:
    """TiCDC's ``SanitizeTopicName``."""
    return _TOPIC.sub("_", name)


def schema_topic_name(cluster_id: str, schema: str, table: str) -> str:
    """``<cluster>.<db>.<table>``, the prefix of ``.Key``/``.Value``/``.Envelope`` names."""
    return f"{sanitize_name(cluster_id)}.{sanitize_name(schema)}.{sanitize_topic_name(table)}"
