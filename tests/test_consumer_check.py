"""The consumer check (suites/consumer): each perturbation of a correct consumer is found, at
its key, and nothing else is; snapshots in every format; Spark agrees with plain Python."""

from __future__ import annotations

import base64
import datetime as dt
import json
import xml.etree.ElementTree as ET
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.cli.main import main
from ticdc_conformance.reference.consumer import AppliedChange, AppliedDDL, Consumed
from ticdc_conformance.reference.decoded import DecodedEvent
from ticdc_conformance.suites.consumer.actual import Snapshot, read_applied_log, write_applied_log
from ticdc_conformance.suites.consumer.check import Tally, check_log, check_snapshot
from ticdc_conformance.suites.consumer.expected import (
    KEY_COLUMN,
    ExpectedState,
    read_expected_state,
    write_expected_state,
)
from ticdc_conformance.suites.consumer.job import consume_dump
from ticdc_conformance.suites.consumer.values import actual_text, same_value

STREAM = "stream.open.tiflow.replay"


@pytest.fixture(scope="module")
def consumed() -> Consumed:
    return consume_dump(STREAM, None, {})[1]


@pytest.fixture(scope="module")
def expected(consumed: Consumed, tmp_path_factory: pytest.TempPathFactory) -> ExpectedState:
    folder = tmp_path_factory.mktemp("expected")
    write_expected_state(consumed, "open", folder)
    return read_expected_state(folder)


def _rows(expected: ExpectedState) -> dict[str, list[dict[str, object]]]:
    return {
        f"{t.schema}.{t.table}": [
            {k: v for k, v in row.items() if k != KEY_COLUMN} for row in expected.rows(t)
        ]
        for t in expected.tables
    }


Tables = dict[str, list[dict[str, object]]]


def _write(folder: Path, tables: Tables, form: str) -> Path:
    folder.mkdir(exist_ok=True)
    for name, rows in tables.items():
        path = folder / f"{name}.{form}"
        if form == "parquet":
            pq.write_table(pa.Table.from_pylist(rows), path)
        elif form == "jsonl":
            path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        else:  # as PostgreSQL's COPY ... CSV FORCE_QUOTE * writes: NULL is an empty field
            lines = [",".join(rows[0])] + [",".join(map(_csv_field, row.values())) for row in rows]
            path.write_text("\n".join(lines) + "\n")
    return folder


def _csv_field(value: object) -> str:
    return "" if value is None else '"' + str(value).replace('"', '""') + '"'


def _findings(tally: Tally) -> dict[str, list[tuple[str, str | None]]]:
    return {
        rule: [(f["table"], f["key"]) for f in found]
        for rule, found in tally.found.items()
        if found
    }


def _snapshot_check(expected: ExpectedState, folder: Path) -> Tally:
    tally = Tally()
    check_snapshot(expected, Snapshot(str(folder)), tally)
    return tally


@pytest.mark.parametrize("form", ["parquet", "csv", "jsonl"])
def test_a_correct_snapshot_passes_in_every_format(
    expected: ExpectedState, tmp_path: Path, form: str
) -> None:
    tables: Tables = dict(_rows(expected))
    if form == "jsonl":  # the decoded-event value form: bytes as base64 objects
        tables = {
            name: [_as_value_form(expected, name, r) for r in rows]
            for name, rows in _rows(expected).items()
        }
    tally = _snapshot_check(expected, _write(tmp_path / "actual", tables, form))
    assert tally.counts == {}
    assert (
        tally.checked["rows"]
        == tally.checked["actual rows"]
        == sum(t.rows for t in expected.tables)
    )


def _as_value_form(expected: ExpectedState, name: str, row: dict[str, object]) -> dict[str, object]:
    [table] = [t for t in expected.tables if f"{t.schema}.{t.table}" == name]
    out: dict[str, object] = {}
    for column, value in row.items():
        kind, text = table.kinds[column], str(value)
        if value is None:
            out[column] = None
        elif kind == "bytes":
            out[column] = {"bytes": base64.b64encode(bytes.fromhex(text[2:])).decode()}
        elif kind == "decimal":
            out[column] = {"decimal": text}
        elif kind == "int":
            out[column] = int(text)
        elif kind == "float":
            out[column] = float(text)
        else:
            out[column] = text
    return out


PERTURBATIONS = ["row deleted", "value changed", "row added", "key held twice"]


