"""check-consumer's Spark state rules against a bare Spark full outer join of the same data.

The run:

1. a dump of ``--messages`` records (``generate``'s shop workload, Open Protocol, 3
   partitions), or ``--input DUMP``;
2. its expected state (``expected-state``: the reference consumer in plain Python), timed;
3. a perturbed copy of the expected tables, as a consumer's Parquet snapshot (no ``_key``):
   every 1000th row deleted, the next one's first non-key column changed, the next one written
   twice;
4. in one Spark session (``local[2]``), per round and keeping each job's best time:
   ``bare join``, the floor: per table, both Parquet datasets read and fully outer-joined on the
   handle-key columns, then counted; ``check-consumer``: ``suites.consumer.spark.check_snapshot``
   over the same files (text rendering, the join, the findings, counts and samples).

    python benchmarks/bench_consumer_check.py --messages 1000000 --repeat 3 --write
"""

from __future__ import annotations

import argparse
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pyspark

from ticdc_conformance.generators.generate import generate
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.suites.consumer import spark as consumer_spark
from ticdc_conformance.suites.consumer.actual import Snapshot
from ticdc_conformance.suites.consumer.check import Tally
from ticdc_conformance.suites.consumer.expected import (
    KEY_COLUMN,
    ExpectedState,
    is_expected_state,
    read_expected_state,
    write_expected_state,
)
from ticdc_conformance.suites.consumer.job import consume_dump

RESULTS = Path(__file__).resolve().parent / "results" / "consumer_check.md"


def perturb(expected: ExpectedState, out: Path) -> int:
    """Write the perturbed snapshot; return the findings it must produce."""
    out.mkdir(parents=True)
    findings = 0
    for table in expected.tables:
        data = pq.read_table(expected.folder / table.file).drop_columns([KEY_COLUMN]).to_pylist()
        changed = next((c for c in table.columns if c not in table.key), None)
        rows = []
        for index, row in enumerate(data):
            if index % 1000 == 0:
                findings += 1
                continue
            if index % 1000 == 1 and changed is not None:
                row[changed] = "perturbed"
                findings += 1
            rows.append(row)
            if index % 1000 == 2:
                rows.append(dict(row))
                findings += 1
        schema = pa.schema([(c, pa.string()) for c in table.columns])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), out / Path(table.file).name)
    return findings


def _expected_state(args: argparse.Namespace, out: Path, work: Path) -> str:
    """Generate (or take) the dump, write its expected state; say what was done."""
    dump = args.input
    started = time.perf_counter()
    if dump is None:
        dump = work / "dump"
        settings = StreamSettings(protocol="open", partitions=3)
        generate(settings, messages=args.messages, seed=1, faults=(), folder=dump)
    generated = time.perf_counter() - started
    started = time.perf_counter()
    protocol, consumed = consume_dump(str(dump), None, {})
    write_expected_state(consumed, protocol, out)
    return (
        f"Dump: {consumed.messages} messages ({generated:.1f} s to generate); expected state "
        f"(plain reference consumer): {len(consumed.log)} changes applied in "
        f"{time.perf_counter() - started:.1f} s"
    )


def _arguments(args: argparse.Namespace, *, kept: bool) -> str:
    """The command line that reproduces this run (folders by name only)."""
    source = f"--input {args.input.name} " if args.input else f"--messages {args.messages} "
    expected = f"--expected {args.expected.name} " if args.expected else ""
    return f"{'' if kept else source}{expected}--repeat {args.repeat} --write"


def best(job: Callable[[], object], repeat: int) -> float:
    """The least of ``repeat`` wall-clock times of ``job``."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        job()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    """Run the benchmark; print (and with --write, commit) the results table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=20_000)
    parser.add_argument("--input", type=Path, help="an existing dump instead of generating")
    parser.add_argument(
        "--expected",
        type=Path,
        help="an expected-state folder: used if it holds one, else written there and kept",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-consumer-"))
    try:
        folder = args.expected or work / "expected"
        kept = is_expected_state(folder)
        source = None if kept else _expected_state(args, folder, work)
        expected = read_expected_state(folder)
        if source is None:
            source = (
                f"An expected state written earlier (`expected-state`): a dump of "
                f"{expected.manifest['messages']} messages, {expected.manifest['changes']} "
                f"changes applied, {expected.manifest['ddls']} DDLs"
            )
        rows = sum(t.rows for t in expected.tables)
        planted = perturb(expected, work / "actual")
        spark = consumer_spark.session("local[2]")

        def bare() -> None:
            for table in expected.tables:
                wanted = spark.read.parquet(str(expected.folder / table.file))
                actual = spark.read.parquet(str(work / "actual" / Path(table.file).name))
                keys = [wanted[c] == actual[c] for c in table.key]
                joined = wanted.join(actual, keys[0] if len(keys) == 1 else keys, "full_outer")
                # every column of every row: a count would let Spark read the keys alone
                joined.write.format("noop").mode("overwrite").save()

        tallies: list[Tally] = []

        def check() -> None:
            tally = Tally(20)
            consumer_spark.check_snapshot(spark, expected, Snapshot(str(work / "actual")), tally)
            tallies.append(tally)

        bare()  # warm the session and the file cache once
        floor, measured = best(bare, args.repeat), best(check, args.repeat)
        found = sum(tallies[-1].counts.values())
        if found != planted:
            sys.stderr.write(f"the check found {found} findings, {planted} were planted\n")
            return 1
        lines = [
            "# check-consumer (Spark) against a bare full outer join",
            "",
            (
                f"Python {platform.python_version()}, PySpark {pyspark.__version__}, "
                f"{platform.machine()}, local[2]; best of {args.repeat}. "
                "Command: `python benchmarks/bench_consumer_check.py "
                f"{_arguments(args, kept=kept)}`."
            ),
            "",
            (
                f"{source}; {rows} rows. Perturbed copy: {planted} findings planted, "
                f"{found} found. The floor reads both datasets whole and joins them on the "
                "handle key (written to Spark's `noop` sink: a count would read the keys only)."
            ),
            "",
            "| job | seconds | ratio |",
            "|---|---:|---:|",
            f"| bare full outer join, every column | {floor:.2f} | 1.00 |",
            f"| check-consumer state rules | {measured:.2f} | {measured / floor:.2f} |",
            "",
        ]
        sys.stdout.write("\n".join(lines))
        if args.write:
            RESULTS.write_text("\n".join(lines), encoding="utf-8")
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
