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

import sys
from pathlib import Path

from ticdc_conformance.reference import (
    Message,
    RowChangedEvent,
    open_protocol,
)

# the scripts share harness.py; under PYTHONSAFEPATH (as tox runs) the folder is not on the
# path by itself
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import json_codec, json_codec_table, run

RESULTS = Path(__file__).resolve().parent / "results" / "open_protocol.md"


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


def measure(
    name: str, events: list[RowChangedEvent], repeat: int, budget: float
) -> dict[str, object]:
    config = open_protocol.Config(profile="tiflow")
    [message] = open_protocol.encode(events, config)
    return json_codec(
        name,
        len(events),
        entries(message),
        lambda: open_protocol.decode(message),
        lambda: open_protocol.encode(events, config),
        size=len(message.key or b"") + len(message.value or b""),
        repeat=repeat,
        budget=budget,
    )


def main() -> None:
    run(
        __doc__,
        RESULTS,
        title="Open Protocol codec throughput",
        how="Ratios compare with floors measured in the same run: bare `json.loads` of the same\n"
        "JSON entries (decode) and `json.dumps` of the same parsed objects (encode).",
        measure=measure,
        table=json_codec_table,
    )


if __name__ == "__main__":
    main()