@pytest.mark.parametrize("perturbation", PERTURBATIONS)
def test_each_snapshot_perturbation_is_found_at_its_key_and_nothing_else(
    expected: ExpectedState, tmp_path: Path, perturbation: str
) -> None:
    tables = _rows(expected)
    rows = tables["shop.customers"]
    victim = rows[7]
    key = f'["{victim["id"]}"]'
    if perturbation == "row deleted":
        rows.remove(victim)
        want = {"row-missing": [("shop.customers", key)]}
    elif perturbation == "value changed":
        victim["name"] = "someone else"
        want = {"row-differs": [("shop.customers", key)]}
    elif perturbation == "row added":
        rows.append({**victim, "id": "999999"})
        want = {"row-unexpected": [("shop.customers", '["999999"]')]}
    else:
        rows.append(dict(victim))
        want = {"row-unexpected": [("shop.customers", key)]}
    tally = _snapshot_check(expected, _write(tmp_path / "actual", tables, "parquet"))
    assert _findings(tally) == want
    if perturbation == "value changed":
        [finding] = tally.found["row-differs"]
        assert finding["columns"] == [
            {"column": "name", "expected": expected_name(expected, key), "actual": "someone else"}
        ]


def expected_name(expected: ExpectedState, key: str) -> str | None:
    [table] = [t for t in expected.tables if t.table == "customers"]
    [row] = [r for r in expected.rows(table) if r[KEY_COLUMN] == key]
    return row["name"]


def test_a_missing_table_misses_every_row(expected: ExpectedState, tmp_path: Path) -> None:
    tables = _rows(expected)
    del tables["shop.orders"]
    tally = _snapshot_check(expected, _write(tmp_path / "actual", tables, "parquet"))
    [orders] = [t for t in expected.tables if t.table == "orders"]
    assert dict(tally.counts) == {"row-missing": orders.rows}
    assert tally.found["row-missing"][0]["detail"] == "no such table"


def _applied(consumed: Consumed) -> list[tuple[DecodedEvent, object]]:
    return [
        (item.row if isinstance(item, AppliedChange) else item.ddl, item.source)
        for item in consumed.log
    ]


def _log_check(
    expected: ExpectedState, events: list[tuple[DecodedEvent, object]], tmp_path: Path
) -> Tally:
    path = tmp_path / "applied.jsonl"
    write_applied_log(events, path)  # type: ignore[arg-type]
    tally = Tally()
    check_log(expected, read_applied_log(path), tally, transactional=True)
    return tally


def test_the_reference_log_applied_as_is_passes(
    consumed: Consumed, expected: ExpectedState, tmp_path: Path
) -> None:
    tally = _log_check(expected, _applied(consumed), tmp_path)
    assert tally.counts == {}
    assert tally.checked["changes"] == sum(isinstance(i, AppliedChange) for i in consumed.log)


def _customer_changes(consumed: Consumed) -> list[int]:
    """Indexes of two changes of one customer key, the later one an UPDATE."""
    by_key: dict[object, list[int]] = {}
    for index, item in enumerate(consumed.log):
        if isinstance(item, AppliedChange) and item.row.table == "customers":
            by_key.setdefault(item.key, []).append(index)
    return next(indexes for indexes in by_key.values() if len(indexes) >= 2)


@pytest.mark.parametrize("perturbation", ["applied twice", "swapped", "lost", "before its DDL"])
def test_each_log_perturbation_is_found_at_its_key_and_nothing_else(
    consumed: Consumed, expected: ExpectedState, tmp_path: Path, perturbation: str
) -> None:
    events = _applied(consumed)
    first, second = _customer_changes(consumed)[:2]
    item = consumed.log[second]
    assert isinstance(item, AppliedChange)
    want: dict[str, list[tuple[str, str | None]]] = {}
    key = json.dumps([str(v) for v in item.key])
    if perturbation == "applied twice":
        events.insert(second + 1, events[second])
        want = {"change-applied-twice": [("shop.customers", key)]}
    elif perturbation == "swapped":
        events[first], events[second] = events[second], events[first]
        want_rules = {"key-order-broken"}
    elif perturbation == "lost":
        del events[second]
        want = {"change-lost": [("shop.customers", key)]}
    else:  # the DDL applied after the first row that follows it
        ddl = next(
            i
            for i, e in enumerate(consumed.log)
            if isinstance(e, AppliedDDL) and e.table_name == ("shop", "customers")
        )
        row = next(
            i
            for i, e in enumerate(consumed.log)
            if i > ddl and isinstance(e, AppliedChange) and e.table_name == ("shop", "customers")
        )
        events.insert(row, events.pop(ddl))
        want = {"change-before-ddl": [("shop.customers", None)]}
    tally = _log_check(expected, events, tmp_path)
    if perturbation == "swapped":
        assert set(tally.found) == want_rules | ({"transaction-split"} & set(tally.found))
        assert {f["key"] for f in tally.found["key-order-broken"]} == {key}
    else:
        assert _findings(tally) == want


