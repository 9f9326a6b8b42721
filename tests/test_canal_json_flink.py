"""A third-party cross-check: Flink's ``canal-json`` format reads the kit's Canal-JSON.

Runs where PyFlink (PyPI ``apache-flink``, which carries the format's jar) and Java are
installed; skipped with the reason elsewhere. The kit's messages (rows of every kind, a CREATE
TABLE, an ALTER TABLE and a watermark) go into a file that a Flink filesystem table with
``format = canal-json`` reads. Pinned expectations (docs/canal-json.md, "What Flink's
canal-json format reads"): rows become +I / -U +U / -D, a CREATE DDL is skipped, and any other
DDL type or a TIDB_WATERMARK stops the job unless ``canal-json.ignore-parse-errors`` is set.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ticdc_conformance.reference import (
    ChangeEvent,
    ColumnInfo,
    DDLEvent,
    ResolvedEvent,
    RowChangedEvent,
    TableInfo,
    canal_json,
)

pytestmark = [
    pytest.mark.flink,
    pytest.mark.slow,
    # PyFlink's Python side (Apache Beam, httplib2) warns on import and leaves pipes open
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::ResourceWarning"),
]
table_api = pytest.importorskip(
    "pyflink.table", reason="PyFlink is not installed (pip install apache-flink; needs Java 17)"
)

_TS = 1_767_225_600_000 << 18
_TABLE = TableInfo(
    schema="shop",
    name="items",
    columns=(
        ColumnInfo(name="id", type="int", key="primary"),
        ColumnInfo(name="name", type="varchar", length=32),
        ColumnInfo(name="tag", type="varbinary", length=8),
    ),
)
_ROWS: tuple[ChangeEvent, ...] = (
    RowChangedEvent(commit_ts=_TS, table=_TABLE, op="insert", after=(1, "a<b", b"\x00\xff")),
    RowChangedEvent(
        commit_ts=_TS + 1,
        table=_TABLE,
        op="update",
        before=(1, "a<b", b"\x00\xff"),
        after=(1, "b", b"\x00\xff"),
    ),
    RowChangedEvent(commit_ts=_TS + 2, table=_TABLE, op="delete", before=(1, "b", b"\x00\xff")),
)
_CREATE = DDLEvent(
    commit_ts=_TS - 1,
    schema="shop",
    table="items",
    ddl_type=3,
    query="CREATE TABLE items (id INT PRIMARY KEY, name VARCHAR(32), tag VARBINARY(8))",
)
_ALTER = DDLEvent(
    commit_ts=_TS + 3,
    schema="shop",
    table="items",
    ddl_type=5,
    query="ALTER TABLE items ADD COLUMN c INT",
)
_EXPECTED = [
    ("+I", 1, "a<b", "\x00\xff"),
    ("-U", 1, "a<b", "\x00\xff"),
    ("+U", 1, "b", "\x00\xff"),
    ("-D", 1, "b", "\x00\xff"),
]


_KINDS = {"INSERT": "+I", "UPDATE_BEFORE": "-U", "UPDATE_AFTER": "+U", "DELETE": "-D"}


def _write(folder: Path, events: tuple[ChangeEvent, ...]) -> Path:
    config = canal_json.config_from_options({"enable-tidb-extension": "true"})
    messages = canal_json.encode(events, config)
    path = folder / "topic.json"
    path.write_bytes(b"\n".join(m.value or b"" for m in messages) + b"\n")
    return path


def _read(path: Path, *, ignore_errors: bool) -> list[tuple[object, ...]]:
    settings = table_api.EnvironmentSettings.in_streaming_mode()
    env = table_api.TableEnvironment.create(settings)
    env.get_config().set("parallelism.default", "1")
    env.execute_sql(
        "CREATE TABLE items (id INT, name STRING, tag STRING) WITH ("
        f"'connector' = 'filesystem', 'path' = 'file://{path}', 'format' = 'canal-json', "
        f"'canal-json.ignore-parse-errors' = '{str(ignore_errors).lower()}')"
    )
    with env.execute_sql("SELECT id, name, tag FROM items").collect() as results:
        return [(_KINDS[row.get_row_kind().name], *row) for row in results]


def test_flink_reads_rows_and_skips_create(tmp_path: Path) -> None:
    path = _write(tmp_path, (_CREATE, *_ROWS))
    assert _read(path, ignore_errors=False) == _EXPECTED


@pytest.mark.parametrize(
    "other", [_ALTER, ResolvedEvent(commit_ts=_TS + 4)], ids=["alter-ddl", "watermark"]
)
def test_flink_refuses_other_ddl_types_and_watermarks(tmp_path: Path, other: ChangeEvent) -> None:
    path = _write(tmp_path, (*_ROWS, other))
    with pytest.raises(Exception, match="Unknown"):  # Py4J wraps Flink's error
        _read(path, ignore_errors=False)
    assert _read(path, ignore_errors=True) == _EXPECTED
