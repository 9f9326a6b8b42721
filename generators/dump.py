"""The topic dump format: Kafka records as Parquet, labels as a JSON sidecar.

A dump is a folder (docs/dump-format.md has the full description):

* ``part-NNNNN.parquet``: one row per Kafka record, with the columns of Spark's Kafka source:
  ``topic`` string, ``partition`` int32, ``offset`` int64, ``timestamp`` timestamp(ms, UTC),
  ``key`` binary (null for no key), ``value`` binary (null for a tombstone), ``headers``
  list of ``{key: string, value: binary}``. ``write_dump`` writes one file per Kafka
  partition, numbered in (topic, partition) order, records in offset order: the layout the
  stream checker reads without a shuffle (``suites/stream/layout.py``). Readers take any
  layout: ``read_dump`` yields the records file by file, in stored order;
* ``_labels.json``: how the dump was made (protocol, profile, partitions, dispatcher, options,
  workload) and, for a simulated dump with faults, every injected fault with the findings a
  checker must report. Spark skips files whose names start with ``_`` when it reads a folder;
* ``_claim_check/``: with ``large-message-handle-option=claim-check``, the files TiCDC stored
  for oversized messages, each under the file name its location ends with
  (``generators.claim_check``);
* ``_INCOMPLETE``: present while a dump is written (``publishing``: ``generate``, a capture)
  and left behind when the writer is stopped midway; readers refuse such a folder
  (``dump_files``). A dump is written into a hidden sibling folder and renamed into place
  only when complete, so an interrupted writer never leaves a folder that looks like a dump.

The simulator writes dumps; a capture from a real topic writes the same columns; the Spark
stream checker reads them. Reading needs ``pyarrow`` (the ``generators`` extra).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_conformance.generators.claim_check import CLAIM_CHECK_FOLDER
from ticdc_conformance.generators.simulator import Record

__all__ = [
    "CLAIM_CHECK_FOLDER",
    "DUMP_SCHEMA",
    "INCOMPLETE_FILE",
    "LABELS_FILE",
    "dump_files",
    "fsync",
    "publishing",
    "read_dump",
    "read_labels",
    "write_dump",
    "write_labels",
    "write_records",
]

LABELS_FILE = "_labels.json"
INCOMPLETE_FILE = "_INCOMPLETE"
"""The marker of a dump folder a capture has not finished (docs/dump-format.md)."""
DUMP_SCHEMA = pa.schema(
    [
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("offset", pa.int64(), nullable=False),
        pa.field("timestamp", pa.timestamp("ms", tz=str(UTC))),
        pa.field("key", pa.binary()),
        pa.field("value", pa.binary()),
        pa.field(
            "headers",
            pa.list_(pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])),
        ),
    ]
)
"""The Parquet schema of a dump: the columns of Spark's Kafka source."""

_BATCH = 65_536
_BUFFERED = 4 * _BATCH
"""Records ``write_dump`` holds across its part files before it writes the fullest one."""
_SPILL = 4096
"""Records a part file holds in memory before it spills them (``full_row_groups``)."""


