"""The Canal-JSON decoder: TiCDC's messages in both profiles, and Alibaba Canal's flat messages.

Rules (docs/canal-json.md; TiCDC's reader is ``canal_json_decoder.go`` and
``canal_json_message.go`` in pingcap/tiflow and pingcap/ticdc):

* The value is one JSON object (the key is ignored: TiCDC writes none). ``isDdl`` true is a DDL
  (``type`` one of CREATE, ALTER, ERASE, QUERY, TRUNCATE, RENAME, CINDEX, DINDEX, ``sql`` its
  query); ``type`` TIDB_WATERMARK is a watermark (``_tidb.watermarkTs``, absent meaning 0);
  otherwise ``type`` is INSERT, UPDATE or DELETE.
* A row message's ``data`` is a list of row objects (TiCDC writes one, Canal may batch) and
  ``old`` is ``null`` or a list as long; every value is a string or ``null``, and every column
  of ``data`` needs its ``mysqlType``. Each entry of ``data`` is one decoded row: the new
  image of an INSERT or UPDATE, the old image of a DELETE.
* An UPDATE's old image is ``old``'s columns, the columns ``old`` leaves out taken from
  ``data`` (as TiCDC's decoder does: ``old`` may hold only the changed columns); ``old``
  naming a column ``data`` lacks is an error.
* Values are read by the type ``mysqlType`` names (its first word): binary strings from
  ISO-8859-1 text to bytes, integer types (YEAR, BIT, ENUM and SET included) as integers,
  FLOAT and DOUBLE as the float their digits name (FLOAT's are its shortest float32 digits),
  DECIMAL as ``DecimalValue``, TIMESTAMP as ``TimestampValue`` without a zone, everything
  else as text.
* Each value is checked against what ``mysqlType`` states about its column
  (``_types.column_type``, ``validity``): a value TiCDC cannot have written is an
  ``InvalidValueError`` once the whole message is read (docs/errors.md).
* ``commit_ts`` is ``_tidb.commitTs``; without the TiDB extension the message carries only
  ``es`` (milliseconds), so it is ``None``. ``_tidb.onlyHandleKey`` and
  ``_tidb.claimCheckLocation`` mark large-message rows.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import NoReturn

from ticdc_conformance.reference.canal_json._config import PROTOCOL
from ticdc_conformance.reference.canal_json._types import (
    BIT_TYPES_READ,
    INTEGER_TYPES_READ,
    base_type,
    column_type,
)
from ticdc_conformance.reference.compression import Compression, decompress_message
from ticdc_conformance.reference.decoded import (
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    decoded_row,
)
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.events import Operation
from ticdc_conformance.reference.jsondoc import Json, Members, Path, Wording
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.mysql import ANY_INT, BINARY_TYPES, TYPE_CODES, UINT64
from ticdc_conformance.reference.validation import finding, raise_findings
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = ["DDL_KINDS", "decode"]

DDL_KINDS = ("CREATE", "ALTER", "ERASE", "QUERY", "TRUNCATE", "RENAME", "CINDEX", "DINDEX")
"""The Canal event types a DDL message may carry."""
_ROW_TYPES: dict[str, Operation] = {"INSERT": "insert", "UPDATE": "update", "DELETE": "delete"}
_WATERMARK = "TIDB_WATERMARK"
_WORDING = Wording(
    not_object="expected a JSON object",
    missing="missing member {name!r}",
    wrong_kind="expected a JSON {kind}",
    not_list="expected a JSON array",
    not_strings="expected an array of strings",
)
_INTEGER = re.compile(r"-?[0-9]+")
_FLOAT = re.compile(r"-?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?|-?\.[0-9]+([eE][-+]?[0-9]+)?")


class _Reader:
    __slots__ = ("found", "index")

    def __init__(self, index: int) -> None:
        self.index = index
        self.found: list[DecodeError] = []
        """Invalid values, each a finding (``validation``)."""

    def fail(self, reason: str, path: Path = ()) -> NoReturn:
        raise DecodeError(
            reason, protocol=PROTOCOL, part="value", path=path, message_index=self.index
        )

    def fail_at(self, reason: str, offset: int) -> NoReturn:
        raise DecodeError(
            reason, protocol=PROTOCOL, part="value", offset=offset, message_index=self.index
        )

    def parse(self, raw: bytes) -> Json:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            self.fail_at(f"not UTF-8: {error.reason}", error.start)
        try:
            document: Json = json.loads(text, parse_constant=_no_constant)
        except json.JSONDecodeError as error:
            self.fail_at(f"not JSON: {error.msg}", len(text[: error.pos].encode()))
        except (ValueError, RecursionError) as error:
            self.fail_at(f"not JSON: {error}", 0)
        return document


def _no_constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def _value(reader: _Reader, text: Json, mysql_type: str, path: Path) -> Value:
    """A column's value from its JSON text (module rules)."""
    if text is None:
        return None
    if type(text) is not str:
        reader.fail("a column value is a string or null", path)
    name, unsigned = base_type(mysql_type)
    if name in BINARY_TYPES:
        try:
            return text.encode("latin-1")
        except UnicodeEncodeError:
            reader.fail("binary text has a character above U+00FF (not ISO-8859-1)", path)
    if name in INTEGER_TYPES_READ or name in BIT_TYPES_READ:
        number = int(text) if _INTEGER.fullmatch(text) else None
        allowed = UINT64 if name in BIT_TYPES_READ or unsigned else ANY_INT
        if number is None or number not in allowed:
            reader.fail(f"not a {mysql_type} value: {text[:40]!r}", path)
        return number
    if name in ("float", "double"):
        number_f = float(text) if _FLOAT.fullmatch(text) else math.nan
        if not math.isfinite(number_f):
            reader.fail(f"not a {mysql_type} value: {text[:40]!r}", path)
        return number_f
    try:
        if name == "decimal":
            return DecimalValue(text)
        if name == "timestamp":
            return TimestampValue(text)
    except ValueError:
        reader.fail(f"not a {mysql_type} value: {text[:40]!r}", path)
    return text


