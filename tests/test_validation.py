"""Invalid values through every decoder and encoder: strict, lenient, on the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ticdc_conformance.fixtures.builder._invalid import INVALID_VALUES
from ticdc_conformance.reference import (
    CODECS,
    ColumnInfo,
    DecimalValue,
    DecodedRow,
    DecodeError,
    EncodeError,
    Message,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
)
from ticdc_conformance.reference.decoding import (
    PartitionDecoder,
    decode_leniently,
    decode_messages,
)
from ticdc_conformance.reference.forms import write_message
from ticdc_conformance.reference.validation import InvalidValueError, check_row, unchecked_values

CASES = {(n.protocol, n.name): n.mutate([]) for n in INVALID_VALUES}
"""(protocol, case name) → the messages of every invalid-value golden case."""
STRICT_ONLY = {
    ("simple-json", "invalid-integer"),  # Simple's reader refuses the text as the type
    ("simple-json", "invalid-double"),
    ("simple-avro", "invalid-integer"),
    ("debezium", "invalid-date"),  # days beyond year 9999 have no date text
    ("debezium", "invalid-datetime"),
    ("canal-json", "invalid-double"),  # 1e400: not a double Canal-JSON's reader takes
}
"""Cases whose fault is refused before any value check: no lenient decoding."""
LENIENT = sorted(set(CASES) - STRICT_ONLY)
FAMILIES = {
    "integer",
    "year",
    "bit",
    "enum",
    "set",
    "float",
    "double",
    "decimal",
    "date",
    "datetime",
    "timestamp",
    "time",
    "text",
    "json",
}


def test_every_family_has_a_case_in_every_protocol_that_can_carry_it() -> None:
    missing = {
        "open": {"text"},
        "craft": {"bit", "set", "text", "double"},
        "simple-json": set(),
        "simple-avro": {"text"},
        "debezium": {"enum", "set", "text"},
        "canal-json": set(),
    }
    for protocol in CODECS:
        have = {name.removeprefix("invalid-") for p, name in CASES if p == protocol}
        assert have == FAMILIES - missing[protocol], protocol


@pytest.mark.parametrize(
    ("protocol", "name"), sorted(CASES), ids=[f"{p}.{n}" for p, n in sorted(CASES)]
)
def test_the_decoder_refuses_the_value_naming_column_type_and_location(
    protocol: str, name: str
) -> None:
    messages = CASES[protocol, name]
    with pytest.raises(DecodeError) as raised:
        decode_messages(protocol, messages)
    error = raised.value
    assert error.message_index == len(messages) - 1
    assert error.offset is not None or error.pointer is not None
    if (protocol, name) in STRICT_ONLY:
        assert not isinstance(error, InvalidValueError)
        return
    assert isinstance(error, InvalidValueError)
    assert "column 'c'" in str(error)
    assert error.column == "c"
    assert len(error.findings) == 1


@pytest.mark.parametrize(("protocol", "name"), LENIENT, ids=[f"{p}.{n}" for p, n in LENIENT])
def test_lenient_decoding_gives_the_row_and_a_warning(protocol: str, name: str) -> None:
    events, warnings = decode_leniently(protocol, CASES[protocol, name])
    rows = [e for e in events if isinstance(e, DecodedRow)]
    assert len(rows) == 1
    assert sorted(c.name for c in rows[0].after or ()) == ["c", "id"]
    assert len(warnings) == 1
    assert "column 'c'" in str(warnings[0])


def test_a_lenient_decoder_still_refuses_other_faults() -> None:
    decoder = PartitionDecoder("open", lenient=True)
    with pytest.raises(DecodeError):
        decoder.decode(Message(key=b"\x00" * 8 + b"\x00\x00", value=b""))
    assert decoder.warnings == []


TABLE_COLUMNS: dict[str, tuple[ColumnInfo, Value, Value]] = {
    "integer": (ColumnInfo(name="c", type="tinyint"), 300, 127),
    "integer-unsigned": (ColumnInfo(name="c", type="int", unsigned=True), -1, 4294967295),
    "year": (ColumnInfo(name="c", type="year"), 1900, 2155),
    "bit": (ColumnInfo(name="c", type="bit", length=4), 16, 15),
    "enum": (ColumnInfo(name="c", type="enum", elements=("a", "b")), 3, 2),
    "set": (ColumnInfo(name="c", type="set", elements=("a", "b")), 4, 3),
    "float": (ColumnInfo(name="c", type="float"), 1e39, 3.4028234663852886e38),
    "decimal": (
        ColumnInfo(name="c", type="decimal", length=5, decimal=2),
        DecimalValue("1234.50"),
        DecimalValue("123.45"),
    ),
    "date": (ColumnInfo(name="c", type="date"), "2020-02-30", "2020-02-29"),
    "datetime": (
        ColumnInfo(name="c", type="datetime"),
        "2020-01-01 24:00:00",
        "2020-01-01 23:59:59",
    ),
    "timestamp": (
        ColumnInfo(name="c", type="timestamp"),
        TimestampValue("1960-01-01 00:00:00", "UTC"),
        TimestampValue("2038-01-19 03:14:07", "UTC"),
    ),
    "time": (ColumnInfo(name="c", type="time"), "-839:00:00", "-838:59:59"),
    "json": (ColumnInfo(name="c", type="json"), "{", "{}"),
}


def _row(column: ColumnInfo, value: Value) -> RowChangedEvent:
    table = TableInfo(
        schema="s", name="t", columns=(ColumnInfo(name="id", type="int", key="primary"), column)
    )
    return RowChangedEvent(commit_ts=1, table=table, op="insert", after=(1, value))


@pytest.mark.parametrize("protocol", sorted(CODECS))
@pytest.mark.parametrize("family", sorted(TABLE_COLUMNS))
def test_every_encoder_refuses_the_invalid_value_and_writes_the_valid_one(
    protocol: str, family: str
) -> None:
    column, invalid, valid = TABLE_COLUMNS[family]
    codec = CODECS[protocol]
    with pytest.raises(EncodeError) as raised:
        codec.encode([_row(column, valid), _row(column, invalid)])
    assert raised.value.event_index == 1
    assert "column 'c'" in str(raised.value)
    assert codec.encode([_row(column, valid)])


def test_encoders_write_invalid_values_only_when_told() -> None:
    column, invalid, _ = TABLE_COLUMNS["year"]
    with unchecked_values():
        [message] = CODECS["open"].encode([_row(column, invalid)])
    with pytest.raises(InvalidValueError):
        decode_messages("open", [message])
    with pytest.raises(EncodeError):
        CODECS["open"].encode([_row(column, invalid)])


def _cli(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ticdc_conformance.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_decode_refuses_invalid_values_and_prints_them_with_lenient() -> None:
    names = ["invalid-integer", "invalid-date", "invalid-json"]
    lines = "".join(
        json.dumps(write_message(m)) + "\n" for name in names for m in CASES["open", name]
    )
    strict = _cli("decode", "--protocol", "open", stdin=lines)
    assert strict.returncode == 1
    assert strict.stdout == ""
    assert strict.stderr.count("error: line ") == 3
    assert "line 2: open: message 1, value byte 8, at /u/c/v: invalid value: column 'c'" in (
        strict.stderr
    )
    lenient = _cli("decode", "--protocol", "open", "--lenient", stdin=lines)
    assert lenient.returncode == 0
    rows = [json.loads(line) for line in lenient.stdout.splitlines()]
    assert len(rows) == 3
    warnings = lenient.stderr.splitlines()
    assert [w.split(":")[0:2] for w in warnings] == [
        ["warning", " line 1"],
        ["warning", " line 2"],
        ["warning", " line 3"],
    ]
    assert "2024-13-45" in warnings[1]


@pytest.mark.parametrize(
    ("protocol", "raw"),
    [
        ("open", b'{"u":{"c":{"t":5,"f":1,"v":1' + b"0" * 400 + b"}}}"),
        ("debezium", b'{"payload":{"after":{"c":1' + b"0" * 400 + b"}}}"),
    ],
)
def test_a_401_digit_double_is_a_decode_error(protocol: str, raw: bytes) -> None:
    # found by the fuzz harness: float() of the integer overflowed (OverflowError)
    if protocol == "open":
        [message] = CASES["open", "invalid-double"]
        key, value = message.key, len(raw).to_bytes(8, "big") + raw
    else:
        [message] = CASES["debezium", "invalid-double"]
        key = message.key
        assert b'"c":1e400' in (message.value or b"")
        value = (message.value or b"").replace(b'"c":1e400', b'"c":1' + b"0" * 400)
    with pytest.raises(DecodeError) as raised:
        decode_messages(protocol, [Message(key=key, value=value)])
    assert not isinstance(raised.value, InvalidValueError)
    assert "22 digits" in str(raised.value) or "double range" in str(raised.value)


def test_go_writes_doubles_below_1e21_as_integers() -> None:
    [message] = CASES["open", "invalid-double"]
    raw = b'{"u":{"c":{"t":5,"f":1,"v":100000000000000000000}}}'
    value = len(raw).to_bytes(8, "big") + raw
    [row] = decode_messages("open", [Message(key=message.key, value=value)])
    assert isinstance(row, DecodedRow)
    assert row.after is not None
    assert row.after[0].value == 1e20


def test_check_row_judges_each_table_by_its_own_types_as_tables_alternate() -> None:
    """The column types are kept per table object: rows of tables taking turns, one's value
    fitting its column and not the other's, are judged each by their own table."""
    tiny = TableInfo(schema="s", name="tiny", columns=(ColumnInfo(name="v", type="tinyint"),))
    wide = TableInfo(schema="s", name="wide", columns=(ColumnInfo(name="v", type="bigint"),))
    for _ in range(3):
        for table in (tiny, wide, TableInfo(schema="s", name="w", columns=wide.columns)):
            event = RowChangedEvent(commit_ts=1, table=table, op="insert", after=(300,))
            if table is tiny:
                with pytest.raises(EncodeError, match="'v': tinyint value 300"):
                    check_row(event, "open")
            else:
                check_row(event, "open")
