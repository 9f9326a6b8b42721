"""Consumer scenarios for ``SimpleDecoder`` (ground truth §6.6; the seed 002's two scenarios).

A DML is typed only by the schema with its exact (database, table, schemaVersion); until
that schema arrives in a BOOTSTRAP or DDL the row is held back and reported, never guessed.
"""

from __future__ import annotations

import json

import pytest
from simple_helpers import codec, config, with_bootstrap

from ticdc_conformance.generators.simulator import StreamSettings, simulate
from ticdc_conformance.generators.workload import shop_workload
from ticdc_conformance.reference import (
    ColumnInfo,
    DDLEvent,
    DecodedBootstrap,
    DecodedColumn,
    DecodedDDL,
    DecodedEvent,
    DecodedResolved,
    DecodedRow,
    DecodeError,
    Message,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
    simple,
    simple_avro,
    simple_json,
)

ENCODINGS = ["json", "avro"]
C = ColumnInfo
V1 = TableInfo(
    schema="shop",
    name="user",
    table_id=148,
    schema_version=100,
    columns=(C(name="id", type="int", key="primary"), C(name="score", type="float")),
)
V2 = TableInfo(
    schema="shop",
    name="user",
    table_id=148,
    schema_version=200,
    columns=(*V1.columns, C(name="note", type="varchar")),
)
ADD_COLUMN = DDLEvent(
    commit_ts=20,
    schema="shop",
    table="user",
    query="ALTER TABLE user ADD COLUMN note VARCHAR(10)",
    ddl_type=5,
    table_info=V2,
    pre_table_info=V1,
)


def ins(table: TableInfo, *values: Value, ts: int) -> RowChangedEvent:
    return RowChangedEvent(commit_ts=ts, table=table, op="insert", after=values)


def messages(encoding: str, events: list[object], **options: object) -> list[Message]:
    return codec(encoding).encode(events, config(**options))  # type: ignore[arg-type]


def feed(
    decoder: simple.SimpleDecoder, stream: list[Message], start: int = 0
) -> list[list[DecodedEvent]]:
    return [decoder.feed(m, message_index=start + i) for i, m in enumerate(stream)]


