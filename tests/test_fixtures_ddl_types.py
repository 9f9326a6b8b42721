"""The ``events.ddl-type-*`` cases: every ActionType TiCDC replicates, as each protocol writes it.

The expected kinds are written here from TiCDC's own switch statements, apart from the
reference encoders' tables, so that a wrong entry on either side fails: Simple's
``getDDLType`` (ticdc ``pkg/sink/codec/simple/message.go``), Canal's ``convertDdlEventType``
(ticdc ``pkg/sink/codec/canal/helper.go``) and Debezium's DDL switch (ticdc
``pkg/sink/codec/debezium/codec.go``: types it does not list give no message; database
DDLs and TRUNCATE TABLE an empty ``tableChanges``).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.reference import CODECS

ROOT = fixtures.default_root()
MANIFEST = fixtures.load_manifest(ROOT)

ALLOWED = (
    *(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 19, 20, 21, 22, 23, 24, 25),
    *(26, 32, 33, 37, 38, 41, 42, 47, 60, 61, 64, 65, 67, 71, 72),
)
"""tiflow ``pkg/filter/filter.go`` ``ddlWhiteListMap`` (39 types); ticdc adds 230 and 231."""
TICDC_ONLY = (230, 231)

_ALTER = (5, 6, 12, 13, 15, 17, 18, 19, 20, 22, 23, 41, 61, 64, 71, 72)
SIMPLE = {
    3: "CREATE",
    14: "RENAME",
    47: "RENAME",
    **dict.fromkeys((7, 9, 32), "CINDEX"),
    **dict.fromkeys((8, 10, 33), "DINDEX"),
    4: "ERASE",
    11: "TRUNCATE",
    **dict.fromkeys(_ALTER, "ALTER"),
}
CANAL = {**SIMPLE, 37: "ALTER", 38: "ALTER"}
DEBEZIUM = {
    **dict.fromkeys((1, 3, 60, 21), "CREATE"),
    **dict.fromkeys((5, 12, 6, 61, 19, 72, 64, 42, 71, 23, 20, 13, 15, 17, 22, 26), "ALTER"),
    **dict.fromkeys((7, 41, 18, 14, 47, 32, 33), "ALTER"),
    **dict.fromkeys((2, 4, 8, 24, 11), "DROP"),
}
DEBEZIUM_NO_TABLE = (1, 2, 26, 11)
"""No table name (database DDLs) or TRUNCATE TABLE: an empty ``tableChanges``."""


def _expected_kind(protocol: str, profile: str, action: int) -> str | None:
    """The ``ddl_kind`` a consumer decodes; None where the protocol carries the number."""
    if protocol in ("open", "craft"):
        return None
    if protocol == "debezium":  # the class is tableChanges[0].type, and tableChanges is empty
        return None if action in DEBEZIUM_NO_TABLE else DEBEZIUM[action]
    if protocol == "canal-json":
        return CANAL.get(action, "QUERY")
    if action == 42:  # EXCHANGE PARTITION: ALTER in the new architecture only (§4.10)
        return "ALTER" if profile == "ticdc" else "QUERY"
    return SIMPLE.get(action, "QUERY")


def _ddl_cases() -> dict[tuple[str, str, int], dict[str, Any]]:
    found = {}
    for case in MANIFEST["cases"]:
        name = case["id"].split(".")[-1]
        if case["direction"] == "decode" and name.startswith("ddl-type-"):
            found[case["protocol"], case["profile"], int(name.split("-")[2])] = case
    return found


CASES = _ddl_cases()


def test_every_allowed_type_has_a_case_in_every_protocol_and_profile() -> None:
    for protocol, codec in CODECS.items():
        for profile in codec.PROFILES:
            actions = (*ALLOWED, *TICDC_ONLY) if profile == "ticdc" else ALLOWED
            missing = [a for a in actions if (protocol, profile, a) not in CASES]
            assert missing == [], (protocol, profile)
            assert not [
                a for a in TICDC_ONLY if profile != "ticdc" and (protocol, profile, a) in CASES
            ]


@pytest.mark.parametrize("key", sorted(CASES), ids=lambda key: f"{key[0]}.{key[1]}.{key[2]}")
def test_each_protocol_writes_the_type_as_ticdc_does(key: tuple[str, str, int]) -> None:
    protocol, profile, action = key
    fixture = MANIFEST["fixtures"][CASES[key]["fixture"]]
    decoded = [
        json.loads(line)
        for line in (ROOT / fixture["decoded"]).read_text(encoding="utf-8").splitlines()
    ]
    if protocol == "debezium" and action not in DEBEZIUM:
        assert fixture["messages"] == [], "Debezium drops a DDL type it does not list"
        assert decoded == []
        return
    (event,) = decoded
    assert event["kind"] == "ddl"
    if protocol in ("open", "craft"):
        assert event["ddl_type"] == action
    else:
        assert event["ddl_kind"] == _expected_kind(protocol, profile, action)
