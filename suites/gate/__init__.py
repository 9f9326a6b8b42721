"""The conformance gate: golden cases against an implementation, and the run's verdict.

``load_cases`` reads the fixture manifest in a fixed order; ``check_case`` runs one case
through a decoder or encoder adapter (``adapters``) and returns an ``Outcome`` naming the case
id, its fixture files, what differs and one command replaying just that case; ``run_cases``
checks many. Known-failure files (``read_xfail_file``) list the cases an implementation is
known to fail; ``judge`` weighs the outcomes against them (unexpected failures, unexpected
passes, stale and partly passing entries) and gives the verdict with its exit code. The
``run`` command, the pytest plugin and the testee runner (``suites.testee``) are built on it.
"""

from __future__ import annotations

from ticdc_conformance.suites.gate._cases import Case, CaseMessage, load_cases
from ticdc_conformance.suites.gate._check import (
    AdapterFaultError,
    AdapterSkipError,
    Outcome,
    check_case,
    hex_diff,
    json_diff,
    replay_command,
    reported_category,
    run_cases,
    summarize,
)
from ticdc_conformance.suites.gate._run import (
    RoundTrip,
    Selection,
    check_reference,
    example_round_trips,
    gate_adapters,
    read_known_failures,
)
from ticdc_conformance.suites.gate._verdict import OutdatedEntry, Verdict, judge
from ticdc_conformance.suites.gate._xfail import (
    XfailEntry,
    XfailFileError,
    match_entry,
    read_xfail_file,
    stale_entries,
)

__all__ = [
    "AdapterFaultError",
    "AdapterSkipError",
    "Case",
    "CaseMessage",
    "Outcome",
    "OutdatedEntry",
    "RoundTrip",
    "Selection",
    "Verdict",
    "XfailEntry",
    "XfailFileError",
    "check_case",
    "check_reference",
    "example_round_trips",
    "gate_adapters",
    "hex_diff",
    "json_diff",
    "judge",
    "load_cases",
    "match_entry",
    "read_known_failures",
    "read_xfail_file",
    "replay_command",
    "reported_category",
    "run_cases",
    "stale_entries",
    "summarize",
]
