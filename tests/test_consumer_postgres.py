"""check-consumer over a PostgreSQL snapshot (suites/consumer/postgres.py, actual.py): a
throwaway server from pgserver; typed columns equal to the expected state pass, each
perturbation is found at its key and nothing else is, with the plain and the Spark engine."""

from __future__ import annotations

import datetime as dt
import importlib.util
import json
import os
import uuid
from decimal import Decimal
from pathlib import Path
from zoneinfo import ZoneInfo

import psycopg
import pytest
from postgres_helpers import new_database
from psycopg.types.json import Jsonb

from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.simulator import StreamSettings, Transaction, simulate
from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
)
from ticdc_conformance.reference.consumer import Consumed, Coordinates, consume
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.suites.consumer import postgres as pg
from ticdc_conformance.suites.consumer.expected import (
    ExpectedState,
    read_expected_state,
    write_expected_state,
)

ZONE = "Asia/Shanghai"
START = 1_767_225_600_000 << 18
TYPED = TableInfo(
    schema="kit",
    name="typed",
    table_id=201,
    schema_version=START >> 1,
    columns=(
        ColumnInfo(name="id", type="bigint", key="primary"),
        ColumnInfo(name="big", type="bigint", unsigned=True, nullable=False),
        ColumnInfo(name="small", type="int"),
        ColumnInfo(name="price", type="decimal", length=20, decimal=4),
        ColumnInfo(name="at", type="timestamp", decimal=6),
        ColumnInfo(name="made", type="datetime", decimal=3),
        ColumnInfo(name="data", type="blob"),
        ColumnInfo(name="doc", type="json"),
        ColumnInfo(name="note", type="text"),
    ),
)
DDL = """CREATE TABLE kit.typed (
    id bigint PRIMARY KEY, big numeric(20, 0) NOT NULL, small integer, price numeric(20, 4),
    at timestamptz, made timestamp(3), data bytea, doc jsonb, note text
)"""
ROWS = 6


def _image(i: int) -> tuple[object, ...]:
    return (
        i,
        2**64 - i,  # BIGINT UNSIGNED beyond int64
        -(i * 1000),
        DecimalValue(f"{i * 7}.{i:04d}"),
        TimestampValue(f"2026-01-0{i} 23:30:00.{i:06d}"),  # another day in UTC
        f"2026-02-0{i} 08:30:00.{i:03d}",
        None if i == 3 else bytes([0, i, 255]),
        None if i == 4 else json.dumps({"a": i, "b": [1, "Zoë"]}),
        f"O'Brien & <{i}>",
    )


@pytest.fixture(scope="module")
def consumed() -> Consumed:
    """A Simple JSON stream over two partitions (Simple names the TIMESTAMP zone)."""
    items: list[object] = []
    for i in range(1, ROWS + 1):
        ts = START + (i << 18)
        row = RowChangedEvent(commit_ts=ts, table=TYPED, op="insert", after=_image(i))  # type: ignore[arg-type]
        items.append(Transaction(commit_ts=ts, rows=(row,)))
    items.append(ResolvedEvent(commit_ts=START + (99 << 18)))
    settings = StreamSettings(protocol="simple-json", partitions=2, options=(("tz", ZONE),))
    log = simulate(items, settings, tables=[TYPED])  # type: ignore[arg-type]
    messages = [
        (Coordinates("typed", partition, offset), delivery.message)
        for partition, deliveries in enumerate(log.partitions)
        for offset, delivery in enumerate(deliveries)
    ]
    return consume("simple-json", messages)


@pytest.fixture(scope="module")
def expected(consumed: Consumed, tmp_path_factory: pytest.TempPathFactory) -> ExpectedState:
    folder = tmp_path_factory.mktemp("typed-expected")
    write_expected_state(consumed, "simple-json", folder)
    return read_expected_state(folder)


def _value(column: DecodedColumn) -> object:
    """A decoded value as psycopg writes it into the typed column."""
    value = column.value
    if isinstance(value, DecimalValue):
        return Decimal(value.text)
    if isinstance(value, TimestampValue):
        assert value.zone == ZONE
        return dt.datetime.fromisoformat(value.text).replace(tzinfo=ZoneInfo(value.zone))
    if column.name == "made" and isinstance(value, str):
        return dt.datetime.fromisoformat(value)
    if column.name == "doc" and isinstance(value, str):
        return Jsonb(json.loads(value))
    return value


def _load(server: str, consumed: Consumed) -> str:
    """A new database holding the expected rows in typed columns; its DSN."""
    dsn = new_database(server, f"typed_{uuid.uuid4().hex[:8]}")
    with psycopg.connect(dsn) as connection:
        connection.execute("CREATE SCHEMA kit")
        connection.execute(DDL)
        for image in consumed.tables[("kit", "typed")].values():
            names = ", ".join(column.name for column in image)
            marks = ", ".join(["%s"] * len(image))
            connection.execute(
                f"INSERT INTO kit.typed ({names}) VALUES ({marks})",  # noqa: S608 - fixed names
                [_value(column) for column in image],
            )
    return dsn


def _check(
    expected: ExpectedState, dsn: str, tmp_path: Path, engine: str
) -> tuple[int, dict[str, object]]:
    report = tmp_path / f"report-{engine}.json"
    args = ["check-consumer", "--input", str(expected.folder), "--actual", dsn]
    code = main([*args, "--engine", engine, "--report", str(report)])
    return code, json.loads(report.read_text())


def _findings(report: dict[str, object]) -> dict[str, list[tuple[str, str]]]:
    rules = report["rules"]
    assert isinstance(rules, list)
    return {
        rule["id"]: sorted(
            (f["key"], c["column"])
            for f in rule["samples"]
            for c in f.get("columns", [{"column": "-"}])
        )
        for rule in rules
        if rule["count"]
    }