def _batch(records: list[Record]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pydict(
        {
            "topic": [r.topic for r in records],
            "partition": [r.partition for r in records],
            "offset": [r.offset for r in records],
            "timestamp": [r.timestamp for r in records],
            "key": [r.key for r in records],
            "value": [r.value for r in records],
            "headers": [
                [{"key": k, "value": v} for k, v in r.headers] if r.headers else [] for r in records
            ],
        },
        schema=DUMP_SCHEMA,
    )


def write_records(
    records: Iterable[Record],
    file: Path,
    *,
    compression: str = "snappy",
    compression_level: int | None = None,
    compact: bool = False,
) -> int:
    """Write ``records`` to one Parquet ``file`` in the given order; returns the count.

    ``compression`` names the pages' codec (pyarrow's names: ``snappy``, ``zstd``, ``gzip``,
    ``none``) and ``compression_level`` its level, ``None`` for the codec's default; the
    format fixes no codec (docs/dump-format.md). ``compact`` leaves out what a reader can do
    without, for small files shipped many at a time: statistics but those of ``topic``,
    ``partition``, ``offset`` and ``timestamp`` (the checker's layout needs the first three),
    dictionaries but those of ``topic`` and ``partition``, and the Arrow schema in the footer
    (the Parquet types say the same).
    """
    count = 0
    options: dict[str, Any] = {"compression": compression, "compression_level": compression_level}
    if compact:
        options |= {
            "write_statistics": ["topic", "partition", "offset", "timestamp"],
            "use_dictionary": ["topic", "partition"],
            "store_schema": False,
        }
    with pq.ParquetWriter(file, DUMP_SCHEMA, **options) as writer:
        chunk: list[Record] = []
        for record in records:
            chunk.append(record)
            if len(chunk) == _BATCH:
                writer.write_batch(_batch(chunk))
                count += len(chunk)
                chunk = []
        if chunk or not count:
            writer.write_batch(_batch(chunk))
            count += len(chunk)
    return count


class _PartFile:
    """One Kafka partition's file while ``write_dump`` writes it.

    With ``spill``, the row group being filled goes to a hidden Arrow stream file beside the
    part file every ``_SPILL`` records, and is read back once whole, so a partition holds at
    most ``_SPILL`` records in memory however long its row groups are.
    """

    def __init__(self, file: Path, *, spill: bool = False) -> None:
        self.file = file
        self.writer = pq.ParquetWriter(file, DUMP_SCHEMA)
        self.chunk: list[Record] = []
        self.last: int | None = None
        self.ascending = True
        self.spill_file = file.with_name(f"{file.name}.spill") if spill else None
        self.spilled: pa.ipc.RecordBatchStreamWriter | None = None
        self.spilled_rows = 0

    @property
    def held(self) -> int:
        """Records of the row group being filled (in memory and spilled)."""
        return self.spilled_rows + len(self.chunk)

    def add(self, record: Record) -> bool:
        """Hold ``record``; whether the row group being filled is now full (``_BATCH``)."""
        offset = record.offset
        if self.last is not None and offset < self.last:
            self.ascending = False
        self.last = offset
        chunk = self.chunk
        chunk.append(record)
        if len(chunk) < _SPILL:  # no spill due: the common case, in short
            return self.spilled_rows + len(chunk) == _BATCH
        if self.spill_file is not None and len(chunk) == _SPILL and self.held < _BATCH:
            if self.spilled is None:
                self.spilled = pa.ipc.new_stream(str(self.spill_file), DUMP_SCHEMA)
            self.spilled.write_batch(_batch(chunk))
            self.spilled_rows += len(chunk)
            self.chunk = []
        return self.held == _BATCH

    def flush(self) -> None:
        if self.spilled is not None and self.spill_file is not None:
            self.spilled.close()
            self.spilled = None
            with pa.memory_map(str(self.spill_file)) as source:
                batches = list(pa.ipc.open_stream(source))
                if self.chunk:
                    batches.append(_batch(self.chunk))
                # one row group; its chunks start at multiples of _SPILL, itself a multiple of
                # the writer's 1024-value batches, so pages split as for one contiguous batch
                self.writer.write_table(pa.Table.from_batches(batches), row_group_size=_BATCH)
                del batches
            self.spill_file.unlink()
            self.spilled_rows = 0
            self.chunk = []
        elif self.chunk:
            self.writer.write_batch(_batch(self.chunk))
            self.chunk = []

    def close(self) -> None:
        self.flush()
        self.writer.close()
        if not self.ascending:  # records came out of offset order: sort the file (stable)
            pq.write_table(pq.read_table(self.file).sort_by("offset"), self.file)

    def discard(self) -> None:
        """Close and remove what is left (after ``close``, or on an error)."""
        self.writer.close()
        if self.spilled is not None:
            self.spilled.close()
        self.file.unlink(missing_ok=True)
        if self.spill_file is not None:
            self.spill_file.unlink(missing_ok=True)


def fsync(path: Path) -> None:
    """Flush a file or folder to disk (before the rename that publishes a dump)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


@contextlib.contextmanager
def publishing(
    out: Path,
    writer: str,
    *,
    replaceable: Callable[[Path], bool] | None = None,
    kind: str = "a dump",
) -> Iterator[Path]:
    """A hidden sibling of ``out`` to write a folder into, renamed to ``out`` once complete.

    The sibling (``.<name>.<writer>-<pid>``) holds ``INCOMPLETE_FILE`` while the block runs.
    When the block ends without error the marker goes, the folder is flushed to disk and
    renamed over ``out``: an empty folder, or what ``replaceable`` accepts (by default a dump:
    only ``_labels.json`` and Parquet files), is replaced; anything else at ``out`` is a
    ``FileExistsError`` naming ``kind``, raised before anything is written. When the block
    raises (Ctrl-C included), the sibling is removed and ``out`` is left as it was.
    """
    if out.exists() and not (_empty(out) or (replaceable or _replaceable)(out)):
        raise FileExistsError(f"{out} exists and is not {kind}: choose a new or empty folder")
    folder = out.with_name(f".{out.name}.{writer}-{os.getpid()}")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    try:
        (folder / INCOMPLETE_FILE).write_text(
            f"a {writer} is writing this folder, or was stopped before it finished\n"
        )
        yield folder
        (folder / INCOMPLETE_FILE).unlink()
        fsync(folder)
        if out.exists():  # an older dump or an empty folder: moved aside, then removed
            aside = out.with_name(f".{out.name}.replaced-{os.getpid()}")
            out.rename(aside)
            folder.rename(out)
            shutil.rmtree(aside, ignore_errors=True)
        else:
            folder.rename(out)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


def _empty(out: Path) -> bool:
    return out.is_dir() and next(out.iterdir(), None) is None


def _replaceable(out: Path) -> bool:
    """Whether ``out`` is a dump ``publishing`` may replace."""
    if not out.is_dir():
        return False
    names = {entry.name for entry in out.iterdir()}
    return all(
        name in (LABELS_FILE, CLAIM_CHECK_FOLDER) or name.endswith(".parquet") for name in names
    )


def write_dump(
    records: Iterable[Record],
    folder: Path,
    *,
    labels: Mapping[str, Any] | None = None,
    full_row_groups: bool = False,
) -> int:
    """Write ``records`` as one Parquet file per Kafka partition, and ``labels`` as the sidecar.

    ``part-NNNNN.parquet``, numbered from 0 in (topic, partition) order, each holding its
    partition's records in offset order (records may come in any order). No records: one
    empty ``part-00000.parquet``. The folder is created; an existing dump in it is replaced.
    Returns the record count.

    Memory stays bounded: at most ``4 × 65,536`` records are held across the part files, the
    fullest written out first, so row groups depend on how the partitions interleave. With
    ``full_row_groups`` every row group holds 65,536 records (a file's last one fewer), so a
    file's bytes depend on its records alone, whatever the order they came in: the row group
    a partition is filling is spilled to a hidden file beside it every 4096 records and read
    back once whole, so memory holds 4096 records per partition and one row group.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("part-*.parquet"):
        old.unlink()
    parts: dict[tuple[str, int], _PartFile] = {}
    buffered = count = 0
    try:
        for record in records:
            key = (record.topic, record.partition)
            if key not in parts:
                file = folder / f".writing-{len(parts)}.parquet"
                parts[key] = _PartFile(file, spill=full_row_groups)
            part = parts[key]
            full = part.add(record)
            count += 1
            buffered += 1
            if full:  # a full row group
                buffered -= len(part.chunk)
                part.flush()
            elif buffered >= _BUFFERED and not full_row_groups:
                # bounded memory, whatever the order of the records
                fullest = max(parts.values(), key=lambda p: len(p.chunk))
                buffered -= len(fullest.chunk)
                fullest.flush()
        for part in parts.values():
            part.close()
        for number, key in enumerate(sorted(parts)):
            parts[key].file.replace(folder / f"part-{number:05d}.parquet")
    finally:
        for part in parts.values():
            part.discard()
    if not parts:
        write_records([], folder / "part-00000.parquet")
    write_labels(folder, labels or {})
    return count


def write_labels(folder: Path, labels: Mapping[str, Any]) -> None:
    """Write the label sidecar of a dump folder (``write_dump`` writes one too)."""
    text = json.dumps(dict(labels), indent=2, sort_keys=True) + "\n"
    (folder / LABELS_FILE).write_text(text, encoding="utf-8")


def dump_files(path: Path | str) -> list[Path]:
    """The Parquet files of a dump folder (not hidden ones), a file or a glob (or none).

    ``ValueError`` when a file sits in a folder an unfinished capture left (``_INCOMPLETE``).
    """
    path = Path(path)
    if path.is_dir():
        # as Spark does: hidden names are files being written (write_dump, a capture)
        files = sorted(f for f in path.glob("*.parquet") if not f.name.startswith((".", "_")))
        folders = {path}
    else:
        pattern = str(path)
        files = [path] if path.is_file() else sorted(Path(p) for p in glob.glob(pattern))  # noqa: PTH207 - a user's glob
        folders = {file.parent for file in files}
    for folder in sorted(folders):
        if (folder / INCOMPLETE_FILE).exists():
            raise ValueError(f"{folder} is an unfinished capture ({INCOMPLETE_FILE}), not a dump")
    return files


def read_dump(path: Path | str) -> Iterator[Record]:
    """Every record of a dump (a folder, a file or a glob), file by file in stored order.

    ``FileNotFoundError`` when nothing matches; ``ValueError`` when a file lacks a column or
    belongs to an unfinished capture.
    """
    files = dump_files(path)
    if not files:
        raise FileNotFoundError(f"no Parquet files at {path}")
    for file in files:
        table = pq.read_table(file)
        missing = [name for name in DUMP_SCHEMA.names if name not in table.column_names]
        if missing:
            raise ValueError(f"{file}: not a topic dump, missing column(s) {missing}")
        table = table.select(DUMP_SCHEMA.names)
        table = table.set_column(3, "timestamp", table["timestamp"].cast(pa.int64()))
        for batch in table.to_batches():
            columns = batch.to_pydict()
            for i in range(batch.num_rows):
                stamp = columns["timestamp"][i]
                yield Record(
                    topic=columns["topic"][i],
                    partition=columns["partition"][i],
                    offset=columns["offset"][i],
                    timestamp=0 if stamp is None else stamp,
                    key=columns["key"][i],
                    value=columns["value"][i],
                    headers=tuple((h["key"], h["value"]) for h in columns["headers"][i] or ()),
                )


def read_labels(folder: Path) -> dict[str, Any]:
    """The label sidecar of a dump folder (``{}`` when there is none)."""
    file = folder / LABELS_FILE
    if not file.is_file():
        return {}
    labels: dict[str, Any] = json.loads(file.read_text(encoding="utf-8"))
    return labels
