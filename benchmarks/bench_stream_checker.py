"""Spark stream checker throughput: the full rule catalog against a bare read-and-decode job.

Both jobs run in the same Spark session (``local[CORES]`` on 127.0.0.1, UI off) over the same
dump, one after the other, each timed after one untimed warm-up run of the bare job (JVM and
Python worker start-up). The floor, ``bare``, reads every record with Spark's Parquet reader
and decodes it with the reference codec (stateless), then counts messages and events: the
least any checker built on the reference decoders must do. ``check`` is ``check_dump``:
decode with per-partition state, all sequential rules, the broadcast aggregation, bounded
samples; on a generated dump (one file per Kafka partition) it reads the files without a
shuffle, checking a Kafka partition larger than its share of the cores in ranges, and
``--shuffle`` forces the shuffle path (shuffle by Kafka partition, sort by offset) it falls
back to for other layouts. On the file path a third job, the check with every Kafka
partition in one task (no ranges), shows what the ranges gain on a skewed dump (the
generated one is: a table dispatcher sends the ``orders`` table to one partition); the
result ends with the largest partition's share.

    python benchmarks/bench_stream_checker.py --input DUMP            # an existing dump
    python benchmarks/bench_stream_checker.py --messages 1000000 --write  # generate, then run
    python benchmarks/bench_stream_checker.py --input DUMP --shuffle  # the shuffle path
    python benchmarks/bench_stream_checker.py --input DUMP --repeat 3  # best of 3 runs each
    python benchmarks/bench_stream_checker.py --messages 200000 --in-process --repeat 5

``--in-process`` measures the rules' own cost without Spark: in one Python process, the CPU
time of ``check_records`` (``suites/stream/plain.py``) over every record of the dump against
the bare decode loop of the Spark floor's tasks (``tasks.decode_task``: a ``Message`` and a
stateless ``decode`` per record, events counted) over the same records, already in memory;
the two alternate and each keeps its best run. A subset of a dump would not do: its
partitions would miss each other's watermarks, and the broadcast findings would be measured.
"""

from __future__ import annotations

import argparse
import gc
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from ticdc_conformance.generators.dump import read_labels
from ticdc_conformance.generators.generate import generate
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.reference import CODECS, DecodeError, Message
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.rules import CheckSettings
from ticdc_conformance.suites.stream.spark import bare_decode_count, check_dump, session

RESULTS = Path(__file__).resolve().parent / "results" / "stream_checker.md"


def write_bench_dump(folder: Path, messages: int) -> None:
    """The benchmark's dump: the shop workload (seed 1) in Open Protocol, 6 partitions."""
    generate(
        StreamSettings(protocol="open", partitions=6),
        messages=messages,
        seed=1,
        faults=[],
        folder=folder,
    )


def measure(
    spark: Any,  # noqa: ANN401 - a SparkSession
    folder: Path,
    *,
    shuffle: bool = False,
    repeat: int = 1,
) -> str:
    """Time both jobs over the dump at ``folder``; the table of results (Markdown).

    With ``repeat``, the jobs run that many times in turn (bare, check, bare, check, …) and
    each keeps its best time: on a shared machine the other load only ever adds time.
    """
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    paths = [str(folder)]
    bare_decode_count(spark, paths, settings.protocol)  # warm-up
    bare = check = whole = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        messages, events = bare_decode_count(spark, paths, settings.protocol)
        bare = min(bare, time.perf_counter() - started)
        started = time.perf_counter()
        result = check_dump(spark, paths, settings, shuffle=shuffle)
        check = min(check, time.perf_counter() - started)
        if not shuffle:  # the same job with every Kafka partition in one task
            started = time.perf_counter()
            unsplit = check_dump(spark, paths, settings, split_above=None)
            whole = min(whole, time.perf_counter() - started)
            assert unsplit.counts == result.counts

    assert result.read == result.decoded + result.undecodable == result.records == messages

    def row(job: str, seconds: float, ratio: str) -> str:
        return (
            f"| {job} | {messages} | {events} | {seconds:.1f} | {messages / seconds:,.0f} | "
            f"{ratio} |"
        )

    path = "shuffle path" if result.plan.startswith("shuffle") else "file path"
    lines = [
        "| job | messages | events | seconds | messages/s | ratio |",
        "|---|---:|---:|---:|---:|---:|",
        row("bare read + decode + count", bare, "1.00×"),
        row(f"full rule catalog (check_dump, {path})", check, f"**{check / bare:.2f}×**"),
    ]
    if not shuffle:
        lines.append(
            row("the same, each Kafka partition in one task", whole, f"{whole / bare:.2f}×")
        )
    lines += [
        "",
        f"Findings in the clean dump: {sum(result.counts.values())}. Check plan: {result.plan}.",
        _skew(folder),
    ]
    return "\n".join(lines)


