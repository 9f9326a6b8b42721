"""Envelope parts every Debezium message shares: ``source`` and the fixed field schemas (§5.2).

``source`` says ``connector: "TiCDC"`` and fills Debezium's MySQL members with dummies
(``server_id`` 0, ``file`` "", ``pos`` 0, ...); ``ts_ms`` is the physical part of the commit
ts (``commit_ts >> 18``), and the TiDB members ``commit_ts`` and ``cluster_id`` are always
written. Profile ``tiflow`` never declares them in the source schema; ``ticdc`` does when
enable-tidb-extension is on (§5.6 item 1), which a Kafka Connect JsonConverter needs to keep
them (consumers-and-pain.md, pain point 10). With ``debezium-include-start-ts`` (``ticdc``
only) a row's ``source`` also carries ``start_ts`` between ``commit_ts`` and ``cluster_id``,
and its schema declares it last (int64, not optional); DDL and WATERMARK messages never do
(ticdc ``pkg/sink/codec/debezium/codec.go``, ``writeSourceSchema``).
"""

from __future__ import annotations

from ticdc_conformance.reference.debezium._config import Config
from ticdc_conformance.reference.debezium._json import dump

__all__ = [
    "OP_SCHEMA",
    "TRANSACTION_SCHEMA",
    "TS_MS_SCHEMA",
    "SourceText",
    "source_payload",
    "source_schema",
]


def _field(schema_type: str, field: str, *, optional: bool = False) -> dict[str, object]:
    return {"type": schema_type, "optional": optional, "field": field}


_SOURCE_FIELDS: list[dict[str, object]] = [
    _field("string", "version"),
    _field("string", "connector"),
    _field("string", "name"),
    _field("int64", "ts_ms"),
    {
        "type": "string",
        "optional": True,
        "name": "io.debezium.data.Enum",
        "version": 1,
        "parameters": {"allowed": "true,last,false,incremental"},
        "default": "false",
        "field": "snapshot",
    },
    _field("string", "db"),
    _field("string", "sequence", optional=True),
    _field("string", "table", optional=True),
    _field("int64", "server_id"),
    _field("string", "gtid", optional=True),
    _field("string", "file"),
    _field("int64", "pos"),
    _field("int32", "row"),
    _field("int64", "thread", optional=True),
    _field("string", "query", optional=True),
]
_TIDB_SOURCE_FIELDS = [_field("int64", "commit_ts"), _field("string", "cluster_id")]
OP_SCHEMA = _field("string", "op")
TS_MS_SCHEMA = _field("int64", "ts_ms", optional=True)
TRANSACTION_SCHEMA: dict[str, object] = {
    "type": "struct",
    "fields": [
        _field("string", "id"),
        _field("int64", "total_order"),
        _field("int64", "data_collection_order"),
    ],
    "optional": True,
    "name": "event.block",
    "version": 1,
    "field": "transaction",
}


def source_payload(
    config: Config, db: str, table: str, commit_ts: int, start_ts: int | None = None
) -> dict[str, object]:
    """The payload ``source`` member; ``start_ts`` only when given."""
    source: dict[str, object] = {
        "version": "2.4.0.Final",
        "connector": "TiCDC",
        "name": config.cluster_id,
        "ts_ms": commit_ts >> 18,
        "snapshot": "false",
        "db": db,
        "table": table,
        "server_id": 0,
        "gtid": None,
        "file": "",
        "pos": 0,
        "row": 0,
        "thread": 0,
        "query": None,
        "commit_ts": commit_ts,
    }
    if start_ts is not None:
        source["start_ts"] = start_ts
    source["cluster_id"] = config.cluster_id
    return source


class SourceText:
    """``dump`` of ``source_payload`` for one table: its fixed text written once.

    Only ``ts_ms``, ``commit_ts`` and ``start_ts`` change from row to row.
    """

    __slots__ = ("_head", "_middle", "_tail")

    def __init__(self, config: Config, db: str, table: str) -> None:
        name = dump(config.cluster_id)
        self._head = '{"version":"2.4.0.Final","connector":"TiCDC","name":' + name + ',"ts_ms":'
        self._middle = (
            f',"snapshot":"false","db":{dump(db)},"table":{dump(table)},"server_id":0,'
            '"gtid":null,"file":"","pos":0,"row":0,"thread":0,"query":null,"commit_ts":'
        )
        self._tail = ',"cluster_id":' + name + "}"

    def text(self, commit_ts: int, start_ts: int | None) -> str:
        """The ``source`` text of a row; ``start_ts`` only when given."""
        ts = dump(commit_ts)
        text = self._head + dump(commit_ts >> 18) + self._middle + ts
        if start_ts is not None:
            text += ',"start_ts":' + dump(start_ts)
        return text + self._tail


def source_schema(config: Config, *, start_ts: bool = False) -> dict[str, object]:
    """The ``source`` field schema; ``start_ts``: declare it (a row's, with the option)."""
    fields = list(_SOURCE_FIELDS)
    if config.profile == "ticdc" and config.enable_tidb_extension:
        fields += _TIDB_SOURCE_FIELDS
    if start_ts:
        fields.append(_field("int64", "start_ts"))
    return {
        "type": "struct",
        "fields": fields,
        "optional": False,
        "name": "io.debezium.connector.mysql.Source",
        "field": "source",
    }