def _columns(
    reader: _Reader, raw: Json, path: Path, types: dict[str, str], keys: frozenset[str] | None
) -> tuple[DecodedColumn, ...]:
    row = Members(raw, path, reader.fail, wording=_WORDING)
    columns = []
    for name, text in row.obj.items():
        mysql_type = types.get(name)
        if mysql_type is None:
            reader.fail("the column has no mysqlType", (*path, name))
        base, _ = base_type(mysql_type)
        value = _value(reader, text, mysql_type, (*path, name))
        invalid = finding(
            name,
            column_type(mysql_type),
            value,
            protocol=PROTOCOL,
            message_index=reader.index,
            path=(*path, name),
        )
        if invalid is not None:
            reader.found.append(invalid)
        columns.append(
            DecodedColumn(
                name=name,
                value=value,
                type_code=None if base is None else TYPE_CODES[base],
                handle_key=None if keys is None else name in keys,
                mysql_type=mysql_type,
            )
        )
    return tuple(columns)


def _mysql_types(reader: _Reader, message: Members) -> dict[str, str]:
    types = message.optional_members("mysqlType")
    if types is None:
        return {}
    for name, text in types.obj.items():
        if type(text) is not str:
            reader.fail("a mysqlType is a string", types.at(name))
        base, _ = base_type(text)
        if base is None:
            reader.fail(f"unknown MySQL type {text[:40]!r}", types.at(name))
    return {name: str(text) for name, text in types.obj.items()}


def _old_image(
    reader: _Reader, old: tuple[DecodedColumn, ...], new: tuple[DecodedColumn, ...], path: Path
) -> tuple[DecodedColumn, ...]:
    given = {column.name: column for column in old}
    extra = given.keys() - {column.name for column in new}
    if extra:
        reader.fail("old names a column data does not have", (*path, min(extra)))
    return tuple(given.get(column.name, column) for column in new)


