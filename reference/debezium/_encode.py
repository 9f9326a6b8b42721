"""Debezium encoder: change events → Kafka messages (ground truth §5.1, §5.2, §5.5).

One message per row and per DDL, key and value both JSON objects of ``payload`` then
``schema``. A resolved event becomes a WATERMARK message only with enable-tidb-extension;
without it TiCDC writes nothing, and neither does the reference. A DDL of a kind TiCDC does
not classify is dropped the same way (``_ddl``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ticdc_conformance.reference._gojson import to_bytes
from ticdc_conformance.reference.compression import compress
from ticdc_conformance.reference.debezium._config import PROTOCOL, Config
from ticdc_conformance.reference.debezium._ddl import encode_ddl
from ticdc_conformance.reference.debezium._envelope import (
    OP_SCHEMA,
    TRANSACTION_SCHEMA,
    TS_MS_SCHEMA,
    SourceText,
    source_payload,
    source_schema,
)
from ticdc_conformance.reference.debezium._json import Raw, dump
from ticdc_conformance.reference.debezium._names import sanitize_name, schema_topic_name
from ticdc_conformance.reference.debezium._payload import column_writer
from ticdc_conformance.reference.debezium._types import field_schema
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, RowChangedEvent
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG, ColumnInfo, TableInfo
from ticdc_conformance.reference.validation import check_row
from ticdc_conformance.reference.values import Value

__all__ = ["encode"]

_Texts = dict[tuple[int, str, Config], tuple[TableInfo, Raw]]
"""Schema texts by (id of the table, which schema, config): under one config a table's key and
value schemas are the same for each of its rows (the clock aside, which they do not show), so
each is written once and kept; the entry holds the table, so its id stays its own."""
_TEXTS: _Texts = {}


def _cached(table: TableInfo, which: str, config: Config, make: Callable[[], object]) -> Raw:
    key = (id(table), which, config)
    entry = _TEXTS.get(key)
    if entry is None or entry[0] is not table:
        text = Raw(dump(make()))  # (an EncodeError leaves nothing kept)
        if len(_TEXTS) >= 512:
            _TEXTS.clear()
        entry = _TEXTS[key] = (table, text)
    return entry[1]


_Writers = dict[tuple[int, Config], tuple[TableInfo, list[Callable[[Value], str]]]]
_WRITERS: _Writers = {}
"""Column writers by (id of the table, config), chosen once per table like its schema texts."""


def _writers(
    table: TableInfo, flags: Sequence[int], config: Config
) -> list[Callable[[Value], str]]:
    key = (id(table), config)
    entry = _WRITERS.get(key)
    if entry is None or entry[0] is not table:
        writers = [column_writer(c, flags[i], config) for i, c in enumerate(table.columns)]
        if len(_WRITERS) >= 512:
            _WRITERS.clear()
        entry = _WRITERS[key] = (table, writers)
    return entry[1]


def _columns(
    table: TableInfo,
    writers: Sequence[Callable[[Value], str]],
    image: Sequence[Value],
    positions: Sequence[int],
) -> str:
    """The image's payload object, written member by member."""
    try:
        return "{" + ",".join([writers[i](image[i]) for i in positions]) + "}"
    except ValueError:
        for i in positions:  # again, one by one, to name the column
            try:
                writers[i](image[i])
            except ValueError as error:
                name = table.columns[i].name
                raise EncodeError(f"column {name!r}: {error}", protocol=PROTOCOL) from None
        raise


def _field_schemas(
    columns: Sequence[ColumnInfo], positions: Sequence[int], flags: Sequence[int], config: Config
) -> list[dict[str, object]]:
    schemas = []
    for i in positions:
        try:
            schemas.append(field_schema(columns[i], flags[i], config))
        except ValueError as error:
            reason = f"column {columns[i].name!r} default: {error}"
            raise EncodeError(reason, protocol=PROTOCOL) from None
    return schemas


def _key_schema(table: TableInfo, flags: Sequence[int], config: Config) -> Raw:
    handle = [i for i, c in enumerate(table.columns) if flags[i] & HANDLE_KEY_FLAG]
    return _cached(
        table,
        "key",
        config,
        lambda: {
            "type": "struct",
            "name": f"{schema_topic_name(config.cluster_id, table.schema, table.name)}.Key",
            "optional": False,
            "fields": _field_schemas(table.columns, handle, flags, config),
        },
    )


def _value_fields(event: RowChangedEvent, flags: Sequence[int], config: Config) -> Raw:
    columns = event.table.columns
    virtual = [i for i, c in enumerate(columns) if c.is_virtual]
    if config.profile == "tiflow":
        # the row's columns, then the virtual generated ones appended (§5.2)
        order = [i for i, c in enumerate(columns) if not c.is_virtual] + virtual
    else:
        # every column, and the virtual ones a second time (§5.2, code reading)
        order = list(range(len(columns))) + virtual
    return Raw(dump(_field_schemas(columns, order, flags, config)))


_OPS = {"insert": '"c"', "update": '"u"', "delete": '"d"'}


class _Table:
    """What every row of one table shares within an ``encode`` call.

    Flags, column writers, the positions of its handle-key and stored columns, its ``source``
    text and its schema texts (each made when a row first needs it, so its errors come where
    they came).
    """

    __slots__ = ("flags", "handle", "schemas", "source", "stored", "table", "writers")

    def __init__(self, table: TableInfo, config: Config) -> None:
        self.table = table
        self.flags = flags = table.column_flags(config.profile)
        self.writers = _writers(table, flags, config)
        columns = table.columns
        # handle-key columns, from the new image, or the old one for deletes (§5.1)
        self.handle = [i for i, c in enumerate(columns) if flags[i] & HANDLE_KEY_FLAG]
        self.stored = [i for i, c in enumerate(columns) if not c.is_virtual]
        self.source = SourceText(config, table.schema, table.name)
        self.schemas: dict[str, str] = {}


