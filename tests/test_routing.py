"""TiCDC's topic routing (reference/routing.py): expressions, matchers, and where each event goes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference import ColumnInfo, DDLEvent, TableInfo
from ticdc_conformance.reference.dispatch import DispatchRule
from ticdc_conformance.reference.routing import (
    KAFKA_TOPIC_MAX_LENGTH,
    Router,
    RoutingRule,
    TableFilter,
    substitute_topic,
    topic_expression_problem,
)


@pytest.mark.parametrize(
    ("rule", "valid"),
    [
        ("", True),
        ("cdc-events", True),
        ("{schema}", True),
        ("{schema}_{table}", True),
        ("prefix.{schema}-mid.{table}_suffix", True),
        ("{table}", True),  # {schema} is optional in TiCDC's pattern
        ("hello_{table}", True),
        ("{table}_{schema}", False),
        ("{schema}{schema}", False),
        ("{db}", False),
        ("topic#1", False),
        ("{schema}/{table}", False),
        ("{Schema}", False),
    ],
)
def test_topic_expressions_ticdc_takes_and_refuses(rule: str, valid: bool) -> None:
    assert (topic_expression_problem(rule) is None) is valid
    if not valid:
        with pytest.raises(ValueError, match="neither a topic name"):
            RoutingRule(matcher=("*.*",), topic=rule)


@pytest.mark.parametrize(
    ("rule", "schema", "table", "topic"),
    [
        ("static-topic", "db", "t", "static-topic"),
        ("{schema}", "db", "t", "db"),
        ("cdc_{schema}_{table}", "db", "t", "cdc_db_t"),
        ("{schema}.{table}", "库", "表_1", "_.__1"),  # one '_' per non-ASCII character
        ("{schema}", "a b$c", "t", "a_b_c"),
        ("{schema}", ".", "t", "_"),
        ("{schema}{table}", ".", ".", "__"),
        ("x{schema}", "y" * 300, "t", "x" + "y" * (KAFKA_TOPIC_MAX_LENGTH - 1)),
    ],
)
def test_substitution(rule: str, schema: str, table: str, topic: str) -> None:
    assert substitute_topic(rule, schema, table) == topic


@given(st.text(), st.text())
def test_a_substituted_topic_is_always_a_kafka_topic_name(schema: str, table: str) -> None:
    topic = substitute_topic("{schema}_{table}", schema, table)
    assert re.fullmatch(r"[A-Za-z0-9._\-]{1,249}", topic)
    assert topic not in (".", "..")


@pytest.mark.parametrize(
    ("patterns", "schema", "table", "taken"),
    [
        (("*.*",), "db", "t", True),
        (("db.*",), "db", "anything", True),
        (("db.*",), "db2", "t", False),
        (("db.t?",), "db", "t1", True),
        (("db.t?",), "db", "t12", False),
        (("db.t[0-9]",), "db", "t7", True),
        (("db.t[!0-9]",), "db", "t7", False),
        (("db.t[!0-9]",), "db", "tx", True),
        (("*.*", "!db.secret"), "db", "secret", False),
        (("*.*", "!db.secret"), "db", "open", True),
        (("!db.secret", "*.*"), "db", "secret", True),  # the last matching pattern decides
        (("DB.T",), "db", "t", True),  # case-insensitive by default
        (("`my.db`.t",), "my.db", "t", True),
        (('"my.db".t',), "my", "db.t", False),
        (("db.t\\*",), "db", "t*", True),
        (("db.t\\*",), "db", "tx", False),
        (("/^orders_[0-9]+$/.*",), "orders_12", "x", True),
        (("/^orders_[0-9]+$/.*",), "orders_x", "x", False),
    ],
)
def test_table_filters(patterns: tuple[str, ...], schema: str, table: str, taken: bool) -> None:
    assert TableFilter(patterns).match(schema, table) is taken


def test_case_sensitive_filters_compare_exactly() -> None:
    assert not TableFilter(("DB.T",), case_sensitive=True).match("db", "t")
    assert TableFilter(("DB.T",), case_sensitive=True).match("DB", "T")


@pytest.mark.parametrize("pattern", ["db", "db.", ".t", "`db.t", "/db.t"])
def test_malformed_filters_are_refused(pattern: str) -> None:
    with pytest.raises(ValueError, match="table filter"):
        TableFilter((pattern,))


def _table(schema: str, name: str) -> TableInfo:
    return TableInfo(
        schema=schema, name=name, table_id=1, columns=(ColumnInfo(name="id", type="int"),)
    )


ROUTER = Router(
    "default",
    (
        RoutingRule(matcher=("shop.orders",), topic="orders-only"),
        RoutingRule(
            matcher=("shop.*",), topic="{schema}_{table}", partition=DispatchRule(partition="ts")
        ),
        RoutingRule(matcher=("logs.*",)),  # no topic: the default one
    ),
)


@pytest.mark.parametrize(
    ("schema", "table", "topic", "partition"),
    [
        ("shop", "orders", "orders-only", "default"),  # the first matching rule wins
        ("shop", "items", "shop_items", "ts"),
        ("logs", "x", "default", "default"),
        ("other", "x", "default", "default"),  # the implicit *.* rule
    ],
)
def test_rows_go_to_their_first_matching_rule(
    schema: str, table: str, topic: str, partition: str
) -> None:
    assert ROUTER.topic_of_table(schema, table) == topic
    assert ROUTER.rule_for(schema, table).partition.partition == partition


def _ddl(schema: str, table: str, ddl_type: int, before: TableInfo | None = None) -> DDLEvent:
    return DDLEvent(
        commit_ts=1,
        schema=schema,
        table=table,
        query="",
        ddl_type=ddl_type,
        table_info=_table(schema, table) if table else None,
        pre_table_info=before,
    )


def test_ddls_go_to_the_topic_of_the_table_they_name_before_the_ddl() -> None:
    assert ROUTER.topic_of_ddl(_ddl("shop", "items", 3)) == "shop_items"
    renamed = _ddl("shop", "items_v2", 14, before=_table("shop", "items"))
    assert ROUTER.topic_of_ddl(renamed) == "shop_items"  # the old name's topic
    assert ROUTER.topic_of_ddl(_ddl("shop", "", 1)) == "default"  # CREATE DATABASE


def test_watermarks_go_to_every_active_topic_and_the_default_one() -> None:
    active = [("shop", "orders"), ("shop", "items"), ("shop", "orders"), ("logs", "x")]
    assert ROUTER.watermark_topics(active) == ["orders-only", "shop_items", "default"]
    assert ROUTER.watermark_topics([]) == ["default"]


# ticdc pkg/routing/router.go (Route, substituteExpression) and pkg/config/sink.go
# (validateRoutingExpression): the first rule with a target wins, an empty target keeps the
# source name, placeholders are replaced as they are
TARGET_RULES = (
    RoutingRule(matcher=("shop.orders",), topic="orders"),  # no target: takes no part
    RoutingRule(matcher=("shop.*",), target_schema="{schema}_bak"),
    RoutingRule(matcher=("*.*",), target_table="{schema}-{table}"),
)


@pytest.mark.parametrize(
    ("schema", "table", "target"),
    [
        ("shop", "orders", ("shop_bak", "orders")),
        ("SHOP", "Orders", ("SHOP_bak", "Orders")),  # case-insensitive match, names kept
        ("crm", "a b", ("crm", "crm-a b")),  # nothing replaced, unlike topic names
    ],
)
def test_target_names(schema: str, table: str, target: tuple[str, str]) -> None:
    router = Router("cdc", TARGET_RULES)
    assert router.renames
    assert router.target_of(schema, table) == target
    assert Router("cdc", TARGET_RULES[:1]).target_of(schema, table) == (schema, table)


@pytest.mark.parametrize(
    ("expression", "valid"),
    [("", True), ("archive", True), ("{schema}_{table}", True), ("{db}", False), ("a}", False)],
)
def test_target_expressions(expression: str, valid: bool) -> None:
    if valid:
        RoutingRule(matcher=("*.*",), target_table=expression)
    else:
        with pytest.raises(ValueError, match="must contain only literal text"):
            RoutingRule(matcher=("*.*",), target_table=expression)


@pytest.mark.parametrize(
    "config",
    [
        {"matcher": ["a.*"], "partition": "default"},
        {"matcher": ["a.*", "!a.b"], "partition": "columns", "columns": ["id"], "topic": "t"},
        {"matcher": ["a.b"], "partition": "index-value", "index": "k", "target-schema": "x"},
    ],
)
def test_dispatcher_config_round_trips(config: dict[str, object]) -> None:
    assert RoutingRule.from_config(config).config() == config


def test_dispatcher_config_refuses_unknown_keys() -> None:
    with pytest.raises(ValueError, match="unknown dispatcher key"):
        RoutingRule.from_config({"matcher": ["a.b"], "topics": "x"})