def measure_in_process(folder: Path, *, repeat: int = 3) -> str:
    """CPU time of ``check_records`` against the bare decode loop, same records (Markdown)."""
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    columns = ("topic", "partition", "offset", "key", "value")
    records: list[tuple[Any, ...]] = []
    for part in sorted(folder.glob("*.parquet")):
        table = pq.read_table(part, columns=list(columns))
        records.extend(zip(*(table[name].to_pylist() for name in columns), strict=True))
    codec = CODECS[settings.protocol]

    def bare() -> int:
        events = 0
        for _, _, _, key, value in records:
            try:
                events += len(codec.decode(Message(key=key, value=value)))
            except DecodeError:
                continue
        return events

    def check() -> int:
        outcome = check_records(records, settings)
        assert outcome.read == len(records)
        return len(outcome.findings)

    best = {"bare": float("inf"), "check": float("inf")}
    found = events = 0
    for _ in range(repeat):
        for job, run in (("bare", bare), ("check", check)):
            gc.collect()
            started = time.process_time()
            got = run()
            best[job] = min(best[job], time.process_time() - started)
            events, found = (got, found) if job == "bare" else (events, got)
    messages, bare_s, check_s = len(records), best["bare"], best["check"]
    return "\n".join(
        [
            "| job (one process, CPU time) | messages | events | seconds | messages/s | ratio |",
            "|---|---:|---:|---:|---:|---:|",
            (
                f"| bare decode + count | {messages} | {events} | {bare_s:.2f} | "
                f"{messages / bare_s:,.0f} | 1.00× |"
            ),
            (
                f"| full rule catalog (check_records) | {messages} | {events} | {check_s:.2f} | "
                f"{messages / check_s:,.0f} | **{check_s / bare_s:.2f}×** |"
            ),
            "",
            f"Findings: {found}. Best of {repeat} runs each, alternating.",
        ]
    )


def _skew(folder: Path) -> str:
    """How much of the dump its largest Kafka partition holds (records, value bytes)."""
    records: dict[int, int] = {}
    sizes: dict[int, int] = {}
    for part in sorted(folder.glob("*.parquet")):
        meta = pq.read_metadata(part)
        table = pq.read_table(part, columns=["partition"])
        partition = table.column(0)[0].as_py() if table.num_rows else -1
        records[partition] = records.get(partition, 0) + meta.num_rows
        column = meta.schema.names.index("value")
        sizes[partition] = sizes.get(partition, 0) + sum(
            meta.row_group(g).column(column).total_uncompressed_size
            for g in range(meta.num_row_groups)
        )
    largest = max(sizes, key=lambda p: sizes[p])
    return (
        f"Largest Kafka partition: {largest}, {records[largest] / sum(records.values()):.1%} "
        f"of the records and {sizes[largest] / sum(sizes.values()):.1%} of the value bytes."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", help="dump folder (default: generate one)")
    parser.add_argument("--messages", type=int, default=20_000, help="records to generate")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--shuffle", action="store_true", help="force the shuffle path")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each job; best kept")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument(
        "--in-process", action="store_true", help="check_records against a bare decode, no Spark"
    )
    args = parser.parse_args()
    if args.in_process:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(args.input) if args.input else Path(scratch) / "dump"
            if not args.input:
                write_bench_dump(folder, args.messages)
            sys.stdout.write(measure_in_process(folder, repeat=max(1, args.repeat)) + "\n")
        return

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.input) if args.input else Path(scratch) / "dump"
        if not args.input:
            write_bench_dump(folder, args.messages)
        labels = read_labels(folder)
        spark = session(f"local[{args.cores}]")
        try:
            table = measure(spark, folder, shuffle=args.shuffle, repeat=max(1, args.repeat))
        finally:
            spark.stop()

    settings, workload = labels["settings"], labels.get("workload", {})
    flags = f"{' --shuffle' if args.shuffle else ''}"
    flags += f"{f' --repeat {args.repeat}' if args.repeat > 1 else ''}"
    how = (
        f"Measured with `python benchmarks/bench_stream_checker.py --input DUMP --write{flags}` "
        f"on a dump of {settings.get('protocol')} messages over {settings.get('partitions')} "
        f"partitions: workload {workload.get('name')}, {workload.get('messages')} messages, "
        f"seed {workload.get('seed')}, faults {len(labels.get('faults', []))} "
        "(`ticdc-conformance generate` with those arguments writes it)."
        if args.input
        else f"Measured with `python benchmarks/bench_stream_checker.py --messages "
        f"{args.messages} --write{flags}` (the script generates the dump: Open Protocol, "
        "6 partitions, workload shop, seed 1, no faults)."
    )
    machine = (
        f"Spark `local[{args.cores}]`, Python {platform.python_version()} on "
        f"{platform.machine()}, {platform.system().lower()}."
    )
    lines = ["# Spark stream checker throughput", "", how, "", table, machine]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
