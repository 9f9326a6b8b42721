"""What both example consumers share: the Kafka reader, the PostgreSQL writer, the applied log.

* ``read_topic`` reads every partition of a topic from its beginning to its end (the end each
  partition had when the consumer reached it: librdkafka's partition EOF), one message at a
  time in the order the client delivers them, and decodes each partition's messages in offset
  order with its own decoder (``ticdc_conformance.reference.decoding.PartitionDecoder``: Simple
  types rows by the BOOTSTRAP and DDL messages of the same partition).
* ``HandleKeys`` knows each table's handle-key columns: from the table info of a DDL or
  BOOTSTRAP message, else from the columns a row marks (Open's ``h``, the HandleKey flag).
* ``PostgresSink`` writes rows into ``"<schema>"."<table>"``, created on the table's first row
  with the handle key as primary key: an INSERT or UPDATE is an upsert of the new image, an
  UPDATE whose handle key changed first deletes the old key, a DELETE deletes its key.
  ``TRUNCATE TABLE`` and ``DROP TABLE`` empty the table; other DDLs change nothing here: the
  table takes a new column when a row first carries it.
* Column types follow the values: every MySQL integer ``numeric(20, 0)`` (BIGINT UNSIGNED up
  to 2^64 - 1 fits), FLOAT and DOUBLE ``double precision``, DECIMAL ``numeric``, TIMESTAMP
  ``timestamptz`` when the message names its zone (else ``timestamp``), DATETIME
  ``timestamp``, DATE ``date``, binary ``bytea``, JSON ``jsonb``, other text ``text``. A column
  that is NULL in the first row is ``text`` until its first value says otherwise.
* ``AppliedLog`` writes the applied log ``check-consumer --applied-log`` reads: one decoded
  event per line (docs/decoded-events.md) in the order the consumer applied it, with
  ``"source": {"topic", "partition", "offset"}``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from types import TracebackType, UnionType
from typing import IO, Self
from zoneinfo import ZoneInfo

import psycopg
from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, TopicPartition
from psycopg import sql
from psycopg.types.json import Jsonb

from ticdc_conformance.reference import (
    DecimalValue,
    DecodedBootstrap,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedRow,
    Message,
    TimestampValue,
)
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.fold import handle_key_of, marked_handle_key
from ticdc_conformance.reference.forms import write_decoded_event
from ticdc_conformance.reference.mysql import TYPE_OF_CODE

__all__ = [
    "AppliedLog",
    "HandleKeys",
    "PostgresSink",
    "Source",
    "column_type",
    "column_value",
    "partitions_of",
    "read_topic",
]

Table = tuple[str, str]


@dataclass(frozen=True, slots=True, order=True)
class Source:
    """Where a message sits in Kafka."""

    topic: str
    partition: int
    offset: int


def _consumer(config: Mapping[str, str]) -> Consumer:
    return Consumer(
        {
            **config,
            "group.id": "ticdc-conformance-example",  # librdkafka wants one; nothing is committed
            "enable.auto.commit": False,
            "enable.partition.eof": True,
        }
    )


def partitions_of(config: Mapping[str, str], topic: str, *, timeout: float = 30.0) -> list[int]:
    """The partitions of ``topic``."""
    consumer = _consumer(config)
    try:
        metadata = consumer.list_topics(topic, timeout=timeout).topics[topic]
        if metadata.error is not None:
            raise RuntimeError(f"{topic}: {metadata.error}")
        return sorted(metadata.partitions)
    finally:
        consumer.close()


def read_topic(
    config: Mapping[str, str], topic: str, protocol: str, *, timeout: float = 30.0
) -> Iterator[tuple[Source, DecodedEvent]]:
    """Every event of ``topic`` with its message's coordinates, as the client delivers them."""
    partitions = partitions_of(config, topic, timeout=timeout)
    consumer = _consumer(config)
    try:
        consumer.assign([TopicPartition(topic, p, OFFSET_BEGINNING) for p in partitions])
        decoders = {p: PartitionDecoder(protocol) for p in partitions}
        unread = set(partitions)
        while unread:
            message = consumer.poll(timeout)
            if message is None:
                raise TimeoutError(f"{topic}: nothing for {timeout} s, partitions {unread} unread")
            error = message.error()
            if error is not None and error.code() == KafkaError._PARTITION_EOF:  # noqa: SLF001 - librdkafka's code, public in its docs
                unread.discard(message.partition())
                continue
            if error is not None:
                raise RuntimeError(f"{topic}: {error}")
            partition, offset = message.partition(), message.offset()
            assert partition is not None  # a record has both
            assert offset is not None
            kafka = Message(key=message.key(), value=message.value() or b"")
            for event in decoders[partition].decode(kafka, message_index=offset):
                yield Source(topic, partition, offset), event
    finally:
        consumer.close()


