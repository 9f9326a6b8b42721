"""The expected state on disk: what ``expected-state`` writes and ``check-consumer`` reads.

A folder (docs/consumers.md, "The expected state on disk", is the language-neutral spec):

* ``expected-state.json``: the format and version, the protocol, the final global watermark,
  the accounting (messages read, changes and DDLs applied, pending, not applied with their
  coordinates), and per table its handle-key columns, its columns with their kinds
  (``values.KINDS``; a TIMESTAMP column's zone) and its file;
* ``tables/<schema>.<table>.parquet``: the final rows, one text column per table column
  (``values.value_text``) plus ``_key``, the JSON array of the handle key's texts, sorted by it;
* ``log.parquet``: the expected change log in application order (``sequence``), each change
  with its commit ts, kind (``row`` or ``ddl``), op, table, key, old key, new image (a JSON
  object of texts), DDL query, the Kafka coordinates of its first delivery and its delivery
  count.

Names in file names are percent-encoded, so any schema or table name makes one file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_conformance.reference.consumer import Applied, AppliedChange, AppliedDDL, Consumed
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.reference.fold import HandleKey, TableName
from ticdc_conformance.suites.consumer.values import kind_of, value_text

__all__ = [
    "FORMAT",
    "KEY_COLUMN",
    "LOG_SCHEMA",
    "MANIFEST_FILE",
    "VERSION",
    "ExpectedState",
    "ExpectedTable",
    "expected_state_document",
    "is_expected_state",
    "key_text",
    "read_expected_state",
    "write_expected_state",
]

FORMAT = "ticdc-conformance expected state"
VERSION = 1
MANIFEST_FILE = "expected-state.json"
KEY_COLUMN = "_key"
LOG_SCHEMA = pa.schema(
    [
        ("sequence", pa.int64()),
        ("commit_ts", pa.uint64()),
        ("kind", pa.string()),
        ("op", pa.string()),
        ("schema", pa.string()),
        ("table", pa.string()),
        ("key", pa.string()),
        ("old_key", pa.string()),
        ("after", pa.string()),
        ("query", pa.string()),
        ("topic", pa.string()),
        ("partition", pa.int32()),
        ("offset", pa.int64()),
        ("deliveries", pa.int32()),
    ]
)


def key_text(key: Sequence[str | None]) -> str:
    """The ``_key`` of a row: the JSON array of its handle key's texts."""
    return json.dumps(list(key), ensure_ascii=False, separators=(",", ":"))


def _key(key: HandleKey) -> str:
    return key_text([value_text(v) for v in key])


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedTable:
    """One table of the expected state."""

    schema: str
    table: str
    key: tuple[str, ...]
    columns: tuple[str, ...]
    kinds: Mapping[str, str | None]
    zones: Mapping[str, str | None]
    rows: int
    file: str

    @property
    def name(self) -> TableName:
        """(schema, table)."""
        return (self.schema, self.table)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExpectedState:
    """An expected-state folder, read (rows stay on disk until asked for)."""

    folder: Path
    manifest: Mapping[str, Any]
    tables: tuple[ExpectedTable, ...]

    def rows(self, table: ExpectedTable) -> Iterator[dict[str, str | None]]:
        """The table's rows: ``_key`` and every column's text."""
        for batch in pq.ParquetFile(self.folder / table.file).iter_batches():
            yield from batch.to_pylist()

    def log(self) -> Iterator[dict[str, Any]]:
        """The expected change log, in application order."""
        for batch in pq.ParquetFile(self.folder / self.manifest["log"]).iter_batches():
            yield from batch.to_pylist()


Image = tuple[DecodedColumn, ...]


def _columns(rows: Iterable[Image]) -> tuple[list[str], dict[str, Any]]:
    names: list[str] = []
    kinds: dict[str, Any] = {}
    zones: dict[str, Any] = {}
    for image in rows:
        for column in image:
            if column.name not in kinds:
                names.append(column.name)
                kinds[column.name] = zones[column.name] = None
            if kinds[column.name] is None:
                kinds[column.name] = kind_of(column.value, column.mysql_type)
                zones[column.name] = getattr(column.value, "zone", None)
    return names, {"kinds": kinds, "zones": zones}


def _table(
    consumed: Consumed, name: TableName, images: list[Image]
) -> tuple[dict[str, Any], dict[str, list[str | None]]]:
    """A table's manifest entry and its columns of texts, ``_key`` first, sorted by it."""
    rows = consumed.tables[name]
    names, typed = _columns(images)
    ordered = sorted((_key(key), image) for key, image in rows.items())
    data: dict[str, list[str | None]] = {KEY_COLUMN: [k for k, _ in ordered]}
    for column in names:
        data[column] = []
    for _, image in ordered:
        texts = {c.name: value_text(c.value) for c in image}
        for column in names:
            data[column].append(texts.get(column))
    entry = {
        "schema": name[0],
        "table": name[1],
        "key": list(consumed.handle_keys[name]),
        "columns": [
            {"name": c, "kind": typed["kinds"][c], "zone": typed["zones"][c]} for c in names
        ],
        "rows": len(ordered),
        "file": f"tables/{quote(name[0], safe='')}.{quote(name[1], safe='')}.parquet",
    }
    return entry, data