def _rows(reader: _Reader, message: Members, op: Operation) -> list[DecodedEvent]:
    schema, table = message.get("database", str), message.get("table", str)
    pk_names = message.optional_strings("pkNames")
    keys = frozenset(pk_names) if pk_names else None
    sql_types = message.optional_members("sqlType")
    if sql_types is not None:
        for name, code in sql_types.obj.items():
            if type(code) is not int:
                reader.fail("a sqlType is an integer", sql_types.at(name))
    types = _mysql_types(reader, message)
    data = message.array("data")
    if not data:
        reader.fail("a row message has at least one row", message.at("data"))
    old = message.optional_array("old")
    if old is not None and (op != "update" or len(old) != len(data)):
        reader.fail("old is null, or has one entry per row of an UPDATE", message.at("old"))
    extension = _extension(message)
    commit_ts = None if extension is None else extension.get_or("commitTs", int, default=0)
    if commit_ts is not None and commit_ts not in UINT64:
        reader.fail("commitTs is a uint64", ("_tidb", "commitTs"))
    location = None if extension is None else extension.optional("claimCheckLocation", str)
    only_key = extension is not None and extension.get_or("onlyHandleKey", bool, default=False)
    events: list[DecodedEvent] = []
    for index, raw in enumerate(data):
        image = _columns(reader, raw, ("data", index), types, keys)
        before: tuple[DecodedColumn, ...] | None = image if op == "delete" else None
        if op == "update":
            previous = (
                () if old is None else _columns(reader, old[index], ("old", index), types, keys)
            )
            before = _old_image(reader, previous, image, ("old", index))
        events.append(
            decoded_row(
                commit_ts=commit_ts,
                schema=schema,
                table=table,
                op=op,
                before=before,
                after=None if op == "delete" else image,
                handle_key_only=only_key,
                claim_check_location=location,
            )
        )
    return events


def _extension(message: Members) -> Members | None:
    return message.optional_members("_tidb")


def decode(
    message: Message, *, message_index: int = 0, compression: Compression = "none"
) -> Sequence[DecodedEvent]:
    """Decode one Canal-JSON message; raise only ``DecodeError``.

    ``compression`` (the consumer's ``large-message-handle-compression``) decompresses the
    whole value first, as TiCDC's canal-json consumer does.
    """
    message = decompress_message(
        message, compression, protocol=PROTOCOL, message_index=message_index
    )
    reader = _Reader(message_index)
    if message.value is None:
        reader.fail("a canal-json message has a value")
    document = reader.parse(message.value)
    top = Members(document, (), reader.fail, required=("type",), wording=_WORDING)
    kind = top.get("type", str)
    if top.get_or("isDdl", bool, default=False):
        if kind not in DDL_KINDS:
            reader.fail(f"a DDL type is one of {', '.join(DDL_KINDS)}", top.at("type"))
        extension = _extension(top)
        commit_ts = None if extension is None else extension.get_or("commitTs", int, default=0)
        if commit_ts is not None and commit_ts not in UINT64:
            reader.fail("commitTs is a uint64", ("_tidb", "commitTs"))
        return [
            DecodedDDL(
                commit_ts=commit_ts,
                schema=top.get("database", str),
                table=top.get("table", str),
                query=top.get("sql", str),
                ddl_kind=kind,
            )
        ]
    if kind == _WATERMARK:
        extension = top.members("_tidb")
        ts = extension.get_or("watermarkTs", int, default=0)
        if ts not in UINT64:
            reader.fail("watermarkTs is a uint64", ("_tidb", "watermarkTs"))
        return [DecodedResolved(commit_ts=ts)]
    op = _ROW_TYPES.get(kind)
    if op is None:
        reader.fail("type is INSERT, UPDATE, DELETE, TIDB_WATERMARK or a DDL type", top.at("type"))
    rows = _rows(reader, top, op)
    raise_findings(reader.found, rows)
    return rows
