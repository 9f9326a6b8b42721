"""Reading a topic dump for ``replay``: what it holds, and its records in offset order.

* ``plan_dump`` counts records and partitions and checks the order, vectorized (Arrow
  compute): a dump in ``write_dump``'s layout (one partition per file, ascending offsets) file
  by file, any other on all its (topic, partition, offset) keys sorted; an offset held twice
  is refused, and so is a folder an unfinished capture left (``_INCOMPLETE``);
* ``read_ahead`` yields the records in runs (``Run``: one partition's consecutive records as
  column lists), read and converted ahead in a thread of its own (Parquet decoding releases
  the GIL), sorted in memory when the files do not give each partition in offset order.
  Timestamps come as milliseconds (``to_pydict`` would build a ``datetime`` for each),
  headers as (key, value) lists or ``None``.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ticdc_conformance.generators.dump import DUMP_SCHEMA, dump_files, read_labels
from ticdc_conformance.reference.errors import UsageError

__all__ = ["DumpPlan", "Run", "plan_dump", "read_ahead"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DumpPlan:
    """What a dump holds, read from its files before anything is sent."""

    files: tuple[Path, ...]
    records: int
    partitions: Mapping[str, int]
    """Topic → the partition count it needs."""
    ordered: bool
    """Whether the files give each partition's records in offset order."""
    labels: Mapping[str, Any]


def _labels(path: Path) -> dict[str, Any]:
    """A folder's ``_labels.json``, or the ``X.labels.json`` beside a stream fixture file."""
    if path.is_file():
        beside = path.with_name(path.name.removesuffix(".parquet") + ".labels.json")
        if beside.is_file():
            labels: dict[str, Any] = json.loads(beside.read_text(encoding="utf-8"))
            return labels
        path = path.parent
    return read_labels(path) if path.is_dir() else {}


_KEY = [("topic", "ascending"), ("partition", "ascending"), ("offset", "ascending")]


def _keys(files: tuple[Path, ...]) -> list[pa.Table]:
    """Each file's (topic, partition, offset) columns."""
    tables = []
    for file in files:
        try:
            tables.append(pq.read_table(file, columns=["topic", "partition", "offset"]))
        except (OSError, pa.ArrowInvalid, KeyError) as error:
            raise UsageError(f"{file}: not a topic dump: {error}") from None
    return tables


def _one_partition_each(tables: list[pa.Table]) -> dict[tuple[str, int], int] | None:
    """Partition → its highest offset, for ``write_dump``'s layout; else ``None``.

    That layout: every file holds one partition, in ascending offsets that follow the
    partition's earlier files.
    """
    last: dict[tuple[str, int], int] = {}
    for table in tables:
        if not table.num_rows:
            continue
        topic, partition = table["topic"].unique(), table["partition"].unique()
        if len(topic) != 1 or len(partition) != 1:
            return None
        offsets = table["offset"].combine_chunks()
        step = pc.min(pc.pairwise_diff(offsets)).as_py()  # None for one record
        key = (topic[0].as_py(), partition[0].as_py())
        if (step is not None and step <= 0) or offsets[0].as_py() <= last.get(key, -1):
            return None
        last[key] = offsets[-1].as_py()
    return last


def _sorted_keys(tables: list[pa.Table], path: Path | str) -> tuple[pa.Table, bool]:
    """All keys sorted (stably) by (topic, partition, offset); whether the files were in order.

    In order: the files gave each partition's records in offset order. ``UsageError`` for an
    offset held twice.
    """
    keys = pa.concat_tables(tables).combine_chunks()
    keys = keys.append_column("place", pa.array(range(keys.num_rows), pa.int64())).sort_by(_KEY)
    if keys.num_rows < 2:
        return keys, True
    head, tail = keys.slice(0, keys.num_rows - 1), keys.slice(1)
    same = pc.and_(
        pc.equal(head["topic"], tail["topic"]), pc.equal(head["partition"], tail["partition"])
    )
    twice = pc.and_(same, pc.equal(head["offset"], tail["offset"]))
    if pc.any(twice).as_py():
        row = head.filter(twice).slice(0, 1).to_pylist()[0]
        raise UsageError(
            f"{path}: {row['topic']}/{row['partition']} holds offset {row['offset']} twice"
        )
    return keys, not pc.any(pc.and_(same, pc.greater(head["place"], tail["place"]))).as_py()


