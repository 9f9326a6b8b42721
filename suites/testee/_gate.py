"""``run --testee``: the gate, through a testee program, from its start to its verdict.

The testee is started and greeted; the cases it declares it can take are chosen from the
selection; each goes through the gate's own checks (``run_testee``); the verdict weighs them
against the known failures like any other run. A testee that cannot be run at all is a usage
error; one that breaks past its restart budget stops the run, which keeps the verdict of the
cases it did check and ends with exit status 3 (``RunBrokenError``'s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ticdc_conformance.fixtures import kit_version
from ticdc_conformance.reference.errors import ExitCode, RunBrokenError, UsageError
from ticdc_conformance.suites.gate import Case, XfailEntry
from ticdc_conformance.suites.gate._verdict import Verdict, judge
from ticdc_conformance.suites.testee._process import MAX_LINE_BYTES
from ticdc_conformance.suites.testee._runner import Testee, TesteeBrokenError, run_testee

__all__ = ["TesteeRun", "TesteeSettings", "gate_testee"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TesteeSettings:
    """How to run the testee: its command and the runner's limits."""

    command: str
    timeout: float = 10.0
    """Seconds a case's answer may take."""
    max_restarts: int = 20
    log: Path | None = None
    """A file receiving every line sent (``> ``) and read (``< ``)."""
    max_line_bytes: int = MAX_LINE_BYTES
    """The longest response line read; a longer one fails its case."""


@dataclass(frozen=True, slots=True, kw_only=True)
class TesteeRun:
    """The verdict of a testee run, and why it stopped early if it did."""

    verdict: Verdict
    restarts: int
    stopped: str | None

    @property
    def exit_code(self) -> ExitCode:
        """The verdict's, or ``BROKEN`` when the run stopped early."""
        return ExitCode.BROKEN if self.stopped else self.verdict.exit_code


def gate_testee(
    settings: TesteeSettings,
    select: Callable[[list[str]], list[Case]],
    entries: Sequence[XfailEntry],
    *,
    fixtures: str | None = None,
    say: Callable[[str], None],
    progress: Callable[[int, int], None] | None = None,
) -> TesteeRun:
    """Start the testee, check the cases ``select`` picks for its directions, judge them.

    ``select`` takes the directions the testee declares and returns the selected cases;
    ``say`` receives the lines a person reads while it runs (capabilities, cases left out);
    ``progress`` is told (cases done, cases) after each case.
    Raises ``UsageError`` (bad limits, a command that cannot run, nothing to check) and
    ``RunBrokenError`` (a testee that never says a valid hello).
    """
    if settings.timeout <= 0 or settings.max_restarts < 0 or settings.max_line_bytes <= 0:
        raise UsageError(
            "--testee-timeout and --testee-max-line-bytes must be positive, "
            "--testee-restarts not negative"
        )
    try:
        log = None if settings.log is None else settings.log.open("w", encoding="utf-8")
    except OSError as error:
        raise UsageError(str(error)) from None
    try:
        testee = Testee(
            settings.command,
            timeout=settings.timeout,
            max_restarts=settings.max_restarts,
            kit_version=kit_version(),
            log=log,
            max_line_bytes=settings.max_line_bytes,
        )
    except ValueError as error:
        if log is not None:
            log.close()
        raise UsageError(str(error)) from None
    try:
        try:
            capabilities = testee.start()
        except OSError as error:
            raise UsageError(f"--testee {settings.command}: cannot run it: {error}") from None
        except TesteeBrokenError as error:
            raise RunBrokenError(str(error)) from None
        say(capabilities.describe())
        for where in capabilities.ignored:
            say(f"warning: the testee declares {where}, which this kit does not know; ignored")
        selected = select(capabilities.directions())
        cases = [c for c in selected if capabilities.covers(c)]
        if len(cases) < len(selected):
            say(
                f"{len(selected) - len(cases)} selected case(s) outside what the testee "
                "declares are not run"
            )
        if not cases:
            raise UsageError("no case matches the selection and the testee's capabilities")
        outcomes, stopped = run_testee(testee, cases, fixtures=fixtures, progress=progress)
    finally:
        testee.close()
        if log is not None:
            log.close()
    verdict = judge(outcomes, entries, selected=[c.id for c in cases[: len(outcomes)]])
    return TesteeRun(verdict=verdict, restarts=testee.restarts, stopped=stopped)
