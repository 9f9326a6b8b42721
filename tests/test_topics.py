"""The simulator's topic routing (generators/_topics.py): rows, DDLs and watermarks per topic."""

from __future__ import annotations

from functools import cache

import pytest

from ticdc_conformance.generators.simulator import StreamSettings, TopicLog, simulate
from ticdc_conformance.generators.workload import SHOP_TABLES, shop_workload
from ticdc_conformance.reference import DecodedDDL, DecodedResolved, DecodedRow
from ticdc_conformance.reference.dispatch import DispatchRule, decoded_partition_of
from ticdc_conformance.reference.routing import RoutingRule

ORDERS_TOPIC = RoutingRule(
    matcher=("shop.orders",), topic="{schema}_{table}", partition=DispatchRule(partition="ts")
)
CUSTOMERS_TOPIC = RoutingRule(
    matcher=("shop.cust*",), topic="people", partition=DispatchRule(partition="index-value")
)
ROUTED = StreamSettings(partitions=2, routes=(ORDERS_TOPIC, CUSTOMERS_TOPIC))


@cache
def run(settings: StreamSettings, messages: int = 900) -> TopicLog:
    return simulate(shop_workload(3, ddl_every=40), settings, messages=messages)


def decoded(log: TopicLog, topic: str) -> list[list[object]]:
    codec = log.settings.codec
    return [
        [e for d in deliveries for e in codec.decode(d.message)] for deliveries in log.topics[topic]
    ]


def test_rows_go_to_their_tables_topic_with_their_rules_dispatcher() -> None:
    log = run(ROUTED)
    assert sorted(log.topics) == ["people", "shop_orders", "ticdc-conformance"]
    expected = {
        "shop_orders": ("orders", ORDERS_TOPIC.partition),
        "people": ("customers", CUSTOMERS_TOPIC.partition),
        "ticdc-conformance": ("samples", DispatchRule()),
    }
    for topic, (table, rule) in expected.items():
        rows = [
            (p, e)
            for p, events in enumerate(decoded(log, topic))
            for e in events
            if isinstance(e, DecodedRow)
        ]
        assert rows, topic
        assert {e.table for _, e in rows} == {table}
        assert all(decoded_partition_of(e, 2, rule, "tiflow") == p for p, e in rows)


def test_ddls_go_to_their_tables_topic_and_watermarks_to_every_active_topic() -> None:
    log = run(ROUTED)
    ddl_tables = {
        topic: {
            e.table for events in decoded(log, topic) for e in events if isinstance(e, DecodedDDL)
        }
        for topic in log.topics
    }
    assert ddl_tables["shop_orders"] <= {"orders"}
    assert ddl_tables["people"] <= {"customers"}
    assert set().union(*ddl_tables.values()) == {"orders", "customers", "samples"}
    marks = {
        topic: [
            [e.commit_ts for e in events if isinstance(e, DecodedResolved)]
            for events in decoded(log, topic)
        ]
        for topic in log.topics
    }
    default = marks["ticdc-conformance"][0]
    for topic, partitions in marks.items():
        assert all(p == partitions[0] for p in partitions), topic  # broadcast per topic
        # a topic gets the watermarks from its first table's first event on: a tail of the
        # default topic's
        assert partitions[0], topic
        assert default[-len(partitions[0]) :] == partitions[0], topic


def test_no_rules_is_one_topic() -> None:
    log = run(StreamSettings(partitions=2))
    assert list(log.topics) == ["ticdc-conformance"]
    assert {r.topic for r in log.records()} == {"ticdc-conformance"}


def test_watermark_goes_to_the_default_topic_alone_before_any_table_is_active() -> None:
    settings = StreamSettings(partitions=1, routes=(RoutingRule(matcher=("*.*",), topic="all"),))
    log = simulate(shop_workload(3), settings, messages=50)
    default = [d.kind for d in log.topics["ticdc-conformance"][0]]
    assert set(default) == {"resolved"}
    first_row = next(i for i, d in enumerate(log.topics["all"][0]) if d.kind == "rows")
    assert all(d.kind != "resolved" for d in log.topics["all"][0][:first_row])


def test_describe_lists_the_dispatchers_only_when_there_are_rules() -> None:
    assert "dispatchers" not in StreamSettings().describe()
    assert ROUTED.describe()["dispatchers"] == [
        {"matcher": ["shop.orders"], "partition": "ts", "topic": "{schema}_{table}"},
        {"matcher": ["shop.cust*"], "partition": "index-value", "topic": "people"},
    ]


# ticdc downstreamadapter/sink/kafka/sink.go: topic and partition from the source names;
# pkg/sink/codec/open/codec.go writes TableInfo.GetTargetSchemaName()/GetTargetTableName()
RENAMED = RoutingRule(
    matcher=("shop.orders",), topic="orders", target_schema="{schema}_bak", target_table="o"
)


def test_ticdc_target_names_rename_the_table_in_the_messages_not_its_topic() -> None:
    settings = StreamSettings(profile="ticdc", partitions=2, routes=(RENAMED,))
    log = simulate(shop_workload(3, ddl_every=40), settings, messages=600, tables=SHOP_TABLES)
    events = [e for p in decoded(log, "orders") for e in p if not isinstance(e, DecodedResolved)]
    assert events
    assert {(e.schema, e.table) for e in events} == {("shop_bak", "o")}  # type: ignore[attr-defined]
    ddls = [e for e in events if isinstance(e, DecodedDDL)]
    assert ddls
    assert all("`shop_bak`.`o`" in e.query for e in ddls)
    others = [e for p in decoded(log, "ticdc-conformance") for e in p if isinstance(e, DecodedRow)]
    assert {e.schema for e in others} == {"shop"}
    assert "orders" not in {e.table for e in others}


def test_tiflow_refuses_target_names() -> None:
    with pytest.raises(ValueError, match="profile tiflow has no such fields"):
        StreamSettings(profile="tiflow", routes=(RENAMED,))
