"""The stream check in one Python process: the fast path for small dumps.

The same ``PartitionChecker`` per Kafka partition as the Spark job (``suites/stream/rules.py``),
fed the records of each partition in offset order, and the same accounting and samples: per
rule the first ``samples`` findings ordered by (topic, partition, offset, commit ts, detail),
a missing record's offset (``None``) first, as Spark orders nulls. ``check-stream`` runs it
below ``SPARK_ABOVE_RECORDS`` records unless Spark is asked for; both paths give the same
report but for ``plan`` (tested on every stream fixture).
"""

from __future__ import annotations

import operator
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from ticdc_conformance.generators.dump import dump_files
from ticdc_conformance.suites.stream.catalog import (
    WATERMARK_BROADCAST,
    Broadcast,
    CheckResult,
    Finding,
    Seen,
    broadcast_gaps,
    watermark_series,
)
from ticdc_conformance.suites.stream.rules import CheckSettings, Item, PartitionChecker

__all__ = [
    "Outcome",
    "check_dump",
    "check_records",
    "count_records",
    "input_files",
]


_COLUMNS = ("topic", "partition", "offset", "key", "value")
_DETAIL = 300
"""Characters of a finding's detail a report keeps (as the Spark tasks do)."""

_PROGRESS_EVERY = 256
"""Records between two progress calls of ``check_records``."""

_Record = tuple[str, int, int, bytes | None, bytes | None]
_offset = operator.itemgetter(2)


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """What ``check_records`` found: every finding, and the message accounting."""

    findings: tuple[Finding, ...]
    read: int
    decoded: int
    undecodable: int
    watermarks: dict[tuple[str, int], list[int]]
    """Per (topic, partition), the commit ts of every watermark it carried."""


def check_records(
    records: Iterable[_Record],
    settings: CheckSettings,
    *,
    progress: Callable[[int], None] | None = None,
) -> Outcome:
    """Check (topic, partition, offset, key, value) records in one process (small dumps).

    ``progress`` is told the records checked so far, every ``_PROGRESS_EVERY`` and at the end.
    """
    by_partition: defaultdict[tuple[str, int], list[_Record]] = defaultdict(list)
    for record in records:  # kept as they are: no tuple per record
        by_partition[record[0], record[1]].append(record)
    findings: list[Finding] = []
    seen: Seen = defaultdict(set)
    watermarks: dict[tuple[str, int], list[int]] = {}
    read = decoded = undecodable = fed = 0
    for (topic, partition), messages in sorted(by_partition.items()):
        checker = PartitionChecker(settings, topic, partition)
        check = checker.check
        messages.sort(key=_offset)
        out: list[Item] = []
        if progress is None:
            for _, _, offset, key, value in messages:
                check(offset, key, value, out)
            fed += len(messages)
        else:
            for _, _, offset, key, value in messages:
                check(offset, key, value, out)
                fed += 1
                if fed % _PROGRESS_EVERY == 0:
                    progress(fed)
        stamps = _taken(out, checker, findings, seen)
        if stamps:
            watermarks[topic, partition] = stamps
        findings.extend(checker.finish())
        read, decoded = read + checker.read, decoded + checker.decoded
        undecodable += checker.undecodable
    counts = {topic: 1 + max(p for t, p in by_partition if t == topic) for topic, _ in by_partition}
    if settings.partitions is not None:
        counts = dict.fromkeys(counts, settings.partitions)
    if progress is not None:
        progress(fed)
    default = settings.topic if settings.routes else None
    findings.extend(broadcast_gaps(seen, counts, default))
    return Outcome(
        findings=tuple(findings),
        read=read,
        decoded=decoded,
        undecodable=undecodable,
        watermarks=watermarks,
    )


def _taken(
    items: list[Item], checker: PartitionChecker, findings: list[Finding], seen: Seen
) -> list[int]:
    """Sort a partition's items into ``findings`` and ``seen``; its watermarks' commit ts."""
    topic, partition = checker.topic, checker.partition
    stamps: list[int] = []
    for item in items:
        if type(item) is int:
            seen[WATERMARK_BROADCAST, topic, item, ""].add(partition)
            stamps.append(item)
        elif type(item) is Broadcast:
            seen[item.kind, topic, item.commit_ts, item.ident].add(partition)
        else:
            findings.append(item)  # type: ignore[arg-type]
    return stamps


def input_files(inputs: Sequence[str]) -> list[Path]:
    """The Parquet files of every input (folder, file or glob), each once, in order.

    ``ValueError`` when there is none.
    """
    files: dict[Path, None] = {}
    for given in inputs:
        files.update(dict.fromkeys(dump_files(given)))
    if not files:  # a mistyped folder, not an empty topic (whose dump has files of no rows)
        raise ValueError(f"no Parquet file in {', '.join(inputs)}")
    return list(files)


