"""Check one case against an adapter; report what differs and how to replay just that case."""

from __future__ import annotations

import inspect
import json
import shlex
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ticdc_conformance.fixtures.categories import category_class, same_category
from ticdc_conformance.reference import DecodedEvent, Message
from ticdc_conformance.reference.compression import COMPRESSION_OPTION, compression_of
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.forms import write_decoded_event
from ticdc_conformance.suites.gate._cases import Case

__all__ = [
    "AdapterFaultError",
    "AdapterSkipError",
    "Outcome",
    "adapter_raised",
    "as_json",
    "check_case",
    "hex_diff",
    "json_diff",
    "replay_command",
    "reported_category",
    "run_cases",
    "summarize",
]

_MAX_DIFFERENCES = 12


class AdapterFaultError(Exception):
    """The adapter itself broke (a testee crashed, hung or answered garbage).

    Not a decision of the implementation: the case fails whatever its direction (a must-reject
    case too), and the message is the whole detail.
    """


class AdapterSkipError(Exception):
    """The implementation declines the case (a feature it does not have): the case is skipped."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Outcome:
    """The result of one case.

    ``status`` is ``pass``, ``fail`` (wrong output, or the adapter raised) or ``skip`` (no
    adapter for the case's direction). ``warning`` is what passed but deserves a look: a
    must-reject case refused with a category that is not the case's (``reported_category``).
    """

    case: Case
    status: str
    detail: str = ""
    replay: str = ""
    warning: str = ""

    def report(self) -> str:
        """A readable report: id, fixture path, what differs, the replay command."""
        lines = [f"{self.status.upper()} {self.case.id}", f"  fixture: {self.case.path}.*"]
        lines += [f"  {line}" for line in self.detail.splitlines()]
        if self.warning:
            lines.append(f"  warning: {self.warning}")
        if self.replay:
            lines.append(f"  replay: {self.replay}")
        return "\n".join(lines)


def replay_command(case: Case, adapters: Mapping[str, str], fixtures: str | None = None) -> str:
    """One command that runs just ``case`` again with the same adapter."""
    words = ["ticdc-conformance", "run", "--case", case.id]
    kind = "encoder" if case.direction == "encode" else "decoder"
    if adapters.get("testee"):
        words += ["--testee", adapters["testee"]]
    else:
        words += [f"--{kind}", adapters.get(kind, "reference")]
    if fixtures:
        words += ["--fixtures", fixtures]
    return shlex.join(words)


def _walk(expected: object, actual: object, pointer: str, out: list[str]) -> None:
    if len(out) >= _MAX_DIFFERENCES:
        return
    if isinstance(expected, dict) and isinstance(actual, dict):
        for key in list(expected) + [k for k in actual if k not in expected]:
            where = f"{pointer}/{key}"
            if key not in actual:
                out.append(f"{where}: missing (expected {_show(expected[key])})")
            elif key not in expected:
                out.append(f"{where}: unexpected member {_show(actual[key])}")
            else:
                _walk(expected[key], actual[key], where, out)
        return
    if isinstance(expected, list) and isinstance(actual, list):
        for index in range(max(len(expected), len(actual))):
            where = f"{pointer}/{index}"
            if index >= len(actual):
                out.append(f"{where}: missing (expected {_show(expected[index])})")
            elif index >= len(expected):
                out.append(f"{where}: unexpected {_show(actual[index])}")
            else:
                _walk(expected[index], actual[index], where, out)
        return
    # bool is an int in Python: 1 == True must still differ; and 0.0 == -0.0, but a FLOAT
    # -0 is a value TiCDC writes (as "-0") and its partition value string differs
    if (
        expected != actual
        or type(expected) is not type(actual)
        or (isinstance(expected, float) and str(expected) != str(actual))
    ):
        out.append(f"{pointer or '/'}: expected {_show(expected)}, got {_show(actual)}")


def _show(value: object, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def json_diff(expected: object, actual: object) -> list[str]:
    """Differences as ``JSON Pointer: expected …, got …`` lines (at most a dozen)."""
    out: list[str] = []
    _walk(expected, actual, "", out)
    return out


def hex_diff(expected: bytes, actual: bytes, *, context: int = 8) -> str:
    """Where two byte strings first differ, with the bytes around that offset in hex."""
    offset = next(
        (i for i, (a, b) in enumerate(zip(expected, actual, strict=False)) if a != b),
        min(len(expected), len(actual)),
    )
    start = max(0, offset - context)
    end = offset + context + 1
    return (
        f"first difference at byte offset {offset} (expected {len(expected)} bytes, "
        f"got {len(actual)})\n"
        f"  expected [{start}:{min(end, len(expected))}]: {expected[start:end].hex(' ')}\n"
        f"  actual   [{start}:{min(end, len(actual))}]: {actual[start:end].hex(' ')}"
    )


def as_json(events: Iterable[DecodedEvent | Mapping[str, Any]]) -> list[Any]:
    """Decoded events in their JSON form, whether given as objects or already as JSON."""
    return [
        dict(event) if isinstance(event, Mapping) else write_decoded_event(event)
        for event in events
    ]


def _column_name(expected: list[Any], line: str) -> str:
    """`` (column "c")`` when a difference sits inside a column of a row image."""
    parts = line.split(":", 1)[0].split("/")
    if len(parts) < 4 or parts[2] not in {"before", "after"}:
        return ""
    try:
        column = expected[int(parts[1])][parts[2]][int(parts[3])]
    except (IndexError, KeyError, TypeError, ValueError):
        return ""
    if not isinstance(column, dict) or "name" not in column:
        return ""
    return f" (column {json.dumps(column['name'], ensure_ascii=False)})"


def _compare_decoded(expected: list[Any], actual: list[Any]) -> str:
    differences = json_diff(expected, actual)
    if not differences:
        return ""
    return "decoded events differ (expected vs actual, by JSON Pointer):\n" + "\n".join(
        f"  {line}{_column_name(expected, line)}" for line in differences
    )


def _compare_bytes(expected: Sequence[Message], actual: Sequence[Message]) -> str:
    if len(expected) != len(actual):
        return f"expected {len(expected)} message(s), got {len(actual)}"
    for index, (want, got) in enumerate(zip(expected, actual, strict=True)):
        for part in ("key", "value"):
            a, b = getattr(want, part), getattr(got, part)
            if a != b:
                if a is None or b is None:
                    return f"message {index} {part}: expected {a!r:.40}, got {b!r:.40}"
                return f"message {index} {part}: {hex_diff(a, b)}"
        if len(want.claim_checks) != len(got.claim_checks):
            return (
                f"message {index}: expected {len(want.claim_checks)} claim-check file(s), "
                f"got {len(got.claim_checks)}"
            )
        for number, (a, b) in enumerate(zip(want.claim_checks, got.claim_checks, strict=True)):
            if a.location != b.location:
                return f"message {index} claim check {number}: location {b.location!r}, expected {a.location!r}"  # noqa: E501 - one message, read whole
            if a.content != b.content:
                return f"message {index} claim check {number}: {hex_diff(a.content, b.content)}"
    return ""


def reported_category(reported: object, expected: object) -> str:
    """The warning for a refusal whose stated category is not the case's; empty if none.

    ``reported`` is the ``category`` the refusing error carries (a testee's
    ``error.category``, or the attribute of a Python adapter's exception), ``expected`` the
    case's. No category stated, or one naming the case's category or its class
    (``fixtures.categories``), is no warning: a mismatch does not fail the case, whose
    verdict is the refusal (docs/fixture-format.md, "Must-reject categories").
    """
    if not isinstance(reported, str) or not reported.strip() or not isinstance(expected, str):
        return ""
    if same_category(reported, expected):
        return ""
    return (
        f"rejected as {reported.strip()!r}; the case's category is {expected!r} "
        f"(class {category_class(expected)!r})"
    )


def _must_fail(
    attempt: Callable[[], list[Any]], done: str, failed: str, expected: dict[str, Any] | None
) -> tuple[str, str, str]:
    """An encode or decode that must raise: (status, detail, warning).

    Any error passes, except the adapter's own faults and skips (a testee crash, hang or skip
    is no refusal); an error stating another category than the case's passes with a warning.
    ``failed`` holds ``{n}``, the count of what came out instead.
    """
    expected = expected or {}
    try:
        produced = attempt()
    except (AdapterFaultError, AdapterSkipError):
        raise
    except Exception as raised:  # noqa: BLE001 - any error is a refusal
        warning = reported_category(getattr(raised, "category", None), expected.get("category"))
        return "pass", f"{done}: {type(raised).__name__}: {raised}", warning
    detail = (
        f"{failed.format(n=len(produced))}; expected a {expected.get('category')} error, "
        f"the reference says: {expected.get('reference_error')}"
    )
    return "fail", detail, ""


def _takes_options(decoder: Callable[..., Any]) -> bool:
    try:
        inspect.signature(decoder).bind("protocol", [], {})
    except TypeError:
        return False
    except ValueError:  # no signature to read (a builtin): assume the two-argument form
        return False
    return True


def _decode(decoder: Callable[..., Any], case: Case) -> list[Any]:
    """The decoder's events for ``case``'s messages.

    A decoder that takes a third argument gets the case's options (the consumer's
    configuration, e.g. ``large-message-handle-compression``). A case whose messages are
    compressed is skipped for a decoder that takes none: it cannot be told.
    """
    if _takes_options(decoder):
        return list(decoder(case.protocol, case.all_messages(), dict(case.options)))
    if compression_of(case.options) != "none":
        raise AdapterSkipError(
            f"the decoder takes no options, and the messages are compressed "
            f"({COMPRESSION_OPTION}={compression_of(case.options)})"
        )
    return list(decoder(case.protocol, case.all_messages()))


def _check(
    case: Case, decoder: Callable[..., Any] | None, encoder: Callable[..., Any] | None
) -> tuple[str, str, str]:
    if case.direction == "reject":
        if decoder is None:
            return "skip", "no decoder given", ""
        return _must_fail(
            lambda: _decode(decoder, case),
            "rejected",
            "accepted a message it must reject ({n} event(s) decoded)",
            case.error,
        )
    if case.direction == "decode":
        if decoder is None:
            return "skip", "no decoder given", ""
        actual = as_json(_decode(decoder, case))
        detail = _compare_decoded(case.expected_decoded(), actual)
        return ("fail" if detail else "pass"), detail, ""
    if encoder is None:
        return "skip", "no encoder given", ""
    if case.comparison == "error":
        return _must_fail(
            lambda: list(encoder(case.protocol, case.profile, case.options, case.change_events())),
            "refused",
            "encoded what it must refuse ({n} message(s))",
            case.encode_error,
        )
    return (*_check_encode(case, encoder), "")


def _check_encode(case: Case, encoder: Callable[..., Any]) -> tuple[str, str]:
    messages = list(encoder(case.protocol, case.profile, case.options, case.change_events()))
    if case.comparison == "bytes":
        detail = _compare_bytes(case.event_messages(), messages)
        return ("fail" if detail else "pass"), detail
    try:  # fields of wall time differ: compare what the reference decodes from both
        decoded = decode_messages(
            case.protocol,
            [*case.bootstrap_messages(), *messages],
            compression=compression_of(case.options),
        )
    except DecodeError as error:
        return "fail", f"the reference cannot decode the encoder's output: {error}"
    detail = _compare_decoded(case.expected_decoded(), as_json(decoded))
    return ("fail" if detail else "pass"), detail


def check_case(
    case: Case,
    *,
    decoder: Callable[..., Any] | None = None,
    encoder: Callable[..., Any] | None = None,
    adapters: Mapping[str, str] | None = None,
    fixtures: str | None = None,
) -> Outcome:
    """Check ``case`` with the adapter of its direction; an adapter that raises fails it.

    ``adapters`` names the adapters (``{"decoder": "module:callable"}``, or ``{"testee":
    "COMMAND"}``) for the replay line.
    """
    warning = ""
    try:
        status, detail, warning = _check(case, decoder, encoder)
    except AdapterSkipError as skip:
        status, detail = "skip", str(skip)
    except AdapterFaultError as fault:
        status, detail = "fail", str(fault)
    except Exception as error:  # noqa: BLE001 - the implementation under test broke: a failure
        status, detail = "fail", adapter_raised(error)
    replay = replay_command(case, adapters or {}, fixtures) if status == "fail" else ""
    return Outcome(case=case, status=status, detail=detail, replay=replay, warning=warning)


_ROOT = Path(__file__).resolve().parents[2]
_KIT = tuple(
    _ROOT / part for part in ("reference", "generators", "fixtures", "suites", "kafka", "cli")
)
"""The kit's source folders (its root also holds tests and examples, which are not the kit)."""


