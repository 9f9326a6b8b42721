"""What the codec benchmarks share: the datasets, the timer, and the command line.

The scripts import this module from their own folder (they run as scripts, not as a package).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import timeit
from collections.abc import Callable
from pathlib import Path

from ticdc_conformance.fixtures import example_events
from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
)

Result = dict[str, object]


def craft_case1() -> list[RowChangedEvent]:
    events = example_events()["craft-benchmark-case1"]
    return [event for event in events if isinstance(event, RowChangedEvent)]


def wide_batch() -> list[RowChangedEvent]:
    kinds = [
        ("id", "bigint", {"key": "primary"}),
        ("u64", "bigint", {"unsigned": True}),
        ("i32", "int", {}),
        ("i8", "tinyint", {}),
        ("amount", "decimal", {"decimal": 2}),
        ("ratio", "double", {}),
        ("score", "float", {}),
        ("day", "date", {}),
        ("at", "datetime", {"decimal": 3}),
        ("ts", "timestamp", {}),
        ("name", "varchar", {}),
        ("title", "varchar", {}),
        ("code", "char", {}),
        ("body", "text", {}),
        ("payload", "blob", {}),
        ("hash", "binary", {}),
        ("flag", "bit", {"length": 8}),
        ("state", "enum", {"elements": ("a", "b")}),
        ("doc", "json", {}),
        ("note", "varchar", {}),
    ]
    table = TableInfo(
        schema="shop",
        name="orders",
        columns=tuple(ColumnInfo(name=n, type=t, **kw) for n, t, kw in kinds),  # type: ignore[arg-type]
    )

    def image(i: int) -> tuple[object, ...]:
        return (
            i,
            2**64 - 1 - i,
            -i,
            7,
            DecimalValue(f"{i}.25"),
            i / 3,
            1.5,
            "2024-02-29",
            "2024-02-29 12:00:00.123",
            TimestampValue("2024-02-29 12:00:00", "UTC"),
            f"customer {i}",
            "<b>Tom & Jerry</b>",
            "CN",
            "long text " * 8,
            bytes(range(32)),
            b"\x89PNG\r\n\x1a\n",
            5,
            1,
            '{"k": [1, 2]}',
            None,
        )

    return [
        RowChangedEvent(
            commit_ts=450_000_000_000_000_000 + i,
            table=table,
            op="update",
            before=image(i),  # type: ignore[arg-type]
            after=image(i + 1),  # type: ignore[arg-type]
        )
        for i in range(16)
    ]


def paired(
    function: Callable[[], object], floor: Callable[[], object], repeat: int, budget: float
) -> tuple[float, float, float]:
    """CPU seconds per call of ``function`` and of ``floor`` (best run of each), and their ratio.

    The two alternate, run by run, and each side counts its least disturbed run (as
    ``timeit`` advises): on a shared machine other jobs only ever add time, to either side.
    Each run's number of calls is sized from warm calls.
    """
    clock = time.process_time

    def number(f: Callable[[], object]) -> int:
        # one call first: a codec's first call builds what it keeps per schema (plans,
        # compiled readers), which timed here would size every run to one cold call
        f()
        return max(1, int(budget / max(timeit.timeit(f, clock, number=3) / 3, 1e-9)))

    n, m = number(function), number(floor)
    pairs = [
        (timeit.timeit(function, clock, number=n) / n, timeit.timeit(floor, clock, number=m) / m)
        for _ in range(repeat)
    ]
    best, best_floor = min(a for a, _ in pairs), min(b for _, b in pairs)
    return best, best_floor, best / best_floor


def json_codec(
    name: str,
    rows: int,
    documents: list[bytes],
    decode: Callable[[], object],
    encode: Callable[[], object],
    *,
    size: int,
    repeat: int,
    budget: float,
) -> Result:
    """A JSON codec's row: decode against ``json.loads`` of its ``documents``, encode against
    ``json.dumps`` of the same parsed objects (compact, as TiCDC writes)."""
    parsed = [json.loads(d) for d in documents]
    decode_s, loads, decode_ratio = paired(
        decode, lambda: [json.loads(d) for d in documents], repeat, budget
    )
    encode_s, dumps, encode_ratio = paired(
        encode, lambda: [json.dumps(p, separators=(",", ":")) for p in parsed], repeat, budget
    )
    return {
        "dataset": name,
        "rows": rows,
        "bytes": size,
        "decode_us": decode_s * 1e6,
        "loads_us": loads * 1e6,
        "decode_ratio": decode_ratio,
        "decode_rows_per_s": rows / decode_s,
        "encode_us": encode_s * 1e6,
        "dumps_us": dumps * 1e6,
        "encode_ratio": encode_ratio,
        "encode_rows_per_s": rows / encode_s,
    }


def json_codec_table(results: list[Result]) -> str:
    """The Markdown table of ``json_codec`` rows, ratios in bold."""
    rows = [
        f"| {r['dataset']} | {r['rows']} | {r['bytes']} | {r['decode_us']:.1f} "
        f"| {r['loads_us']:.1f} | **{r['decode_ratio']:.2f}×** | {r['decode_rows_per_s']:,.0f} "
        f"| {r['encode_us']:.1f} | {r['dumps_us']:.1f} | **{r['encode_ratio']:.2f}×** "
        f"| {r['encode_rows_per_s']:,.0f} |"
        for r in results
    ]
    header = (
        "| dataset | rows | bytes | decode µs | json.loads µs | decode ratio | decode rows/s "
        "| encode µs | json.dumps µs | encode ratio | encode rows/s |\n"
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    )
    return "\n".join([header, *rows])


def run(
    doc: str | None,
    results: Path,
    *,
    title: str,
    how: str,
    measure: Callable[[str, list[RowChangedEvent], int, float], Result],
    table: Callable[[list[Result]], str],
) -> None:
    """Measure both datasets, print the table, and with ``--write`` store it in ``results``."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke test")
    parser.add_argument("--write", action="store_true", help=f"store the table in {results.name}")
    parser.add_argument("--repeat", type=int, help="runs per measurement (default 200)")
    parser.add_argument("--budget", type=float, help="seconds per run (default 0.002)")
    args = parser.parse_args()
    # many short runs: some of them fall between other jobs' time slices on a busy machine
    repeat, budget = (20, 0.001) if args.quick else (200, 0.002)
    repeat, budget = args.repeat or repeat, args.budget or budget
    measured = [
        measure("craft-case1", craft_case1(), repeat, budget),
        measure("wide-batch", wide_batch(), repeat, budget),
    ]
    machine = f"Python {platform.python_version()} on {platform.machine()}, {sys.platform}"
    report = f"{table(measured)}\n\nBest of {repeat} alternating runs each; {machine}.\n"
    print(report)
    if args.write:
        script = Path(sys.argv[0]).name
        results.write_text(
            f"# {title}\n\nMeasured with `python benchmarks/{script} --write` "
            f"(profile tiflow).\n{how}\n\n{report}"
        )
