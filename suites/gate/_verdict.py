"""The verdict of a gate run: the outcomes weighed against the known failures, with an exit code.

Strict, as the best suites are:

* a failing case that no known-failure entry lists is an *unexpected failure*;
* a listed case that passes is an *unexpected pass*: its entry is out of date. When every case
  an entry matches passes, the entry is to be deleted; when some of them still fail (a
  pattern matching several cases), it is to be narrowed, and the verdict names the cases that
  pass and those that still fail;
* an entry that matches no selected case is *stale* (a warning: it fails nothing);
* a listed case that fails is a *known failure*, counted as such, never as a failure, so the
  counts and the verdict agree.

The exit code is ``FAILURE`` when there is an unexpected failure or an unexpected pass, else
``OK``. The verdict also gives the report rows (one JSON object per case) and the lines a
command prints.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ticdc_conformance.reference.errors import ExitCode
from ticdc_conformance.suites.gate._check import Outcome, summarize
from ticdc_conformance.suites.gate._xfail import XfailEntry, match_entry, stale_entries

__all__ = ["OutdatedEntry", "Verdict", "judge"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OutdatedEntry:
    """A known-failure entry that lists cases which now pass."""

    entry: XfailEntry
    passing: tuple[str, ...]
    still_failing: tuple[str, ...]

    def advice(self) -> str:
        """What to do with the entry: delete it, or narrow it to the cases still failing."""
        where = f"line {self.entry.where()}: {self.entry.text()}"
        if not self.still_failing:
            return f"delete {where}"
        return (
            f"narrow {where} (it also matches {len(self.still_failing)} case(s) that still "
            f"fail: {', '.join(self.still_failing[:5])}"
            f"{', …' if len(self.still_failing) > 5 else ''})"
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """What a gate run found; ``exit_code`` is the command's exit status."""

    outcomes: tuple[Outcome, ...]
    entries: tuple[XfailEntry, ...]
    unexpected_failures: tuple[Outcome, ...]
    unexpected_passes: tuple[Outcome, ...]
    outdated: tuple[OutdatedEntry, ...]
    stale: tuple[XfailEntry, ...]

    @property
    def exit_code(self) -> ExitCode:
        """``FAILURE`` on an unexpected failure or pass, else ``OK``."""
        failed = self.unexpected_failures or self.unexpected_passes
        return ExitCode.FAILURE if failed else ExitCode.OK

    def status(self, outcome: Outcome) -> str:
        """``pass``, ``fail``, ``skip``, or ``known`` for a listed case that fails."""
        if outcome.status == "fail" and match_entry(outcome.case.id, list(self.entries)):
            return "known"
        return outcome.status

    def rows(self) -> list[dict[str, Any]]:
        """One report row per case (the JSON Lines of ``run --report``)."""
        rows = []
        for outcome in self.outcomes:
            case = outcome.case
            entry = match_entry(case.id, list(self.entries))
            rows.append(
                {
                    "id": case.id,
                    "protocol": case.protocol,
                    "profile": case.profile,
                    "direction": case.direction,
                    "tier": case.tier,
                    "spec": case.spec,
                    "status": outcome.status,
                    "known_failure": None if entry is None else entry.text(),
                    "detail": outcome.detail,
                    "replay": outcome.replay,
                    "warning": outcome.warning,
                }
            )
        return rows

    def counts(self) -> list[str]:
        """One line per protocol and tier: passed, failed, known failures, skipped."""
        return summarize(self.outcomes, status=self.status)

    def lines(self) -> list[str]:
        """What a command prints: each unexpected result, the entries to mend, the counts."""
        lines = [o.report() for o in self.unexpected_failures]
        lines += [f"warning: {o.case.id}: {o.warning}" for o in self.outcomes if o.warning]
        for outdated in self.outdated:
            lines += [
                f"XPASS {case}: listed as a known failure but passes; {outdated.advice()}"
                for case in outdated.passing
            ]
        lines += [
            f"warning: stale known-failure entry {e.where()} matches no selected case: {e.text()}"
            for e in self.stale
        ]
        lines += self.counts()
        unexpected = len(self.unexpected_failures) + len(self.unexpected_passes)
        lines.append(f"{len(self.outcomes)} case(s), {unexpected} unexpected result(s)")
        return lines


def judge(
    outcomes: Sequence[Outcome], entries: Sequence[XfailEntry], *, selected: Sequence[str]
) -> Verdict:
    """Weigh ``outcomes`` against the known-failure ``entries``; ``selected``: the case ids run.

    An entry is stale when it matches no id of ``selected`` (the cases chosen to run, which
    may be more than those with an outcome when a run stopped early).
    """
    entries = list(entries)
    owners = [(outcome, match_entry(outcome.case.id, entries)) for outcome in outcomes]
    unexpected_failures = [o for o, entry in owners if o.status == "fail" and entry is None]
    unexpected_passes = [o for o, entry in owners if o.status == "pass" and entry is not None]
    outdated = []
    for entry in entries:
        listed = [o for o, owner in owners if owner is entry]
        passing = tuple(o.case.id for o in listed if o.status == "pass")
        if passing:
            failing = tuple(o.case.id for o in listed if o.status == "fail")
            outdated.append(OutdatedEntry(entry=entry, passing=passing, still_failing=failing))
    return Verdict(
        outcomes=tuple(outcomes),
        entries=tuple(entries),
        unexpected_failures=tuple(unexpected_failures),
        unexpected_passes=tuple(unexpected_passes),
        outdated=tuple(outdated),
        stale=tuple(stale_entries(list(selected), entries)),
    )
