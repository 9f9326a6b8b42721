"""The shipped ``facts`` cases carry TiCDC's own test facts (ground truth §7).

Each check reads the shipped files and recomputes the fact here, independently of the codec
that wrote them: Open framing is split by hand (§2.1), Debezium payloads are compared with the
numbers §7.1 lists, Simple DDL kinds with the table of ``test_simple_schema``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from test_debezium_golden import SOURCE_DIFFERENCES, differences, golden
from test_simple_schema import DDL_SEQUENCE, T1_JSON

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures.builder import data_folder
from ticdc_conformance.reference import CODECS, Message
from ticdc_conformance.suites import check_case, load_cases
from ticdc_conformance.suites.gate.adapters import reference_encoder

ROOT = fixtures.default_root()
MANIFEST = fixtures.load_manifest()
FACTS = [c for c in MANIFEST["cases"] if c["id"].split(".")[3] == "facts"]


def fixture(protocol: str, profile: str, name: str) -> dict[str, Any]:
    folder = data_folder(protocol)
    found: dict[str, Any] = MANIFEST["fixtures"][f"{folder}/{profile}.facts.{name}"]
    return found


def parts(entry: dict[str, Any]) -> tuple[bytes, bytes]:
    """A message's key and value bytes (empty when null)."""
    key, value = (
        b"" if entry[p] is None else (ROOT / entry[p]).read_bytes() for p in ("key", "value")
    )
    return key, value


def entries(data: bytes) -> list[bytes]:
    """Open framing (§2.1): 8-byte big-endian length, then that many bytes, repeated."""
    out = []
    while data:
        size = int.from_bytes(data[:8], "big")
        out.append(data[8 : 8 + size])
        data = data[8 + size :]
    return out


def open_rows_per_message(found: dict[str, Any]) -> list[int]:
    counts = []
    for message in found["messages"]:
        key, value = parts(message)
        assert key[:8] == (1).to_bytes(8, "big")
        keys, values = entries(key[8:]), entries(value)
        assert len(keys) == len(values)
        assert all(json.loads(k)["t"] == 1 for k in keys)
        counts.append(len(keys))
    return counts


def decoded(found: dict[str, Any]) -> list[dict[str, Any]]:
    text = (ROOT / found["decoded"]).read_text("utf-8")
    return [json.loads(line) for line in text.split("\n") if line]


def changes(found: dict[str, Any]) -> int:
    return len([line for line in (ROOT / found["change"]).read_text("utf-8").split("\n") if line])


def profiles(protocol: str) -> Sequence[str]:
    return CODECS[protocol].PROFILES


def test_every_facts_case_cites_the_catalog_and_ships_for_each_profile() -> None:
    assert FACTS
    for case in FACTS:
        assert case["spec"].startswith("docs/rules/"), case["id"]
        if case["protocol"] == "canal-json":  # its catalog page and the TiCDC test it rebuilds
            assert case["spec"].startswith("docs/rules/canal-json.md#"), case["id"]
            assert "pkg/sink/codec/canal/" in case["spec"], case["id"]
        assert case["tier"] in {"required", "recommended"}
    names = {(c["protocol"], c["id"].split(".")[4]) for c in FACTS}
    for protocol, name in names:
        shipped = {
            c["profile"]
            for c in FACTS
            if (c["protocol"], c["id"].split(".")[4]) == (protocol, name)
        }
        # only the new-arch facts and the 2020 batches are one profile's
        one = {"ticdc-": {"ticdc"}, "legacy-": {"tiflow"}}.get(name[: name.find("-") + 1])
        assert shipped == (one or set(profiles(protocol))), name


def test_facts_cases_stay_small() -> None:
    for name, found in MANIFEST["fixtures"].items():
        if ".facts." in name:
            size = sum((ROOT / path).stat().st_size for path in found["sha256"])
            assert size < 55_000, name


