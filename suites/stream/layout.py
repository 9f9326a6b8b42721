"""The layout of a dump's Parquet files, from their footers: the stream checker's file plan.

The Spark stream checker (``suites/stream/spark.py``) must see each Kafka partition's records
in offset order in one task. When the files themselves are laid out that way it needs no
shuffle: each task reads whole files. The plan (``plan_files``) is made on the driver from the
Parquet footers alone (row counts, and the min/max statistics of ``topic``, ``partition`` and
``offset``), without reading any record. It holds when:

* every non-empty file holds exactly one (topic, partition): the statistics say min == max
  for ``topic`` and ``partition``, with no nulls;
* per Kafka partition, the files' offset ranges (the ``offset`` statistics) do not overlap,
  so the files in ascending order of their first offset are the partition in offset order.

Then a unit is one Kafka partition: its files in offset order and its record count (the sum
of the footers' row counts). Anything else (a file the driver cannot open with pyarrow, e.g.
an ``s3a://`` URI; missing statistics; a file mixing partitions; overlapping offset ranges)
yields the reason, and the checker uses its shuffle path. ``generators/dump.py`` writes this
layout (one file per Kafka partition, in offset order), as does Spark's Kafka source captured
without a shuffle.

``read_unit`` runs in the tasks: it reads a unit's files with pyarrow (only ``offset``,
``key`` and ``value``, in batches), checks that each file holds the planned partition and
that the offsets ascend across files, and sorts a file whose rows are not in offset order.

``balance`` places units in tasks, largest first, each to the least loaded task: on the file
path by cost (``Unit.cost``: bytes and records, from the footers), on the shuffle path by the
records counted. Standard library and pyarrow only: no Spark here.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyarrow import fs

__all__ = ["RECORD_COST", "Key", "Unit", "balance", "plan_files", "read_unit"]

Key = tuple[str, int]
"""A Kafka partition: (topic, partition)."""

_COLUMNS = ("offset", "key", "value")
RECORD_COST = 128
"""What checking one record costs beyond its bytes, in bytes (``Unit.cost``): about the
decoding of a watermark message against a kilobyte row message's."""
_BATCH = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class Unit:
    """One Kafka partition of the dump: its files in offset order and its record count."""

    topic: str
    partition: int
    files: tuple[str, ...]
    rows: int
    bytes: int = field(default=0, compare=False)
    """The uncompressed bytes of its keys and values (the footers' column sizes)."""

    @property
    def key(self) -> Key:
        """(topic, partition): where the unit is placed and checked, in that order."""
        return self.topic, self.partition

    @property
    def cost(self) -> int:
        """About the work of checking the unit, in bytes.

        Its bytes and ``RECORD_COST`` a record: a watermark message is short, yet costs its
        decoding and rules.
        """
        return self.bytes + RECORD_COST * self.rows


@dataclass(frozen=True, slots=True, kw_only=True)
class _Footer:
    uri: str
    rows: int
    topic: str
    partition: int
    first: int
    last: int
    bytes: int


def _open(uri: str) -> pa.NativeFile:
    filesystem, path = fs.FileSystem.from_uri(uri)
    return filesystem.open_input_file(path)


def _bounds(metadata: pq.FileMetaData, column: str) -> tuple[object, object] | str:
    """(min, max) of ``column`` over all row groups, or why the statistics do not say."""
    names = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    if column not in names:
        return f"no column {column!r}"
    index = names.index(column)
    low: object = None
    high: object = None
    for group in range(metadata.num_row_groups):
        stats = metadata.row_group(group).column(index).statistics
        if stats is None or not stats.has_min_max or not stats.has_null_count or stats.null_count:
            return f"no min/max statistics of {column!r} (or nulls in it)"
        low = stats.min if low is None or stats.min < low else low
        high = stats.max if high is None or stats.max > high else high
    return low, high


def _footer(uri: str) -> _Footer | str | None:
    """What the footer of ``uri`` says; ``None`` for a file without rows; or a reason."""
    try:
        with _open(uri) as source:
            metadata = pq.read_metadata(source)
    except (OSError, ValueError, pa.ArrowException) as error:
        return f"cannot read the footer of {uri}: {error}"
    if metadata.num_rows == 0:
        return None
    found: dict[str, tuple[object, object]] = {}
    for column in ("topic", "partition", "offset"):
        bounds = _bounds(metadata, column)
        if isinstance(bounds, str):
            return f"{uri}: {bounds}"
        found[column] = bounds
    (topic, last_topic), (partition, last_partition) = found["topic"], found["partition"]
    first, last = found["offset"]
    if topic != last_topic or partition != last_partition:
        return f"{uri} holds several Kafka partitions"
    if not (isinstance(topic, str) and isinstance(partition, int)):
        return f"{uri}: topic or partition of an unexpected type"
    if not (isinstance(first, int) and isinstance(last, int)):
        return f"{uri}: offset of an unexpected type"
    return _Footer(
        uri=uri,
        rows=metadata.num_rows,
        topic=topic,
        partition=partition,
        first=first,
        last=last,
        bytes=_payload_bytes(metadata),
    )


