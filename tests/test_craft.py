"""Craft messages, value encodings, batching and the benchmark sizes (ground truth §3, §7.2, §8).

Every message case runs both ways: encode(events) gives exactly the bytes, decode(bytes)
gives exactly the events. The bytes are written out by hand from the rules, field by field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

import pytest
from craft_builders import DDL_HEX, DDL_TS, INSERT_HEX, RESOLVED_HEX, RESOLVED_TS, unhex

from ticdc_conformance.fixtures.builder._fact_events import VARCHAR_PK
from ticdc_conformance.reference import (
    ChangeEvent,
    ColumnInfo,
    DDLEvent,
    DecimalValue,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
    EncodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    craft,
)

# test.t(a varchar(10) primary key, b varchar(10)): flags a = HandleKey|PrimaryKey, b = Nullable
from ticdc_conformance.reference.craft import _values, primitives
from ticdc_conformance.reference.craft._encode import estimated_size
from ticdc_conformance.reference.forms import read_change_event

PARTITIONED = TableInfo(
    schema="s",
    name="p",
    partition_id=6,
    columns=(ColumnInfo(name="id", type="bigint", key="primary"), ColumnInfo(name="v", type="int")),
)
NO_KEY = TableInfo(schema="s", name="n", columns=(ColumnInfo(name="v", type="int"),))


def col(name: str, value: Any, t: int, f: int) -> DecodedColumn:
    return DecodedColumn(name=name, value=value, type_code=t, flags=f, handle_key=bool(f & 2))


A_AA, B_BB, B_B0 = col("a", "aa", 15, 10), col("b", "bb", 15, 64), col("b", "b0", 15, 64)


def row(
    op: str, before: list[DecodedColumn] | None, after: list[DecodedColumn] | None, **envelope: Any
) -> DecodedRow:
    fields = {"commit_ts": 1, "schema": "test", "table": "t", **envelope}
    return DecodedRow(
        op=op,  # type: ignore[arg-type]
        before=None if before is None else tuple(before),
        after=None if after is None else tuple(after),
        **fields,
    )


def event(
    table: TableInfo, op: str, before: Any = None, after: Any = None, ts: int = 1
) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=ts, table=table, op=op, before=before, after=after)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Case:
    id: str
    events: list[ChangeEvent]
    messages: list[str]
    """Hex of each message value (``|`` marks the parts: headers, bodies, dictionary, tables)."""
    decoded: list[DecodedEvent]
    options: dict[str, Any] = field(default_factory=dict)


GROUP_NEW_AA_BB = "01 02 04 02 0f 0f 0a 40 04 04 61 61 62 62"  # type, 2 columns, ids 2 3, types, flags, lengths, values
DICT_TEST_T_A_B = "04 04 01 01 01 74 65 73 74 74 61 62"  # 4 terms: test t a b
CASES = [
    Case(
        "resolved-3.5",
        [ResolvedEvent(commit_ts=RESOLVED_TS)],
        [RESOLVED_HEX],
        [DecodedResolved(commit_ts=RESOLVED_TS)],
    ),
    Case(
        "ddl-3.5",
        [DDLEvent(commit_ts=DDL_TS, schema="a", table="b", query="create table a", ddl_type=1)],
        [DDL_HEX],
        [DecodedDDL(commit_ts=DDL_TS, schema="a", table="b", query="create table a", ddl_type=1)],
    ),
    # empty names are null (−1), so there is no dictionary: meta [5, 0]; ActionType 61 (§1.7)
    Case(
        "ddl-without-names",
        [DDLEvent(commit_ts=1, schema="", table="", query="q", ddl_type=61)],
        ["01 | 01 02 01 01 01 | 3d 01 71 | 02 0a 09 01 06 | 05"],
        [DecodedDDL(commit_ts=1, schema="", table="", query="q", ddl_type=61)],
    ),
    Case(
        "insert",
        [event(VARCHAR_PK, "insert", after=("aa", "bb"))],
        [INSERT_HEX],
        [row("insert", None, [A_AA, B_BB])],
    ),
    # §3.2: UPDATE always carries new then old; names reuse their term ids; group table [14, 14]
    Case(
        "update-both-groups",
        [event(VARCHAR_PK, "update", ("aa", "b0"), ("aa", "bb"))],
        [
            f"01 | 01 01 01 00 02 | {GROUP_NEW_AA_BB} | 02 02 04 02 0f 0f 0a 40 04 04 61 61 62 30"
            f" | {DICT_TEST_T_A_B} | 02 0a 0e 01 38 02 1c 00 | 08"
        ],
        [row("update", [A_AA, B_B0], [A_AA, B_BB])],
    ),
    # §3.6 C4, C9: DELETE is group type 2 with every column by default
    Case(
        "delete-all-columns",
        [event(VARCHAR_PK, "delete", before=("aa", "bb"))],
        [
            f"01 | 01 01 01 00 02 | 02{GROUP_NEW_AA_BB[2:]} | {DICT_TEST_T_A_B} | 02 0a 0e 01 1c 01 1c | 07"
        ],
        [row("delete", [A_AA, B_BB], None)],
    ),
    Case(
        "delete-only-handle-key",
        [event(VARCHAR_PK, "delete", before=("aa", "bb"))],
        [
            "01 | 01 01 01 00 02 | 02 01 04 0f 0a 04 61 61 | 03 04 01 01 74 65 73 74 74 61"
            " | 02 0a 0a 01 10 01 10 | 07"
        ],
        [row("delete", [A_AA], None)],
        {"delete_only_output_handle_key_columns": True},
    ),
    # two rows: ts delta 2; partitions [-1, 6] as delta varint 01 0e; schema ids [0, 0];
    # table ids [1, 2]; then "v" is term 3 and "id" term 4 (ids 4, 3 → 08 01)
    Case(
        "partition-and-shared-terms",
        [
            event(NO_KEY, "insert", after=(3,), ts=5),
            event(PARTITIONED, "insert", after=(9, -1), ts=7),
        ],
        [
            "01 | 05 02 01 01 01 0e 00 00 02 02 | 01 01 06 03 41 02 06 | 01 02 08 01 08 03 0b 41 02 02 12 01"
            " | 05 01 01 01 01 02 73 6e 70 76 69 64 | 02 14 04 02 0e 0a 01 0e 01 18 | 0a"
        ],
        [
            row("insert", None, [col("v", 3, 3, 65)], commit_ts=5, schema="s", table="n"),
            row(
                "insert",
                None,
                [col("id", 9, 8, 11), col("v", -1, 3, 65)],
                commit_ts=7,
                schema="s",
                table="p",
                partition_id=6,
            ),
        ],
    ),
    # §3.4: the batch closes before a DDL; TiCDC flushes rows first
    Case(
        "ddl-closes-the-batch",
        [
            event(VARCHAR_PK, "insert", after=("aa", "bb")),
            DDLEvent(commit_ts=DDL_TS, schema="a", table="b", query="create table a", ddl_type=1),
            event(VARCHAR_PK, "insert", after=("aa", "bb")),
        ],
        [INSERT_HEX, DDL_HEX, INSERT_HEX],
        [
            row("insert", None, [A_AA, B_BB]),
            DecodedDDL(commit_ts=DDL_TS, schema="a", table="b", query="create table a", ddl_type=1),
            row("insert", None, [A_AA, B_BB]),
        ],
    ),
    Case(
        "max-batch-size",
        [event(VARCHAR_PK, "insert", after=("aa", "bb"))] * 3,
        [
            f"01 | 01 00 01 01 01 00 00 00 02 00 | {GROUP_NEW_AA_BB} | {GROUP_NEW_AA_BB} | {DICT_TEST_T_A_B}"
            " | 02 14 04 02 1c 00 01 1c 01 1c | 0a",
            INSERT_HEX,
        ],
        [row("insert", None, [A_AA, B_BB])] * 3,
        {"max_batch_size": 2},
    ),
]


def _config(case: Case) -> craft.Config:
    return craft.Config(**case.options)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_encode(case: Case) -> None:
    messages = craft.encode(case.events, _config(case))
    assert [m.key for m in messages] == [None] * len(case.messages)  # §3.2: nil key
    assert [(m.value or b"").hex(" ") for m in messages] == [
        unhex(h).hex(" ") for h in case.messages
    ]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_decode(case: Case) -> None:
    decoded = [
        e
        for i, h in enumerate(case.messages)
        for e in craft.decode(Message(key=None, value=unhex(h)), message_index=i)
    ]
    assert decoded == case.decoded


F32_TENTH = "00 00 00 a0 99 99 b9 3f"  # float32(0.1) = 0x3DCCCCCD widened: 0x3FB99999A0000000
# (type code, flags, value, value bytes as hex or None for NULL, value decoded back)
VALUES: list[tuple[int, int, Any, str | None, Any]] = [
    (1, 0, -1, "01", -1),
    (1, 128, 255, "ff 01", 255),  # UnsignedFlag: uvarint
    (8, 128, 2**64 - 1, "ff ff ff ff ff ff ff ff ff 01", 2**64 - 1),
    (8, 0, -(2**63), "ff ff ff ff ff ff ff ff ff 01", -(2**63)),
    (9, 0, 2**23 - 1, "fe ff ff 07", 2**23 - 1),
    (13, 128, 2023, "ce 1f", 2023),  # YEAR is ZigZag even under UnsignedFlag (§3.6 C7)
    (16, 1, 16, "10", 16),
    (247, 0, 2, "02", 2),
    (248, 0, 2**64 - 1, "ff ff ff ff ff ff ff ff ff 01", 2**64 - 1),
    (4, 1, 0.1, F32_TENTH, 0.10000000149011612),  # FLOAT widened from float32 (§3.3)
    (4, 1, 2, "00 00 00 00 00 00 00 40", 2.0),
    (5, 1, 0.1, "9a 99 99 99 99 99 b9 3f", 0.1),
    (246, 1, DecimalValue("-1.50"), "2d 31 2e 35 30", DecimalValue("-1.50")),
    (
        7,
        1,
        TimestampValue("2021-01-02 00:00:00", "UTC"),
        "32 30 32 31 2d 30 31 2d 30 32 20 30 30 3a 30 30 3a 30 30",
        TimestampValue("2021-01-02 00:00:00", None),
    ),  # the zone is not on the wire
    (10, 1, "0000-00-00", "30 30 30 30 2d 30 30 2d 30 30", "0000-00-00"),
    (11, 1, "-838:59:59", "2d 38 33 38 3a 35 39 3a 35 39", "-838:59:59"),
    (245, 1, '{"a": 1}', "7b 22 61 22 3a 20 31 7d", '{"a": 1}'),
    (225, 1, "[1,2]", "5b 31 2c 32 5d", "[1,2]"),  # VECTOR as its text (§3.3)
    (15, 0, "测", "e6 b5 8b", "测"),  # raw UTF-8, no escaping (§3.6 C8)
    (15, 1, b"\x89PNG", "89 50 4e 47", b"\x89PNG"),  # BinaryFlag: bytes back
    (254, 1, "aa", "61 61", b"aa"),
    (252, 0, b"\xff", "ff", b"\xff"),  # text that is not UTF-8 stays bytes
    (251, 0, "", "", ""),  # empty is not NULL
    (6, 0, 5, None, None),  # the NULL type, GEOMETRY and unknown codes are always NULL
    (255, 0, b"geo", None, None),
    (0, 0, 1, None, None),
    (17, 0, "x", None, None),
    (3, 0, None, None, None),
]


@pytest.mark.parametrize(("type_code", "flags", "value", "hex_", "back"), VALUES)
def test_value_encodings(
    type_code: int, flags: int, value: Any, hex_: str | None, back: Any
) -> None:
    data = _values.encode_value(type_code, value, flags)
    assert (None if data is None else data.hex(" ")) == hex_
    decoded = _values.decode_value(type_code, data, flags)
    assert (type(decoded), decoded) == (type(back), back)


@pytest.mark.parametrize(
    ("type_code", "flags", "value", "reason"),
    [
        (1, 0, 2**63, "does not fit a signed"),
        (1, 128, -1, "does not fit an unsigned"),
        (13, 0, "2023", "expected an integer"),
        (247, 0, -1, "uint64"),
        (4, 0, 1e39, "does not fit a FLOAT"),
        (5, 0, "1.5", "expected a number"),
        (246, 0, "1.5", "expected a decimal"),
        (10, 0, b"2021-01-01", "expected text"),
        (15, 0, 3, "expected text or bytes"),
    ],
)
def test_values_that_do_not_fit_are_rejected(
    type_code: int, flags: int, value: Any, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        _values.encode_value(type_code, value, flags)


@pytest.mark.parametrize(
    ("type_code", "flags", "data", "reason"),
    [
        (4, 0, b"\x00" * 7, "8 bytes, not 7"),
        (5, 0, bytes.fromhex("000000000000f87f"), "NaN"),
        (1, 0, b"\x02\x00", "1 bytes after the varint"),
        (1, 0, b"\x80", "runs past"),
        (6, 0, b"", "only as NULL"),
        (246, 0, b"1e5", "not a decimal"),
        (7, 0, b"2021-01-02", "not a timestamp"),
        (10, 0, b"\xff", "not UTF-8"),
    ],
)
def test_value_bytes_that_do_not_fit_are_rejected(
    type_code: int, flags: int, data: bytes, reason: str
) -> None:
    with pytest.raises(ValueError, match=reason):
        _values.decode_value(type_code, data, flags)


def test_every_written_type_code_has_a_reader() -> None:
    assert _values.WRITERS.keys() == _values.READERS.keys()


ODD = TableInfo(
    schema="s",
    name="o",
    columns=(
        ColumnInfo(name="v", type="int", generated="virtual"),
        ColumnInfo(name="n", type="int"),
    ),
)


@pytest.mark.parametrize(
    ("events", "options", "reason"),
    [
        (
            [
                event(
                    TableInfo(schema="", name="t", columns=VARCHAR_PK.columns),
                    "insert",
                    after=("a", "b"),
                )
            ],
            {},
            "a row needs schema and table names",
        ),
        (
            [event(ODD, "delete", before=(None, 1))],
            {"delete_only_output_handle_key_columns": True},
            "no handle-key column",
        ),
        (
            [
                event(
                    TableInfo(schema="s", name="v", columns=ODD.columns[:1]),
                    "insert",
                    after=(None,),
                )
            ],
            {},
            "no stored column",
        ),
        (
            [event(VARCHAR_PK, "insert", after=("a", 1))],
            {},
            "column 'b': varchar(10) value 1 is not text",
        ),
        (
            [
                event(
                    TableInfo(schema="s", name="p", partition_id=2**63, columns=ODD.columns),
                    "insert",
                    after=(None, 1),
                )
            ],
            {},
            "partition id 9223372036854775808 is not an int64",
        ),
    ],
)
def test_what_ticdc_cannot_encode_is_an_encode_error(
    events: list[ChangeEvent], options: dict[str, Any], reason: str
) -> None:
    resolved: list[ChangeEvent] = [ResolvedEvent(commit_ts=1)]
    with pytest.raises(EncodeError) as caught:
        craft.encode(resolved + events, craft.Config(**options))
    assert reason in caught.value.reason
    assert (caught.value.protocol, caught.value.event_index) == ("craft", 1)


def test_virtual_columns_are_left_out() -> None:
    [message] = craft.encode([event(ODD, "insert", after=(None, 7))])
    [decoded] = craft.decode(message)
    assert isinstance(decoded, DecodedRow)
    assert decoded.after == (col("n", 7, 3, 65),)


# --- batching (§3.4, §7.2) ------------------------------------------------------------------

# TiCDC's TestCraftMaxMessageBytes row: test.t(a varchar(10) primary key) insert ("aa")
SINGLE = TableInfo(
    schema="test", name="t", columns=(ColumnInfo(name="a", type="varchar", key="primary"),)
)
SINGLE_ROW = event(SINGLE, "insert", after=("aa",), ts=424316552636792833)
# estimate: 32 + len("test") + len("t"), plus per column len("a") + len("aa") + 16
SINGLE_ESTIMATE = 32 + 4 + 1 + 1 + 2 + 16


def rows_per_message(messages: list[Message]) -> list[int]:
    return [len(craft.decode(m, message_index=i)) for i, m in enumerate(messages)]


def test_estimated_size_is_ticdcs_formula() -> None:
    assert estimated_size(SINGLE_ROW) == SINGLE_ESTIMATE == 56
    update = event(VARCHAR_PK, "update", ("aa", None), ("aa", "bb"))
    # both groups count: (1 + 2 + 16) + (1 + 2 + 16) new, (1 + 2 + 16) + (1 + 0 + 16) old
    assert estimated_size(update) == 37 + 38 + 36


def test_ticdc_max_message_bytes_256() -> None:
    # TestCraftMaxMessageBytes (§7.2): 10 000 rows, limit 256; every Length() ≤ 256. The flush
    # comes after the row whose estimate crosses 256: 5 × 56 = 280 > 256 ≥ 4 × 56
    per_message = next(k for k in range(1, 100) if k * SINGLE_ESTIMATE > 256)
    messages = craft.encode([SINGLE_ROW] * 10_000, craft.Config(max_message_bytes=256))
    assert per_message == 5
    assert rows_per_message(messages) == [per_message] * (10_000 // per_message)
    assert max(m.length() for m in messages) <= 256


def test_ticdc_max_batch_size_64() -> None:
    # TestCraftMaxBatchSize (§7.2): 10 000 rows, batch size 64 → at most 64 rows, 10 000 in all
    messages = craft.encode([SINGLE_ROW] * 10_000, craft.Config(max_batch_size=64))
    assert rows_per_message(messages) == [64] * 156 + [16]


def test_the_crossing_row_stays_in_its_batch() -> None:
    # limit 100: 56 ≤ 100, then 112 > 100 → both rows go out together; the message is larger
    # than any per-row check would allow (no hard limit, §3.4)
    messages = craft.encode([SINGLE_ROW] * 3, craft.Config(max_message_bytes=100))
    assert rows_per_message(messages) == [2, 1]
    # a single row above the limit still goes out, alone
    messages = craft.encode([SINGLE_ROW] * 2, craft.Config(max_message_bytes=10))
    assert rows_per_message(messages) == [1, 1]
    assert all(m.length() > 10 for m in messages)


# --- the benchmark cases (§3.5, §8) -----------------------------------------------------------


EXAMPLES = resources.files("ticdc_conformance.fixtures").joinpath("examples")


def load(name: str, folder: Traversable | Path = EXAMPLES) -> list[ChangeEvent]:
    text = folder.joinpath(f"{name}.change.jsonl").read_text()
    return [read_change_event(json.loads(line)) for line in text.splitlines() if line]


@pytest.mark.parametrize(
    ("name", "size"),
    [("resolved", 20), ("ddl", 41), ("craft-benchmark-case0", 301), ("craft-benchmark-case1", 997)],
)
def test_normative_examples(shared: Path, name: str, size: int) -> None:
    # ../shared/design/examples/README.md: the Craft sizes of the normative example files,
    # which the package bundles unchanged for the command line
    [message] = craft.encode(load(name, shared / "design" / "examples"))
    assert len(message.value or b"") == size
    assert craft.encode(load(name)) == [message]


def delta_uvarint_size_tables(message: bytes) -> int:
    """The message's length had its size tables used delta *uvarint* chunks (the document's
    "uvarint chunk" wording) instead of the merged code's delta ZigZag varints."""
    tables, start = primitives.read_size_tables(message, 1)
    out = bytearray()
    for table in tables:
        primitives.write_uvarint(out, len(table))
        primitives.write_delta_uvarint_chunk(out, table)
    trailer = bytearray()
    primitives.write_uvarint_reversed(trailer, len(out))
    return start + len(out) + len(trailer)