# --- Open ------------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", profiles("open"))
def test_open_max_message_bytes_188_is_the_exact_fit(profile: str) -> None:
    """TestMaxMessageBytes (§7.2): the row's size by the §2.2 formula is exactly 188."""
    found = fixture("open", profile, "max-message-bytes-188")
    assert found["options"] == {"max-message-bytes": "188"}
    [message] = found["messages"]
    key, value = parts(message)
    [key_json], [value_json] = entries(key[8:]), entries(value)
    assert json.loads(key_json) == {"ts": 424316552636792833, "scm": "test", "tbl": "t", "t": 1}
    assert (len(key_json), len(value_json)) == (54, 74)
    assert json.loads(value_json)["u"]["a"] == {"t": 15, "h": True, "f": 10, "v": "aa"}
    # len(key) + len(value) + 36 (record overhead) + 16 (two lengths) + 8 (version) (§2.2)
    assert len(key_json) + len(value_json) + 36 + 16 + 8 == 188
    assert len(key) + len(value) + 36 == 188


@pytest.mark.parametrize("profile", profiles("open"))
def test_open_max_message_bytes_187_must_be_refused(profile: str) -> None:
    found = fixture("open", profile, "max-message-bytes-187")
    assert found["options"] == {"max-message-bytes": "187"}
    assert found["messages"] == []
    assert found["decoded"] is None
    assert found["encode_error"]["category"] == "message-too-large"
    # the same row as the 188-byte case
    assert found["change"] == fixture("open", profile, "max-message-bytes-188")["change"]
    [case] = [c for c in FACTS if c["fixture"].endswith(f"{profile}.facts.max-message-bytes-187")]
    assert (case["direction"], case["comparison"]) == ("encode", "error")


def test_a_refused_encode_passes_only_an_encoder_that_refuses() -> None:
    [case] = load_cases(ids=["open.tiflow.encode.facts.max-message-bytes-187"])
    assert check_case(case, encoder=reference_encoder).status == "pass"

    def ignores_the_limit(protocol: str, profile: str, options: Any, events: Any) -> Any:
        del options
        return reference_encoder(protocol, profile, {}, events)

    outcome = check_case(case, encoder=ignores_the_limit)
    assert outcome.status == "fail"
    assert "message-too-large" in outcome.detail
    assert check_case(case).status == "skip"  # no encoder given


@pytest.mark.parametrize("profile", profiles("open"))
@pytest.mark.parametrize(
    ("name", "limit", "counts"),
    [
        ("max-batch-size-2", "2", [2, 2, 1]),
        ("max-batch-size-64", "64", [64, 6]),
    ],
)
def test_open_max_batch_size(profile: str, name: str, limit: str, counts: list[int]) -> None:
    """§7.2: max-batch-size 2, 5 rows -> 2, 2, 1; max-batch-size 64 (70 rows) -> 64, 6."""
    found = fixture("open", profile, name)
    assert found["options"] == {"max-batch-size": limit}
    assert open_rows_per_message(found) == counts
    assert changes(found) == sum(counts)


@pytest.mark.parametrize("profile", profiles("open"))
def test_open_max_message_bytes_256_keeps_every_message_within(profile: str) -> None:
    found = fixture("open", profile, "max-message-bytes-256")
    sizes = [len(k) + len(v) + 36 for k, v in map(parts, found["messages"])]
    assert sizes
    assert max(sizes) <= 256
    assert open_rows_per_message(found) == [1] * changes(found)  # two rows need 332 bytes


def test_ticdc_size_facts() -> None:
    """The new-arch encoder tests (§7.2) on test.t(a tinyint primary key, b int), (1, 123)."""
    only_a = fixture("open", "ticdc", "ticdc-handle-key-only-168")
    [row] = decoded(only_a)
    assert [c["name"] for c in row["after"]] == ["a"]
    assert row["handle_key_only"] is True
    [message] = only_a["messages"]
    assert sum(map(len, parts(message))) + 36 <= 168
    assert open_rows_per_message(fixture("open", "ticdc", "ticdc-multiple-message")) == [2, 1]
    assert open_rows_per_message(fixture("open", "ticdc", "ticdc-larger-than-batch-limit")) == [
        1,
        1,
    ]
    refused = fixture("open", "ticdc", "ticdc-message-too-large")
    assert (refused["options"], refused["messages"]) == ({"max-message-bytes": "100"}, [])


