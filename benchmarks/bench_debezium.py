"""Debezium codec throughput, as ratios to floors measured in the same run.

Decode floor: bare ``json.loads`` of the same key and value JSON documents. Encode floor:
``json.dumps`` of the same parsed key and value objects. Datasets, one message per event
(profile tiflow, schemas included, old values on):

* ``craft-case1``: the Craft document's benchmark case 1, four 8-column UPDATEs;
* ``wide-batch``: the Open Protocol benchmark's 16 UPDATEs of a 20-column mixed-type table.

Usage: ``python benchmarks/bench_debezium.py [--quick] [--write]``; ``--write`` stores the
table in benchmarks/results/debezium.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ticdc_conformance.reference import RowChangedEvent, debezium

# the scripts share harness.py; under PYTHONSAFEPATH (as tox runs) the folder is not on the
# path by itself
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import paired, run

RESULTS = Path(__file__).resolve().parent / "results" / "debezium.md"


def measure(
    name: str, events: list[RowChangedEvent], repeat: int, budget: float
) -> dict[str, object]:
    config = debezium.Config(profile="tiflow")
    messages = debezium.encode(events, config)
    documents = [d for m in messages for d in (m.key, m.value) if d]
    parsed = [json.loads(d) for d in documents]
    decode, loads, decode_ratio = paired(
        lambda: [debezium.decode(m) for m in messages],
        lambda: [json.loads(d) for d in documents],
        repeat,
        budget,
    )
    encode, dumps, encode_ratio = paired(
        lambda: debezium.encode(events, config),
        lambda: [json.dumps(p, separators=(",", ":")) for p in parsed],
        repeat,
        budget,
    )
    rows = len(events)
    return {
        "dataset": name,
        "rows": rows,
        "bytes": sum(map(len, documents)),
        "decode_us": decode * 1e6,
        "loads_us": loads * 1e6,
        "decode_ratio": decode_ratio,
        "decode_rows_per_s": rows / decode,
        "encode_us": encode * 1e6,
        "dumps_us": dumps * 1e6,
        "encode_ratio": encode_ratio,
        "encode_rows_per_s": rows / encode,
    }


HEADER = (
    "| dataset | rows | bytes | decode µs | json.loads µs | decode ratio | decode rows/s "
    "| encode µs | json.dumps µs | encode ratio | encode rows/s |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def table(results: list[dict[str, object]]) -> str:
    rows = [
        f"| {r['dataset']} | {r['rows']} | {r['bytes']} | {r['decode_us']:.1f} "
        f"| {r['loads_us']:.1f} | **{r['decode_ratio']:.2f}×** | {r['decode_rows_per_s']:,.0f} "
        f"| {r['encode_us']:.1f} | {r['dumps_us']:.1f} | **{r['encode_ratio']:.2f}×** "
        f"| {r['encode_rows_per_s']:,.0f} |"
        for r in results
    ]
    return "\n".join([HEADER, *rows])


def main() -> None:
    run(
        __doc__,
        RESULTS,
        title="Debezium codec throughput",
        how="Ratios compare with floors measured in the same run: bare `json.loads` of the same\n"
        "key and value documents (decode) and `json.dumps` of the same parsed objects (encode).",
        measure=measure,
        table=table,
    )


if __name__ == "__main__":
    main()
