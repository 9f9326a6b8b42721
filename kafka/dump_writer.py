"""One Kafka partition's records while ``capture`` reads them, and its Parquet file.

Columns are buffered as Python lists and handed on as one row group (``PartFile.flush``) when
``ROWS`` records are in, or when the capture holds too many bytes. A ``Writer`` converts and
writes the row groups in a thread of its own, in the order they come (pyarrow releases the GIL
while it encodes and compresses, so this overlaps with reading the next records). A file has a
hidden name (``.writing-<topic>-<partition>.parquet``) until the capture renames it.
"""

from __future__ import annotations

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


class PartFile:
    """One partition being captured: its end, its buffered columns, its Parquet file."""

    __slots__ = (
        "done",
        "end",
        "file",
        "first",
        "headers",
        "keys",
        "last",
        "offsets",
        "partition",
        "stamps",
        "start",
        "topic",
        "values",
        "writer",
        "written",
    )

    def __init__(self, topic: str, partition: int, start: int) -> None:
        self.topic, self.partition, self.start = topic, partition, start
        self.end: int | None = None
        self.first: int | None = None
        self.last: int | None = None
        self.done = False
        self.offsets: list[int] = []
        self.keys: list[bytes | None] = []
        self.values: list[bytes | None] = []
        self.stamps: list[int | None] = []
        self.headers: list[list[tuple[str, bytes | None]]] = []
        self.written = 0
        self.file: Path | None = None
        self.writer: Any = None
        """The ``pq.ParquetWriter``, opened and used by the ``Writer``'s thread only."""

    def flush(self, folder: Path, writer: Writer) -> None:
        """Hand the buffered rows to ``writer`` as one row group."""
        if not self.offsets:
            return
        if self.file is None:
            self.file = folder / f".writing-{self.topic}-{self.partition}.parquet"
        count = len(self.offsets)
        columns: dict[str, Any] = {
            "topic": pa.repeat(pa.scalar(self.topic, pa.string()), count),
            "partition": pa.repeat(pa.scalar(self.partition, pa.int32()), count),
            "offset": self.offsets,
            "timestamp": self.stamps,
            "key": self.keys,
            "value": self.values,
            "headers": self.headers,
        }
        self.written += count
        self.first = self.offsets[0] if self.first is None else self.first
        self.last = self.offsets[-1]
        self.offsets, self.keys, self.values, self.stamps, self.headers = [], [], [], [], []
        writer.submit(self, columns)

    def write(self, columns: dict[str, Any]) -> None:
        """Write one row group (in the ``Writer``'s thread)."""
        if self.writer is None:
            self.writer = pq.ParquetWriter(self.file, DUMP_SCHEMA, **_PARQUET)
        self.writer.write_batch(pa.RecordBatch.from_pydict(columns, schema=DUMP_SCHEMA))


class Writer:
    """Writes the row groups handed to it in a thread of its own, in the order they come.

    An error in that thread is raised by the next ``submit`` or by ``close``.
    """

    __slots__ = ("_error", "_queue", "_thread")

    def __init__(self) -> None:
        self._queue: queue.Queue[tuple[PartFile, dict[str, Any]] | None] = queue.Queue(4)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="capture-writer", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._error is None:
                try:
                    item[0].write(item[1])
                except BaseException as error:  # noqa: BLE001 - raised in the reading thread
                    self._error = error

    def submit(self, part: PartFile, columns: dict[str, Any]) -> None:
        """Queue one row group of ``part`` (waits while four are queued)."""
        if self._error is not None:
            raise self._error
        self._queue.put((part, columns))

    def close(self, parts: list[PartFile]) -> None:
        """Write what is queued, then close the files of ``parts``."""
        self._queue.put(None)
        self._thread.join()
        for part in parts:
            if part.writer is not None:
                part.writer.close()
        if self._error is not None:
            raise self._error
