"""Craft codec throughput, as ratios to floors measured in the same run.

Floors: a bare loop that only walks the same message's varints and strings — every count,
length, size, term id, type code and flag the decoder reads, and every term and value payload,
copied out as bytes — reading them (decode floor), or writing the same numbers as uvarints and
the same strings into a fresh buffer (encode floor). Datasets:

* ``craft-case1``: the Craft document's benchmark case 1, four 8-column UPDATEs in one message
  (997 bytes, ground truth §8);
* ``wide-batch``: the Open Protocol benchmark's 16 UPDATEs of a 20-column mixed-type table.

Usage: ``python benchmarks/bench_craft.py [--quick] [--write]``; ``--write`` stores the table
in benchmarks/results/craft.md.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the scripts share harness.py; under PYTHONSAFEPATH (as tox runs) the folder is not on
# the path by itself
sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import paired, run

from ticdc_conformance.reference import RowChangedEvent, craft
from ticdc_conformance.reference.craft import primitives

RESULTS = Path(__file__).resolve().parent / "results" / "craft.md"


def varint_offsets(value: bytes) -> tuple[list[int], list[tuple[int, int]]]:
    """Where each varint of the message starts, in the order the decoder reads them (§3.2),
    and where each string (term, non-null value payload) starts and ends."""
    offsets: list[int] = []
    spans: list[tuple[int, int]] = []

    def strings(position: int, sizes: list[int]) -> int:
        for size in sizes:
            spans.append((position, position + size))
            position += size
        return position

    def read(position: int) -> tuple[int, int]:
        offsets.append(position)
        return primitives.read_uvarint(value, position)

    def chunk(position: int, count: int) -> tuple[list[int], int]:
        values = []
        for _ in range(count):
            number, position = read(position)
            values.append(number)
        return values, position

    _, position = read(0)
    tables, tables_start = primitives.read_size_tables(value, position)
    _, trailer = primitives.read_uvarint_reversed(value, len(value))  # read backwards, not counted
    position = tables_start
    while position < trailer:
        count, position = read(position)
        _, position = chunk(position, count)
    bodies = tables[1]
    _, position = chunk(1, 5 * len(bodies))  # ts, type, partition, schema, table per event
    for body_size in bodies:  # row events only: each body is one or two column groups
        end = position + body_size
        while position < end:
            columns, position = read(position + 1)  # after the group type byte
            _, position = chunk(position, 3 * columns)  # names, types, flags
            lengths, position = chunk(position, columns)
            position = strings(position, [n >> 1 for n in lengths if not n & 1])  # ZigZag
    count, position = read(position)
    lengths, position = chunk(position, count)
    if strings(position, lengths) != tables_start:
        raise AssertionError("the walk missed part of the message")
    return offsets, spans


def walk(value: bytes, offsets: list[int], spans: list[tuple[int, int]]) -> int:
    """Decode floor: read the varint at each offset and copy out each string, nothing else."""
    total = 0
    for start, end in spans:
        total += len(value[start:end])
    for start in offsets:
        position, result, shift = start, 0, 0
        while True:
            byte = value[position]
            position += 1
            result |= (byte & 0x7F) << shift
            if byte < 0x80:
                break
            shift += 7
        total += result
    return total


def write(numbers: list[int], strings: list[bytes]) -> bytearray:
    """Encode floor: write the same numbers as uvarints and the same strings, nothing else."""
    out = bytearray()
    for string in strings:
        out += string
    for number in numbers:
        rest = number
        while rest >= 0x80:
            out.append(rest & 0x7F | 0x80)
            rest >>= 7
        out.append(rest)
    return out


def measure(
    name: str, events: list[RowChangedEvent], repeat: int, budget: float
) -> dict[str, object]:
    [message] = craft.encode(events)
    value = message.value or b""
    offsets, spans = varint_offsets(value)
    numbers = [primitives.read_uvarint(value, p)[0] for p in offsets]
    strings = [value[start:end] for start, end in spans]
    decode, read_floor, decode_ratio = paired(
        lambda: craft.decode(message), lambda: walk(value, offsets, spans), repeat, budget
    )
    encode, write_floor, encode_ratio = paired(
        lambda: craft.encode(events), lambda: write(numbers, strings), repeat, budget
    )
    rows = len(events)
    return {
        "dataset": name,
        "rows": rows,
        "bytes": len(value),
        "varints": len(offsets),
        "strings": len(spans),
        "decode_us": decode * 1e6,
        "walk_us": read_floor * 1e6,
        "decode_ratio": decode_ratio,
        "decode_rows_per_s": rows / decode,
        "encode_us": encode * 1e6,
        "write_us": write_floor * 1e6,
        "encode_ratio": encode_ratio,
        "encode_rows_per_s": rows / encode,
    }


HEADER = (
    "| dataset | rows | bytes | varints | strings | decode µs | walk µs | decode ratio "
    "| decode rows/s | encode µs | write µs | encode ratio | encode rows/s |\n"
    "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
)


def table(results: list[dict[str, object]]) -> str:
    rows = [
        f"| {r['dataset']} | {r['rows']} | {r['bytes']} | {r['varints']} | {r['strings']} "
        f"| {r['decode_us']:.1f} "
        f"| {r['walk_us']:.1f} | **{r['decode_ratio']:.2f}×** | {r['decode_rows_per_s']:,.0f} "
        f"| {r['encode_us']:.1f} | {r['write_us']:.1f} | **{r['encode_ratio']:.2f}×** "
        f"| {r['encode_rows_per_s']:,.0f} |"
        for r in results
    ]
    return "\n".join([HEADER, *rows])


def main() -> None:
    run(
        __doc__,
        RESULTS,
        title="Craft codec throughput",
        how="Ratios compare with floors measured in the same run on the same message: a bare\n"
        "loop reading every varint the decoder reads and copying out every string (terms and\n"
        "value payloads) (decode), and one writing the same numbers as uvarints and the same\n"
        "strings (encode).",
        measure=measure,
        table=table,
    )


if __name__ == "__main__":
    main()
