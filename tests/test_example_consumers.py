"""The example consumers (examples/consumers/) end to end: stream fixtures replayed into the
embedded broker, each consumer writing a throwaway PostgreSQL and its applied log, and
``check-consumer`` judging both.

The naive consumer's errors are predicted independently of the check: its duplicates from the
fixtures themselves (the replay fault's labelled coordinates, the DDL copies on every
partition), its ordering errors from the order its own applied log shows; the report must name
exactly those, at their keys and coordinates. The correct consumer passes."""

from __future__ import annotations

import json
import sys
import uuid
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest
from postgres_helpers import new_database

from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.dump import read_dump
from ticdc_conformance.kafka.pytest_fixtures import LoadedTopic
from ticdc_conformance.reference import DecodedDDL, DecodedRow, Message
from ticdc_conformance.reference.consumer import AppliedChange, Consumed
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.fold import handle_key_of
from ticdc_conformance.suites.consumer.actual import read_applied_log
from ticdc_conformance.suites.consumer.expected import key_text
from ticdc_conformance.suites.consumer.job import consume_dump
from ticdc_conformance.suites.consumer.values import value_text
from ticdc_conformance.suites.inputs import resolve_input

pytestmark = pytest.mark.kafka
pytest.importorskip("confluent_kafka")
pytest.importorskip("psycopg")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "consumers"))
import correct  # noqa: E402 - the example scripts, beside each other outside the package
import naive  # noqa: E402 - after the examples folder joins sys.path

REPLAY = "stream.open.tiflow.replay"
"""A replay after a restart: partition 2 delivers a message again (labelled)."""
BROADCASTS = "stream.simple-json.tiflow.clean"
"""Every BOOTSTRAP, DDL and watermark on each of three partitions; Simple's typed values."""
WITHOUT_WATERMARKS = "stream.debezium.tiflow.clean-without-watermarks"

Finding = tuple[str, str | None, str]
"""(table, key, "partition@offset")."""


def _sorted(findings: list[Finding]) -> list[Finding]:
    return sorted(findings, key=lambda f: (f[0], f[1] or "", f[2]))


def _at(source: object) -> str:
    """``topic[p]@o`` (or a ``Coordinates``) as ``p@o``: the topic's name differs from the dump's."""
    text = str(source)
    return text[text.rindex("[") + 1 :].replace("]", "")


def _run(
    consumer: Callable[..., object],
    stream: str,
    topic: LoadedTopic,
    ticdc_postgres: str,
    folder: Path,
) -> tuple[int, dict[str, object], Path]:
    """Run ``consumer`` over the loaded topic, then ``check-consumer``; its exit code and report."""
    dsn = new_database(ticdc_postgres, f"consumer_{uuid.uuid4().hex[:10]}")
    log = folder / "applied.jsonl"
    protocol = stream.split(".")[1]
    consumer(topic.config, topic.name, protocol, dsn, log)
    report = folder / "report.json"
    args = ["--actual", dsn, "--applied-log", str(log), "--report", str(report)]
    code = main(["check-consumer", "--input", stream, *args, "--samples", "100000"])
    return code, json.loads(report.read_text()), log


def _found(report: dict[str, object]) -> dict[str, list[Finding]]:
    rules = report["rules"]
    assert isinstance(rules, list)
    return {
        rule["id"]: _sorted([(s["table"], s["key"], _at(s["source"])) for s in rule["samples"]])
        for rule in rules
        if rule["count"]
    }


def _events(stream: str) -> dict[str, list[DecodedRow | DecodedDDL]]:
    """The fixture's rows and DDLs by ``partition@offset``, decoded per partition in order."""
    dump, labels = resolve_input(stream)
    protocol = labels["settings"]["protocol"]
    decoders: dict[int, PartitionDecoder] = defaultdict(lambda: PartitionDecoder(protocol))
    events: dict[str, list[DecodedRow | DecodedDDL]] = {}
    for r in sorted(read_dump(dump), key=lambda r: (r.partition, r.offset)):
        decoded = decoders[r.partition].decode(
            Message(key=r.key, value=r.value), message_index=r.offset
        )
        events[f"{r.partition}@{r.offset}"] = [
            e for e in decoded if isinstance(e, DecodedRow | DecodedDDL)
        ]
    return events


def _key(consumed: Consumed, row: DecodedRow) -> str:
    image = row.before if row.op == "delete" else row.after
    assert image is not None
    key = handle_key_of(image, consumed.handle_keys[(row.schema, row.table)])
    assert key is not None
    return key_text([value_text(v) for v in key])


def _predicted_duplicates(
    stream: str, consumed: Consumed, partitions: int
) -> tuple[set[Finding], dict[tuple[str, int, str], set[str]]]:
    """From the fixture alone: the rows of each labelled replay, and every DDL's copies."""
    events = _events(stream)
    _, labels = resolve_input(stream)
    replays = {
        f"{f['partition']}@{f['offset']}"
        for fault in labels["faults"]
        if fault["kind"] == "replay"
        for f in fault["findings"]
    }
    rows: set[Finding] = {
        (f"{e.schema}.{e.table}", _key(consumed, e), at)
        for at in replays
        for e in events[at]
        if isinstance(e, DecodedRow)
    }
    copies: dict[tuple[str, int, str], set[str]] = defaultdict(set)
    for at, found in events.items():
        for e in found:
            if isinstance(e, DecodedDDL):
                assert e.commit_ts is not None
                copies[(f"{e.schema}.{e.table}", e.commit_ts, e.query)].add(at)
    assert all(len(at) == partitions for at in copies.values())  # a DDL on every partition
    return rows, copies