def _table(tables: dict[int, _Table], table: TableInfo, config: Config) -> _Table:
    entry = tables.get(id(table))
    if entry is None or entry.table is not table:
        entry = tables[id(table)] = _Table(table, config)
    return entry


def _schema(entry: _Table, which: str, make: Callable[[], Raw]) -> str:
    text = entry.schemas.get(which)
    if text is None:
        text = entry.schemas[which] = make().text
    return text


def _row(event: RowChangedEvent, entry: _Table, config: Config) -> tuple[str, str]:
    """The key and value texts of a row: each a ``payload`` object, then its ``schema``."""
    table, flags, writers = entry.table, entry.flags, entry.writers
    key = '{"payload":' + _columns(table, writers, event.image, entry.handle)
    with_schema = not config.debezium_disable_schema
    if with_schema:
        key += ',"schema":' + _schema(entry, "key", lambda: _key_schema(table, flags, config))
    start_ts = None
    if config.debezium_include_start_ts:
        if event.start_ts is None:
            raise EncodeError(
                "debezium-include-start-ts needs the row's start_ts", protocol=PROTOCOL
            )
        start_ts = event.start_ts
    op = event.op
    # the payload's members in the order TiCDC writes them (a dict keeps the first place)
    payload = {
        "source": entry.source.text(event.commit_ts, start_ts),
        "ts_ms": dump(config.now_ms()),
        "transaction": "null",
        "op": _OPS[op],
    }
    if op == "insert":
        payload["before"] = "null"
    if op == "delete":
        payload["after"] = "null"
    if event.before is not None and (op == "delete" or config.output_old_value):
        payload["before"] = _columns(table, writers, event.before, entry.stored)
    if event.after is not None:
        payload["after"] = _columns(table, writers, event.after, entry.stored)
    value = '{"payload":{' + ",".join([f'"{k}":{v}' for k, v in payload.items()]) + "}"
    if with_schema:
        which = "value" if start_ts is None else "value with start_ts"
        value += ',"schema":' + _schema(
            entry,
            which,
            lambda: _cached(
                table,
                which,
                config,
                lambda: _value_schema(event, flags, config, start_ts is not None),
            ),
        )
    return key + "}", value + "}"


def _value_schema(
    event: RowChangedEvent, flags: Sequence[int], config: Config, with_start_ts: bool
) -> dict[str, object]:
    """The value's ``schema`` member (§5.2)."""
    table = event.table
    prefix = schema_topic_name(config.cluster_id, table.schema, table.name)
    fields = _value_fields(event, flags, config)
    images = [
        {
            "type": "struct",
            "optional": True,
            "name": f"{prefix}.Value",
            "field": image,
            "fields": fields,
        }
        for image in ("before", "after")
    ]
    return {
        "type": "struct",
        "optional": False,
        "name": f"{prefix}.Envelope",
        "version": 1,
        "fields": [
            *images,
            source_schema(config, start_ts=with_start_ts),
            OP_SCHEMA,
            TS_MS_SCHEMA,
            TRANSACTION_SCHEMA,
        ],
    }


def _watermark(commit_ts: int, config: Config) -> Message:
    prefix = f"{sanitize_name(config.cluster_id)}.watermark"
    key: dict[str, object] = {"payload": {}}
    value: dict[str, object] = {
        "payload": {
            "source": source_payload(config, "", "", commit_ts),
            "ts_ms": config.now_ms(),
            "transaction": None,
            "op": "m",
        }
    }
    if not config.debezium_disable_schema:
        key["schema"] = {"type": "struct", "name": f"{prefix}.Key", "optional": False, "fields": []}
        value["schema"] = {
            "type": "struct",
            "optional": False,
            "name": f"{prefix}.Envelope",
            "version": 1,
            "fields": [source_schema(config), OP_SCHEMA, TS_MS_SCHEMA, TRANSACTION_SCHEMA],
        }
    return Message(key=to_bytes(dump(key)), value=to_bytes(dump(value)))


def _compressed(message: Message, config: Config) -> Message:
    """The message with key and value compressed (both, for every kind of event, §1.5)."""
    compression = config.large_message_handle_compression
    if compression == "none" or message.key is None or message.value is None:
        return message
    return Message(
        key=compress(compression, message.key), value=compress(compression, message.value)
    )


def encode(events: Iterable[ChangeEvent], config: Config | None = None) -> list[Message]:
    """Encode change events into Kafka messages exactly as the profile's TiCDC would."""
    config = config or Config()
    messages: list[Message] = []
    tables: dict[int, _Table] = {}
    for index, event in enumerate(events):
        try:
            if isinstance(event, RowChangedEvent):
                check_row(event, PROTOCOL)
                key, value = _row(event, _table(tables, event.table, config), config)
                messages.append(Message(key=to_bytes(key), value=to_bytes(value)))
            elif isinstance(event, DDLEvent):
                messages.extend(encode_ddl(event, config))
            elif config.enable_tidb_extension:
                messages.append(_watermark(event.commit_ts, config))
        except EncodeError as error:
            raise EncodeError(error.reason, protocol=PROTOCOL, event_index=index) from None
    return [_compressed(message, config) for message in messages]