def test_the_server_runs_unprivileged_on_127_0_0_1_and_is_gone_afterwards(tmp_path: Path) -> None:
    with pg.running_postgres(tmp_path / "server") as dsn:
        assert dsn.startswith("postgresql://postgres@127.0.0.1:")
        with psycopg.connect(dsn) as connection:
            fsync, data = connection.execute(
                "SELECT current_setting('fsync'), current_setting('data_directory')"
            ).fetchone() or (None, None)
        assert fsync == "off"
        if os.geteuid() == 0:
            assert Path(str(data)).stat().st_uid != 0
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn, connect_timeout=2)
    assert not Path(str(data)).exists()


def test_without_pgserver_the_error_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(importlib.util, "find_spec", lambda _: None)
    with (
        pytest.raises(pg.PostgresUnavailableError, match=r"ticdc-conformance\[consumer\]"),
        pg.running_postgres(tmp_path),
    ):
        pass


def test_the_typed_columns_are_what_the_test_claims(
    ticdc_postgres: str, consumed: Consumed
) -> None:
    dsn = _load(ticdc_postgres, consumed)
    with psycopg.connect(dsn) as connection:
        types: dict[str, str] = dict(
            connection.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_schema = 'kit' AND table_name = 'typed'"
            ).fetchall()
        )
        [(big, zone_day)] = connection.execute(
            "SELECT big::text, (at AT TIME ZONE 'UTC')::date::text FROM kit.typed WHERE id = 1"
        ).fetchall()
    assert types["big"] == types["price"] == "numeric"
    assert types["at"] == "timestamp with time zone"
    assert types["made"] == "timestamp without time zone"
    assert (types["data"], types["doc"], types["note"]) == ("bytea", "jsonb", "text")
    assert big == str(2**64 - 1)
    assert zone_day == "2026-01-01"  # 23:30 in Shanghai is 15:30 UTC


@pytest.mark.parametrize("engine", ["plain", pytest.param("spark", marks=pytest.mark.spark)])
def test_a_typed_postgres_snapshot_equal_to_the_expected_state_passes(
    ticdc_postgres: str, consumed: Consumed, expected: ExpectedState, tmp_path: Path, engine: str
) -> None:
    code, report = _check(expected, _load(ticdc_postgres, consumed), tmp_path, engine)
    assert (code, report["errors"]) == (0, 0)
    assert report["checked"] == {"rows": ROWS, "actual rows": ROWS}


PERTURBATIONS = [
    # (what, SQL, findings: rule → [(key, column)])
    ("row deleted", "DELETE FROM kit.typed WHERE id = 2", {"row-missing": [('["2"]', "-")]}),
    (
        "row added",
        "INSERT INTO kit.typed (id, big) VALUES (77, 1)",
        {"row-unexpected": [('["77"]', "-")]},
    ),
    (
        "unsigned off by one",
        "UPDATE kit.typed SET big = big - 1 WHERE id = 1",
        {"row-differs": [('["1"]', "big")]},
    ),
    (
        "decimal scale kept, value changed",
        "UPDATE kit.typed SET price = price + 0.0001 WHERE id = 3",
        {"row-differs": [('["3"]', "price")]},
    ),
    (
        "timestamp an hour off",
        "UPDATE kit.typed SET at = at + interval '1 hour' WHERE id = 4",
        {"row-differs": [('["4"]', "at")]},
    ),
    (
        "datetime a millisecond off",
        "UPDATE kit.typed SET made = made + interval '1 millisecond' WHERE id = 5",
        {"row-differs": [('["5"]', "made")]},
    ),
    (
        "bytes changed",
        "UPDATE kit.typed SET data = '\\x00'::bytea WHERE id = 6",
        {"row-differs": [('["6"]', "data")]},
    ),
    (
        "json member changed",
        "UPDATE kit.typed SET doc = doc || '{\"a\": 0}' WHERE id = 2",
        {"row-differs": [('["2"]', "doc")]},
    ),
    (
        "text changed",
        "UPDATE kit.typed SET note = 'someone' WHERE id = 1",
        {"row-differs": [('["1"]', "note")]},
    ),
]


@pytest.mark.parametrize(
    ("what", "change", "want"), PERTURBATIONS, ids=[p[0] for p in PERTURBATIONS]
)
def test_each_perturbation_is_found_at_its_key_and_nothing_else(
    ticdc_postgres: str,
    consumed: Consumed,
    expected: ExpectedState,
    tmp_path: Path,
    what: str,
    change: str,
    want: dict[str, list[tuple[str, str]]],
) -> None:
    dsn = _load(ticdc_postgres, consumed)
    with psycopg.connect(dsn) as connection:
        assert connection.execute(change).rowcount == 1, what
    code, report = _check(expected, dsn, tmp_path, "plain")
    assert code == 1
    assert _findings(report) == want


@pytest.mark.spark
def test_spark_finds_what_plain_python_finds_in_postgres(
    ticdc_postgres: str, consumed: Consumed, expected: ExpectedState, tmp_path: Path
) -> None:
    dsn = _load(ticdc_postgres, consumed)
    with psycopg.connect(dsn) as connection:
        for _, change, _ in PERTURBATIONS[:7]:  # two rows differ twice: one finding each
            connection.execute(change)
    plain = _check(expected, dsn, tmp_path, "plain")
    on_spark = _check(expected, dsn, tmp_path, "spark")
    assert plain[0] == on_spark[0] == 1
    assert _findings(on_spark[1]) == _findings(plain[1])
    assert on_spark[1]["checked"] == plain[1]["checked"]
