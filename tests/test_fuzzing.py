"""The fuzz harness over the decode fixtures: no crash, no invalid value accepted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fuzzing import FuzzReport, fuzz, independent_problem, iter_findings, load_corpus, summary

from ticdc_conformance.reference import CODECS, DecimalValue, TimestampValue
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.values import Value

LONG_RUN = int(os.environ.get("TICDC_FUZZ_INPUTS", "5000"))
"""Inputs per protocol of the slow run: 5,000 in the default test command (about a minute);
``TICDC_FUZZ_INPUTS=1000000`` is the long run of benchmarks/results/fuzzing.md."""
LONG_RUN_PROTOCOLS = os.environ.get("TICDC_FUZZ_PROTOCOLS", "")
"""Comma-separated protocols of the slow run (default every one), to split a long run over
processes."""
LONG_RUN_REPORT = os.environ.get("TICDC_FUZZ_REPORT", "")
"""A file the slow run writes its counts to (JSON), when given."""


def _check(report: FuzzReport) -> None:
    assert report.total("crashed") == 0, "\n".join(iter_findings(report))
    assert report.total("invalid") == 0, "\n".join(iter_findings(report))
    for protocol, counter in report.counts.items():
        assert counter["rejected"] > 0, protocol  # the mutations do reach the decoders


def test_default_run_finds_no_crash_and_no_invalid_value() -> None:
    report = fuzz(load_corpus(), 300, seed=1)
    assert set(report.counts) == set(CODECS)
    _check(report)


@pytest.mark.slow
def test_long_run_finds_no_crash_and_no_invalid_value() -> None:
    corpus = load_corpus()
    if LONG_RUN_PROTOCOLS:
        corpus = {p: corpus[p] for p in LONG_RUN_PROTOCOLS.split(",")}
    report = fuzz(corpus, LONG_RUN, seed=2)
    if LONG_RUN_REPORT:  # the counts, for the note of a long run
        Path(LONG_RUN_REPORT).write_text(json.dumps(summary(report), indent=1) + "\n")
    _check(report)


@pytest.mark.parametrize(
    ("column", "invalid"),
    [
        (DecodedColumn("c", 300, 1, 0), True),
        (DecodedColumn("c", 256, 1, 128), True),
        (DecodedColumn("c", 255, 1, 128), False),
        (DecodedColumn("c", 255, 1, None), False),
        (DecodedColumn("c", 1900, 13, 0), True),
        (DecodedColumn("c", 2155, 13, 0), False),
        (DecodedColumn("c", float("inf"), 5, 0), True),
        (DecodedColumn("c", 1e39, 4, 0), True),
        (DecodedColumn("c", DecimalValue("1." + "1" * 31), 246, 0), True),
        (DecodedColumn("c", "2024-13-45", 10, 0), True),
        (DecodedColumn("c", "2024-02-29", 10, 0), False),
        (DecodedColumn("c", TimestampValue("2024-01-01 00:00:00"), 7, 0), False),
        (DecodedColumn("c", "-838:59:59.0", 11, 0), False),
        (DecodedColumn("c", "838:59:59.5", 11, 0), True),
        (DecodedColumn("c", "{", 245, 0), True),
        (DecodedColumn("c", "\ud800", 15, 0), True),
        (DecodedColumn("c", -1, None, None, None, "tinyint unsigned"), True),
        (DecodedColumn("c", 300, None, None, None, "tinyint"), True),
        (DecodedColumn("c", 300, 1, 0, None, None, "no-schema"), False),
    ],
)
def test_the_independent_oracle(column: DecodedColumn, invalid: bool) -> None:
    value: Value = column.value
    assert (independent_problem(column) is not None) == invalid, value
