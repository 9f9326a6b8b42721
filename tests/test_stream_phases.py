"""Progress in a Spark job's own phases (suites/stream/phases.py).

The line is checked on a stream that says it is a terminal; the phases of ``check-consumer``
and ``expected-state`` on Spark through the listener, in a real local session over a small
shipped stream fixture (``check-stream``'s phases: tests/test_spark_checker.py). Only the order
of the phases is asserted, never a timing.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ticdc_conformance.suites.consumer.actual import Snapshot
from ticdc_conformance.suites.consumer.check import Tally
from ticdc_conformance.suites.consumer.expected import KEY_COLUMN, read_expected_state
from ticdc_conformance.suites.inputs import resolve_input
from ticdc_conformance.suites.stream.phases import Phases, PhaseUpdate

STREAM = "stream.open.tiflow.replay"


class Terminal(io.StringIO):
    """A captured stream that says it is a terminal, as stderr is in an interactive shell."""

    def isatty(self) -> bool:
        return True


def run_phases(names: list[str], out: io.StringIO, *, quiet: bool) -> list[PhaseUpdate]:
    updates: list[PhaseUpdate] = []
    with Phases(
        None, command="check-x", quiet=quiet, planned=len(names), listener=updates.append, out=out
    ) as phases:
        for name in names:
            with phases.phase(name):
                pass
    return updates


def test_each_phase_starts_and_ends_in_order() -> None:
    updates = run_phases(["reading", "joining table a.b"], Terminal(), quiet=True)
    assert [(u.phase, u.index, u.ended) for u in updates] == [
        ("reading", 1, False),
        ("reading", 1, True),
        ("joining table a.b", 2, False),
        ("joining table a.b", 2, True),
    ]
    assert all(u.planned == 2 for u in updates)
    assert len({u.group for u in updates}) == 2


def test_the_line_names_the_command_and_the_phase_on_a_terminal() -> None:
    out = Terminal()
    run_phases(["reading the dump", "collecting findings"], out, quiet=False)
    text = out.getvalue()
    assert "check-x: reading the dump (1 of 2)" in text
    assert "check-x: collecting findings (2 of 2)" in text


@pytest.mark.parametrize(
    ("out", "quiet"), [(Terminal(), True), (io.StringIO(), False)], ids=["quiet", "no terminal"]
)
def test_no_line_with_quiet_or_off_a_terminal(out: io.StringIO, quiet: bool) -> None:
    updates = run_phases(["reading the dump"], out, quiet=quiet)
    assert out.getvalue() == ""
    assert [u.phase for u in updates] == ["reading the dump"] * 2  # the listener still hears


def started(updates: list[PhaseUpdate]) -> list[str]:
    return [u.phase for u in updates if not u.ended and u.done == 0 and u.total is None]


@pytest.fixture(scope="module")
def expected_state(
    spark: Any, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, list[PhaseUpdate]]:
    from ticdc_conformance.suites.consumer import spark_state

    dump, _ = resolve_input(STREAM)
    out = tmp_path_factory.mktemp("expected")
    updates: list[PhaseUpdate] = []
    with Phases(spark.sparkContext, command="expected-state", listener=updates.append) as phases:
        spark_state.write_expected_state(spark, dump, "open", out, phases=phases)
    return out, updates


@pytest.mark.spark
def test_expected_state_on_spark_reports_its_phases_in_order(
    spark: Any, expected_state: tuple[Path, list[PhaseUpdate]]
) -> None:
    folder, updates = expected_state
    tables = [f"{t.schema}.{t.table}" for t in read_expected_state(folder).tables]
    assert tables
    assert started(updates) == [
        "reading the dump",
        "decoding partitions",
        "applying changes",
        *(f"writing table {name}" for name in sorted(tables)),
        "writing the change log",
    ]
    assert [u.phase for u in updates if u.ended] == started(updates)
    tracker = spark.sparkContext.statusTracker()
    [decoding] = [u for u in updates if u.ended and u.phase == "decoding partitions"]
    assert tracker.getJobIdsForGroup(decoding.group)


@pytest.mark.spark
def test_check_consumer_on_spark_joins_table_after_table(
    spark: Any, expected_state: tuple[Path, list[PhaseUpdate]], tmp_path: Path
) -> None:
    from ticdc_conformance.suites.consumer import spark as consumer_spark

    expected = read_expected_state(expected_state[0])
    for table in expected.tables:
        rows = [{k: v for k, v in r.items() if k != KEY_COLUMN} for r in expected.rows(table)]
        if rows:
            pq.write_table(
                pa.Table.from_pylist(rows), tmp_path / f"{table.schema}.{table.table}.parquet"
            )
    updates: list[PhaseUpdate] = []
    tally = Tally()
    with Phases(
        spark.sparkContext,
        command="check-consumer",
        planned=len(expected.tables),
        listener=updates.append,
    ) as phases:
        consumer_spark.check_snapshot(spark, expected, Snapshot(str(tmp_path)), tally, phases)
    names = [f"joining table {t.schema}.{t.table}" for t in expected.tables]
    assert started(updates) == names
    assert [u.index for u in updates if u.ended] == list(range(1, len(names) + 1))
    assert tally.counts == {}  # the rows written are the expected ones
