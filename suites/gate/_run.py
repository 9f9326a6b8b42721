"""Whole gate runs: select the cases, check them through adapters, judge; and the self-checks.

``Selection`` is what a ``run`` picks (fixtures tree, protocols, profiles, tiers, ids);
``gate_adapters`` checks Python adapters named ``module:callable`` (importable from the
current folder, as pytest imports from its rootdir) and returns the verdict;
``check_reference`` runs every golden case against the reference codecs; ``example_round_trips``
encodes the bundled examples with every codec and profile and decodes them back (the demo).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ticdc_conformance.fixtures import ManifestError, bundles, example_events
from ticdc_conformance.reference import CODECS, DecodedEvent, Message
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.suites.gate._cases import Case, load_cases
from ticdc_conformance.suites.gate._check import Outcome, run_cases
from ticdc_conformance.suites.gate._verdict import Verdict, judge
from ticdc_conformance.suites.gate._xfail import XfailEntry, XfailFileError, read_xfail_file
from ticdc_conformance.suites.gate.adapters import (
    load_adapter,
    reference_decoder,
    reference_encoder,
)

__all__ = [
    "RoundTrip",
    "Selection",
    "check_reference",
    "example_round_trips",
    "gate_adapters",
    "read_known_failures",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Selection:
    """The cases a run picks; ``fixtures`` is a folder or a fetched kit version."""

    fixtures: str | None = None
    protocols: Sequence[str] | None = None
    profiles: Sequence[str] | None = None
    tiers: Sequence[str] | None = None
    ids: Sequence[str] | None = None

    def root(self) -> Path | None:
        """The fixtures folder: the one given, a fetched version's, or None (the shipped)."""
        if self.fixtures is None:
            return None
        path = Path(self.fixtures)
        if path.exists():
            return path
        try:
            return bundles.cached_root(self.fixtures)
        except ValueError as error:
            raise UsageError(f"--fixtures {self.fixtures}: not a folder, and {error}") from None

    def cases(self, directions: Sequence[str]) -> list[Case]:
        """The selected cases of ``directions``; ``UsageError`` for an unusable tree."""
        try:
            return load_cases(
                self.root(),
                protocols=self.protocols or None,
                profiles=self.profiles or None,
                tiers=self.tiers or None,
                directions=directions,
                ids=self.ids or None,
            )
        except ManifestError as error:
            raise UsageError(f"--fixtures {self.fixtures}: {error}") from None


def read_known_failures(path: str | None) -> list[XfailEntry]:
    """The entries of a known-failure file (none without one); ``UsageError`` if unreadable."""
    if path is None:
        return []
    try:
        return read_xfail_file(path)
    except (XfailFileError, OSError) as error:
        raise UsageError(str(error)) from None


def gate_adapters(
    selection: Selection,
    *,
    decoder: str | None,
    encoder: str | None,
    entries: Sequence[XfailEntry],
    progress: Callable[[int, int], None] | None = None,
) -> Verdict:
    """Check the adapters named ``module:callable`` (or ``reference``); the verdict.

    ``progress`` is told (cases done, cases) as the run goes.
    """
    if not decoder and not encoder:
        raise UsageError("give --decoder or --encoder (module:callable, or reference), or --testee")
    if "" not in sys.path and str(Path.cwd()) not in sys.path:
        sys.path.insert(0, str(Path.cwd()))  # adapters import from the current folder
    try:
        decode = load_adapter(decoder, "decoder") if decoder else None
        encode = load_adapter(encoder, "encoder") if encoder else None
    except ValueError as error:
        raise UsageError(str(error)) from None
    directions = [
        direction
        for direction, given in (("decode", decode), ("reject", decode), ("encode", encode))
        if given
    ]
    cases = selection.cases(directions)
    if not cases:
        raise UsageError("no case matches the selection")
    outcomes = run_cases(
        cases,
        decoder=decode,
        encoder=encode,
        adapters={"decoder": decoder or "", "encoder": encoder or ""},
        fixtures=selection.fixtures,
        progress=progress,
    )
    return judge(outcomes, entries, selected=[c.id for c in cases])


def check_reference() -> list[Outcome]:
    """Every shipped golden case against the reference codecs."""
    return run_cases(load_cases(), decoder=reference_decoder, encoder=reference_encoder)


@dataclass(frozen=True, slots=True, kw_only=True)
class RoundTrip:
    """One bundled example encoded by one codec and profile, and decoded back."""

    protocol: str
    profile: str
    example: str
    events: int
    messages: tuple[tuple[Message, tuple[DecodedEvent, ...]], ...]

    def size(self) -> int:
        """Bytes of key plus value over every message."""
        return sum(len(m.key or b"") + len(m.value or b"") for m, _ in self.messages)

    def summary(self) -> str:
        """One line a person reads."""
        return (
            f"{self.protocol} ({self.profile}) {self.example}.change.jsonl: {self.events} "
            f"event(s) -> {len(self.messages)} message(s), {self.size()} bytes of key plus value"
        )


def example_round_trips() -> Iterator[RoundTrip]:
    """Every bundled example through every codec and profile, encoded and decoded back."""
    examples = example_events()
    for protocol, codec in CODECS.items():
        for profile in codec.PROFILES:
            config: Any = codec.config_from_options({}, profile=profile)
            for name, events in examples.items():
                messages = codec.encode(events, config)
                yield RoundTrip(
                    protocol=protocol,
                    profile=profile,
                    example=name,
                    events=len(events),
                    messages=tuple(
                        (m, tuple(codec.decode(m, message_index=i))) for i, m in enumerate(messages)
                    ),
                )