_KINDS: dict[str, Callable[[pa.DataType], bool]] = {
    "topic": lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
    "partition": pa.types.is_integer,
    "offset": pa.types.is_integer,
    "key": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t),
    "value": lambda t: pa.types.is_binary(t) or pa.types.is_large_binary(t),
}
"""What each column a check reads must hold (docs/dump-format.md)."""


def count_records(files: Sequence[Path]) -> int:
    """Records in ``files`` from their footers; ``ValueError`` naming a file that is no dump.

    A dump's files hold the columns the check reads, of the kinds ``_KINDS`` names, and share
    their types: Spark would otherwise fail to merge them, and the plain path misread them.
    """
    total = 0
    first: tuple[Path, dict[str, pa.DataType]] | None = None
    for file in files:
        try:
            metadata = pq.ParquetFile(file).metadata
        except (pa.ArrowException, OSError) as error:
            raise ValueError(f"{file} is not a Parquet file ({error})") from None
        names = metadata.schema.to_arrow_schema().names
        missing = [n for n in _COLUMNS if n not in names]
        if missing:
            raise ValueError(f"{file}: not a topic dump, missing column(s) {missing}")
        for name in ("topic", "partition", "offset"):
            nulls = _nulls(metadata, names.index(name))
            if nulls:
                raise ValueError(f"{file}: {nulls} record(s) with no {name}: not a topic dump")
        schema = metadata.schema.to_arrow_schema()
        types = {name: schema.field(name).type for name in _COLUMNS}
        for name, fits in _KINDS.items():
            if not fits(types[name]):
                raise ValueError(f"{file}: column {name!r} is {types[name]}: not a topic dump")
        if first is None:
            first = (file, types)
        elif types != first[1]:
            name = next(n for n in _COLUMNS if types[n] != first[1][n])
            raise ValueError(
                f"{file}: column {name!r} is {types[name]} where {first[0]} has "
                f"{first[1][name]}: the files of a dump share one schema"
            )
        total += metadata.num_rows
    return total


def _nulls(metadata: pq.FileMetaData, column: int) -> int:
    """Nulls of a column by the footer's statistics (0 where a row group has none)."""
    count = 0
    for group in range(metadata.num_row_groups):
        stats = metadata.row_group(group).column(column).statistics
        if stats is not None and stats.has_null_count:
            count += stats.null_count
    return count


def _duplicate(rows: Sequence[Sequence[object]]) -> str | None:
    """The first (topic, partition, offset) two records share, as text; Kafka has none."""
    seen: set[tuple[object, object, object]] = set()
    for topic, partition, offset, *_ in rows:
        if offset is None:
            return f"{topic}/{partition}: a record without an offset"
        if (topic, partition, offset) in seen:
            return f"{topic}/{partition}: offset {offset} twice"
        seen.add((topic, partition, offset))
    return None


def _sample(finding: Finding) -> dict[str, Any]:
    return {
        "topic": finding.topic,
        "partition": finding.partition,
        "offset": finding.offset,
        "key": finding.key,
        "commit_ts": finding.commit_ts,
        "detail": finding.detail[:_DETAIL],
    }


def _order(sample: dict[str, Any]) -> tuple[Any, ...]:
    offset, ts = sample["offset"], sample["commit_ts"]
    return (
        sample["topic"],
        sample["partition"],
        offset is not None,
        offset or 0,
        ts is not None,
        ts or 0,
        sample["detail"],
    )


def check_dump(
    files: Sequence[Path],
    settings: CheckSettings,
    *,
    samples: int = 10,
    progress: Callable[[int], None] | None = None,
) -> CheckResult:
    """Run the whole rule catalog over the records of ``files`` in this process.

    ``ValueError`` when two records share a topic, partition and offset, or one has no offset:
    a Kafka partition has neither, so such files are no topic dump.

    ``progress`` is told the messages checked so far, every few hundred.
    """
    rows: list[tuple[str, int, int, bytes | None, bytes | None]] = []
    for file in files:
        table = pq.read_table(file, columns=list(_COLUMNS))
        rows.extend(zip(*(table[name].to_pylist() for name in _COLUMNS), strict=True))
    duplicate = _duplicate(rows)
    if duplicate is not None:
        raise ValueError(f"not a topic dump: {duplicate}")
    outcome = check_records(rows, settings, progress=progress)
    counts: Counter[str] = Counter(f.rule for f in outcome.findings)
    counts.update(
        {"_read": outcome.read, "_decoded": outcome.decoded, "_undecodable": outcome.undecodable}
    )
    kept: dict[str, list[dict[str, Any]]] = {}
    for finding in outcome.findings:
        kept.setdefault(finding.rule, []).append(_sample(finding))
    chosen = {rule: sorted(found, key=_order)[:samples] for rule, found in kept.items()}
    return CheckResult(
        dict(counts),
        {r: s for r, s in chosen.items() if s},
        len(rows),
        plan="in-process",
        watermarks=watermark_series(outcome.watermarks),
    )
