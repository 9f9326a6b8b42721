"""The fuzz harness over the decode fixtures: no crash, no invalid value accepted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from fuzzing import (
    FuzzReport,
    Seed,
    fuzz,
    independent_problem,
    iter_findings,
    load_corpus,
    run_seed,
    summary,
)

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


def _compressed() -> dict[str, list[Seed]]:
    corpus = {
        p: [s for s in seeds if s.compression != "none"] for p, seeds in load_corpus().items()
    }
    return {p: seeds for p, seeds in corpus.items() if seeds}


def test_compressed_seeds_are_decoded_with_their_compression() -> None:
    compressed = _compressed()
    # every protocol with a large-message-handle-compression option has such cases
    assert set(compressed) == set(CODECS) - {"craft"}
    for protocol, seeds in compressed.items():
        assert {s.compression for s in seeds} == {"snappy", "lz4"}, protocol
        for seed in seeds:
            last = len(seed.messages) - 1
            # as declared, the fixture decodes; read as uncompressed it does not
            assert run_seed(protocol, seed, seed.messages, last)[0] == "accepted", seed.name
            plain = Seed(seed.name, seed.messages)
            assert run_seed(protocol, plain, seed.messages, last)[0] == "rejected", seed.name


def test_mutations_of_compressed_seeds_go_through_decompression() -> None:
    report = fuzz(_compressed(), 300, seed=3)
    _check(report)
    for protocol, counter in report.counts.items():
        # mutated compressed bytes: most no longer decompress, and some still do and decode
        for compression in ("snappy", "lz4"):
            assert counter[f"rejected {compression}"] > 0, protocol
        assert counter["accepted snappy"] + counter["accepted lz4"] > 0, protocol


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
