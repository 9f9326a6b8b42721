"""The Canal-JSON encoder: one Kafka message per row, DDL and watermark, keys always null.

Rules (``canal_json_row_event_encoder.go`` in pingcap/tiflow, ``canal_json_encoder.go`` in
pingcap/ticdc; docs/canal-json.md):

* A row is ``{"id":0,"database","table","pkNames","isDdl":false,"type","es","ts","sql":"",
  "sqlType","mysqlType","old","data"}`` and, with enable-tidb-extension,
  ``"_tidb":{"commitTs":…}``. ``type`` is INSERT, UPDATE or DELETE; ``es`` is the commit
  ts's physical milliseconds (``commitTs >> 18``); ``ts`` is the wall clock.
* ``pkNames`` lists the primary-key columns in table order (``[]`` without a primary key).
* ``sqlType`` and ``mysqlType`` describe the columns of ``data``: the new image, the old one
  for a DELETE. TiCDC writes ``mysqlType`` from a Go map, so its member order is random; the
  reference writes table order.
* ``data`` is ``[{column: text}]``; ``old`` is ``null`` except for an UPDATE, where it is the
  old image, only the columns whose value changed with only-output-updated-columns (or
  content-compatible): tiflow compares the values, ticdc their texts (``-0`` and ``0``).
* delete-only-output-handle-key-columns: a DELETE keeps only its handle-key columns in
  ``sqlType``, ``mysqlType`` and ``data``.
* A row over max-message-bytes (value + 36): an error without a large-message option; with
  ``handle-key-only`` the handle-key columns and ``"onlyHandleKey":true``; with
  ``claim-check`` the full value goes to a file (``{"key":null,"value":base64}``, or the raw
  value with claim-check-raw-value) and the message keeps the handle-key columns and
  ``"claimCheckLocation"``. With only handle-key columns left and none of them in the row,
  ``mysqlType`` is ``{}`` in tiflow and ``null`` in ticdc.
* goccy/go-json leaves out a zero ``commitTs`` or ``watermarkTs`` (``omitempty``), which
  leaves ``"_tidb":{}``.
* A DDL is ``{"id":0,"database","table","pkNames":null,"isDdl":true,"type","es","ts","sql",
  "sqlType":null,"mysqlType":null,"data":null,"old":null}`` plus ``_tidb.commitTs``; its
  ``type`` comes from the DDL's ActionType (``DDL_TYPES``; QUERY otherwise).
* A resolved ts becomes ``TIDB_WATERMARK`` with ``"_tidb":{"watermarkTs":…}``, only with
  enable-tidb-extension; otherwise no message.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping

from ticdc_conformance.reference._claim_check import claim_check_file
from ticdc_conformance.reference.canal_json._config import PROTOCOL, Config
from ticdc_conformance.reference.canal_json._json import quote
from ticdc_conformance.reference.canal_json._types import mysql_type_text, sql_type, value_text
from ticdc_conformance.reference.compression import compress
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, RowChangedEvent
from ticdc_conformance.reference.message import RECORD_OVERHEAD, Message
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG, PRIMARY_KEY_FLAG, ColumnInfo
from ticdc_conformance.reference.validation import check_row
from ticdc_conformance.reference.values import Value

__all__ = ["DDL_TYPES", "WATERMARK_TYPE", "encode"]

WATERMARK_TYPE = "TIDB_WATERMARK"

_QUERY, _CREATE, _RENAME, _CINDEX, _DINDEX, _ALTER, _ERASE, _TRUNCATE = (
    "QUERY",
    "CREATE",
    "RENAME",
    "CINDEX",
    "DINDEX",
    "ALTER",
    "ERASE",
    "TRUNCATE",
)
_ALTERS = (5, 6, 12, 13, 15, 17, 18, 19, 20, 22, 23, 37, 38, 41, 61, 64, 71, 72)
DDL_TYPES: Mapping[int, str] = {
    3: _CREATE,
    4: _ERASE,
    11: _TRUNCATE,
    14: _RENAME,
    47: _RENAME,
    7: _CINDEX,
    9: _CINDEX,
    32: _CINDEX,
    8: _DINDEX,
    10: _DINDEX,
    33: _DINDEX,
    **dict.fromkeys(_ALTERS, _ALTER),
}
"""TiDB ActionType → Canal ``type`` (``convertDdlEventType``); any other number is QUERY.

