"""Inputs the Debezium tests share: the datatype table of TiCDC's golden test (ground truth
§7.1, rebuilt from its facts) and the one-column table of TiCDC's ``codec_test`` (§7.2)."""

from __future__ import annotations

from ticdc_conformance.reference import (
    ColumnInfo,
    DecimalValue,
    IndexInfo,
    RowChangedEvent,
    TableInfo,
    TimestampValue,
    Value,
)

DATETIME = "2023-11-30 12:34:56"
GOLDEN_DIR = "upstream/pingcap+tiflow/pkg/sink/codec/debezium/testdata"


def datatype_insert() -> RowChangedEvent:
    """``INSERT INTO foo`` of ``datatype.dml.sql`` as TiCDC's mounter hands it over (§1.1):
    temporal values already rounded to the column's fsp, 'foo' padded in BINARY(100), the
    invalid ENUM/SET values as 0, the statement run with time_zone UTC."""
    columns: list[ColumnInfo] = [ColumnInfo(name="pk", type="int")]
    values: list[Value] = [1]

    def add(name: str, mysql_type: str, value: Value, **metadata: object) -> None:
        columns.append(ColumnInfo(name=name, type=mysql_type, **metadata))  # type: ignore[arg-type]
        values.append(value)

    for suffix, date in (("2023", "2023-11-30"), ("1000", "1000-01-01"),
                         ("9999", "9999-12-31"), ("0000", "0000-00-00")):  # fmt: skip
        add(f"col_d_{suffix}", "date", date)
    for name, fsp, fraction in (("col_dt", 0, ""), ("col_dt_fsp_0", 0, ""),
                                ("col_dt_fsp_1", 1, ".1"), ("col_dt_fsp_4", 4, ".1235"),
                                ("col_dt_fsp_6", 6, ".123456")):  # fmt: skip
        add(name, "datetime", DATETIME + fraction, decimal=fsp)
    add("col_dt_0000", "datetime", "0000-00-00 00:00:00.000000", decimal=6)
    for name, fsp, fraction in (("col_t", 0, ""), ("col_t_fsp_0", 0, ""), ("col_t_fsp_1", 1, ".1"),
                                ("col_t_fsp_4", 4, ".1235"), ("col_t_fsp_6", 6, ".123456")):  # fmt: skip
        add(name, "time", "12:34:56" + fraction, decimal=fsp)
    add("col_t_neg", "time", "-12:34:56.123456", decimal=6)
    for name, fsp, fraction in (("col_ts", 0, ""), ("col_ts_fsp_0", 0, ""),
                                ("col_ts_fsp_1", 1, ".1"), ("col_ts_fsp_5", 5, ".12346"),
                                ("col_ts_fsp_6", 6, ".123456")):  # fmt: skip
        add(name, "timestamp", TimestampValue(DATETIME + fraction, "UTC"), decimal=fsp)
    add("col_y", "year", 2023)
    for width, bits in ((1, 1), (5, 16), (6, 16), (60, 16)):
        add(f"col_bit_{width}", "bit", bits, length=width)
    add("col_varchar", "varchar", "foo", length=100)
    add("col_char", "char", "foo", length=100)
    add("col_varbinary", "varbinary", b"foo", length=100)
    add("col_binary", "binary", b"foo" + bytes(97), length=100)
    add("col_blob", "blob", b"foo")
    add("col_decimal", "decimal", DecimalValue("12345.12345"), length=10, decimal=5)
    add("col_numeric", "decimal", DecimalValue("12345.12345"), length=10, decimal=5)
    add("col_float", "float", 12345.12345)
    add("col_double", "double", 12345.12345)
    for base, bits in (("int", 32), ("tinyint", 8), ("smallint", 16), ("mediumint", 24),
                       ("bigint", 64)):  # fmt: skip
        add(f"col_{base}", base, -(2 ** (bits - 1)))
        add(f"col_{base}_unsigned", base, 2**bits - 1, unsigned=True)
    for name, index in (("col_enum", 1), ("col_enum_invalid", 0)):
        add(name, "enum", index, elements=("a", "b", "c"))
    for name, mask in (("col_set", 0b011), ("col_set_invalid", 0)):
        add(name, "set", mask, elements=("a", "b", "c"))
    add("col_json", "json", '["foo"]')
    table = TableInfo(
        schema="test", name="foo", columns=tuple(columns),
        indexes=(IndexInfo(name="PRIMARY", columns=("pk",), primary=True, unique=True),),
    )  # fmt: skip
    return RowChangedEvent(commit_ts=1, table=table, op="insert", after=tuple(values))


# codec_test's table: test.table1, one TINYINT `tiny` flagged Nullable|HandleKey|PrimaryKey
TABLE1 = TableInfo(
    schema="test",
    name="table1",
    columns=(ColumnInfo(name="tiny", type="tinyint", flags=64 | 2 | 8),),
)
