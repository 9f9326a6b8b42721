"""Every codec's per-type tables come in pairs and cover every MySQL type.

The encode table and the decode table of each protocol are keyed by ``mysql.MySQLType``; a
type missing from one of them would fall to a generic branch that TiCDC does not take. Debezium
reads a value by its field schema, not by a type name, so its check runs the other way: the
field schema written for each type names a reader.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import pytest

from ticdc_conformance.reference import debezium
from ticdc_conformance.reference.canal_json import _types as canal_types
from ticdc_conformance.reference.craft import _values as craft_values
from ticdc_conformance.reference.debezium import _payload, _read, _types
from ticdc_conformance.reference.mysql import MYSQL_TYPES, TYPE_CODES, MySQLType
from ticdc_conformance.reference.open_protocol import _columns as open_values
from ticdc_conformance.reference.simple import _checksum
from ticdc_conformance.reference.simple import _values as simple_values
from ticdc_conformance.reference.tables import NULLABLE_FLAG, UNSIGNED_FLAG, ColumnInfo

TABLES: dict[str, tuple[Mapping[MySQLType, object], ...]] = {
    "open": (open_values.WRITERS, open_values.READERS),
    "craft": (craft_values.WRITERS, craft_values.READERS),
    "simple-json": (simple_values.JSON_WRITERS, simple_values.READERS),
    "simple-avro": (simple_values.AVRO_WRITERS, simple_values.READERS),
    "simple checksum": (_checksum.COLUMN_BYTES,),
    "debezium": (_types.SCHEMA_TYPES, _types.DEFAULTS, _payload.VALUES),
    "canal-json": (canal_types.SQL_TYPES,),
}


@pytest.mark.parametrize("protocol", sorted(TABLES))
def test_every_table_covers_every_mysql_type(protocol: str) -> None:
    for table in TABLES[protocol]:
        assert set(table) == set(MYSQL_TYPES), set(MYSQL_TYPES) ^ set(table)


def _variants(name: MySQLType) -> list[ColumnInfo]:
    """Columns of type ``name`` in each shape that changes its Debezium field schema."""
    base = ColumnInfo(name="c", type=name, elements=("a", "b"))
    variants = [base]
    if name == "bit":
        variants.append(ColumnInfo(name="c", type=name, length=9))
    if name in ("datetime", "float"):
        variants.append(ColumnInfo(name="c", type=name, decimal=6))
    return variants


@pytest.mark.parametrize("name", MYSQL_TYPES)
@pytest.mark.parametrize("flags", [0, UNSIGNED_FLAG | NULLABLE_FLAG])
def test_debezium_field_schemas_name_a_reader(name: MySQLType, flags: int) -> None:
    config = debezium.Config(enable_tidb_extension=True)
    for column in _variants(name):
        field = _types.field_schema(column, flags, config)
        if _types.SCHEMA_TYPES[name] is None:  # not supported: a placeholder, read untyped
            assert set(field) == {"tidb_type"}
            continue
        logical = field.get("name")
        if isinstance(logical, str):
            assert _read.LOGICAL_TYPES[logical][0] == name
        else:
            assert field["type"] in _read.SCHEMA_TYPES
        read = _read.read_column("c", None, json.loads(json.dumps(field)), None)
        assert read.type_code == TYPE_CODES[name]
