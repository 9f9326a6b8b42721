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

import sys
from pathlib import Path

from ticdc_conformance.reference import RowChangedEvent, debezium

# the scripts share harness.py; under PYTHONSAFEPATH (as tox runs) the folder is not on the
# path by itself
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import json_codec, json_codec_table, run

RESULTS = Path(__file__).resolve().parent / "results" / "debezium.md"


def measure(
    name: str, events: list[RowChangedEvent], repeat: int, budget: float
) -> dict[str, object]:
    config = debezium.Config(profile="tiflow")
    messages = debezium.encode(events, config)
    documents = [d for m in messages for d in (m.key, m.value) if d]
    return json_codec(
        name,
        len(events),
        documents,
        lambda: [debezium.decode(m) for m in messages],
        lambda: debezium.encode(events, config),
        size=sum(map(len, documents)),
        repeat=repeat,
        budget=budget,
    )


def main() -> None:
    run(
        __doc__,
        RESULTS,
        title="Debezium codec throughput",
        how="Ratios compare with floors measured in the same run: bare `json.loads` of the same\n"
        "key and value documents (decode) and `json.dumps` of the same parsed objects (encode).",
        measure=measure,
        table=json_codec_table,
    )


if __name__ == "__main__":
    main()