@pytest.mark.parametrize("profile", profiles("open"))
def test_open_binary_and_format_columns(profile: str) -> None:
    """TestVarBinaryCol and TestFormatCol (§7.2)."""
    [row] = decoded(fixture("open", profile, "varbinary-col"))
    values = {c["name"]: c["value"] for c in row["after"]}
    assert base64.b64decode(values["c"]["bytes"]) == bytes.fromhex("89504E470D0A1A0A")
    [row] = decoded(fixture("open", profile, "format-col"))
    values = {c["name"]: c["value"] for c in row["after"]}
    assert values["s"] == "测"
    assert base64.b64decode(values["b"]["bytes"]) == "测".encode()
    [message] = fixture("open", profile, "format-col")["messages"]
    [value_json] = entries(parts(message)[1])
    columns = json.loads(value_json)["u"]
    assert (columns["s"]["v"], columns["b"]["v"]) == ("测", "5rWL")  # BLOB as base64 (§2.5)


LEGACY = {
    # (kind, number): (commit ts, event kind) of what the batch holds, as §7.1 describes it
    ("ddl", 0): [(1, "ddl")],
    ("ddl", 1): [(1, "ddl"), (2, "ddl"), (3, "ddl")],
    ("row", 0): [(1, "row")],
    ("row", 1): [(1, "row"), (2, "row"), (3, "row"), (4, "row")],
    ("rts", 0): [(1, "resolved")],
    ("rts", 1): [(1, "resolved"), (2, "resolved"), (3, "resolved")],
    ("ddl", 2): [],
    ("row", 2): [],
    ("rts", 2): [],
}


@pytest.mark.parametrize(("kind", "number"), sorted(LEGACY), ids=str)
def test_legacy_batches(kind: str, number: int) -> None:
    """§7.1: batches in the 2020 form, decode-only (no change events), version header first."""
    found = fixture("open", "tiflow", f"legacy-batch-{kind}-{number}")
    assert found["change"] is None
    [message] = found["messages"]
    key, value = parts(message)
    assert key[:8] == (1).to_bytes(8, "big")
    keys = entries(key[8:])
    assert len(keys) == len(LEGACY[kind, number])
    if kind == "rts":
        assert value == bytes(8 * len(keys))  # one zero length per resolved key
    else:
        assert len(entries(value)) == len(keys)
    assert [(e["commit_ts"], e["kind"]) for e in decoded(found)] == LEGACY[kind, number]
    if (kind, number) == ("row", 1):
        assert json.loads(keys[3]) == {"ts": 4, "scm": "shop", "tbl": "items", "ptn": 6, "t": 1}
        assert decoded(found)[3]["partition_id"] == 6
    ids = [c["id"] for c in FACTS if c["fixture"].endswith(f"legacy-batch-{kind}-{number}")]
    assert ids == [f"open.tiflow.decode.facts.legacy-batch-{kind}-{number}"]


# --- batch_tester.go: Open and Craft ---------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "profile"), [(p, profile) for p in ("open", "craft") for profile in profiles(p)]
)
def test_batch_tester_cases(protocol: str, profile: str) -> None:
    """§7.2: each DML case is one message of its size (case 2, empty, is none); every DDL and
    resolved event is a message of its own."""
    for number, size in enumerate((1, 4, 0)):
        found = fixture(protocol, profile, f"batch-tester-dml-{number}")
        rows = decoded(found)
        assert len(found["messages"]) == (1 if size else 0)
        assert len(rows) == changes(found) == size
        assert all(r["op"] == "update" and r["before"] == r["after"] for r in rows)
        if protocol == "open" and size:
            assert open_rows_per_message(found) == [size]
    for name, size in (("ddl-0", 1), ("ddl-1", 3), ("resolved-0", 1), ("resolved-1", 3)):
        found = fixture(protocol, profile, f"batch-tester-{name}")
        assert len(found["messages"]) == len(decoded(found)) == changes(found) == size
    resolved = [
        e["commit_ts"] for e in decoded(fixture(protocol, profile, "batch-tester-resolved-1"))
    ]
    assert resolved == [424316594097225729, 424316594214141953, 424316594345213953]
    if protocol == "open":
        for message in fixture(protocol, profile, "batch-tester-resolved-1")["messages"]:
            assert parts(message)[1] == bytes(8)  # §2.1: a resolved value is 8 zero bytes