VALUES = [
    # (kind, expected text, a consumer's value, same?)
    ("int", "18446744073709551615", Decimal(18446744073709551615), True),
    ("int", "1", True, True),
    ("int", "1", 2, False),
    ("float", "0.1", 0.10000000149011612, True),  # a FLOAT stored as real
    ("float", "0.1", 0.2, False),
    ("decimal", "1.50", Decimal("1.5"), True),
    ("decimal", "1.50", "1.51", False),
    ("bytes", "\\x00ff", b"\x00\xff", True),
    ("bytes", "\\x00ff", b"\x00", False),
    ("text", "Zoë", "Zoë".encode(), True),
    ("temporal", "2024-01-01 10:00:00.500", dt.datetime(2024, 1, 1, 10, 0, 0, 500000), True),  # noqa: DTZ001 - a DATETIME is naive
    ("temporal", "2024-01-01", dt.date(2024, 1, 1), True),
    ("temporal", "-12:30:00", dt.timedelta(hours=-12, minutes=-30), True),
    ("temporal", "2024-01-01 10:00:00", dt.datetime(2024, 1, 1, 10, 0, 1), False),  # noqa: DTZ001 - a DATETIME is naive
    ("json", '{"a": 1}', {"a": 1}, True),
    ("json", '{"a": 1}', {"a": 2}, False),
]


@pytest.mark.parametrize(("kind", "want", "got", "same"), VALUES)
def test_values_compare_by_meaning(kind: str, want: str, got: object, same: bool) -> None:
    assert same_value(want, actual_text(got), kind, None) is same


@pytest.mark.parametrize(
    ("zone", "got", "same"),
    [
        ("Asia/Shanghai", dt.datetime(2024, 1, 1, 2, tzinfo=dt.UTC), True),
        ("Asia/Shanghai", dt.datetime(2024, 1, 1, 10, tzinfo=dt.UTC), False),
        ("UTC", "2024-01-01T11:00:00+01:00", True),
        ("Asia/Shanghai", "2024-01-01 10:00:00.000", True),  # no zone: the wall clock
    ],
)
def test_a_timestamp_is_the_same_instant_in_its_zone(zone: str, got: object, same: bool) -> None:
    assert same_value("2024-01-01 10:00:00", actual_text(got), "timestamp", zone) is same