def adapter_raised(error: BaseException) -> str:
    """``the adapter raised KeyError: 'oops' at mypkg/adapter.py:12 (decode)``.

    The place is the innermost frame of the traceback outside the kit: the user's own code
    (or the library it called into), never the kit's call site.
    """
    said = f"the adapter raised {type(error).__name__}: {error}"
    frames = [f for f in traceback.extract_tb(error.__traceback__) if not _in_kit(f.filename)]
    if not frames:
        return said
    frame = frames[-1]
    return f"{said} at {_shown(frame.filename)}:{frame.lineno} ({frame.name})"


def _in_kit(filename: str) -> bool:
    path = Path(filename).resolve()
    return any(path.is_relative_to(part) for part in _KIT)


def _shown(filename: str) -> str:
    """A path relative to the working folder where it lies below it, else as it is."""
    path = Path(filename)
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return filename


def summarize(
    outcomes: Iterable[Outcome], *, status: Callable[[Outcome], str] | None = None
) -> list[str]:
    """One line per protocol and tier: counts of passed, failed and skipped cases.

    ``status`` labels an outcome (default: its own status); a ``known`` label (a listed known
    failure) gets a column of its own where there are any.
    """
    label = status or (lambda outcome: outcome.status)
    counts: Counter[tuple[str, str, str]] = Counter(
        (o.case.protocol, o.case.tier, label(o)) for o in outcomes
    )
    lines = []
    for protocol, tier in sorted({(protocol, tier) for protocol, tier, _ in counts}):
        line = (
            f"{protocol:<12} {tier:<12} passed {counts[protocol, tier, 'pass']:>4}  "
            f"failed {counts[protocol, tier, 'fail']:>4}  "
        )
        if counts[protocol, tier, "known"]:
            line += f"known {counts[protocol, tier, 'known']:>4}  "
        lines.append(line + f"skipped {counts[protocol, tier, 'skip']:>4}")
    return lines


def run_cases(
    cases: Iterable[Case],
    *,
    decoder: Callable[..., Any] | None = None,
    encoder: Callable[..., Any] | None = None,
    adapters: Mapping[str, str] | None = None,
    fixtures: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[Outcome]:
    """Check every case in order; ``progress`` is told (cases done, cases) after each."""
    chosen = list(cases)
    outcomes: list[Outcome] = []
    for case in chosen:
        outcomes.append(
            check_case(case, decoder=decoder, encoder=encoder, adapters=adapters, fixtures=fixtures)
        )
        if progress is not None:
            progress(len(outcomes), len(chosen))
    return outcomes