class HandleKeys:
    """Each table's handle-key columns (the module doc)."""

    def __init__(self) -> None:
        self.columns: dict[Table, tuple[str, ...]] = {}

    def learn(self, event: DecodedDDL | DecodedBootstrap) -> None:
        """Take the handle key from a DDL's or BOOTSTRAP's table info."""
        info = event.table_info
        if info is not None and info.handle_key():
            names = tuple(info.columns[i].name for i in info.handle_key())
            self.columns.setdefault((event.schema, event.table), names)

    def of(self, row: DecodedRow) -> tuple[str, ...]:
        """The handle-key columns of ``row``'s table."""
        image = row.after if row.after is not None else row.before
        table = (row.schema, row.table)
        if table not in self.columns and image is not None and (marked := marked_handle_key(image)):
            self.columns[table] = marked
        if table not in self.columns:
            raise ValueError(f"{row.schema}.{row.table}: no handle key known")
        return self.columns[table]

    def keys(self, row: DecodedRow) -> tuple[tuple[object, ...], tuple[object, ...] | None]:
        """The handle key ``row`` writes or deletes, and the old key an UPDATE moves away from."""
        columns = self.of(row)
        image = row.before if row.op == "delete" else row.after
        assert image is not None
        key = handle_key_of(image, columns)
        old = handle_key_of(row.before, columns) if row.op == "update" and row.before else None
        if key is None:
            raise ValueError(f"{row.schema}.{row.table}: the row lacks its handle key")
        return key, (old if old is not None and old != key else None)


def _declared(column: DecodedColumn) -> str | None:
    if column.mysql_type is not None:
        return column.mysql_type
    return None if column.type_code is None else TYPE_OF_CODE.get(column.type_code)


_BY_DECLARED = {"json": "jsonb", "datetime": "timestamp", "date": "date"}
_BY_VALUE: tuple[tuple[type | UnionType, str], ...] = (
    (bool | int, "numeric(20, 0)"),
    (float, "double precision"),
    (DecimalValue, "numeric"),
    (bytes, "bytea"),
)


def column_type(column: DecodedColumn) -> str | None:
    """The PostgreSQL type of ``column`` (the module doc); ``None`` while its value is NULL."""
    declared, value = _declared(column), column.value
    if declared in _BY_DECLARED:
        return _BY_DECLARED[declared]
    if value is None:
        return None
    if isinstance(value, TimestampValue):
        return "timestamptz" if value.zone else "timestamp"
    return next((kind for t, kind in _BY_VALUE if isinstance(value, t)), "text")


def column_value(column: DecodedColumn) -> object:
    """``column``'s value as psycopg writes it into ``column_type``."""
    value = column.value
    if isinstance(value, DecimalValue):
        return Decimal(value.text)
    if isinstance(value, TimestampValue):
        moment = dt.datetime.fromisoformat(value.text)
        return moment.replace(tzinfo=ZoneInfo(value.zone)) if value.zone else moment
    if _declared(column) == "json" and isinstance(value, str):
        return Jsonb(json.loads(value))
    return value


