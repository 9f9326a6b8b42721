"""Open Protocol framing, keys, options, batching, DDL, resolved and large messages.

Every case runs both ways: encode(events) gives exactly the messages, and decode(messages)
gives exactly the events. Sections of ground truth are cited per case.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import pytest
from helpers import frame

# TiCDC's TestMaxMessageBytes table and the new-arch encoder tests' table (§7.2)
from ticdc_conformance.fixtures.builder._fact_events import TINYINT_PK, VARCHAR_PK
from ticdc_conformance.reference import (
    ChangeEvent,
    ColumnInfo,
    DDLEvent,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
    EncodeError,
    IndexInfo,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    open_protocol,
)
from ticdc_conformance.reference.open_protocol.claim_check import read_claim_check

TS = 424316552636792833  # an 18-digit commit ts, as in TiCDC's tests
PARTITIONED = TableInfo(
    schema="s",
    name="p",
    partition_id=6,
    columns=(ColumnInfo(name="id", type="bigint", key="primary"), ColumnInfo(name="v", type="int")),
)
NO_KEY = TableInfo(schema="s", name="n", columns=(ColumnInfo(name="v", type="int"),))
UNIQUE = TableInfo(
    schema="s",
    name="u",
    columns=(
        ColumnInfo(name="x", type="int"),
        ColumnInfo(name="k", type="varchar", nullable=False),
    ),
    indexes=(IndexInfo(name="uk", columns=("k",), unique=True),),
)


def col(name: str, value: Any, t: int, f: int) -> DecodedColumn:
    return DecodedColumn(name=name, value=value, type_code=t, flags=f, handle_key=bool(f & 2))


def row(
    op: str, before: list[DecodedColumn] | None, after: list[DecodedColumn] | None, **envelope: Any
) -> DecodedRow:
    fields = {"commit_ts": TS, "schema": "test", "table": "t", **envelope}
    return DecodedRow(
        op=op,  # type: ignore[arg-type]
        before=None if before is None else tuple(before),
        after=None if after is None else tuple(after),
        **fields,
    )


A_AA = col("a", "aa", 15, 10)
B_BB = col("b", "bb", 15, 64)
KEY_T = f'{{"ts":{TS},"scm":"test","tbl":"t","t":1}}'
ROW_AA_BB = '{"u":{"a":{"t":15,"h":true,"f":10,"v":"aa"},"b":{"t":15,"f":64,"v":"bb"}}}'


@dataclass(frozen=True)
class Case:
    id: str
    events: list[ChangeEvent]
    messages: list[tuple[list[str], list[str]]]
    """Per message: key JSON entries and value entries (``""`` is a zero-length entry)."""
    decoded: list[DecodedEvent]
    options: dict[str, Any] = field(default_factory=dict)
    only: str | None = None
    """The one profile whose bytes these are; ``None``: both profiles write them."""


def insert(table: TableInfo, *values: Any, ts: int = TS, **kw: Any) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=ts, table=table, op="insert", after=values, **kw)


def update(table: TableInfo, before: tuple[Any, ...], after: tuple[Any, ...]) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=TS, table=table, op="update", before=before, after=after)


def delete(table: TableInfo, *values: Any) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=TS, table=table, op="delete", before=values)


CASES = [
    Case(
        "insert-sorted-names",
        [insert(VARCHAR_PK, "aa", "bb")],
        [([KEY_T], [ROW_AA_BB])],
        [row("insert", None, [A_AA, B_BB])],
    ),
    Case(
        "insert-table-order-ticdc",
        [
            insert(
                TableInfo(schema="test", name="t", columns=tuple(reversed(VARCHAR_PK.columns))),
                "bb",
                "aa",
            )
        ],
        [([KEY_T], ['{"u":{"b":{"t":15,"f":64,"v":"bb"},"a":{"t":15,"h":true,"f":10,"v":"aa"}}}'])],
        [row("insert", None, [B_BB, A_AA])],
        only="ticdc",
    ),
    Case(
        "update-with-old-value",
        [update(VARCHAR_PK, ("aa", "b0"), ("aa", "bb"))],
        [
            (
                [KEY_T],
                [
                    '{"u":{"a":{"t":15,"h":true,"f":10,"v":"aa"},"b":{"t":15,"f":64,"v":"bb"}},'
                    '"p":{"a":{"t":15,"h":true,"f":10,"v":"aa"},"b":{"t":15,"f":64,"v":"b0"}}}'
                ],
            )
        ],
        [row("update", [A_AA, col("b", "b0", 15, 64)], [A_AA, B_BB])],
    ),
    # §6.4: without the old value an UPDATE cannot be told from an INSERT on the wire
    Case(
        "update-without-old-value-reads-as-insert",
        [update(VARCHAR_PK, ("aa", "b0"), ("aa", "bb"))],
        [([KEY_T], [ROW_AA_BB])],
        [row("insert", None, [A_AA, B_BB])],
        {"output_old_value": False},
    ),
    # §2.4: TiCDC sends every column of a deleted row by default (the seeds say key only, O6)
    Case(
        "delete-all-columns",
        [delete(VARCHAR_PK, "aa", "bb")],
        [([KEY_T], ['{"d":{"a":{"t":15,"h":true,"f":10,"v":"aa"},"b":{"t":15,"f":64,"v":"bb"}}}'])],
        [row("delete", [A_AA, B_BB], None)],
    ),
    Case(
        "delete-only-handle-key",
        [delete(VARCHAR_PK, "aa", "bb")],
        [([KEY_T], ['{"d":{"a":{"t":15,"h":true,"f":10,"v":"aa"}}}'])],
        [row("delete", [A_AA], None)],
        {"delete_only_output_handle_key_columns": True},
    ),
    Case(
        "only-updated-columns",
        [update(VARCHAR_PK, ("aa", "b0"), ("aa", "bb"))],
        [
            (
                [KEY_T],
                [
                    '{"u":{"a":{"t":15,"h":true,"f":10,"v":"aa"},"b":{"t":15,"f":64,"v":"bb"}},'
                    '"p":{"b":{"t":15,"f":64,"v":"b0"}}}'
                ],
            )
        ],
        [row("update", [col("b", "b0", 15, 64)], [A_AA, B_BB])],
        {"only_output_updated_columns": True},
    ),
    # §2.4: nothing changed → tiflow's "p" is empty and omitted, the update reads as an insert
    Case(
        "only-updated-nothing-changed-tiflow",
        [update(VARCHAR_PK, ("aa", "bb"), ("aa", "bb"))],
        [([KEY_T], [ROW_AA_BB])],
        [row("insert", None, [A_AA, B_BB])],
        {"only_output_updated_columns": True},
        only="tiflow",
    ),
    Case(
        "only-updated-nothing-changed-ticdc",
        [update(VARCHAR_PK, ("aa", "bb"), ("aa", "bb"))],
        [([KEY_T], [ROW_AA_BB[:-1] + ',"p":{}}'])],
        [row("update", [], [A_AA, B_BB])],
        {"only_output_updated_columns": True},
        only="ticdc",
    ),
    # §2.4 null rules, same in both profiles: NULL→NULL dropped, NULL→x kept as null, x→NULL kept
    Case(
        "only-updated-null-rules",
        [
            update(
                TableInfo(
                    schema="test",
                    name="t",
                    columns=(
                        ColumnInfo(name="a", type="int", key="primary"),
                        ColumnInfo(name="n1", type="int"),
                        ColumnInfo(name="n2", type="int"),
                        ColumnInfo(name="n3", type="int"),
                    ),
                ),
                (1, None, None, 5),
                (1, None, 7, None),
            )
        ],
        [
            (
                [f'{{"ts":{TS},"scm":"test","tbl":"t","rid":1,"t":1}}'],
                [
                    '{"u":{"a":{"t":3,"h":true,"f":11,"v":1},"n1":{"t":3,"f":65,"v":null},'
                    '"n2":{"t":3,"f":65,"v":7},"n3":{"t":3,"f":65,"v":null}},'
                    '"p":{"n2":{"t":3,"f":65,"v":null},"n3":{"t":3,"f":65,"v":5}}}'
                ],
            )
        ],
        [
            row(
                "update",
                [col("n2", None, 3, 65), col("n3", 5, 3, 65)],
                [
                    col("a", 1, 3, 11),
                    col("n1", None, 3, 65),
                    col("n2", 7, 3, 65),
                    col("n3", None, 3, 65),
                ],
                row_id=1,
            )
        ],
        {"only_output_updated_columns": True},
        only="tiflow",
    ),
    # §2.3: rid (tiflow only) and ptn; key member order differs between the profiles
    Case(
        "partitioned-int-pk-tiflow",
        [insert(PARTITIONED, 9, 1)],
        [
            (
                [f'{{"ts":{TS},"scm":"s","tbl":"p","rid":9,"ptn":6,"t":1}}'],
                ['{"u":{"id":{"t":8,"h":true,"f":11,"v":9},"v":{"t":3,"f":65,"v":1}}}'],
            )
        ],
        [
            row(
                "insert",
                None,
                [col("id", 9, 8, 11), col("v", 1, 3, 65)],
                schema="s",
                table="p",
                row_id=9,
                partition_id=6,
            )
        ],
        only="tiflow",
    ),
    Case(
        "partitioned-int-pk-ticdc",
        [insert(PARTITIONED, 9, 1)],
        [
            (
                [f'{{"ts":{TS},"scm":"s","tbl":"p","t":1,"ptn":6}}'],
                ['{"u":{"id":{"t":8,"h":true,"f":11,"v":9},"v":{"t":3,"f":65,"v":1}}}'],
            )
        ],
        [
            row(
                "insert",
                None,
                [col("id", 9, 8, 11), col("v", 1, 3, 65)],
                schema="s",
                table="p",
                partition_id=6,
            )
        ],
        only="ticdc",
    ),
    Case(
        "tidb-rowid",
        [insert(NO_KEY, 3, row_id=77)],
        [
            (
                [f'{{"ts":{TS},"scm":"s","tbl":"n","rid":77,"t":1}}'],
                ['{"u":{"v":{"t":3,"f":65,"v":3}}}'],
            )
        ],
        [row("insert", None, [col("v", 3, 3, 65)], schema="s", table="n", row_id=77)],
        only="tiflow",
    ),
    # §1.3: a NOT NULL unique index is the handle key when there is no primary key
    Case(
        "unique-index-handle-key",
        [insert(UNIQUE, 1, "k1")],
        [
            (
                [f'{{"ts":{TS},"scm":"s","tbl":"u","t":1}}'],
                ['{"u":{"k":{"t":15,"h":true,"f":18,"v":"k1"},"x":{"t":3,"f":65,"v":1}}}'],
            )
        ],
        [row("insert", None, [col("k", "k1", 15, 18), col("x", 1, 3, 65)], schema="s", table="u")],
        only="tiflow",
    ),
    Case(
        "ddl-tiflow-omits-empty-names",
        [DDLEvent(commit_ts=TS, schema="test", table="", query="CREATE DATABASE <x>", ddl_type=1)],
        [
            (
                [f'{{"ts":{TS},"scm":"test","t":2}}'],
                ['{"q":"CREATE DATABASE \\u003cx\\u003e","t":1}'],
            )
        ],
        [
            DecodedDDL(
                commit_ts=TS, schema="test", table="", query="CREATE DATABASE <x>", ddl_type=1
            )
        ],
        only="tiflow",
    ),
    Case(
        "ddl-ticdc-always-names",
        [DDLEvent(commit_ts=TS, schema="test", table="", query="CREATE DATABASE <x>", ddl_type=1)],
        [([f'{{"ts":{TS},"scm":"test","tbl":"","t":2}}'], ['{"q":"CREATE DATABASE <x>","t":1}'])],
        [
            DecodedDDL(
                commit_ts=TS, schema="test", table="", query="CREATE DATABASE <x>", ddl_type=1
            )
        ],
        only="ticdc",
    ),
    # §1.7: ActionTypes above the documented 36, e.g. 61 = MultiSchemaChange
    Case(
        "ddl-action-type-above-36",
        [
            DDLEvent(
                commit_ts=TS,
                schema="test",
                table="t",
                query="ALTER TABLE t ADD a int, ADD b int",
                ddl_type=61,
            )
        ],
        [
            (
                [KEY_T.replace('"t":1', '"t":2')],
                ['{"q":"ALTER TABLE t ADD a int, ADD b int","t":61}'],
            )
        ],
        [
            DecodedDDL(
                commit_ts=TS,
                schema="test",
                table="t",
                query="ALTER TABLE t ADD a int, ADD b int",
                ddl_type=61,
            )
        ],
    ),
    # §2.1, §2.8 O4: a resolved event's value is a zero length, not "None"
    Case(
        "resolved",
        [ResolvedEvent(commit_ts=TS)],
        [([f'{{"ts":{TS},"t":3}}'], [""])],
        [DecodedResolved(commit_ts=TS)],
    ),
    # §2.2: DDL and resolved events close the current batch
    Case(
        "ddl-closes-batch",
        [
            insert(VARCHAR_PK, "aa", "bb"),
            DDLEvent(commit_ts=TS, schema="test", table="t", query="q", ddl_type=3),
            insert(VARCHAR_PK, "aa", "bb"),
        ],
        [
            ([KEY_T], [ROW_AA_BB]),
            ([KEY_T.replace('"t":1', '"t":2')], ['{"q":"q","t":3}']),
            ([KEY_T], [ROW_AA_BB]),
        ],
        [
            row("insert", None, [A_AA, B_BB]),
            DecodedDDL(commit_ts=TS, schema="test", table="t", query="q", ddl_type=3),
            row("insert", None, [A_AA, B_BB]),
        ],
    ),
    # TestOpenProtocolAppendRowChangedEventWithCallback: max-batch-size 2, 5 rows → 2, 2, 1
    Case(
        "max-batch-size",
        [insert(VARCHAR_PK, "aa", "bb")] * 5,
        [([KEY_T] * 2, [ROW_AA_BB] * 2)] * 2 + [([KEY_T], [ROW_AA_BB])],
        [row("insert", None, [A_AA, B_BB])] * 5,
        {"max_batch_size": 2},
    ),
    # handle-key-only (§2.6): 36+16+8 + 54 + 74 = 188 does not fit 187
    Case(
        "handle-key-only",
        [insert(VARCHAR_PK, "aa", "bb")],
        [([KEY_T[:-1] + ',"ohk":true}'], ['{"u":{"a":{"t":15,"h":true,"f":10,"v":"aa"}}}'])],
        [row("insert", None, [A_AA], handle_key_only=True)],
        {"max_message_bytes": 187, "large_message_handle_option": "handle-key-only"},
    ),
    Case(
        "handle-key-only-ticdc",
        [insert(PARTITIONED, 9, 1)],
        [
            (
                [f'{{"ts":{TS},"scm":"s","tbl":"p","t":1,"ohk":true,"ptn":6}}'],
                ['{"u":{"id":{"t":8,"h":true,"f":11,"v":9}}}'],
            )
        ],
        [
            row(
                "insert",
                None,
                [col("id", 9, 8, 11)],
                schema="s",
                table="p",
                partition_id=6,
                handle_key_only=True,
            )
        ],
        {"max_message_bytes": 175, "large_message_handle_option": "handle-key-only"},
        only="ticdc",
    ),
]


PARAMS = [
    pytest.param(case, profile, id=f"{case.id}-{profile}")
    for case in CASES
    for profile in ((case.only,) if case.only else open_protocol.PROFILES)
]


def _config(case: Case, profile: str) -> open_protocol.Config:
    return open_protocol.Config(profile=profile, **case.options)  # type: ignore[arg-type]


def _messages(case: Case) -> list[Message]:
    return [
        frame([k.encode() for k in keys], [v.encode() for v in values])
        for keys, values in case.messages
    ]


@pytest.mark.parametrize(("case", "profile"), PARAMS)
def test_encode(case: Case, profile: str) -> None:
    assert open_protocol.encode(case.events, _config(case, profile)) == _messages(case)


@pytest.mark.parametrize(("case", "profile"), PARAMS)
def test_decode(case: Case, profile: str) -> None:
    del profile  # the decoder takes either profile's bytes
    decoded = [e for m in _messages(case) for e in open_protocol.decode(m)]
    assert decoded == case.decoded


def test_max_message_bytes_boundary_188() -> None:
    """TestMaxMessageBytes (§7.2): the row fits at 188 bytes and not at 187."""
    event = insert(VARCHAR_PK, "aa", "bb")
    assert len(KEY_T) == 54
    assert len(ROW_AA_BB) == 74
    assert open_protocol.encode([event], open_protocol.Config(max_message_bytes=188))
    with pytest.raises(EncodeError, match="ErrMessageTooLarge"):
        open_protocol.encode([event], open_protocol.Config(max_message_bytes=187))


def test_every_batch_fits_max_message_bytes() -> None:
    """TestMaxMessageBytes (§7.2): with 256 bytes every message's Length() stays within."""
    messages = open_protocol.encode(
        [insert(VARCHAR_PK, "aa", "bb")] * 100, open_protocol.Config(max_message_bytes=256)
    )
    assert all(m.length() <= 256 for m in messages)
    assert sum(len(open_protocol.decode(m)) for m in messages) == 100


