"""One Kafka partition's records while ``capture`` reads them, and its Parquet file.

Columns are buffered as Python lists and written as one row group (``flush``) when
``ROWS`` records are in, or when the capture holds too many bytes; the file has a hidden name
(``.writing-<topic>-<partition>.parquet``) until the capture renames it. ``fsync`` makes a
file or folder durable before the rename that publishes a dump.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_conformance.generators.dump import DUMP_SCHEMA

__all__ = ["ROWS", "PartFile", "fsync"]

ROWS = 65_536
"""Rows per Parquet row group, as ``write_dump`` writes them."""


class PartFile:
    """One partition being captured: its end, its buffered columns, its Parquet file."""

    __slots__ = (
        "bytes",
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
        self.bytes = self.written = 0
        self.file: Path | None = None
        self.writer: Any = None

    def flush(self, folder: Path) -> int:
        """Write the buffered rows as one row group; the bytes freed."""
        if not self.offsets:
            return 0
        if self.writer is None:
            self.file = folder / f".writing-{self.topic}-{self.partition}.parquet"
            self.writer = pq.ParquetWriter(self.file, DUMP_SCHEMA)
        count = len(self.offsets)
        batch = pa.RecordBatch.from_pydict(
            {
                "topic": [self.topic] * count,
                "partition": [self.partition] * count,
                "offset": self.offsets,
                "timestamp": self.stamps,
                "key": self.keys,
                "value": self.values,
                "headers": self.headers,
            },
            schema=DUMP_SCHEMA,
        )
        self.writer.write_batch(batch)
        self.written += count
        self.first = self.offsets[0] if self.first is None else self.first
        self.last = self.offsets[-1]
        freed, self.bytes = self.bytes, 0
        self.offsets, self.keys, self.values, self.stamps, self.headers = [], [], [], [], []
        return freed


def fsync(path: Path) -> None:
    """Flush a file or folder to disk (before the rename that publishes a dump)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
