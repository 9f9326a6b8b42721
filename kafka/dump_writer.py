"""One Kafka partition's records while ``capture`` reads them, and its Parquet file.

Records are buffered as the client's ``Message`` objects and handed on as one row group when
``ROWS`` records are in (``PartFile.keep``), or when the capture holds too many bytes
(``PartFile.flush``). A ``Writer`` turns them into columns and writes the row groups in a
thread of its own, in the order they come (pyarrow releases the GIL while it encodes and
compresses, so this overlaps with reading the next records). A file has a hidden name
(``.writing-<topic>-<partition>.parquet``) until the capture renames it.

The pages are not compressed unless asked (``client.PARQUET_CODECS``): Snappy took about half
of the writer's time, on the cores the capture shares with the client's threads (and, on a
development machine, the broker). A dump fixes no codec (docs/dump-format.md).

After each row group the kernel is asked to start writing the file out (``_write_behind``), so
that the disk works while the capture reads: the ``fsync`` before the rename then waits for
the last row groups only, not for a whole dump held in the page cache.
"""

from __future__ import annotations

import os
import queue
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_conformance.generators.dump import DUMP_SCHEMA

__all__ = ["ROWS", "PartFile", "Writer"]

ROWS = 16_384
"""Rows per Parquet row group: a quarter of ``write_dump``'s, so that most of a capture is
written while it reads, and little is left for the end."""


_PARQUET: dict[str, Any] = {
    "use_dictionary": ["topic", "partition"],
    "write_statistics": ["topic", "partition", "offset", "timestamp"],
}
"""No dictionary of, and no statistics over, keys, values and headers: they cost time to build
and serve no reader (the stream checker plans by topic, partition and offset statistics)."""


def _write_behind(sink: pa.NativeFile) -> None:
    """Start writing ``sink``'s file to disk without waiting (Linux, through ``posix_fadvise``).

    ``POSIX_FADV_DONTNEED`` starts the writeback of the file's dirty pages and returns at once
    (the pages still being written stay cached). Elsewhere, the final ``fsync`` writes it all.
    """
    if hasattr(os, "posix_fadvise"):
        os.posix_fadvise(sink.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)


_EMPTY_HEADERS = pa.array([], DUMP_SCHEMA.field("headers").type.value_type)


def _columns(topic: str, partition: int, messages: list[Any]) -> dict[str, Any]:
    """The dump columns of one partition's fetched records (``Message`` objects).

    Read with ``map`` over the methods (little Python code per record): a record without a
    timestamp (type 0) gets a null one, one without headers an empty list.
    """
    kind = type(messages[0])
    count = len(messages)
    stamps = [s if k else None for k, s in map(kind.timestamp, messages)]
    headers: Any = list(map(kind.headers, messages))
    if headers.count(None) == count:  # no record has headers (TiCDC's case)
        headers = pa.ListArray.from_arrays(pa.array([0] * (count + 1), pa.int32()), _EMPTY_HEADERS)
    else:
        headers = [h or [] for h in headers]
    return {
        "topic": pa.repeat(pa.scalar(topic, pa.string()), count),
        "partition": pa.repeat(pa.scalar(partition, pa.int32()), count),
        "offset": pa.array(list(map(kind.offset, messages)), pa.int64()),
        "timestamp": pa.array(stamps, pa.int64()).cast(DUMP_SCHEMA.field("timestamp").type),
        "key": pa.array(list(map(kind.key, messages)), pa.binary()),
        "value": pa.array(list(map(kind.value, messages)), pa.binary()),
        "headers": headers,
    }


class PartFile:
    """One partition being captured: its end, its buffered records, its Parquet file."""

    __slots__ = (
        "done",
        "end",
        "file",
        "first",
        "last",
        "messages",
        "partition",
        "sink",
        "start",
        "topic",
        "writer",
        "written",
    )

    def __init__(self, topic: str, partition: int, start: int) -> None:
        self.topic, self.partition, self.start = topic, partition, start
        self.end: int | None = None
        self.first: int | None = None
        self.last: int | None = None
        self.done = False
        self.messages: list[Any] = []
        """The records fetched and kept, not yet handed on (confluent-kafka ``Message``s)."""
        self.written = 0
        self.file: Path | None = None
        self.sink: pa.NativeFile | None = None
        self.writer: Any = None
        """The ``pq.ParquetWriter`` into ``sink``, opened and used by the ``Writer``'s thread
        only."""

    def keep(self, messages: list[Any], folder: Path, writer: Writer) -> None:
        """Buffer ``messages`` (in offset order); hand on every ``ROWS`` of them."""
        self.messages += messages
        while len(self.messages) >= ROWS:
            self._hand_on(self.messages[:ROWS], folder, writer)
            del self.messages[:ROWS]

    def flush(self, folder: Path, writer: Writer) -> None:
        """Hand the buffered records to ``writer`` as one row group."""
        if self.messages:
            self._hand_on(self.messages, folder, writer)
            self.messages = []

    def _hand_on(self, messages: list[Any], folder: Path, writer: Writer) -> None:
        if self.file is None:
            self.file = folder / f".writing-{self.topic}-{self.partition}.parquet"
        self.written += len(messages)
        self.first = messages[0].offset() if self.first is None else self.first
        self.last = messages[-1].offset()
        writer.submit(self, messages)

    def write(self, messages: list[Any], compression: str) -> None:
        """Write one row group (in the ``Writer``'s thread)."""
        if self.sink is None:
            self.sink = pa.OSFile(str(self.file), "wb")
            self.writer = pq.ParquetWriter(
                self.sink, DUMP_SCHEMA, compression=compression, **_PARQUET
            )
        columns = _columns(self.topic, self.partition, messages)
        self.writer.write_batch(pa.RecordBatch.from_pydict(columns, schema=DUMP_SCHEMA))
        _write_behind(self.sink)

    def close(self) -> None:
        """Close the Parquet writer (it writes the footer), then the file."""
        try:
            if self.writer is not None:
                self.writer.close()
        finally:
            if self.sink is not None:
                self.sink.close()


class Writer:
    """Writes the row groups handed to it in a thread of its own, in the order they come.

    An error in that thread is raised by the next ``submit`` or by ``close``.
    """

    __slots__ = ("_compression", "_error", "_queue", "_thread")

    def __init__(self, compression: str = "none") -> None:
        self._compression = compression
        self._queue: queue.Queue[tuple[PartFile, list[Any]] | None] = queue.Queue(4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="capture-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                try:
                    item[0].write(item[1], self._compression)
                except BaseException as error:  # noqa: BLE001 - raised in the reading thread
                    self._error = error

    def submit(self, part: PartFile, messages: list[Any]) -> None:
        """Queue one row group of ``part`` (waits while four are queued)."""
        if self._error is not None:
            raise self._error
        self._queue.put((part, messages))

    def close(self, parts: list[PartFile]) -> None:
        """Write what is queued, then close the files of ``parts``."""
        self._queue.put(None)
        self._thread.join()
        for part in parts:
            part.close()
        if self._error is not None:
            raise self._error
