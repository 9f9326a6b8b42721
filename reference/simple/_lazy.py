"""A Simple-JSON message read lazily, for ``SimpleDecoder``: an ordinary DML in one pass.

``parse`` is ``_json.parse`` with ``lazy``, faster for the messages a consumer mostly gets:

* The document of a DML is orjson's read where orjson is installed. Every number a DML may
  hold is an integer member (``version``, ``tableID``, ``commitTs``, ``buildTs``,
  ``schemaVersion``, the checksum's) or a value its column's reader refuses, and every
  other member is a string, a boolean or an object of those, so orjson's read can differ
  from the full read (``_json.document``) only where it reads ``-0`` as the integer 0: an
  integer beyond 64 bits (orjson's is a float) is no member's type either way, nor is
  anything nested deeper. orjson's read is taken unless an integer member it read as 0 may
  have been written ``-0`` (``_ordinary``); any other document is read in full.
* A DML whose members all have the types and ranges §4.2 states, and exactly the images its
  type carries, is taken in one pass (``_ordinary``); any other message is read by
  ``_json.read``, which refuses it with its reason or reads what it holds.

As a lazy read may, it refuses only messages a full read refuses; the decoder reads those
again in full for the error.
"""

from __future__ import annotations

import re

from ticdc_conformance.reference._gojson import json_accelerator
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.mysql import INT64, UINT64
from ticdc_conformance.reference.simple._json import (
    DML_MEMBERS,
    IMAGES,
    PROTOCOL,
    document,
    read,
    read_checksum,
)
from ticdc_conformance.reference.simple._wire import VERSION, Wire, failer

__all__ = ["parse"]

_NEGATIVE_ZERO = re.compile(rb"-0(?![0-9.eE])")
"""Where ``-0`` may stand as a number (it may also match inside a string: harmless)."""
_UINT64_END, _INT64_START, _INT64_END = UINT64.stop, INT64.start, INT64.stop
_ASKED = 4
"""``version``, ``type``, ``commitTs``, ``buildTs``: members ``_ordinary`` finds or refuses.
Those, the images and the names it counts are every member when there are as many."""
_new_tuple = tuple.__new__
"""``_new_tuple(Wire, members)``: a ``Wire`` of all its members in order, without the named
tuple's ``__new__``."""


def _ordinary(raw: Json, message_index: int, text: bytes | None) -> Wire | None:
    """The DML in ``raw`` if every member is as §4.2 states it, else ``None``.

    What ``_json.read`` returns for it, lazily: ``data`` and ``old`` as parsed. ``text``:
    ``raw`` is orjson's read of it, which stands unless an integer member it read as 0 may
    have been written ``-0``: only a member read as 0 can have been (orjson reads every
    other ``-0`` as the full read does not, but no other number is a member's); with none,
    or no ``-0`` standing as a number anywhere in the text, none was.
    """
    if type(raw) is not dict:
        return None
    get = raw.get
    kind = get("type")
    images = IMAGES.get(kind) if type(kind) is str else None
    commit_ts, build_ts = get("commitTs"), get("buildTs")
    database, table = get("database", ""), get("table", "")
    table_id, schema_version = get("tableID", 0), get("schemaVersion", 0)
    data, old = get("data"), get("old")
    if (  # the ranges compared, not asked of a range: faster
        images is None
        or type(version := get("version")) is not int  # not 1.0 or True
        or version != VERSION
        or type(commit_ts) is not int
        or not 0 <= commit_ts < _UINT64_END
        or type(build_ts) is not int
        or not _INT64_START <= build_ts < _INT64_END
        or type(database) is not str
        or type(table) is not str
        or type(table_id) is not int
        or not _INT64_START <= table_id < _INT64_END
        or type(schema_version) is not int
        or not 0 <= schema_version < _UINT64_END
        # an image the type carries is an object (one it leaves out: read in full)
        or (type(data) is not dict if "data" in images else "data" in raw)
        or (type(old) is not dict if "old" in images else "old" in raw)
    ):
        return None
    named = ("database" in raw) + ("table" in raw) + ("tableID" in raw) + ("schemaVersion" in raw)
    location: Json = ""
    handle_key_only: Json = False
    checksum = None
    if len(raw) != _ASKED + len(images) + named:  # another member, maybe unknown
        location, handle_key_only = get("claimCheckLocation", ""), get("handleKeyOnly", False)
        if (
            type(location) is not str
            or type(handle_key_only) is not bool
            or not raw.keys() <= DML_MEMBERS
        ):
            return None
        if "checksum" in raw:
            checksum = read_checksum(raw["checksum"], failer(PROTOCOL, message_index))
    if (
        text is not None
        and (
            "checksum" in raw
            or not commit_ts
            or not build_ts
            or (not table_id and "tableID" in raw)
            or (not schema_version and "schemaVersion" in raw)
        )
        and _NEGATIVE_ZERO.search(text) is not None  # its scan: faster than ``in``'s
    ):
        return None
    return _new_tuple(
        Wire,
        (
            "DML",
            kind,
            commit_ts,
            build_ts,
            "",
            None,
            None,
            database,
            table,
            table_id,
            schema_version,
            location or None,
            handle_key_only,
            checksum,
            data,
            old,
            True,
        ),
    )


def parse(value: bytes, message_index: int) -> Wire:
    """``_json.parse(value, message_index, lazy=True)``, faster (module docstring)."""
    loads = json_accelerator()
    if loads is not None:
        try:
            raw = loads(value)
        except ValueError:  # orjson.JSONDecodeError: the full read words the error
            raw = None
        wire = _ordinary(raw, message_index, value)
        if wire is not None:
            return wire
    raw = document(value, message_index)
    wire = _ordinary(raw, message_index, None)
    return read(raw, message_index, lazy=True) if wire is None else wire