def test_max_batch_size_64_over_10000_rows() -> None:
    """TestMaxBatchSize (§7.2): 10 000 rows decode back with at most 64 per message."""
    events = [insert(VARCHAR_PK, "aa", str(i), ts=TS + i) for i in range(10_000)]
    messages = open_protocol.encode(events, open_protocol.Config(max_batch_size=64))
    counts = [len(open_protocol.decode(m)) for m in messages]
    assert max(counts) == 64
    assert sum(counts) == 10_000
    assert len(messages) == -(-10_000 // 64)


def test_ticdc_batches_by_max_batched_bytes() -> None:
    """TestEncoderMultipleMessage (§7.2): message 1000, batched 400, three rows → 2 + 1."""
    config = open_protocol.Config(profile="ticdc", max_message_bytes=1000, max_batched_bytes=400)
    messages = open_protocol.encode([insert(TINYINT_PK, 1, 123)] * 3, config)
    assert [len(open_protocol.decode(m)) for m in messages] == [2, 1]


def test_ticdc_row_larger_than_batch_limit_goes_alone() -> None:
    """TestMessageLargerThanBatchLimit (§7.2): batched 100 < row ≤ message 400 still goes out."""
    config = open_protocol.Config(profile="ticdc", max_message_bytes=400, max_batched_bytes=100)
    messages = open_protocol.encode([insert(TINYINT_PK, 1, 123)] * 2, config)
    assert [len(open_protocol.decode(m)) for m in messages] == [1, 1]


@pytest.mark.parametrize(("limit", "survivors"), [(182, ["a", "b"]), (181, ["a"]), (166, ["a"])])
def test_ticdc_handle_key_only_sizes(limit: int, survivors: list[str]) -> None:
    """TestLargeMessageWithHandleEnableHandleKeyOnly (§7.2): full row 182, handle-key row 166."""
    config = open_protocol.Config(
        profile="ticdc", max_message_bytes=limit, large_message_handle_option="handle-key-only"
    )
    [message] = open_protocol.encode([insert(TINYINT_PK, 1, 123)], config)
    [event] = open_protocol.decode(message)
    assert isinstance(event, DecodedRow)
    assert [c.name for c in event.after or ()] == survivors


def test_ticdc_too_large_even_handle_key_only() -> None:
    config = open_protocol.Config(
        profile="ticdc", max_message_bytes=165, large_message_handle_option="handle-key-only"
    )
    with pytest.raises(EncodeError, match="still too large after handle-key-only"):
        open_protocol.encode([insert(TINYINT_PK, 1, 123)], config)


def test_ticdc_message_too_large() -> None:
    """TestMessageTooLarge (§7.2): limit 100 is an error without large-message handling."""
    with pytest.raises(EncodeError, match="row needs 182 bytes"):
        open_protocol.encode(
            [insert(TINYINT_PK, 1, 123)],
            open_protocol.Config(profile="ticdc", max_message_bytes=100),
        )


def test_handle_key_only_needs_a_handle_key() -> None:
    config = open_protocol.Config(
        max_message_bytes=100, large_message_handle_option="handle-key-only"
    )
    with pytest.raises(EncodeError, match="needs a table with a handle key"):
        open_protocol.encode([insert(NO_KEY, 1)], config)


WIDE_B = dataclasses.replace(
    VARCHAR_PK,
    columns=(VARCHAR_PK.columns[0], dataclasses.replace(VARCHAR_PK.columns[1], length=255)),
)
"""``test.t(a varchar(10) primary key, b varchar(255))``: room for a large ``b``."""


@pytest.mark.parametrize(
    ("profile", "key_tail"),
    [
        ("tiflow", '"t":1,"ccl":"file:///cc/{name}"}'),
        ("ticdc", '"t":1,"ohk":true,"ohk":false,"ccl":"file:///cc/{name}"}'),
    ],
)
def test_claim_check(profile: str, key_tail: str) -> None:
    """§2.6: the file holds the full message; Kafka gets handle-key columns and the location."""
    config = open_protocol.Config(
        profile=profile,  # type: ignore[arg-type]
        max_message_bytes=250,
        large_message_handle_option="claim-check",
        claim_check_storage_uri="file:///cc/",
    )
    event = insert(WIDE_B, "aa", "b" * 200)  # 386 bytes in full, 215 as a reference
    [message] = open_protocol.encode([event], config)
    [stored] = message.claim_checks
    name = stored.location.removeprefix("file:///cc/")
    assert name.endswith(".json")
    assert len(name) == 36 + 5  # a UUID, like TiCDC's file names
    assert read_claim_check(stored.content) == open_protocol.encode([event])[0]
    key = f'{{"ts":{TS},"scm":"test","tbl":"t",{key_tail.replace("{name}", name)}'
    assert message == frame(
        [key.encode()],
        [b'{"u":{"a":{"t":15,"h":true,"f":10,"v":"aa"}}}'],
        claim_checks=message.claim_checks,
    )
    [decoded] = open_protocol.decode(message)
    assert decoded == row("insert", None, [A_AA], claim_check_location=stored.location)


def test_claim_check_is_deterministic() -> None:
    config = open_protocol.Config(
        max_message_bytes=250,
        large_message_handle_option="claim-check",
        claim_check_storage_uri="s3://bucket/prefix",
    )
    event = insert(WIDE_B, "aa", "b" * 200)
    assert open_protocol.encode([event], config) == open_protocol.encode([event], config)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"large_message_handle_option": "claim-check"}, "claim-check-storage-uri"),
        ({"max_batched_bytes": 10}, "only in profile ticdc"),
        (
            {"profile": "ticdc", "max_batched_bytes": 20, "max_message_bytes": 10},
            "max-batched-bytes",
        ),
        ({"max_batch_size": 0}, "positive"),
        ({"profile": "canal"}, "profile"),
    ],
)
def test_config_rejects(options: dict[str, Any], message: str) -> None:
    with pytest.raises(EncodeError, match=message):
        open_protocol.Config(**options)


def test_config_from_options() -> None:
    config = open_protocol.config_from_options(
        {
            "max-message-bytes": "188",
            "output-old-value": "false",
            "large-message-handle-option": "handle-key-only",
            "large-message-handle-compression": "none",
        },
        profile="ticdc",
    )
    assert config == open_protocol.Config(
        profile="ticdc",
        max_message_bytes=188,
        output_old_value=False,
        large_message_handle_option="handle-key-only",
    )
    for bad in (
        {"nope": "1"},
        {"max-batch-size": "x"},
        {"output-old-value": "yes"},
        {"large-message-handle-compression": "zstd"},
    ):
        with pytest.raises(EncodeError):
            open_protocol.config_from_options(bad)
