"""Inputs the Debezium tests share: the datatype table of TiCDC's golden test (ground truth
§7.1, rebuilt from its facts; the shipped ``facts`` fixture case is built from the same
function) and the one-column table of TiCDC's ``codec_test`` (§7.2)."""

from __future__ import annotations

from ticdc_conformance.fixtures.builder._fact_events import datatype_insert
from ticdc_conformance.reference import ColumnInfo, TableInfo

__all__ = ["GOLDEN_DIR", "TABLE1", "datatype_insert"]

GOLDEN_DIR = "upstream/pingcap+tiflow/pkg/sink/codec/debezium/testdata"


# codec_test's table: test.table1, one TINYINT `tiny` flagged Nullable|HandleKey|PrimaryKey
TABLE1 = TableInfo(
    schema="test",
    name="table1",
    columns=(ColumnInfo(name="tiny", type="tinyint", flags=64 | 2 | 8),),
)