def _log_row(sequence: int, item: Applied) -> dict[str, Any]:
    row: dict[str, Any] = dict.fromkeys(LOG_SCHEMA.names)
    row.update(
        sequence=sequence,
        commit_ts=item.commit_ts,
        schema=item.table_name[0],
        table=item.table_name[1],
        topic=item.source.topic,
        partition=item.source.partition,
        offset=item.source.offset,
        deliveries=item.deliveries,
    )
    if isinstance(item, AppliedDDL):
        row.update(kind="ddl", query=item.ddl.query)
        return row
    after = item.row.after
    row.update(
        kind="row",
        op=item.row.op,
        key=_key(item.key),
        old_key=None if item.old_key is None else _key(item.old_key),
        after=None
        if after is None
        else json.dumps({c.name: value_text(c.value) for c in after}, ensure_ascii=False),
    )
    return row


def _contents(
    consumed: Consumed, protocol: str
) -> tuple[dict[str, Any], list[dict[str, list[str | None]]], list[dict[str, Any]]]:
    """The manifest, each table's columns of texts (in the manifest's order) and the log."""
    images: dict[TableName, list[Image]] = {name: [] for name in consumed.tables}
    for item in consumed.log:
        if isinstance(item, AppliedChange):
            images[item.table_name] += [i for i in (item.row.after, item.row.before) if i]
    tables = [_table(consumed, name, images[name]) for name in sorted(consumed.tables)]
    changes = sum(isinstance(item, AppliedChange) for item in consumed.log)
    manifest = {
        "format": FORMAT,
        "version": VERSION,
        "protocol": protocol,
        "watermark": consumed.watermark,
        "messages": consumed.messages,
        "changes": changes,
        "ddls": len(consumed.log) - changes,
        "pending": len(consumed.pending),
        "not_applied": [
            {**_coordinates(n.source), "reason": n.reason} for n in consumed.not_applied
        ],
        "tables": [entry for entry, _ in tables],
        "log": "log.parquet",
    }
    log = [_log_row(sequence, item) for sequence, item in enumerate(consumed.log)]
    return manifest, [data for _, data in tables], log


def write_expected_state(consumed: Consumed, protocol: str, out: Path) -> dict[str, Any]:
    """Write ``consumed`` into the folder ``out`` (created); return the manifest written."""
    (out / "tables").mkdir(parents=True, exist_ok=True)
    manifest, tables, log = _contents(consumed, protocol)
    for entry, data in zip(manifest["tables"], tables, strict=True):
        schema = pa.schema([(column, pa.string()) for column in data])
        pq.write_table(pa.table(data, schema=schema), out / entry["file"])
    pq.write_table(pa.Table.from_pylist(log, schema=LOG_SCHEMA), out / "log.parquet")
    (out / MANIFEST_FILE).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def expected_state_document(consumed: Consumed, protocol: str) -> dict[str, Any]:
    """The expected state as one JSON document, as the stream fixtures carry it.

    The folder's manifest, with each table's rows inline (``values``: one object per row,
    ``_key`` and every column's text, sorted by ``_key``; no ``file``) and the log inline
    (``log``: one object per change, the columns of ``log.parquet``, ``after`` an object).
    """
    manifest, tables, log = _contents(consumed, protocol)
    for entry, data in zip(manifest["tables"], tables, strict=True):
        del entry["file"]
        entry["values"] = [
            dict(zip(data, row, strict=True)) for row in zip(*data.values(), strict=True)
        ]
    for change in log:  # an object here, not the text of one
        change["after"] = None if change["after"] is None else json.loads(change["after"])
    manifest["log"] = log
    return manifest


def _coordinates(source: Any) -> dict[str, Any]:  # noqa: ANN401 - a Coordinates
    return {"topic": source.topic, "partition": source.partition, "offset": source.offset}


def is_expected_state(folder: Path) -> bool:
    """Whether ``folder`` is an expected-state folder (rather than a dump)."""
    return (folder / MANIFEST_FILE).is_file()


def read_expected_state(folder: Path) -> ExpectedState:
    """Read the manifest of an expected-state folder (``UsageError`` if it is not one)."""
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UsageError(f"{folder}: not an expected-state folder: {error}") from None
    if manifest.get("format") != FORMAT or manifest.get("version") != VERSION:
        raise UsageError(f"{folder}: not {FORMAT} version {VERSION}")
    tables = tuple(
        ExpectedTable(
            schema=t["schema"],
            table=t["table"],
            key=tuple(t["key"]),
            columns=tuple(c["name"] for c in t["columns"]),
            kinds={c["name"]: c["kind"] for c in t["columns"]},
            zones={c["name"]: c["zone"] for c in t["columns"]},
            rows=t["rows"],
            file=t["file"],
        )
        for t in manifest["tables"]
    )
    return ExpectedState(folder=folder, manifest=manifest, tables=tables)