def test_craft_size_and_batch_limits() -> None:
    """TestCraftMaxMessageBytes / TestCraftMaxBatchSize (§7.2), fewer rows."""
    within = fixture("craft", "tiflow", "max-message-bytes-256")
    assert max(sum(map(len, parts(m))) + 36 for m in within["messages"]) <= 256
    batched = fixture("craft", "tiflow", "max-batch-size-64")
    per_message = [
        len(CODECS["craft"].decode(Message(key=None, value=parts(m)[1])))
        for m in batched["messages"]
    ]
    assert per_message == [64, 6]


# --- Debezium --------------------------------------------------------------------------------

# §7.1: what TiCDC writes for the datatype INSERT, as the ground truth lists it
DATATYPE_AFTER = {
    "col_d_2023": 19691,
    "col_d_1000": -354285,
    "col_d_9999": 2932896,
    "col_d_0000": None,
    "col_dt": 1701347696000,
    "col_dt_fsp_4": 1701347696123500,
    "col_dt_fsp_6": 1701347696123456,
    "col_dt_0000": None,
    "col_t": 45296000000,
    "col_t_fsp_1": 45296100000,
    "col_t_fsp_4": 45296123500,
    "col_t_fsp_6": 45296123456,
    "col_t_neg": -45296123456,
    "col_ts": "2023-11-30T12:34:56Z",
    "col_ts_fsp_1": "2023-11-30T12:34:56.1Z",
    "col_ts_fsp_5": "2023-11-30T12:34:56.12346Z",
    "col_ts_fsp_6": "2023-11-30T12:34:56.123456Z",
    "col_y": 2023,
    "col_bit_1": True,
    "col_bit_5": "EA==",
    "col_bit_60": "EAAAAAAAAAA=",
    "col_varbinary": "Zm9v",
    "col_blob": "Zm9v",
    "col_binary": base64.b64encode(b"foo" + bytes(97)).decode(),
    "col_decimal": 12345.12345,
    "col_numeric": 12345.12345,
    "col_double": 12345.12345,
    "col_float": 12345.123,
    "col_bigint_unsigned": -1,
    "col_enum": "a",
    "col_enum_invalid": "",
    "col_set": "a,b",
    "col_set_invalid": "",
    "col_json": '["foo"]',
}


def debezium_documents(found: dict[str, Any]) -> list[tuple[Any, Any]]:
    return [tuple(json.loads(p) for p in parts(m)) for m in found["messages"]]


@pytest.mark.parametrize("profile", profiles("debezium"))
@pytest.mark.parametrize("name", ["datatype-table", "datatype-table-disable-schema"])
def test_debezium_datatype_table_values(profile: str, name: str) -> None:
    found = fixture("debezium", profile, name)
    [(key, value)] = debezium_documents(found)
    assert key["payload"] == {"pk": 1}
    after = value["payload"]["after"]
    assert {k: after[k] for k in DATATYPE_AFTER} == DATATYPE_AFTER
    if name == "datatype-table":
        assert key["schema"]["name"] == "dbserver1.test.foo.Key"
    else:
        assert "schema" not in key
        assert "schema" not in value
    [row] = decoded(found)
    assert (row["op"], row["schema"], row["table"], row["before"]) == (
        "insert",
        "test",
        "foo",
        None,
    )


@pytest.mark.parametrize("profile", profiles("debezium"))
def test_debezium_datatype_table_equals_real_debezium(shared: Path, profile: str) -> None:
    """§7.1: apart from payload.source and payload.ts_ms, the shipped message is what Debezium
    2.4's MySQL connector wrote (the upstream file is read here, never shipped)."""
    [(key, value)] = debezium_documents(fixture("debezium", profile, "datatype-table"))
    golden_key, golden_value = golden(shared)
    assert key == golden_key
    assert differences(golden_value, value) == set(SOURCE_DIFFERENCES)