@pytest.mark.parametrize(
    ("name", "size", "document_size"),
    [("craft-benchmark-case0", 301, 300), ("craft-benchmark-case1", 997, 993)],
)
def test_benchmark_sizes(name: str, size: int, document_size: int) -> None:
    [message] = craft.encode(load(name))
    value = message.value or b""
    assert len(value) == size
    # §8: the document's numbers are the same messages with delta-uvarint size tables, where
    # each row's [108, 108] column-group table takes 2 bytes instead of 3
    assert delta_uvarint_size_tables(value) == document_size


def test_case0_layout() -> None:
    # §3.5: headers 13, body 216 (two groups of 108), dictionary 60, size tables 10, trailer 1
    [message] = craft.encode(load("craft-benchmark-case0"))
    value = message.value or b""
    tables, start = primitives.read_size_tables(value, 1)
    assert tables == [[13, 60], [216], [108, 108]]
    assert (start, len(value) - start) == (1 + 13 + 216 + 60, 10 + 1)
    count, position = primitives.read_uvarint(value, 1 + 13 + 216)
    terms, _ = primitives.read_bytes_chunk(value, position, count)
    assert terms == [
        b"a",
        b"b",
        b"varchar",
        b"string",
        b"date",
        b"timestamp",
        b"datetime",
        b"float",
        b"long",
        b"null",
    ]


# --- options and profiles ---------------------------------------------------------------------


def test_options() -> None:
    config = craft.config_from_options(
        {
            "max-message-bytes": "256",
            "max-batch-size": "64",
            "delete-only-output-handle-key-columns": "true",
        },
        profile="tiflow",
    )
    assert config == craft.Config(
        max_message_bytes=256, max_batch_size=64, delete_only_output_handle_key_columns=True
    )


@pytest.mark.parametrize(
    ("options", "profile", "reason"),
    [
        ({}, "ticdc", r"only classic TiCDC \(tiflow\) writes it"),
        ({"output-old-value": "false"}, None, "always writes both images"),
        (
            {"large-message-handle-option": "claim-check"},
            None,
            "only for Open, Simple and canal-json",
        ),
        ({"nope": "1"}, None, "unknown option 'nope'"),
        ({"max-batch-size": "0"}, None, "must be positive"),
        ({"max-batch-size": "-1"}, None, "takes a whole number"),
        ({"delete-only-output-handle-key-columns": "yes"}, None, "takes true or false"),
    ],
)
def test_invalid_options(options: dict[str, str], profile: str | None, reason: str) -> None:
    with pytest.raises(EncodeError, match=reason):
        craft.config_from_options(options, profile=profile)
