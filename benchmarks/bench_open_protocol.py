"""Open Protocol codec throughput, as ratios to floors measured in the same run.

Decode floor: bare ``json.loads`` of the same key and value JSON entries (the framing split
excluded). Encode floor: ``json.dumps`` of the same parsed key and value objects. Datasets:

* ``craft-case1``: the Craft document's benchmark case 1, four 8-column UPDATEs in one message;
* ``wide-batch``: 16 UPDATEs of a 20-column table of mixed types (ints, unsigned bigint,
  decimal, double, float, dates, timestamp, varchar with HTML characters, text, blob, binary),
  one message, as TiCDC batches them by default.

Usage: ``python benchmarks/bench_open_protocol.py [--quick] [--write]``; ``--write`` stores
the table in benchmarks/results/open_protocol.md.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import timeit
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    Message,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    open_protocol,
)
from ticdc_conformance.reference.forms import read_change_event

RESULTS = Path(__file__).resolve().parent / "results" / "open_protocol.md"


def craft_case1() -> list[RowChangedEvent]:
    text = (
        resources.files("ticdc_conformance.cli")
        .joinpath("examples", "craft-benchmark-case1.change.jsonl")
        .read_text()
    )
    return [read_change_event(json.loads(line)) for line in text.splitlines()]  # type: ignore[misc]


def wide_batch() -> list[RowChangedEvent]:
    kinds = [
        ("id", "bigint", {"key": "primary"}), ("u64", "bigint", {"unsigned": True}),
        ("i32", "int", {}), ("i8", "tinyint", {}), ("amount", "decimal", {"decimal": 2}),
        ("ratio", "double", {}), ("score", "float", {}), ("day", "date", {}),
        ("at", "datetime", {"decimal": 3}), ("ts", "timestamp", {}), ("name", "varchar", {}),
        ("title", "varchar", {}), ("code", "char", {}), ("body", "text", {}),
        ("payload", "blob", {}), ("hash", "binary", {}), ("flag", "bit", {"length": 8}),
        ("state", "enum", {"elements": ("a", "b")}), ("doc", "json", {}), ("note", "varchar", {}),
    ]  # fmt: skip
    table = TableInfo(
        schema="shop",
        name="orders",
        columns=tuple(ColumnInfo(name=n, type=t, **kw) for n, t, kw in kinds),  # type: ignore[arg-type]
    )

    def image(i: int) -> tuple[object, ...]:
        return (
            i, 2**64 - 1 - i, -i, 7, DecimalValue(f"{i}.25"), i / 3, 1.5, "2024-02-29",
            "2024-02-29 12:00:00.123", TimestampValue("2024-02-29 12:00:00", "UTC"),
            f"customer {i}", "<b>Tom & Jerry</b>", "CN", "long text " * 8, bytes(range(32)),
            b"\x89PNG\r\n\x1a\n", 5, 1, '{"k": [1, 2]}', None,
        )  # fmt: skip

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


def entries(message: Message) -> list[bytes]:
    """The JSON documents inside the frame (§2.1): the floor parses exactly these."""
    out = []
    for data, start in ((message.key or b"", 8), (message.value or b"", 0)):
        position = start
        while position < len(data):
            size = int.from_bytes(data[position : position + 8], "big")
            out.append(data[position + 8 : position + 8 + size])
            position += 8 + size
    return [e for e in out if e]


def per_call(function: Callable[[], object], repeat: int, budget: float) -> float:
    """Median seconds per call over ``repeat`` runs of about ``budget`` seconds each."""
    number = max(1, int(budget / max(timeit.timeit(function, number=3) / 3, 1e-9)))
    return statistics.median(timeit.repeat(function, number=number, repeat=repeat)) / number


def measure(
    name: str, events: list[RowChangedEvent], repeat: int, budget: float
) -> dict[str, object]:
    config = open_protocol.Config(profile="tiflow")
    [message] = open_protocol.encode(events, config)
    documents = entries(message)
    parsed = [json.loads(d) for d in documents]
    decode = per_call(lambda: open_protocol.decode(message), repeat, budget)
    loads = per_call(lambda: [json.loads(d) for d in documents], repeat, budget)
    encode = per_call(lambda: open_protocol.encode(events, config), repeat, budget)
    dumps = per_call(lambda: [json.dumps(p, separators=(",", ":")) for p in parsed], repeat, budget)
    rows = len(events)
    return {
        "dataset": name, "rows": rows, "bytes": len(message.key or b"") + len(message.value or b""),
        "decode_us": decode * 1e6, "loads_us": loads * 1e6, "decode_ratio": decode / loads,
        "decode_rows_per_s": rows / decode,
        "encode_us": encode * 1e6, "dumps_us": dumps * 1e6, "encode_ratio": encode / dumps,
        "encode_rows_per_s": rows / encode,
    }  # fmt: skip


HEADER = (
    "| dataset | rows | bytes | decode µs | json.loads µs | decode ratio | decode rows/s "
    "| encode µs | json.dumps µs | encode ratio | encode rows/s |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def table(results: list[dict[str, object]]) -> str:
    rows = [
        f"| {r['dataset']} | {r['rows']} | {r['bytes']} | {r['decode_us']:.1f} "
        f"| {r['loads_us']:.1f} | **{r['decode_ratio']:.2f}×** | {r['decode_rows_per_s']:,.0f} "
        f"| {r['encode_us']:.1f} | {r['dumps_us']:.1f} | {r['encode_ratio']:.2f}× "
        f"| {r['encode_rows_per_s']:,.0f} |"
        for r in results
    ]
    return "\n".join([HEADER, *rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short runs, for a smoke test")
    parser.add_argument("--write", action="store_true", help=f"store the table in {RESULTS.name}")
    args = parser.parse_args()
    repeat, budget = (3, 0.02) if args.quick else (7, 0.3)
    results = [measure("craft-case1", craft_case1(), repeat, budget),
               measure("wide-batch", wide_batch(), repeat, budget)]  # fmt: skip
    machine = f"Python {platform.python_version()} on {platform.machine()}, {sys.platform}"
    report = f"{table(results)}\n\nMedian of {repeat} runs each; {machine}.\n"
    print(report)
    if args.write:
        RESULTS.write_text(
            "# Open Protocol codec throughput\n\n"
            "Measured with `python benchmarks/bench_open_protocol.py --write` (profile tiflow).\n"
            "Ratios compare with floors measured in the same run: bare `json.loads` of the same\n"
            "JSON entries (decode) and `json.dumps` of the same parsed objects (encode).\n\n"
            + report
        )


if __name__ == "__main__":
    main()
