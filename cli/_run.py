"""The command ``run``: gate a decoder or encoder (Python adapters or a testee) on golden cases."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from ticdc_conformance.cli._args import PROFILES, PROTOCOLS, Commands
from ticdc_conformance.reference import ExitCode
from ticdc_conformance.reference.errors import UsageError

if TYPE_CHECKING:
    from ticdc_conformance.suites.gate import Selection, Verdict, XfailEntry

__all__ = ["add_parsers", "print_reference_check"]


def _say(line: str) -> None:
    print(line, file=sys.stderr)


def _run(args: argparse.Namespace, out: IO[str]) -> int:
    from ticdc_conformance.suites.gate import (
        Selection,
        gate_adapters,
        read_known_failures,
    )

    selection = Selection(
        fixtures=args.fixtures,
        protocols=args.protocol,
        profiles=args.profile,
        tiers=args.tier,
        ids=args.case,
    )
    entries = read_known_failures(args.xfail)
    if args.testee:
        return _run_testee(args, selection, entries, out)
    with _progress(args) as progress:
        verdict = gate_adapters(
            selection,
            decoder=args.decoder,
            encoder=args.encoder,
            entries=entries,
            progress=progress,
        )
    _report(args, verdict, out)
    return verdict.exit_code


@contextlib.contextmanager
def _progress(args: argparse.Namespace) -> Iterator[Callable[[int, int], None] | None]:
    """The run's progress line (cases done of cases) on a terminal, cleared at the end."""
    from ticdc_conformance.generators.progress import Progress

    progress = Progress.for_terminal("checked", quiet=args.quiet, unit="cases")
    try:
        yield None if progress is None else progress.advance
    finally:
        if progress is not None:
            progress.done()


def _run_testee(
    args: argparse.Namespace, selection: Selection, entries: list[XfailEntry], out: IO[str]
) -> int:
    from ticdc_conformance.suites.testee import TesteeSettings, gate_testee

    if args.decoder or args.encoder:
        raise UsageError("--testee replaces --decoder and --encoder: give one or the other")
    settings = TesteeSettings(
        command=args.testee,
        timeout=args.testee_timeout,
        max_restarts=args.testee_restarts,
        log=Path(args.testee_log) if args.testee_log else None,
        max_line_bytes=args.testee_max_line_bytes,
    )
    with _progress(args) as progress:
        run = gate_testee(
            settings,
            selection.cases,
            entries,
            fixtures=args.fixtures,
            say=_say,
            progress=progress,
        )
    _report(args, run.verdict, out)
    if run.restarts:
        _say(f"the testee was started again {run.restarts} time(s)")
    if run.stopped is not None:
        _say(f"error: the run broke: {run.stopped}")
    return run.exit_code


def _report(args: argparse.Namespace, verdict: Verdict, out: IO[str]) -> None:
    """Print the verdict's lines and any annotations; write ``--report`` and ``--junit``."""
    from ticdc_conformance.suites.report import (
        annotations_wanted,
        github_cases,
        junit_cases,
        write_atomically,
    )

    for line in verdict.lines():
        _say(line)
    rows = verdict.rows()
    if annotations_wanted(args.annotations):
        out.writelines(f"{line}\n" for line in github_cases(rows))
    if args.report:
        # ASCII escapes: a decoder's text may hold raw bytes as lone surrogates, which JSON
        # can carry as \u escapes and UTF-8 cannot
        write_atomically(args.report, "".join(json.dumps(r) + "\n" for r in rows))
    if args.junit:
        write_atomically(args.junit, junit_cases(rows, suite="ticdc-conformance run"))


def print_reference_check() -> int:
    """Run every golden case against the reference codecs; print counts per protocol and tier."""
    from ticdc_conformance.suites.gate import check_reference, summarize

    started = time.perf_counter()
    outcomes = check_reference()
    _say("golden suite against the reference codecs:")
    for outcome in outcomes:
        if outcome.status != "pass":
            _say(outcome.report())
    for line in summarize(outcomes):
        _say(f"  {line}")
    failed = sum(o.status != "pass" for o in outcomes)
    seconds = time.perf_counter() - started
    _say(f"  {len(outcomes)} cases, {failed} not passed, in {seconds:.1f} s")
    return ExitCode.FAILURE if failed else ExitCode.OK


def add_parsers(commands: Commands) -> None:
    """Add ``run``."""
    run = commands.add_parser(
        "run",
        help="check an implementation against the golden cases",
        description="Check a decoder (messages -> decoded events) and/or an encoder (change "
        "events -> messages), Python callables or a testee program in any language, against "
        "every selected case; print each failure with its case id, fixture path, difference "
        "and a command replaying just that case, then counts per protocol and tier.",
        epilog="Exit codes: 0 every case as expected, 1 a conformance failure or unexpected "
        "pass, 2 usage error, 3 the run broke.",
    )
    run.add_argument(
        "--protocol", action="append", choices=PROTOCOLS, help="only this protocol (repeatable)"
    )
    run.add_argument(
        "--profile", action="append", choices=PROFILES, help="only this producer profile"
    )
    run.add_argument(
        "--tier",
        action="append",
        choices=("required", "recommended"),
        help="only this tier (repeatable; default both)",
    )
    run.add_argument("--case", action="append", help="case id or pattern, repeatable")
    run.add_argument("--decoder", help="module:callable, or reference")
    run.add_argument("--encoder", help="module:callable, or reference")
    run.add_argument(
        "--testee",
        metavar="COMMAND",
        help="a program in any language speaking the testee protocol on stdin and stdout "
        "(docs/testee-protocol.md), instead of --decoder/--encoder",
    )
    run.add_argument(
        "--testee-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="per-case answer time; a testee that takes longer is killed, the case fails and "
        "the testee is started again (default 10)",
    )
    run.add_argument(
        "--testee-restarts",
        type=int,
        default=20,
        metavar="N",
        help="start a crashed, hung or out-of-step testee again at most N times, then stop "
        "with exit status 3 (default 20)",
    )
    run.add_argument(
        "--testee-max-line-bytes",
        type=int,
        default=256 * 1024 * 1024,
        metavar="N",
        help="the longest response line read from the testee; a longer one is skipped unread, "
        "its case fails and the testee is started again (default 268435456, 256 MiB)",
    )
    run.add_argument(
        "--testee-log",
        metavar="FILE",
        help="write every line sent to ('> ') and read from ('< ') the testee",
    )
    run.add_argument("--xfail", help="known-failure file: 'CASE-ID-OR-PATTERN: reason' lines")
    run.add_argument(
        "--fixtures", help="fixtures folder or fetched kit version (default: the shipped one)"
    )
    run.add_argument("--report", help="also write every outcome as JSON Lines to this file")
    run.add_argument(
        "--junit",
        metavar="FILE",
        help="also write JUnit XML for CI: one testcase per case, the located diff as the "
        "failure message, known failures and cases not handled as skipped",
    )
    run.add_argument(
        "--annotations",
        choices=("github", "auto"),
        help="also print GitHub Actions annotations (::error lines on stdout) for unexpected "
        "results, at most 10; auto: only when GITHUB_ACTIONS=true",
    )
    run.add_argument(
        "--quiet", action="store_true", help="no progress line (shown only on a terminal)"
    )
    run.set_defaults(handler=_run)
