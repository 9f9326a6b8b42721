"""Simple protocol decode throughput (JSON and Avro), as ratios to floors measured in the same run.

Floors, on the same message values: bare ``json.loads`` (Simple-JSON) and fastavro's
``schemaless_reader`` with the project's parsed schema and the reader options the codec
uses (Simple-Avro). Two decode paths are timed: a consumer's ``SimpleDecoder.feed`` of every
DML with its schema already known (values typed by the schema, the goal's row), and the
stateless ``decode`` (values left untyped). Datasets, one DML message per event:

* ``craft-case1``: the Craft document's benchmark case 1, four 8-column UPDATEs;
* ``wide-batch``: the Open Protocol benchmark's 16 UPDATEs of a 20-column mixed-type table.

Usage: ``python benchmarks/bench_simple.py [--quick] [--write]``; ``--write`` stores the
table in benchmarks/results/simple.md.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import cast

import fastavro

from ticdc_conformance.reference import Message, RowChangedEvent, simple_avro, simple_json
from ticdc_conformance.reference.simple import SimpleDecoder, _avro

# the scripts share harness.py; under PYTHONSAFEPATH (as tox runs) the folder is not on the
# path by itself
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import paired, run

RESULTS = Path(__file__).resolve().parent / "results" / "simple.md"


def typed(
    codec: ModuleType, events: list[RowChangedEvent], messages: list[Message]
) -> Callable[[], object]:
    """One consumer decoder that knows every table's schema, fed every DML message.

    Every table gets its BOOTSTRAP (case 1 has four tables): a DML of a table without one
    would only be held, never typed.
    """
    decoder: SimpleDecoder = codec.new_decoder()
    for table in {id(event.table): event.table for event in events}.values():
        decoder.feed(codec.encode_bootstrap(table))
    feed = decoder.feed
    return lambda: [feed(message) for message in messages]


def measure(
    name: str, events: list[RowChangedEvent], repeat: int, budget: float
) -> dict[str, object]:
    result: dict[str, object] = {"dataset": name, "rows": len(events)}
    json_messages = simple_json.encode(events)
    values = [m.value or b"" for m in json_messages]
    feed, floor, feed_ratio = paired(
        typed(simple_json, events, json_messages),
        lambda: [json.loads(v) for v in values],
        repeat,
        budget,
    )
    plain, _, plain_ratio = paired(
        lambda: [simple_json.decode(m) for m in json_messages],
        lambda: [json.loads(v) for v in values],
        repeat,
        budget,
    )
    result["json"] = (sum(map(len, values)), floor, feed, feed_ratio, plain, plain_ratio)
    avro_messages = simple_avro.encode(events)
    values = [m.value or b"" for m in avro_messages]
    parsed = _avro.schema()

    def reader() -> object:
        return [
            fastavro.schemaless_reader(
                io.BytesIO(v),
                parsed,
                None,
                return_record_name=True,
                handle_unicode_errors="surrogateescape",
            )
            for v in values
        ]

    feed, floor, feed_ratio = paired(
        typed(simple_avro, events, avro_messages), reader, repeat, budget
    )
    plain, _, plain_ratio = paired(
        lambda: [simple_avro.decode(m) for m in avro_messages], reader, repeat, budget
    )
    result["avro"] = (sum(map(len, values)), floor, feed, feed_ratio, plain, plain_ratio)
    return result


HEADER = (
    "| encoding | dataset | rows | bytes | floor µs | typed decode µs | typed ratio "
    "| typed rows/s | untyped decode µs | untyped ratio |\n"
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def table(results: list[dict[str, object]]) -> str:
    rows = []
    for encoding, floor_name in (("json", "json.loads"), ("avro", "schemaless_reader")):
        for r in results:
            measured = cast("tuple[int, float, float, float, float, float]", r[encoding])
            size, floor, feed, feed_ratio, plain, plain_ratio = measured
            count = cast("int", r["rows"])
            rows.append(
                f"| {encoding} ({floor_name}) | {r['dataset']} | {r['rows']} | {size} "
                f"| {floor * 1e6:.1f} | {feed * 1e6:.1f} | **{feed_ratio:.2f}×** "
                f"| {count / feed:,.0f} | {plain * 1e6:.1f} | **{plain_ratio:.2f}×** |"
            )
    return "\n".join([HEADER, *rows])


def main() -> None:
    run(
        __doc__,
        RESULTS,
        title="Simple protocol decode throughput",
        how="Ratios compare with floors measured in the same run on the same message values:\n"
        "bare `json.loads` (JSON) and fastavro's `schemaless_reader` with the same parsed schema\n"
        "(Avro). The typed decode is a consumer's `SimpleDecoder.feed` with the schema known.",
        measure=measure,
        table=table,
    )


if __name__ == "__main__":
    main()