def plan_dump(path: Path | str) -> DumpPlan:
    """Count a dump's records and partitions and check their order (``UsageError`` if bad).

    Vectorized: a dump in ``write_dump``'s layout is checked file by file; any other is
    checked on all its keys sorted by (topic, partition, offset).
    """
    try:
        files = tuple(dump_files(path))
    except ValueError as error:
        raise UsageError(str(error)) from None
    if not files:
        raise UsageError(f"no dump at {path}")
    tables = _keys(files)
    found, ordered = _one_partition_each(tables), True
    if found is None:
        keys, ordered = _sorted_keys(tables, path)
        highest = keys.group_by(["topic", "partition"]).aggregate([]).to_pydict()
        found = dict.fromkeys(zip(highest["topic"], highest["partition"], strict=True), 0)
    partitions: dict[str, int] = {}
    for topic, partition in found:
        partitions[topic] = max(partitions.get(topic, 0), partition + 1)
    labels = _labels(Path(path))
    settings = labels.get("settings") or {}
    if settings.get("topic") in partitions and isinstance(settings.get("partitions"), int):
        topic = settings["topic"]
        partitions[topic] = max(partitions[topic], settings["partitions"])
    records = sum(t.num_rows for t in tables)
    return DumpPlan(
        files=files, records=records, partitions=partitions, ordered=ordered, labels=labels
    )


_BATCH_ROWS = 16_384
"""Rows decoded at a time (pyarrow's default is 65 536): less memory read ahead, and the first
records reach the sending thread sooner."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Run:
    """Consecutive records of one partition, in offset order, as Python lists.

    Timestamps are milliseconds, ``0`` for a null one (the producer then stamps the time of
    sending); ``headers`` holds (key, value) lists or ``None``, one per record.
    """

    topic: str
    partition: int
    offsets: list[int]
    stamps: list[int]
    keys: list[bytes | None]
    values: list[bytes | None]
    headers: list[list[tuple[str, str | bytes | None]] | None]
    offset_array: pa.Array
    """``offsets`` as an Arrow int64 array (kept by ``replay`` to check the topic offsets)."""


def _batches(plan: DumpPlan) -> Iterator[pa.RecordBatch]:
    if plan.ordered:
        for file in plan.files:
            yield from pq.ParquetFile(file).iter_batches(
                batch_size=_BATCH_ROWS, columns=DUMP_SCHEMA.names, use_threads=False
            )
        return
    table = pa.concat_tables(pq.read_table(f, columns=DUMP_SCHEMA.names) for f in plan.files)
    yield from table.sort_by(_KEY).to_batches(max_chunksize=_BATCH_ROWS)


def _runs(batch: pa.RecordBatch) -> Iterator[pa.RecordBatch]:
    """A batch cut where the (topic, partition) changes."""
    if batch.num_rows < 2:
        yield batch
        return
    head, tail = batch.slice(0, batch.num_rows - 1), batch.slice(1)
    change = pc.or_(
        pc.not_equal(head["topic"], tail["topic"]),
        pc.not_equal(head["partition"], tail["partition"]),
    )
    start = 0
    for cut in pc.indices_nonzero(change).to_pylist():
        yield batch.slice(start, cut + 1 - start)
        start = cut + 1
    yield batch.slice(start)


def _run(batch: pa.RecordBatch) -> Run:
    """One partition's records of a batch as Python lists (no ``datetime`` per timestamp)."""
    headers = batch.column("headers")
    if not pc.sum(pc.list_value_length(headers)).as_py():  # no headers at all (TiCDC's case)
        pairs: list[Any] = [None] * batch.num_rows
    else:
        pairs = [[(h["key"], h["value"]) for h in row] or None for row in headers.to_pylist()]
    offsets = batch.column("offset")
    return Run(
        topic=batch.column("topic")[0].as_py(),
        partition=batch.column("partition")[0].as_py(),
        offsets=offsets.to_pylist(),
        stamps=pc.fill_null(batch.column("timestamp").cast(pa.int64()), 0).to_pylist(),
        keys=batch.column("key").to_pylist(),
        values=batch.column("value").to_pylist(),
        headers=pairs,
        offset_array=offsets,
    )


def read_ahead(plan: DumpPlan) -> Iterator[Run]:
    """The dump's records as runs of one partition, read ahead in a thread of their own.

    Parquet decoding releases the GIL, so it overlaps with sending the records before.
    """
    ready: queue.Queue[Run | BaseException | None] = queue.Queue(maxsize=4)
    stop = threading.Event()

    def put(item: Run | BaseException | None) -> None:
        while not stop.is_set():
            with contextlib.suppress(queue.Full):
                ready.put(item, timeout=0.1)
                return

    def read() -> None:
        try:
            for batch in _batches(plan):
                for run in _runs(batch):
                    put(_run(run))
            put(None)
        except BaseException as error:  # noqa: BLE001 - handed to the sending thread
            put(error)

    reader = threading.Thread(target=read, name="replay-reader", daemon=True)
    reader.start()
    try:
        while (item := ready.get()) is not None:
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        reader.join()