@pytest.mark.parametrize("profile", profiles("debezium"))
def test_debezium_codec_test_facts(profile: str) -> None:
    """codec_test (§7.2): test.table1's tiny rows, the DDLs and the checkpoint."""
    rows = debezium_documents(fixture("debezium", profile, "codec-test-rows-disable-schema"))
    assert [k["payload"] for k, _ in rows] == [{"tiny": 1}, {"tiny": 1}, {"tiny": 2}]
    payloads = [v["payload"] for _, v in rows]
    assert [(p["op"], p["before"], p["after"]) for p in payloads] == [
        ("c", None, {"tiny": 1}),
        ("u", {"tiny": 2}, {"tiny": 1}),
        ("d", {"tiny": 2}, None),
    ]
    assert {
        (p["source"]["commit_ts"], p["source"]["cluster_id"], p["source"]["ts_ms"])
        for p in payloads
    } == {(1, "test_cluster", 0)}
    with_schema = debezium_documents(fixture("debezium", profile, "codec-test-rows"))
    assert with_schema[0][0]["schema"]["name"] == "test_cluster.test.table1.Key"
    [(_, update)] = debezium_documents(
        fixture("debezium", profile, "codec-test-update-no-old-value")
    )
    assert "before" not in update["payload"]
    ddl = debezium_documents(fixture("debezium", profile, "codec-test-ddl"))
    assert [k["payload"] for k, _ in ddl] == [{"databaseName": "test"}] * 3
    changes_ = [v["payload"]["tableChanges"][0] for _, v in ddl]
    assert [(c["type"], c["id"]) for c in changes_] == [
        ("ALTER", '"test"."table2","test"."table1"'),
        ("CREATE", '"test"."table1"'),
        ("DROP", '"test"."table2"'),
    ]
    assert changes_[2]["table"] is None
    assert changes_[0]["table"]["primaryKeyColumnNames"] == ["id"]
    [(key, value)] = debezium_documents(fixture("debezium", profile, "codec-test-checkpoint"))
    assert key == {
        "payload": {},
        "schema": {
            "type": "struct",
            "name": "test_cluster.watermark.Key",
            "optional": False,
            "fields": [],
        },
    }
    source = value["payload"]["source"]
    assert (value["payload"]["op"], source["commit_ts"], source["db"], source["table"]) == (
        "m",
        3,
        "",
        "",
    )


# --- Simple ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("protocol", "profile"),
    [(p, profile) for p in ("simple-json", "simple-avro") for profile in profiles(p)],
)
def test_simple_ddl_sequence(protocol: str, profile: str) -> None:
    """TestEncodeDDLSequence (§4.5, §7.2): the DDL kinds, in order, as the tests pin them."""
    events = decoded(fixture(protocol, profile, "ddl-sequence"))
    assert [(e["ddl_kind"], e["query"]) for e in events] == [
        (kind, query) for query, _, kind in DDL_SEQUENCE
    ]


@pytest.mark.parametrize(
    ("protocol", "profile"),
    [(p, profile) for p in ("simple-json", "simple-avro") for profile in profiles(p)],
)
def test_simple_new_table_schema(protocol: str, profile: str) -> None:
    """TestNewTableSchema (§7.2): the CREATE TABLE and the BOOTSTRAP carry test.t1's schema."""
    found = fixture(protocol, profile, "new-table-schema")
    assert [m["role"] for m in found["messages"]] == ["bootstrap", "event", "event"]
    events = decoded(found)
    assert [e["kind"] for e in events] == ["bootstrap", "ddl", "row"]
    for event in events[:2]:
        info = event["table_info"]
        assert [i["name"] for i in info["indexes"]] == ["idx_name", "idx_age_email", "primary"]
        assert [(c["name"], c["type"], c["nullable"]) for c in info["columns"]] == [
            ("id", "int", False),
            ("name", "varchar", False),
            ("age", "int", True),
            ("email", "varchar", False),
        ]
    if protocol == "simple-json":
        for message in found["messages"][:2]:
            document = json.loads(parts(message)[1])
            assert document["tableSchema"] == json.loads(T1_JSON)


def test_documented_counts_match_the_manifest() -> None:
    """docs/conformance-suite.md states the group's counts; they come from the manifest."""
    counts = {p: sum(c["protocol"] == p for c in FACTS) for p in CODECS}
    names = {
        "open": "Open",
        "debezium": "Debezium",
        "craft": "Craft",
        "simple-json": "Simple JSON",
        "simple-avro": "Simple Avro",
        "canal-json": "Canal-JSON",
    }
    ordered = sorted(counts, key=lambda p: (-counts[p], list(names).index(p)))
    line = ", ".join(f"{counts[p]} {names[p]}" for p in ordered)
    docs = (Path(__file__).resolve().parents[1] / "docs" / "conformance-suite.md").read_text()
    assert f"Case counts of the group: {line}" in " ".join(docs.split())
    assert f"({len(FACTS)} in all;" in docs