class PostgresSink:
    """Rows into PostgreSQL (the module doc); ``commit`` ends a transaction."""

    def __init__(self, dsn: str) -> None:
        self.connection = psycopg.connect(dsn)
        self.tables: dict[Table, dict[str, str | None]] = {}
        """Each created table's columns → type, ``None`` while only NULLs came."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if kind is None:
            self.connection.commit()
        self.connection.close()

    @staticmethod
    def _name(table: Table) -> sql.Composable:
        return sql.Identifier(*table)

    def _ensure(self, table: Table, image: tuple[DecodedColumn, ...], key: tuple[str, ...]) -> None:
        """Create the table, add new columns, settle the type of columns that were NULL."""
        known = self.tables.get(table)
        if known is None:
            known = self.tables[table] = {c.name: column_type(c) for c in image}
            columns = [
                sql.SQL("{} {}").format(sql.Identifier(name), sql.SQL(kind or "text"))
                for name, kind in known.items()
            ]
            primary = sql.SQL(", ").join(map(sql.Identifier, key))
            self.connection.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(table[0]))
            )
            self.connection.execute(
                sql.SQL("CREATE TABLE IF NOT EXISTS {} ({}, PRIMARY KEY ({}))").format(
                    self._name(table), sql.SQL(", ").join(columns), primary
                )
            )
            return
        for column in image:
            kind = column_type(column)
            if column.name not in known:
                known[column.name] = kind
                self.connection.execute(
                    sql.SQL("ALTER TABLE {} ADD COLUMN {} {}").format(
                        self._name(table), sql.Identifier(column.name), sql.SQL(kind or "text")
                    )
                )
            elif known[column.name] is None and kind is not None:
                known[column.name] = kind  # only NULLs so far: nothing to convert
                self.connection.execute(
                    sql.SQL("ALTER TABLE {} ALTER COLUMN {} TYPE {} USING NULL").format(
                        self._name(table), sql.Identifier(column.name), sql.SQL(kind)
                    )
                )

    def _where(self, columns: tuple[str, ...]) -> sql.Composable:
        return sql.SQL(" AND ").join(
            sql.SQL("{} = %s").format(sql.Identifier(name)) for name in columns
        )

    def delete(
        self, table: Table, columns: tuple[str, ...], key: tuple[DecodedColumn, ...]
    ) -> None:
        """Delete the row at ``key`` (the key columns' values), if the table has it."""
        if table in self.tables:
            self.connection.execute(
                sql.SQL("DELETE FROM {} WHERE {}").format(self._name(table), self._where(columns)),
                [column_value(c) for c in key],
            )

    def upsert(
        self, table: Table, columns: tuple[str, ...], image: tuple[DecodedColumn, ...]
    ) -> None:
        """Write ``image`` at its key: insert it, or overwrite the row that holds the key."""
        self._ensure(table, image, columns)
        names = [c.name for c in image]
        others = [n for n in names if n not in columns]
        on_conflict = (
            sql.SQL("DO UPDATE SET ")
            + sql.SQL(", ").join(
                sql.SQL("{0} = EXCLUDED.{0}").format(sql.Identifier(n)) for n in others
            )
            if others
            else sql.SQL("DO NOTHING")
        )
        self.connection.execute(
            sql.SQL("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) {}").format(
                self._name(table),
                sql.SQL(", ").join(map(sql.Identifier, names)),
                sql.SQL(", ").join(sql.Placeholder() * len(names)),
                sql.SQL(", ").join(map(sql.Identifier, columns)),
                on_conflict,
            ),
            [column_value(c) for c in image],
        )

    def apply_row(self, row: DecodedRow, keys: HandleKeys) -> None:
        """Apply one row change (the module doc)."""
        table, columns = (row.schema, row.table), keys.of(row)
        _, old_key = keys.keys(row)
        if old_key is not None and row.before is not None:
            self.delete(table, columns, _key_columns(row.before, columns))
        if row.op == "delete":
            assert row.before is not None
            self.delete(table, columns, _key_columns(row.before, columns))
        else:
            assert row.after is not None
            self.upsert(table, columns, row.after)

    def apply_ddl(self, ddl: DecodedDDL) -> None:
        """``TRUNCATE TABLE`` and ``DROP TABLE`` empty the table; other DDLs change nothing."""
        words = ddl.query.split(None, 2)
        table = (ddl.schema, ddl.table)
        empties = [w.upper() for w in words[:2]] in (["TRUNCATE", "TABLE"], ["DROP", "TABLE"])
        if empties and table in self.tables:
            self.connection.execute(sql.SQL("DELETE FROM {}").format(self._name(table)))

    def commit(self) -> None:
        """End the current transaction."""
        self.connection.commit()


def _key_columns(
    image: tuple[DecodedColumn, ...], columns: tuple[str, ...]
) -> tuple[DecodedColumn, ...]:
    by_name = {c.name: c for c in image}
    return tuple(by_name[name] for name in columns)


class AppliedLog:
    """The applied log (the module doc), one line per applied change, written as applied."""

    def __init__(self, path: Path) -> None:
        self.out: IO[str] = path.open("w", encoding="utf-8")
        self.lines = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.out.close()

    def write(self, event: DecodedRow | DecodedDDL, source: Source) -> None:
        """One applied change and where it was read."""
        line = write_decoded_event(event)
        line["source"] = {
            "topic": source.topic,
            "partition": source.partition,
            "offset": source.offset,
        }
        self.out.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.lines += 1


def command_line(doc: str, argv: list[str] | None) -> tuple[dict[str, str], argparse.Namespace]:
    """Both consumers' arguments: the client's settings and the rest."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--bootstrap-servers", required=True)
    parser.add_argument("--topic", required=True)
    parser.add_argument("--protocol", required=True, help="open, craft, simple-json, ...")
    parser.add_argument("--dsn", required=True, help="postgresql://...")
    parser.add_argument("--applied-log", type=Path, required=True)
    args = parser.parse_args(argv)
    return {"bootstrap.servers": args.bootstrap_servers}, args