def after(event: DecodedEvent) -> tuple[object, ...]:
    assert isinstance(event, DecodedRow)
    assert event.after is not None
    return tuple(c.value for c in event.after)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_consumer_from_the_beginning(encoding: str) -> None:
    """Scenario 1: BOOTSTRAP first (§6.6), a schema change, rows on both sides."""
    stream = with_bootstrap(
        encoding,
        [
            ins(V1, 1, 2.5, ts=10),
            ADD_COLUMN,
            ins(V2, 2, 3.5, "x", ts=30),
            ResolvedEvent(commit_ts=30),
        ],
        config(),
    )
    decoder = codec(encoding).new_decoder()
    results = feed(decoder, stream)
    assert [[type(e).__name__ for e in r] for r in results] == [
        ["DecodedBootstrap"],
        ["DecodedRow"],
        ["DecodedDDL"],
        ["DecodedRow"],
        ["DecodedResolved"],
    ]
    assert after(results[1][0]) == (1, 2.5)
    assert after(results[3][0]) == (2, 3.5, "x")
    row = results[3][0]
    assert isinstance(row, DecodedRow)
    assert row.after is not None
    assert [c.mysql_type for c in row.after] == ["int", "float", "varchar"]
    assert (decoder.pending(), decoder.rejected()) == ((), ())


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_join_mid_stream_holds_rows_until_the_bootstrap(encoding: str) -> None:
    """Scenario 2: rows before any BOOTSTRAP wait, then come out right after it, in order."""
    rows = messages(encoding, [ins(V1, 1, 0.5, ts=10), ins(V1, 2, 1.5, ts=11)])
    bootstrap = codec(encoding).encode_bootstrap(V1, config())
    decoder = codec(encoding).new_decoder()
    assert feed(decoder, rows) == [[], []]
    assert decoder.pending() == tuple(
        simple.Pending(
            message_index=i,
            database="shop",
            table="user",
            schema_version=100,
            reason="no BOOTSTRAP or DDL has given schema version 100 of shop.user",
        )
        for i in (0, 1)
    )
    released = decoder.feed(bootstrap, message_index=2)
    assert isinstance(released[0], DecodedBootstrap)
    assert [after(e) for e in released[1:]] == [(1, 0.5), (2, 1.5)]
    assert decoder.pending() == ()


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_schema_change_with_rows_on_both_sides(encoding: str) -> None:
    """Joining mid-stream: old-version rows resolve by the DDL's preTableSchema, new ones by
    its tableSchema, even a new-version row that arrived before the DDL."""
    old_rows = messages(encoding, [ins(V1, 1, 1.0, ts=10)])
    early_new = messages(encoding, [ins(V2, 2, 2.0, "early", ts=25)])
    ddl = messages(encoding, [ADD_COLUMN])
    new_rows = messages(encoding, [ins(V2, 3, 3.0, "late", ts=30)])
    decoder = codec(encoding).new_decoder()
    results = feed(decoder, [*old_rows, *early_new, *ddl, *new_rows])
    assert results[:2] == [[], []]
    assert isinstance(results[2][0], DecodedDDL)
    assert [after(e) for e in results[2][1:]] == [(1, 1.0), (2, 2.0, "early")]
    assert [after(e) for e in results[3]] == [(3, 3.0, "late")]
    assert decoder.table_info("shop", "user", 100) is not None


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_schema_version_that_never_arrives_is_reported(encoding: str) -> None:
    orphan = TableInfo(
        schema="shop", name="user", table_id=148, schema_version=999, columns=V1.columns
    )
    stream = [
        codec(encoding).encode_bootstrap(V1, config()),
        *messages(encoding, [ins(orphan, 1, 1.0, ts=5)]),
    ]
    decoder = codec(encoding).new_decoder()
    assert feed(decoder, stream)[1] == []
    [held] = decoder.pending()
    assert (held.message_index, held.schema_version) == (1, 999)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_first_schema_wins_and_rename_is_a_new_key(encoding: str) -> None:
    """TiCDC's consumer keeps the first schema per key; RENAME keeps the version (seed note)."""
    renamed = TableInfo(
        schema="shop", name="client", table_id=148, schema_version=100, columns=V1.columns
    )
    decoder = codec(encoding).new_decoder()
    feed(
        decoder,
        [
            codec(encoding).encode_bootstrap(V1, config()),
            codec(encoding).encode_bootstrap(
                V2.__class__(schema="shop", name="user", schema_version=100, columns=V2.columns),
                config(),
            ),
            codec(encoding).encode_bootstrap(renamed, config()),
        ],
    )
    kept = decoder.table_info("shop", "user", 100)
    assert kept is not None
    assert [c.name for c in kept.columns] == ["id", "score"]
    assert decoder.table_info("shop", "client", 100) is not None


def test_a_row_that_does_not_fit_its_known_schema_is_a_decode_error() -> None:
    decoder = simple_json.new_decoder()
    decoder.feed(simple_json.encode_bootstrap(V1), message_index=0)
    bad = Message(
        key=None,
        value=b'{"version":1,"database":"shop","table":"user","type":"INSERT","commitTs":1,"buildTs":0,"schemaVersion":100,"data":{"id":"x"}}',
    )
    with pytest.raises(DecodeError, match="expected an integer") as caught:
        decoder.feed(bad, message_index=1)
    assert (caught.value.pointer, caught.value.message_index) == ("/data/id", 1)
    unknown = Message(key=None, value=bad.value.replace(b'"id":"x"', b'"nope":"1"'))  # type: ignore[union-attr]
    with pytest.raises(DecodeError, match="'nope' is not in schema version 100"):
        decoder.feed(unknown, message_index=2)
    assert decoder.pending() == ()