def _payload_bytes(metadata: pq.FileMetaData) -> int:
    """The uncompressed bytes of the ``key`` and ``value`` columns, from the footer."""
    names = [metadata.schema.column(i).path for i in range(metadata.num_columns)]
    columns = [names.index(name) for name in ("key", "value") if name in names]
    return sum(
        metadata.row_group(group).column(column).total_uncompressed_size
        for group in range(metadata.num_row_groups)
        for column in columns
    )


def plan_files(uris: Sequence[str]) -> list[Unit] | str:
    """The units of the files at ``uris`` in (topic, partition) order, or why there are none.

    See the module docstring for when a plan exists.
    """
    by_key: dict[Key, list[_Footer]] = {}
    for uri in uris:
        footer = _footer(uri)
        if isinstance(footer, str):
            return footer
        if footer is not None:
            by_key.setdefault((footer.topic, footer.partition), []).append(footer)
    if not by_key:
        return "no records"
    units = []
    for (topic, partition), footers in sorted(by_key.items()):
        footers.sort(key=lambda f: (f.first, f.last))
        for before, after in itertools.pairwise(footers):
            if after.first <= before.last:
                return f"{topic}/{partition}: the offsets of {before.uri} and {after.uri} overlap"
        units.append(
            Unit(
                topic=topic,
                partition=partition,
                rows=sum(f.rows for f in footers),
                files=tuple(f.uri for f in footers),
                bytes=sum(f.bytes for f in footers),
            )
        )
    return units


def _ascending(offsets: pa.ChunkedArray) -> bool:
    n = len(offsets)
    return n < 2 or bool(pc.all(pc.less_equal(offsets.slice(0, n - 1), offsets.slice(1))).as_py())


def _unique(offsets: pa.ChunkedArray) -> bool:
    return bool(pc.count_distinct(offsets).as_py() == len(offsets))


def read_unit(unit: Unit, start: int = 0) -> Iterator[pa.RecordBatch]:
    """The unit's records in offset order, as batches of ``offset``, ``key``, ``value``.

    ``start``: the records before this position (in offset order) are left out; a file or
    row group wholly before it is not read. ``ValueError`` when a file holds another
    partition than its footer said, when offsets go back from one file to the next (the
    plan's statistics were wrong), or when a file holds an offset twice (its message starts
    ``not a topic dump:``: ``check-stream`` says it as a usage error, exit status 2).
    """
    previous: int | None = None
    for uri in unit.files:
        with _open(uri) as source:
            parquet = pq.ParquetFile(source)
            if parquet.metadata.num_rows <= start:  # wholly before the range
                start -= parquet.metadata.num_rows
                continue
            head = parquet.read(columns=["topic", "partition", "offset"])
            if head.num_rows == 0:
                continue
            topics, partitions = pc.unique(head["topic"]), pc.unique(head["partition"])
            if topics.to_pylist() != [unit.topic] or partitions.to_pylist() != [unit.partition]:
                raise ValueError(f"{uri} holds records of another Kafka partition than planned")
            offsets = head["offset"]
            first = pc.min(offsets).as_py()
            if previous is not None and first <= previous:
                raise ValueError(f"{uri}: offsets overlap the previous file of the partition")
            previous = pc.max(offsets).as_py()
            if not _unique(offsets):  # a Kafka partition has each offset once
                raise ValueError(f"not a topic dump: {uri}: an offset of the partition twice")
            if _ascending(offsets):
                yield from _ascending_from(parquet, start)
            else:  # rows out of order within the file: sort it here, in the task
                table = parquet.read(columns=list(_COLUMNS)).sort_by("offset").slice(start)
                yield from table.to_batches(max_chunksize=_BATCH)
            start = 0


def _ascending_from(parquet: pq.ParquetFile, start: int) -> Iterator[pa.RecordBatch]:
    """A file's records in its order from position ``start``, skipping row groups before it."""
    groups: list[int] = []
    for group in range(parquet.metadata.num_row_groups):
        rows = parquet.metadata.row_group(group).num_rows
        if not groups and rows <= start:
            start -= rows
            continue
        groups.append(group)
    for batch in parquet.iter_batches(batch_size=_BATCH, row_groups=groups, columns=list(_COLUMNS)):
        if start >= batch.num_rows:
            start -= batch.num_rows
            continue
        yield batch.slice(start)
        start = 0


_K = TypeVar("_K", bound=tuple[object, ...])


def balance(sizes: Mapping[_K, int], tasks: int) -> list[list[_K]]:
    """Kafka partitions placed in ``tasks`` buckets, balanced by size, heaviest bucket first.

    Largest partitions first, each to the least loaded bucket (LPT). Each bucket lists its
    partitions in (topic, partition) order, the order a task checks them in. A key may be
    longer than (topic, partition): a range of a partition is (topic, partition, index).
    """
    loads = [0] * tasks
    buckets: list[list[_K]] = [[] for _ in range(tasks)]
    for key, size in sorted(sizes.items(), key=lambda item: (-item[1], item[0])):
        bucket = loads.index(min(loads))
        buckets[bucket].append(key)
        loads[bucket] += size
    order = sorted(range(tasks), key=lambda b: -loads[b])
    return [sorted(buckets[b]) for b in order]
