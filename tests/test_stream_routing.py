"""check-stream over several topics: per-topic broadcasts, the default topic's watermarks and
``topic-routing`` (suites/stream/rules.py, catalog.py; docs/kafka.md "Topic routing")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from stream_helpers import renamed_dump, routed_dump, routes

from ticdc_conformance.generators.dump import read_dump, read_labels
from ticdc_conformance.generators.faults import FAULT_KINDS, inapplicable
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.reference import CODECS, DecodedRow, Message, TableInfo
from ticdc_conformance.reference.decoded import DecodedDDL
from ticdc_conformance.reference.routing import RoutingRule
from ticdc_conformance.suites.stream.catalog import Broadcast, missing_broadcasts
from ticdc_conformance.suites.stream.plain import Outcome, check_records
from ticdc_conformance.suites.stream.routing import TopicRouting, sources_of
from ticdc_conformance.suites.stream.rules import CheckSettings

Located = tuple[str, str, int, int | None, int | None]


def check(folder: Path, **overrides: object) -> Outcome:
    settings = CheckSettings.from_labels(read_labels(folder)["settings"], **overrides)
    records = ((r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(folder))
    return check_records(records, settings)


def located(outcome: Outcome) -> list[Located]:
    return sorted((f.rule, f.topic, f.partition, f.offset, f.commit_ts) for f in outcome.findings)


def labelled(folder: Path) -> list[Located]:
    labels = read_labels(folder)
    default = labels["settings"]["topic"]
    return sorted(
        (f["rule"], f.get("topic", default), f["partition"], f["offset"], f["commit_ts"])
        for fault in labels["faults"]
        for f in fault["findings"]
    )


@pytest.mark.parametrize("protocol", ["open", "canal-json", "debezium", "simple-json"])
def test_a_clean_multi_topic_dump_has_no_finding(protocol: str) -> None:
    folder = routed_dump(protocol)
    labels = read_labels(folder)["settings"]
    name = folder.name
    topics = {f"{name}.shop_orders": 2, f"{name}.people": 2, name: 2}
    assert labels["topics"] == topics
    assert {r.topic for r in read_dump(folder)} == set(topics)
    outcome = check(folder)
    assert outcome.findings == ()
    assert outcome.read == outcome.decoded > 0
    assert set(outcome.watermarks) == {(t, p) for t in topics for p in range(2)}


@pytest.mark.parametrize("protocol", ["open", "canal-json"])
def test_a_row_on_the_wrong_topic_is_found_where_labelled_and_nothing_else(protocol: str) -> None:
    folder = routed_dump(protocol, "wrong-topic")
    expected = labelled(folder)
    assert [f[0] for f in expected] == ["topic-routing"]
    assert located(check(folder)) == expected


def test_without_the_rules_the_misplaced_row_goes_unseen() -> None:
    folder = routed_dump("open", "wrong-topic")
    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    bare = CheckSettings(protocol=settings.protocol, partitions=2, topic=settings.topic)
    records = ((r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(folder))
    assert "topic-routing" not in {f.rule for f in check_records(records, bare).findings}


def _marks(*seen: tuple[str, int]) -> list[Broadcast]:
    return [
        Broadcast(kind="watermark-broadcast", topic=t, partition=p, commit_ts=7, ident="")
        for t, p in seen
    ]


@pytest.mark.parametrize(
    ("seen", "default", "missing"),
    [
        ((("a", 0), ("a", 1), ("d", 0), ("d", 1)), "d", []),
        ((("a", 0), ("a", 1)), "d", [("d", 0), ("d", 1)]),  # the default topic lacks it
        ((("a", 0), ("a", 1)), None, []),  # no rules: each topic on its own
        ((("a", 0), ("d", 0), ("d", 1)), "d", [("a", 1)]),
    ],
)
def test_every_watermark_is_owed_to_the_default_topic(
    seen: tuple[tuple[str, int], ...], default: str | None, missing: list[tuple[str, int]]
) -> None:
    found = missing_broadcasts(_marks(*seen), {"a": 2, "d": 2}, default)
    assert sorted((f.topic, f.partition) for f in found) == missing


def test_wrong_topic_needs_routing_rules_and_no_simple() -> None:
    assert inapplicable("wrong-topic", StreamSettings()) is not None
    routed = StreamSettings(
        routes=CheckSettings.from_labels(read_labels(routed_dump("open"))["settings"]).routes
    )
    assert inapplicable("wrong-topic", routed) is None
    assert inapplicable("wrong-topic", StreamSettings(protocol="simple-json", routes=routed.routes))


def _spark_check(spark: Any, folder: Path) -> tuple[Any, list[Located]]:
    """The Spark check of a dump with its labels' settings, and its findings' coordinates."""
    from ticdc_conformance.suites.stream.spark import check_dump

    settings = CheckSettings.from_labels(read_labels(folder)["settings"])
    result = check_dump(spark, [str(folder)], settings, samples=100)
    samples = sorted(
        (rule, s["topic"], s["partition"], s["offset"], s["commit_ts"])
        for rule, found in result.samples.items()
        for s in found
    )
    return result, samples


@pytest.mark.spark
def test_spark_finds_what_the_plain_check_finds_over_several_topics(spark: Any) -> None:
    faulty = routed_dump("open", "wrong-topic")  # its own rules name its own topics
    result, samples = _spark_check(spark, faulty)
    assert samples == labelled(faulty)
    assert {r: n for r, n in result.counts.items() if n} == {"topic-routing": 1}
    assert result.read == result.decoded == result.records
    assert {w["topic"] for w in result.watermarks} == {r.topic for r in read_dump(faulty)}


ROUTER_SETTINGS = CheckSettings(
    protocol="open",
    topic="cdc",
    routes=(RoutingRule(matcher=("shop.orders",), topic="orders"),),
)


def _ddl(table: str, query: str, ddl_type: int, before: str | None = None) -> DecodedDDL:
    pre = None if before is None else TableInfo(schema="shop", name=before, columns=())
    return DecodedDDL(
        commit_ts=1, schema="shop", table=table, query=query, ddl_type=ddl_type, pre_table_info=pre
    )


@pytest.mark.parametrize(
    ("topic", "ddl", "wrong"),
    [
        ("orders", _ddl("orders", "ALTER TABLE orders COMMENT 'x'", 17), False),
        ("cdc", _ddl("orders", "ALTER TABLE orders COMMENT 'x'", 17), True),
        ("cdc", _ddl("", "CREATE DATABASE shop", 1), False),  # no table: the default topic
        ("orders", _ddl("", "CREATE DATABASE shop", 1), True),
        ("cdc", _ddl("orders2", "RENAME TABLE orders TO orders2", 14), False),  # old name unsaid
        ("orders", _ddl("orders2", "RENAME TABLE orders TO orders2", 14, "orders"), False),
        ("cdc", _ddl("orders2", "RENAME TABLE orders TO orders2", 14, "orders"), True),
    ],
)
def test_a_ddl_belongs_on_the_topic_of_its_table_before_it(
    topic: str, ddl: DecodedDDL, wrong: bool
) -> None:
    routing = TopicRouting.of(ROUTER_SETTINGS, topic)
    assert routing is not None
    assert (routing.ddl(ddl) is not None) == wrong


RENAMING = (
    RoutingRule(matcher=("shop.orders",), topic="orders", target_table="{table}_v2"),
    RoutingRule(matcher=("shop.*",), target_schema="{schema}_bak"),
    RoutingRule(matcher=("logs.*",), target_schema="archive"),
    RoutingRule(matcher=("a.b_c",), target_table="{schema}_{table}"),
)


@pytest.mark.parametrize(
    ("target", "sources"),
    [
        (("shop", "orders_v2"), [("shop", "orders")]),
        (("shop_bak", "items"), [("shop_bak", "items"), ("shop", "items")]),
        (("shop", "items"), []),  # shop.items is renamed: nothing keeps this name
        (("other", "t"), [("other", "t")]),  # no renaming rule takes it
        (("shop_bak", "orders_v2"), [("shop_bak", "orders_v2"), ("shop", "orders_v2")]),
        (("a", "a_b_c"), [("a", "a_b_c"), ("a", "b_c")]),
        (("a_b", "c"), [("a_b", "c")]),  # a.b_c's target is a.a_b_c, not this
        (("archive", "t"), None),  # the rule drops the source schema: not told
        (("archives", "t"), [("archives", "t")]),
    ],
)
def test_a_target_name_maps_back_to_the_sources_whose_target_it_is(
    target: tuple[str, str], sources: list[tuple[str, str]] | None
) -> None:
    router = CheckSettings(protocol="open", topic="cdc", routes=RENAMING).router()
    assert router is not None
    found = sources_of(router, *target)
    assert found == (None if sources is None else tuple(sources))
    for source in found or ():
        assert router.target_of(*source) == target


def test_a_shared_target_name_may_be_on_the_topic_of_any_source() -> None:
    shared = (
        RoutingRule(matcher=("shop.old_orders",), topic="old", target_table="orders"),
        RoutingRule(matcher=("shop.orders",), topic="orders"),
    )
    routing = TopicRouting.of(CheckSettings(protocol="open", topic="cdc", routes=shared), "cdc")
    assert routing is not None
    assert routing.sources.of("shop", "orders") == (("shop", "orders"), ("shop", "old_orders"))
    assert routing.ddl(_ddl("orders", "ALTER TABLE orders COMMENT 'x'", 17)) is not None
    for topic in ("old", "orders"):
        here = TopicRouting(routing.router, topic)
        assert here.ddl(_ddl("orders", "ALTER TABLE orders COMMENT 'x'", 17)) is None


RENAMED_TABLES = {("shop", "orders_v2"), ("crm_shop", "customers"), ("shop", "shop_samples")}


def _tables(folder: Path) -> set[tuple[str, str]]:
    """The tables the rows of a dump name."""
    codec: Any = CODECS[read_labels(folder)["settings"]["protocol"]]
    return {
        (e.schema, e.table)
        for r in read_dump(folder)
        for e in codec.decode(Message(key=r.key, value=r.value))
        if isinstance(e, DecodedRow)
    }


@pytest.mark.parametrize("protocol", ["open", "canal-json", "debezium", "simple-json"])
def test_a_clean_renamed_dump_has_no_finding(protocol: str) -> None:
    """Topic and partition follow the source names the checker maps the targets back to."""
    folder = renamed_dump(protocol)
    assert _tables(folder) == RENAMED_TABLES
    assert len({r.topic for r in read_dump(folder)}) == 3
    outcome = check(folder)
    assert outcome.findings == ()
    assert outcome.read == outcome.decoded > 0


@pytest.mark.parametrize("protocol", ["open", "canal-json"])
@pytest.mark.parametrize("fault", ["wrong-topic", "wrong-partition"])
def test_faults_in_a_renamed_dump_are_found_where_labelled(protocol: str, fault: str) -> None:
    folder = renamed_dump(protocol, fault)
    expected = labelled(folder)
    assert [f[0] for f in expected] == [FAULT_KINDS[fault]]
    assert located(check(folder)) == expected


@pytest.mark.spark
def test_spark_checks_renamed_dumps_as_the_plain_check_does(spark: Any) -> None:
    for fault in (None, "wrong-topic", "wrong-partition"):
        folder = renamed_dump("open", fault)
        result, samples = _spark_check(spark, folder)
        assert samples == labelled(folder)
        counts = {r: n for r, n in result.counts.items() if n}
        assert counts == ({FAULT_KINDS[fault]: 1} if fault else {})
        assert result.read == result.decoded == result.records


def test_check_stream_reads_the_rules_from_the_labels(tmp_path: Path) -> None:
    from ticdc_conformance.cli.main import main

    folder = routed_dump("open", "wrong-topic")
    out = tmp_path / "report.json"
    assert (
        main(
            [
                "check-stream",
                "--input",
                str(folder),
                "--engine",
                "plain",
                "--quiet",
                "--report",
                str(out),
            ]
        )
        == 1
    )
    report = json.loads(out.read_text())
    assert [r["topic"] for r in report["settings"]["dispatchers"]] == [
        r.topic for r in routes(folder.name)
    ]
    counts = {rule["id"]: rule["count"] for rule in report["rules"] if rule["count"]}
    assert counts == {"topic-routing": 1}
