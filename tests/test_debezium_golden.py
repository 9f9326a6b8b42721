"""The real-Debezium golden pair (ground truth §7.1): TiCDC's output for the same INSERT equals
what Debezium 2.4's MySQL connector wrote, apart from exactly the members TiCDC's own test
ignores (``payload.source``, ``payload.ts_ms``). Every other difference a consumer meets is
listed here by name, and the test fails if one appears that is not listed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from debezium_cases import GOLDEN_DIR, datatype_insert

from ticdc_conformance.reference import DecodedRow, Message, TimestampValue, debezium

# What TiCDC's DML source carries instead of Debezium's MySQL binlog coordinates (§5.2).
SOURCE_DIFFERENCES = {
    "/payload/source/connector": "connector is TiCDC, not mysql",
    "/payload/source/ts_ms": "source.ts_ms is the commit ts's physical time",
    "/payload/source/sequence": "no sequence member",
    "/payload/source/server_id": "binlog coordinates are dummies (server_id 0)",
    "/payload/source/file": "binlog coordinates are dummies (file empty)",
    "/payload/source/pos": "binlog coordinates are dummies (pos 0)",
    "/payload/source/thread": "binlog coordinates are dummies (thread 0)",
    "/payload/source/commit_ts": "TiDB member commit_ts added",
    "/payload/source/cluster_id": "TiDB member cluster_id added",
    "/payload/ts_ms": "payload.ts_ms is the encoder's clock",
}
IGNORED_BY_TICDC = ("/payload/source", "/payload/ts_ms")


def differences(left: object, right: object, path: str = "") -> set[str]:
    """JSON Pointers where two parsed documents differ (members missing on either side too)."""
    if isinstance(left, dict) and isinstance(right, dict):
        found: set[str] = set()
        for name in left.keys() | right.keys():
            at = f"{path}/{name}"
            if name not in left or name not in right:
                found.add(at)
            else:
                found |= differences(left[name], right[name], at)
        return found
    if isinstance(left, list) and isinstance(right, list) and len(left) == len(right):
        return set().union(
            *(
                differences(a, b, f"{path}/{i}")
                for i, (a, b) in enumerate(zip(left, right, strict=True))
            )
        )
    same = left == right and type(left) is type(right)
    return set() if same else {path}


def golden(shared: Path) -> tuple[object, object]:
    directory = shared / GOLDEN_DIR
    return (
        json.loads((directory / "datatype.dbz.key.json").read_text()),
        json.loads((directory / "datatype.dbz.json").read_text()),
    )


def encode(**options: object) -> tuple[object, object]:
    config = debezium.Config(cluster_id="dbserver1", **options)  # type: ignore[arg-type]
    [message] = debezium.encode([datatype_insert()], config)
    assert message.key is not None
    assert message.value is not None
    return json.loads(message.key), json.loads(message.value)


@pytest.mark.parametrize("profile", debezium.PROFILES)
@pytest.mark.parametrize("disable_schema", [False, True])
def test_equal_to_real_debezium_apart_from_what_ticdc_ignores(
    shared: Path, profile: str, disable_schema: bool
) -> None:
    key, value = encode(profile=profile, debezium_disable_schema=disable_schema)
    golden_key, golden_value = golden(shared)
    found = differences(golden_value, value)
    if disable_schema:
        assert "/schema" in found
        assert differences(golden_key, key) == {"/schema"}
        found.discard("/schema")
    else:
        assert key == golden_key
    # TiCDC's test ignores these members; here they must differ exactly as documented
    assert found == set(SOURCE_DIFFERENCES)
    assert not {f for f in found if not f.startswith(IGNORED_BY_TICDC)}


def test_tidb_extension_adds_documented_members_only(shared: Path) -> None:
    key, value = encode(profile="ticdc", enable_tidb_extension=True)
    golden_key, golden_value = golden(shared)
    found = differences(golden_value, value) - set(SOURCE_DIFFERENCES)
    columns = len(golden_value["payload"]["after"])  # type: ignore[index]
    tidb_types = {
        f"/schema/fields/{image}/fields/{i}/tidb_type" for image in (0, 1) for i in range(columns)
    }
    # new-arch declares commit_ts and cluster_id in the source schema (§5.6 item 1)
    declared = {"/schema/fields/2/fields"}
    assert found == tidb_types | declared
    assert differences(golden_key, key) == {"/schema/fields/0/tidb_type"}
    source_fields = value["schema"]["fields"][2]["fields"]  # type: ignore[index]
    assert [f["field"] for f in source_fields[-2:]] == ["commit_ts", "cluster_id"]
    after = value["schema"]["fields"][1]["fields"]  # type: ignore[index]
    tidb = {f["field"]: f["tidb_type"] for f in after}
    assert (tidb["col_bigint_unsigned"], tidb["col_varbinary"], tidb["col_blob"]) == (
        "bigint unsigned",
        "varbinary",
        "blob",
    )
    assert (tidb["col_decimal"], tidb["col_y"], tidb["col_bit_5"]) == ("decimal", "year", "bit")


def test_decoder_reads_the_real_debezium_message(shared: Path) -> None:
    directory = shared / GOLDEN_DIR
    message = Message(
        key=(directory / "datatype.dbz.key.json").read_bytes(),
        value=(directory / "datatype.dbz.json").read_bytes(),
    )
    [row] = debezium.decode(message)
    assert isinstance(row, DecodedRow)
    # Debezium lacks what TiCDC adds: reported as null, never guessed
    assert (row.commit_ts, row.cluster_id) == (None, None)
    assert (row.schema, row.table, row.op, row.before) == ("test", "foo", "insert", None)
    assert row.after is not None
    after = {c.name: c for c in row.after}
    assert [c.name for c in row.after if c.handle_key] == ["pk"]
    expected = {
        "col_d_2023": "2023-11-30",
        "col_d_1000": "1000-01-01",
        "col_d_9999": "9999-12-31",
        "col_d_0000": None,
        "col_dt": "2023-11-30 12:34:56",
        "col_dt_fsp_1": "2023-11-30 12:34:56.100",
        "col_dt_fsp_4": "2023-11-30 12:34:56.123500",
        "col_dt_0000": None,
        "col_t_fsp_6": "12:34:56.123456",
        "col_t_neg": "-12:34:56.123456",
        "col_ts_fsp_5": TimestampValue("2023-11-30 12:34:56.12346", "UTC"),
        "col_y": 2023,
        "col_bit_1": 1,
        "col_bit_60": 16,
        "col_enum": 1,
        "col_enum_invalid": 0,
        "col_set": 3,
        "col_set_invalid": 0,
        "col_json": '["foo"]',
        "col_float": 12345.123,
    }
    assert {name: after[name].value for name in expected} == expected
    # what the message cannot settle is kept as written and marked
    marked = {name: (c.value, c.ambiguity) for name, c in after.items() if c.ambiguity}
    assert marked["col_bigint_unsigned"] == (-1, "unsigned-unknown")
    assert marked["col_decimal"] == (12345.12345, "double-or-decimal")
    assert marked["col_varbinary"] == ("Zm9v", "binary-unknown")
    assert "col_int_unsigned" not in marked