def _ordering(log: Path, consumed: Consumed) -> tuple[list[Finding], list[Finding]]:
    """From the consumer's own applied log: changes applied out of commit-ts order per key,
    and rows and DDLs of a table applied out of commit-ts order."""
    rank = {"delete": 0, "update": 1, "insert": 2}
    by_key: dict[tuple[str, str], tuple[int, int]] = {}
    ddl_ts: dict[str, int] = {}
    row_ts: dict[str, int] = {}
    order_broken: list[Finding] = []
    before_ddl: list[Finding] = []
    for applied in read_applied_log(log):
        event = applied.event
        assert isinstance(event, DecodedRow | DecodedDDL)
        assert event.commit_ts is not None
        table, at = f"{event.schema}.{event.table}", _at(applied.source)
        if isinstance(event, DecodedDDL):
            if row_ts.get(table, -1) > event.commit_ts:
                before_ddl.append((table, None, at))
            ddl_ts[table] = max(ddl_ts.get(table, 0), event.commit_ts)
            continue
        key, order = _key(consumed, event), (event.commit_ts, rank[event.op])
        keys = {key}
        if event.op == "update" and event.before is not None:
            columns = consumed.handle_keys[(event.schema, event.table)]
            old = handle_key_of(event.before, columns)
            assert old is not None
            keys.add(key_text([value_text(v) for v in old]))
        for changed in sorted(keys):
            if order < by_key.get((table, changed), order):
                order_broken.append((table, changed, at))
            by_key[(table, changed)] = max(order, by_key.get((table, changed), order))
        if event.commit_ts < ddl_ts.get(table, -1):
            before_ddl.append((table, key, at))
        row_ts[table] = max(row_ts.get(table, 0), event.commit_ts)
    return _sorted(order_broken), _sorted(before_ddl)


@pytest.mark.parametrize("stream", [REPLAY, BROADCASTS])
def test_the_naive_consumer_is_caught_at_the_right_keys_and_coordinates(
    ticdc_kafka_topic: Callable[..., LoadedTopic], ticdc_postgres: str, tmp_path: Path, stream: str
) -> None:
    topic = ticdc_kafka_topic(stream)
    code, report, log = _run(naive.run, stream, topic, ticdc_postgres, tmp_path)
    assert code == 1
    found = _found(report)
    consumed = consume_dump(stream, None, {})[1]

    rows, copies = _predicted_duplicates(stream, consumed, topic.partitions)
    twice = found.pop("change-applied-twice")
    assert {f for f in twice if f[1] is not None} == rows
    assert len([f for f in twice if f[1] is not None]) == len(rows)
    ddls = [f for f in twice if f[1] is None]
    for (table, _, _), at in copies.items():  # all but the first copy to arrive, whichever
        again = [f for f in ddls if f[0] == table and f[2] in at]
        assert len(again) == topic.partitions - 1
    assert len(ddls) == len(copies) * (topic.partitions - 1)
    if stream == REPLAY:
        assert rows, "the replay delivers rows again"

    order_broken, before_ddl = _ordering(log, consumed)
    assert found.pop("key-order-broken", []) == order_broken
    assert found.pop("change-before-ddl", []) == before_ddl
    # each DDL is applied from the first partition to deliver it, before the other
    # partitions' rows of smaller commit ts
    assert before_ddl
    # upserts and deletes by key absorb the replay and the copies: the tables come out right
    assert found == {}


@pytest.mark.parametrize("stream", [REPLAY, BROADCASTS, WITHOUT_WATERMARKS])
def test_the_correct_consumer_passes_on_its_tables_and_its_applied_log(
    ticdc_kafka_topic: Callable[..., LoadedTopic], ticdc_postgres: str, tmp_path: Path, stream: str
) -> None:
    topic = ticdc_kafka_topic(stream)
    code, report, _ = _run(correct.run, stream, topic, ticdc_postgres, tmp_path)
    assert (code, report["errors"], _found(report)) == (0, 0, {})
    consumed = consume_dump(stream, None, {})[1]
    rows = sum(len(table) for table in consumed.tables.values())
    changes = sum(isinstance(item, AppliedChange) for item in consumed.log)
    assert report["checked"] == {"rows": rows, "actual rows": rows, "changes": changes}
    assert rows > 0


def test_the_examples_run_from_the_command_line(
    ticdc_kafka_topic: Callable[..., LoadedTopic],
    ticdc_postgres: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    topic = ticdc_kafka_topic(REPLAY)
    for example, says in ((naive, "as they came"), (correct, "redeliveries dropped")):
        dsn = new_database(ticdc_postgres, f"cli_{uuid.uuid4().hex[:10]}")
        args = ["--bootstrap-servers", topic.bootstrap_servers, "--topic", topic.name]
        log = tmp_path / f"{example.__name__}.jsonl"
        more = ["--protocol", "open", "--dsn", dsn, "--applied-log", str(log)]
        assert example.main([*args, *more]) == 0
        assert says in capsys.readouterr().out
        assert log.stat().st_size > 0
