"""What a consumer produced: table snapshots and an applied log, read for the check.

Snapshot sources (``--actual``), named per expected table (docs/consumers.md, "Check yours"):

* a folder holding ``<schema>.<table>.parquet`` (a file or a Spark output folder),
  ``<schema>.<table>.csv`` (a header row; an empty unquoted field is NULL, as PostgreSQL's
  ``COPY ... CSV`` writes it) or ``<schema>.<table>.jsonl`` (one object per row, values in the
  decoded-event value form: docs/decoded-events.md); names percent-encoded as in the expected
  state;
* a PostgreSQL database, ``postgresql://...``: table ``"<schema>"."<table>"``, read through
  the ADBC PostgreSQL driver as Arrow (the ``consumer`` extra).

A table the source does not have is reported as such (every expected row missing), never
skipped. The applied log (``--applied-log``) is JSON Lines: one decoded event per line in the
order the consumer applied it, with an optional member ``"source": {"topic", "partition",
"offset"}`` giving the Kafka coordinates the consumer read it from.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.dataset as pa_ds

from ticdc_conformance.reference.consumer import Coordinates
from ticdc_conformance.reference.decoded import DecodedEvent
from ticdc_conformance.reference.errors import FormError, UsageError
from ticdc_conformance.reference.forms import read_decoded_event, read_value, write_decoded_event
from ticdc_conformance.suites.consumer.expected import ExpectedTable
from ticdc_conformance.suites.consumer.values import actual_text, value_text

__all__ = [
    "AppliedEvent",
    "Snapshot",
    "read_applied_log",
    "rows_as_text",
    "write_applied_log",
]

_EXTENSIONS = ("parquet", "csv", "jsonl")


@dataclass(frozen=True, slots=True)
class AppliedEvent:
    """One line of an applied log."""

    line: int
    event: DecodedEvent
    source: Coordinates | None


class Snapshot:
    """A snapshot source; ``table`` gives one table as Arrow with text columns, or ``None``."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.is_database = where.startswith(("postgresql://", "postgres://"))
        if not self.is_database and not Path(where).is_dir():
            raise UsageError(f"--actual {where}: neither a folder nor a postgresql:// URI")

    def file(self, table: ExpectedTable) -> tuple[Path, str] | None:
        """The file (or folder) holding ``table`` and its format, if the folder has one."""
        stem = f"{quote(table.schema, safe='')}.{quote(table.table, safe='')}"
        for extension in _EXTENSIONS:
            path = Path(self.where) / f"{stem}.{extension}"
            if path.exists():
                return path, extension
        return None

    def table(self, table: ExpectedTable) -> pa.Table | None:
        """``table``'s rows as Arrow (values as the reader gives them), ``None`` if absent."""
        if self.is_database:
            return _postgres_table(self.where, table)
        found = self.file(table)
        if found is None:
            return None
        path, extension = found
        if extension == "parquet":
            return pa_ds.dataset(path, format="parquet").to_table()
        if extension == "csv":
            return _csv_table(path)
        return _jsonl_table(path)


def _csv_table(path: Path) -> pa.Table:
    """Every column as text: an empty unquoted field is NULL, ``""`` the empty text."""
    with path.open(encoding="utf-8", newline="") as lines:
        header = next(csv.reader(lines), [])
    options = pa_csv.ConvertOptions(
        column_types=dict.fromkeys(header, pa.string()),
        strings_can_be_null=True,
        quoted_strings_can_be_null=False,
        null_values=[""],
    )
    return pa_csv.read_csv(path, convert_options=options)


def _jsonl_table(path: Path) -> pa.Table:
    rows: list[dict[str, str | None]] = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            try:
                raw = json.loads(line)
                row = {name: value_text(read_value(v, (name,))) for name, v in raw.items()}
            except (ValueError, AttributeError, FormError) as error:
                reason = "not an object of values" if isinstance(error, AttributeError) else error
                raise UsageError(f"{path} line {number}: {reason}") from None
            rows.append(row)
    return pa.Table.from_pylist(rows)


def _quoted(identifier: str) -> str:
    doubled = identifier.replace('"', '""')
    return f'"{doubled}"'


def _postgres_table(dsn: str, table: ExpectedTable) -> pa.Table | None:
    try:
        import adbc_driver_postgresql.dbapi as pg
    except ImportError as error:
        raise UsageError(f"reading PostgreSQL needs the consumer extra: {error}") from None
    name = f"{_quoted(table.schema)}.{_quoted(table.table)}"
    with pg.connect(dsn) as connection, connection.cursor() as cursor:
        cursor.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = $1 AND table_name = $2",
            (table.schema, table.table),
        )
        if cursor.fetchone() is None:
            return None
        cursor.execute(f"SELECT * FROM {name}")  # noqa: S608 - a quoted identifier
        return _storage(cursor.fetch_arrow_table())


def _storage(arrow: pa.Table) -> pa.Table:
    """``arrow`` with each extension column as its storage.

    The driver reads a type Arrow lacks (``numeric``) as an opaque extension over its text,
    which Spark cannot take.
    """
    columns = [
        pa.chunked_array([chunk.storage for chunk in column.chunks], column.type.storage_type)
        if isinstance(column.type, pa.BaseExtensionType)
        else column
        for column in arrow.columns
    ]
    return pa.Table.from_arrays(columns, names=arrow.column_names)


def rows_as_text(arrow: pa.Table) -> Iterator[dict[str, str | None]]:
    """Every row of a snapshot table, each value as ``values.actual_text`` renders it."""
    for batch in arrow.to_batches():
        for row in batch.to_pylist():
            yield {name: actual_text(value) for name, value in row.items()}


def _source(raw: Any, line: int) -> Coordinates | None:  # noqa: ANN401 - parsed JSON
    if raw is None:
        return None
    try:
        return Coordinates(str(raw["topic"]), int(raw["partition"]), int(raw["offset"]))
    except (KeyError, TypeError, ValueError):
        raise UsageError(
            f"applied log line {line}: source is {{topic, partition, offset}}"
        ) from None


def read_applied_log(path: Path) -> Iterator[AppliedEvent]:
    """The applied log's events in order (``UsageError`` naming the line for a bad one)."""
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                source = _source(raw.pop("source", None), number) if isinstance(raw, dict) else None
                event = read_decoded_event(raw, line=number)
            except (ValueError, FormError) as error:
                raise UsageError(f"{path}: {error}") from None
            yield AppliedEvent(number, event, source)


def write_applied_log(events: Iterable[tuple[DecodedEvent, Coordinates | None]], path: Path) -> int:
    """Write an applied log (the module doc's format); return the lines written."""
    lines = 0
    with path.open("w", encoding="utf-8") as out:
        for event, source in events:
            line = write_decoded_event(event)
            if source is not None:
                line["source"] = {
                    "topic": source.topic,
                    "partition": source.partition,
                    "offset": source.offset,
                }
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
            lines += 1
    return lines