CREATE: CreateTable (3). ERASE: DropTable (4). TRUNCATE: TruncateTable (11). RENAME:
RenameTable (14), RenameTables (47). CINDEX: AddIndex (7), AddForeignKey (9), AddPrimaryKey
(32). DINDEX: DropIndex (8), DropForeignKey (10), DropPrimaryKey (33). ALTER: column, default,
comment, charset, auto-id, index-rename and -visibility, partition and multi-schema changes.
QUERY: database DDLs, views, sequences, locks, TiFlash replicas and every other number."""
_CLAIM_CHECK_NAMES = uuid.UUID("5b0e6c41-3f2a-4d8e-9c11-7a2b0c9d4e63")


def _object(members: Iterable[tuple[str, str]], *, empty: str) -> str:
    parts = [f"{quote(name)}:{text}" for name, text in members]
    return "{" + ",".join(parts) + "}" if parts else empty


def _row_json(
    event: RowChangedEvent, config: Config, *, too_large: bool, location: str | None
) -> str:
    table = event.table
    flags = table.column_flags(config.profile)
    is_delete = event.op == "delete"
    only_handle = too_large or (is_delete and config.delete_only_output_handle_key_columns)
    image = event.image
    columns = [
        i
        for i, column in enumerate(table.columns)
        if not column.is_virtual and not (only_handle and not flags[i] & HANDLE_KEY_FLAG)
    ]
    texts = [value_text(table.columns[i], flags[i], image[i]) for i in columns]
    pk_names = [
        column.name
        for i, column in enumerate(table.columns)
        if flags[i] & PRIMARY_KEY_FLAG and not column.is_virtual
    ]
    sql_types = _object(
        (
            (
                table.columns[i].name,
                str(sql_type(table.columns[i], flags[i], image[i], config.profile)),
            )
            for i in columns
        ),
        empty="null",
    )
    mysql_types = _object(
        (
            (
                table.columns[i].name,
                quote(
                    mysql_type_text(table.columns[i], content_compatible=config.content_compatible)
                ),
            )
            for i in columns
        ),
        empty="{}" if config.profile == "tiflow" else "null",
    )
    data = _image(table.columns, columns, texts)
    old = "null"
    if event.op == "update":
        assert event.before is not None
        old_texts = [value_text(table.columns[i], flags[i], event.before[i]) for i in columns]
        kept = [
            (i, text)
            for i, text, new_text in zip(columns, old_texts, texts, strict=True)
            if not (config.only_updated and _unchanged(event, i, text, new_text, config))
        ]
        old = _image(table.columns, [i for i, _ in kept], [text for _, text in kept])
    members = [
        '"id":0',
        f'"database":{quote(table.schema)}',
        f'"table":{quote(table.name)}',
        '"pkNames":[' + ",".join(map(quote, pk_names)) + "]",
        '"isDdl":false',
        f'"type":"{event.op.upper()}"',
        f'"es":{event.commit_ts >> 18}',
        f'"ts":{config.now_ms()}',
        '"sql":""',
        f'"sqlType":{sql_types}',
        f'"mysqlType":{mysql_types}',
        f'"old":{old}',
        f'"data":{data}',
    ]
    if config.enable_tidb_extension:
        extension = [f'"commitTs":{event.commit_ts}']
        if too_large and config.large_message_handle_option == "handle-key-only":
            extension.append('"onlyHandleKey":true')
        if too_large and location is not None:
            extension.append(f'"claimCheckLocation":{quote(location)}')
        members.append('"_tidb":{' + ",".join(extension) + "}")
    return "{" + ",".join(members) + "}"


def _image(
    columns: tuple[ColumnInfo, ...], positions: list[int], texts: list[str | bytes | None]
) -> str:
    names = [column.name for column in columns]
    pairs = [
        (names[i], "null" if text is None else quote(text))
        for i, text in zip(positions, texts, strict=True)
    ]
    return "[" + _object(pairs, empty="{}") + "]"


def _unchanged(
    event: RowChangedEvent,
    position: int,
    old: str | bytes | None,
    new: str | bytes | None,
    config: Config,
) -> bool:
    """Whether only-output-updated-columns leaves the column out of ``old``."""
    if config.profile == "ticdc":
        return old == new  # ticdc compares the texts it writes
    assert event.before is not None
    assert event.after is not None
    before: Value = event.before[position]
    after: Value = event.after[position]
    return type(before) is type(after) and before == after


def _to_bytes(text: str, config: Config) -> bytes:
    """The JSON text's bytes, compressed: every message's whole value is (§1.5)."""
    return compress(
        config.large_message_handle_compression, text.encode("utf-8", "surrogateescape")
    )


def _encode_row(event: RowChangedEvent, config: Config) -> Message:
    value = _to_bytes(_row_json(event, config, too_large=False, location=None), config)
    length = len(value) + RECORD_OVERHEAD
    if length <= config.max_message_bytes:
        return Message(key=None, value=value)
    option = config.large_message_handle_option
    reason = f"row needs {length} bytes, max-message-bytes is {config.max_message_bytes}"
    if option == "none":
        raise EncodeError(reason + " (ErrMessageTooLarge)", protocol=PROTOCOL)
    claim_check = (
        claim_check_file(
            None,  # the stored message's key is nil
            value,
            storage_uri=config.claim_check_storage_uri,
            raw_value=config.claim_check_raw_value,
            names=_CLAIM_CHECK_NAMES,
        )
        if option == "claim-check"
        else None
    )
    location = None if claim_check is None else claim_check.location
    small = _to_bytes(_row_json(event, config, too_large=True, location=location), config)
    if len(small) + RECORD_OVERHEAD > config.max_message_bytes:
        raise EncodeError(f"{reason} and still too large after {option}", protocol=PROTOCOL)
    return Message(
        key=None, value=small, claim_checks=() if claim_check is None else (claim_check,)
    )


def _control(
    config: Config,
    *,
    schema: str,
    table: str,
    is_ddl: bool,
    kind: str,
    ts: int,
    query: str,
    extension: str | None,
) -> Message:
    members = [
        '"id":0',
        f'"database":{quote(schema)}',
        f'"table":{quote(table)}',
        '"pkNames":null',
        f'"isDdl":{"true" if is_ddl else "false"}',
        f'"type":"{kind}"',
        f'"es":{ts >> 18}',
        f'"ts":{config.now_ms()}',
        f'"sql":{quote(query)}',
        '"sqlType":null',
        '"mysqlType":null',
        '"data":null',
        '"old":null',
    ]
    if extension is not None:
        members.append(f'"_tidb":{{{extension}}}')
    return Message(key=None, value=_to_bytes("{" + ",".join(members) + "}", config))


def _encode_ddl(event: DDLEvent, config: Config) -> Message:
    # goccy/go-json omits a zero commitTs (omitempty)
    extension = None
    if config.enable_tidb_extension:
        extension = f'"commitTs":{event.commit_ts}' if event.commit_ts else ""
    return _control(
        config,
        schema=event.schema,
        table=event.table,
        is_ddl=True,
        kind=DDL_TYPES.get(event.ddl_type, _QUERY),
        ts=event.commit_ts,
        query=event.query,
        extension=extension,
    )


def encode(events: Iterable[ChangeEvent], config: Config | None = None) -> list[Message]:
    """Encode change events into Canal-JSON messages as the profile's TiCDC would."""
    config = config or Config()
    messages: list[Message] = []
    for index, event in enumerate(events):
        try:
            if isinstance(event, RowChangedEvent):
                check_row(event, PROTOCOL)
                messages.append(_encode_row(event, config))
            elif isinstance(event, DDLEvent):
                messages.append(_encode_ddl(event, config))
            elif config.enable_tidb_extension:
                watermark = f'"watermarkTs":{event.commit_ts}' if event.commit_ts else ""
                messages.append(
                    _control(
                        config,
                        schema="",
                        table="",
                        is_ddl=False,
                        kind=WATERMARK_TYPE,
                        ts=event.commit_ts,
                        query="",
                        extension=watermark,
                    )
                )
        except EncodeError as error:
            raise EncodeError(error.reason, protocol=PROTOCOL, event_index=index) from None
    return messages