def test_a_released_row_that_does_not_fit_is_rejected_not_dropped() -> None:
    bad = Message(
        key=None,
        value=b'{"version":1,"database":"shop","table":"user","type":"INSERT","commitTs":1,"buildTs":0,"schemaVersion":100,"data":{"score":"1e5"}}',
    )
    decoder = simple_json.new_decoder()
    decoder.feed(bad, message_index=0)
    assert [type(e) for e in decoder.feed(simple_json.encode_bootstrap(V1), message_index=1)] == [
        DecodedBootstrap
    ]
    [rejected] = decoder.rejected()
    assert rejected.message_index == 0
    assert "/data/score" in rejected.reason
    assert "positional notation" in rejected.reason


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_checksums_are_verified(encoding: str) -> None:
    ts = C(name="at", type="timestamp")
    t = TableInfo(schema="s", name="t", schema_version=1, columns=(*V1.columns, ts))
    update = RowChangedEvent(
        commit_ts=3,
        table=t,
        op="update",
        before=(1, 0.5, None),
        after=(1, 1.5, TimestampValue("2024-01-01 08:00:00")),
    )
    cfg = config(enable_row_checksum=True, time_zone="Asia/Shanghai")
    bootstrap, row = with_bootstrap(encoding, [update], cfg)
    decoder = codec(encoding).new_decoder()
    assert [type(e) for r in feed(decoder, [bootstrap, row]) for e in r] == [
        DecodedBootstrap,
        DecodedRow,
    ]
    checksum = simple.read_checksum(row, encoding=encoding)  # type: ignore[arg-type]
    assert checksum is not None
    assert checksum.current != 0
    assert checksum.previous != 0
    if encoding == "json":
        document = json.loads(row.value or b"")
        document["checksum"]["current"] ^= 1
        tampered = Message(key=None, value=json.dumps(document).encode())
        strict = simple_json.new_decoder()
        assert [type(e) for r in feed(strict, [bootstrap, tampered]) for e in r] == [
            DecodedBootstrap
        ]
        [rejected] = strict.rejected()
        assert rejected.reason.startswith("checksum: current checksum")
        lenient = simple.SimpleDecoder("json", verify_checksums=False)
        assert [type(e) for r in feed(lenient, [bootstrap, tampered]) for e in r] == [
            DecodedBootstrap,
            DecodedRow,
        ]


def test_watermark_and_ddl_pass_through_the_decoder() -> None:
    decoder = simple_avro.new_decoder()
    drop = DDLEvent(commit_ts=2, schema="shop", table="", query="DROP DATABASE shop", ddl_type=2)
    results = feed(decoder, simple_avro.encode([ResolvedEvent(commit_ts=1), drop]))
    assert results == [
        [DecodedResolved(commit_ts=1)],
        [
            DecodedDDL(
                commit_ts=2, schema="", table="", query="DROP DATABASE shop", ddl_kind="QUERY"
            )
        ],
    ]


def test_handle_key_only_rows_are_typed_with_their_columns() -> None:
    big = ins(V2, 7, 1.0, "x" * 400, ts=9)
    cfg = config(max_message_bytes=300, large_message_handle_option="handle-key-only")
    decoder = simple_json.new_decoder()
    stream = [simple_json.encode_bootstrap(V2), *simple_json.encode([big], cfg)]
    *_, row = [e for r in feed(decoder, stream) for e in r]
    assert isinstance(row, DecodedRow)
    assert (row.handle_key_only, row.after) == (True, (DecodedColumn("id", 7, mysql_type="int"),))


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_every_row_of_a_simulated_topic_resolves(encoding: str) -> None:
    """Each partition's consumer, fed from offset 0, types every row: the simulator sends a
    BOOTSTRAP before a table's first row on every partition (§6.6) and DDLs carry schemas."""
    log = simulate(
        shop_workload(3), StreamSettings(protocol=f"simple-{encoding}", partitions=3), messages=3500
    )
    rows = 0
    for deliveries in log.partitions:
        decoder = codec(encoding).new_decoder()
        for offset, delivery in enumerate(deliveries):
            rows += sum(
                isinstance(e, DecodedRow)
                for e in decoder.feed(delivery.message, message_index=offset)
            )
        assert (decoder.pending(), decoder.rejected()) == ((), ())
    assert rows == sum(d.kind == "rows" for p in log.partitions for d in p)
    assert any(d.kind == "ddl" for d in log.partitions[0])