def test_check_consumer_exit_codes(
    expected: ExpectedState, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = _write(tmp_path / "good", _rows(expected), "parquet")
    assert main(["check-consumer", "--input", str(expected.folder), "--actual", str(good)]) == 0
    bad = _rows(expected)
    bad["shop.customers"].pop()
    bad_folder = _write(tmp_path / "bad", bad, "parquet")
    report = tmp_path / "report.json"
    args = [
        "check-consumer",
        "--input",
        STREAM,
        "--actual",
        str(bad_folder),
        "--report",
        str(report),
    ]
    forms = {kind: tmp_path / f"report.{kind}" for kind in ("md", "xml", "html")}
    args += ["--markdown", str(forms["md"]), "--junit", str(forms["xml"])]
    args += ["--html", str(forms["html"])]
    assert main(args) == 1
    assert json.loads(report.read_text())["errors"] == 1
    assert "FAIL: 1 error(s)" in capsys.readouterr().out
    # the other forms come from the same report (suites/report)
    assert "| [`row-missing`](docs/rules/consumer.md#row-missing) | error | 1 |" in (
        forms["md"].read_text(encoding="utf-8")
    )
    junit = ET.parse(forms["xml"]).getroot()  # noqa: S314 - our own file
    assert [c.get("name") for c in junit.iter("testcase") if c.find("failure") is not None] == [
        "row-missing"
    ]
    assert "shop.customers key" in forms["html"].read_text(encoding="utf-8")
    assert main(["check-consumer", "--input", STREAM]) == 2
    assert (
        main(["check-consumer", "--input", str(tmp_path / "nothing"), "--actual", str(good)]) == 2
    )


@pytest.mark.spark
@pytest.mark.parametrize("judged_on", ["driver", "executors"])
def test_spark_finds_what_plain_python_finds(
    expected: ExpectedState, tmp_path: Path, judged_on: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ticdc_conformance.suites.consumer import spark

    if judged_on == "executors":
        monkeypatch.setattr(spark, "_DRIVER_ROWS", 1)

    tables = _rows(expected)
    customers = tables["shop.customers"]
    customers[3]["name"] = "changed"
    customers.append(dict(customers[5]))
    del customers[9]
    del tables["shop.samples"]
    folder = _write(tmp_path / "actual", tables, "parquet")
    plain = _snapshot_check(expected, folder)
    on_spark = Tally()
    spark.check_snapshot(spark.session("local[2]"), expected, Snapshot(str(folder)), on_spark)
    assert on_spark.counts == plain.counts
    assert on_spark.checked == plain.checked
    for rule in ("row-differs", "row-unexpected"):
        assert sorted(map(str, on_spark.found[rule])) == sorted(map(str, plain.found[rule]))


def test_expected_state_writes_the_documented_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "expected"
    assert main(["expected-state", "--input", STREAM, "--out", str(out)]) == 0
    manifest = json.loads((out / "expected-state.json").read_text())
    assert manifest["format"] == "ticdc-conformance expected state"
    assert manifest["changes"] + manifest["ddls"] == pq.read_metadata(out / "log.parquet").num_rows
    for table in manifest["tables"]:
        assert pq.read_metadata(out / table["file"]).num_rows == table["rows"]
    assert f"{manifest['messages']} messages" in capsys.readouterr().out
    bad_key = ["expected-state", "--input", STREAM, "--out", str(out), "--handle-key", "nodot=a"]
    assert main(bad_key) == 2
    assert "schema.table=column" in capsys.readouterr().err


def test_expected_state_replaces_only_an_expected_state_and_leaves_nothing_half_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "expected"
    for _ in range(2):  # the second run replaces the first one's folder
        assert main(["expected-state", "--input", STREAM, "--out", str(out)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["expected"]  # no sibling left
    other = tmp_path / "notes"
    other.mkdir()
    (other / "keep.txt").write_text("mine\n")
    capsys.readouterr()
    assert main(["expected-state", "--input", STREAM, "--out", str(other)]) == 2
    assert "is not an expected-state folder" in capsys.readouterr().err
    assert [p.name for p in other.iterdir()] == ["keep.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["expected", "notes"]


STREAMS = fixtures.load_manifest()["streams"]


def test_the_streams_ticdc_may_write_carry_their_expected_state() -> None:
    carrying = {s["id"] for s in STREAMS if s["expected"] is not None}
    assert carrying == {s["id"] for s in STREAMS if s["fault"] in (None, "replay")}


@pytest.mark.parametrize(
    "stream",
    [s for s in STREAMS if s["expected"] is not None],
    ids=[s["id"] for s in STREAMS if s["expected"] is not None],
)
def test_a_stream_fixtures_expected_state_is_what_a_correct_consumer_ends_with(
    stream: dict[str, str], tmp_path: Path
) -> None:
    document = json.loads((fixtures.default_root() / stream["expected"]).read_text())
    assert document["format"] == "ticdc-conformance expected state"
    tables = {
        f"{t['schema']}.{t['table']}": [
            {k: v for k, v in row.items() if k != KEY_COLUMN} for row in t["values"]
        ]
        for t in document["tables"]
    }
    assert [len(rows) for rows in tables.values()] == [t["rows"] for t in document["tables"]]
    assert len(document["log"]) == document["changes"] + document["ddls"]
    folder = _write(tmp_path / "actual", {k: v for k, v in tables.items() if v}, "csv")
    for empty in (name for name, rows in tables.items() if not rows):
        (folder / f"{empty}.csv").write_text("\n")
    args = ["check-consumer", "--input", stream["id"], "--actual", str(folder)]
    assert main([*args, "--report", str(tmp_path / "report.json")]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["errors"] == 0
