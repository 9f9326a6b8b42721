"""The edge type cases: zero dates, DECIMAL(65,30), TIMESTAMP under three server time zones."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ticdc_conformance.fixtures import default_root, load_manifest
from ticdc_conformance.fixtures.builder._breadth import breadth_specs
from ticdc_conformance.reference import CODECS

MANIFEST = load_manifest(default_root())
CASES = {case["id"]: case for case in MANIFEST["cases"]}
SPECS = {spec.name: spec for spec in breadth_specs()}
_DIGITS = f"{'9' * 35}.{'9' * 30}"


def _decoded(protocol: str, name: str, profile: str = "tiflow") -> list[dict[str, Any]]:
    folder = "simple_json" if protocol == "simple-json" else protocol.replace("-", "_")
    path = default_root() / f"data/{folder}/{profile}.types.{name}.decoded.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


def _c_values(protocol: str, name: str) -> list[object]:
    """Column ``c`` of each row image, in order (inserts' after, then update, delete)."""
    values = []
    for event in _decoded(protocol, name):
        if event["kind"] != "row":
            continue
        image = event["after"] or event["before"]
        values += [column["value"] for column in image if column["name"] == "c"]
    return values


@pytest.mark.parametrize("name", sorted(SPECS))
def test_every_protocol_and_profile_it_applies_to_has_a_decode_and_an_encode_case(
    name: str,
) -> None:
    spec = SPECS[name]
    for protocol, codec in CODECS.items():
        expected = spec.protocols is None or protocol in spec.protocols
        for profile in codec.PROFILES:
            for direction in ("decode", "encode"):
                case_id = f"{protocol}.{profile}.{direction}.types.{name}"
                assert (case_id in CASES) is expected, case_id
                if expected:
                    assert CASES[case_id]["tier"] == "required"
                    assert CASES[case_id]["spec"].startswith("docs/rules/")


@pytest.mark.parametrize("protocol", ["open", "craft", "simple-json", "canal-json", "simple-avro"])
def test_zero_dates_are_text_where_the_protocol_writes_text(protocol: str) -> None:
    assert _c_values(protocol, "date-zero")[0] == "0000-00-00"
    assert _c_values(protocol, "datetime-zero")[0] == "0000-00-00 00:00:00"


def test_debezium_has_no_day_count_for_a_zero_date_and_writes_null() -> None:
    assert _c_values("debezium", "date-zero")[0] is None
    assert _c_values("debezium", "datetime-zero")[0] is None


@pytest.mark.parametrize("protocol", ["open", "craft", "simple-json", "canal-json", "simple-avro"])
def test_decimal_65_30_keeps_every_digit_in_the_text_protocols(protocol: str) -> None:
    values = [v["decimal"] for v in _c_values(protocol, "decimal-65-30")]  # type: ignore[index]
    assert values[:2] == [_DIGITS, f"-{_DIGITS}"]
    assert values[2] == f"0.{'0' * 29}1"


def test_debezium_writes_decimal_65_30_as_a_double() -> None:
    assert _c_values("debezium", "decimal-65-30")[:2] == [1e35, -1e35]


@pytest.mark.parametrize(
    ("name", "utc"),
    [
        # the wall time as UTC falls in daylight time, which holds for the instant: -04:00
        ("timestamp-tz-new-york", "2026-11-01 05:30:00.250"),
        # the wall time as UTC falls after the change to standard time: +09:30
        ("timestamp-tz-adelaide", "2026-04-04 17:00:00.000"),
        ("timestamp-tz-kolkata", "2026-01-01 21:34:05.500"),
    ],
)
def test_debezium_renders_the_server_zone_s_wall_time_in_utc_as_go_resolves_it(
    name: str, utc: str
) -> None:
    first = _c_values("debezium", name)[0]
    assert first == {"timestamp": utc, "zone": "UTC"}


@pytest.mark.parametrize("protocol", ["simple-json", "simple-avro"])
@pytest.mark.parametrize("name", sorted(n for n in SPECS if n.startswith("timestamp-tz-")))
def test_simple_carries_the_server_zone_as_the_location(protocol: str, name: str) -> None:
    zone = dict(SPECS[name].options)["tz"]
    fixture = MANIFEST["fixtures"][f"data/{protocol.replace('-', '_')}/tiflow.types.{name}"]
    assert fixture["options"] == {"tz": zone}
    assert {v["zone"] for v in _c_values(protocol, name)} == {zone}  # type: ignore[index]
