"""A mutation fuzzer over the decode fixtures, classifying what each decoder does.

Every input is the messages of one decode fixture with one message mutated (bit flips,
truncation, inserted or deleted bytes, splices of two messages, and in JSON messages numbers
and strings replaced by extremes). The messages go through one ``PartitionDecoder`` in order,
configured with the ``large-message-handle-compression`` the fixture declares (docs/rules/
codec.md#compression), so mutations of a compressed fixture reach the decompression path; the
outcome is one of:

* ``rejected``: a ``DecodeError`` (fine);
* ``crashed``: any other exception (a bug in the decoder; the input is kept);
* ``invalid``: accepted, yet a decoded value does not fit the type the message states for its
  column; judged here by ``independent_problem``, written apart from the code under test;
* ``accepted``: accepted with every value valid.
"""

from __future__ import annotations

import datetime as dt
import gc
import json
import math
import random
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ticdc_conformance.fixtures import default_root, load_manifest
from ticdc_conformance.reference import CODECS, DecimalValue, DecodedRow, Message, TimestampValue
from ticdc_conformance.reference.compression import Compression, compression_of
from ticdc_conformance.reference.decoded import DecodedColumn, DecodedEvent
from ticdc_conformance.reference.decoding import PartitionDecoder
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import SchemaCodec

__all__ = [
    "Corpus",
    "FuzzReport",
    "Seed",
    "fuzz",
    "independent_problem",
    "load_corpus",
    "mutate",
    "mutate_one",
    "run_seed",
]


@dataclass(frozen=True, slots=True)
class Seed:
    """One decode fixture: its name, its messages and the compression they were written with."""

    name: str
    messages: list[Message]
    compression: Compression = "none"


Corpus = dict[str, list[Seed]]
"""Protocol → the seed of every decode fixture."""

_NUMBER = re.compile(rb"-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?")
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NUMBER_EXTREMES = (
    b"300",
    b"-1",
    b"1900",
    b"65536",
    b"4294967296",
    b"18446744073709551616",
    b"1e39",
    b"1e400",
    b"-1e400",
    b"1" + b"0" * 400,
    b"0.1" + b"1" * 40,
    b"-9223372036854775809",
)
_STRING_EXTREMES = (
    b'"2024-13-45"',
    b'"2024-02-30 00:00:00"',
    b'"839:00:00"',
    b'"{"',
    b'"\\ud800"',
    b'"1.' + b"1" * 40 + b'"',
    b'"300"',
    b'"-1"',
    b'"1e39"',
    b'"NaN"',
    b'"9' * 1 + b"9" * 70 + b'"',
    b'""',
)


def load_corpus() -> Corpus:
    """The messages of every decode fixture of the bundled tree, by protocol."""
    root = default_root()
    manifest = load_manifest(root)
    corpus: Corpus = {}
    for name, fixture in manifest["fixtures"].items():
        if fixture.get("decoded") is None or not fixture.get("messages"):
            continue
        messages = [
            Message(
                key=(root / m["key"]).read_bytes() if m.get("key") else None,
                value=(root / m["value"]).read_bytes() if m.get("value") else None,
            )
            for m in fixture["messages"]
        ]
        compression = compression_of(fixture.get("options") or {})
        corpus.setdefault(fixture["protocol"], []).append(Seed(name, messages, compression))
    return corpus


def _mutate_bytes(data: bytes, other: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(7)
    if not data:
        return other[: rng.randrange(len(other) + 1)]
    at = rng.randrange(len(data))
    if kind == 0:  # bit flip
        return data[:at] + bytes([data[at] ^ (1 << rng.randrange(8))]) + data[at + 1 :]
    if kind == 1:  # truncation
        return data[:at]
    if kind == 2:  # inserted byte
        return data[:at] + bytes([rng.randrange(256)]) + data[at:]
    if kind == 3:  # deleted byte
        return data[:at] + data[at + 1 :]
    if kind == 4:  # splice
        return data[:at] + other[rng.randrange(len(other) + 1) :]
    numbers = list(_NUMBER.finditer(data)) if kind == 5 else list(_STRING.finditer(data))
    if not numbers:
        return data[:at] + bytes([rng.randrange(256)]) + data[at + 1 :]
    match = rng.choice(numbers)
    replacement = rng.choice(_NUMBER_EXTREMES if kind == 5 else _STRING_EXTREMES)
    return data[: match.start()] + replacement + data[match.end() :]


def mutate(messages: list[Message], rng: random.Random) -> list[Message]:
    """``messages`` with one message's key or value mutated."""
    return mutate_one(messages, rng)[1]


def mutate_one(messages: list[Message], rng: random.Random) -> tuple[int, list[Message]]:
    """``messages`` with one message's key or value mutated, and that message's index."""
    index = rng.randrange(len(messages))
    message = messages[index]
    other = rng.choice(messages)
    if message.key and (not message.value or rng.random() < 0.2):
        message = Message(
            key=_mutate_bytes(message.key, other.key or b"", rng), value=message.value
        )
    else:
        value = _mutate_bytes(message.value or b"", other.value or b"", rng)
        message = Message(key=message.key, value=value)
    return index, [*messages[:index], message, *messages[index + 1 :]]


# -- the independent oracle: what a value of a stated type may be, written apart from
#    reference.validity (TiDB's ranges, docs/errors.md) -----------------------------------

_INT_BITS = {"tinyint": 8, "smallint": 16, "mediumint": 24, "int": 32, "bigint": 64}
_CODE_NAMES = {
    1: "tinyint",
    2: "smallint",
    3: "int",
    4: "float",
    5: "double",
    7: "timestamp",
    8: "bigint",
    9: "mediumint",
    10: "date",
    11: "time",
    12: "datetime",
    13: "year",
    14: "date",
    16: "bit",
    245: "json",
    246: "decimal",
    247: "enum",
    248: "set",
    15: "varchar",
    253: "varchar",
    254: "char",
    249: "text",
    250: "text",
    251: "text",
    252: "text",
}
_TEMPORAL = re.compile(r"(\d{4})-(\d{2})-(\d{2})(?: (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?)?")
_TIME = re.compile(r"-?(\d{2,3}):([0-5]\d):([0-5]\d)(?:\.(\d{1,6}))?")
_UNSIGNED_FLAG = 128


def _stated(column: DecodedColumn) -> tuple[str | None, bool | None]:
    """The type name and signedness the message states for ``column``."""
    if column.mysql_type is not None:
        name, _, rest = column.mysql_type.partition(" ")
        return name, True if rest == "unsigned" else None
    if column.type_code is None:
        return None, None
    unsigned = None if column.flags is None else bool(column.flags & _UNSIGNED_FLAG)
    return _CODE_NAMES.get(column.type_code), unsigned


def _date_ok(year: int, month: int, day: int) -> bool:
    if month == 0 or day == 0:
        return month <= 12 and day <= 31
    try:
        dt.date(max(year, 1), month, day)
    except ValueError:
        return False
    return year > 0 or (month, day) != (2, 29)


def _temporal_ok(text: str, *, clock: bool) -> bool:
    match = _TEMPORAL.fullmatch(text)
    if match is None or (match.group(4) is not None) != clock:
        return False
    year, month, day = (int(g) for g in match.groups()[:3])
    if not clock:
        return _date_ok(year, month, day)
    hour, minute, second = (int(g) for g in match.groups()[3:6])
    return _date_ok(year, month, day) and hour < 24 and minute < 60 and second < 60


def independent_problem(column: DecodedColumn) -> str | None:  # noqa: C901, PLR0911 - a type per case
    """Why ``column``'s value cannot be one of the type the message states, or ``None``."""
    name, unsigned = _stated(column)
    value = column.value
    if value is None or name is None or column.ambiguity is not None:
        return None
    if name in _INT_BITS and type(value) is int:
        bits = _INT_BITS[name]
        fits_unsigned = 0 <= value < 2**bits
        fits_signed = -(2 ** (bits - 1)) <= value < 2 ** (bits - 1)
        ok = fits_unsigned if unsigned else fits_signed or (unsigned is None and fits_unsigned)
        return None if ok else f"{name} {value}"
    if name == "year" and type(value) is int:
        return None if value == 0 or 1901 <= value <= 2155 else f"year {value}"
    if name in ("float", "double") and type(value) is float:
        # FLOAT: what rounds to a finite float32 (half an ulp above its largest value)
        limit = 3.4028234663852886e38 * (1 + 2**-24) if name == "float" else math.inf
        return None if math.isfinite(value) and abs(value) < limit else f"{name} {value}"
    if name == "decimal" and isinstance(value, DecimalValue):
        digits = value.text.lstrip("-").replace(".", "").lstrip("0")
        fraction = value.text.partition(".")[2]
        return None if len(digits) <= 65 and len(fraction) <= 30 else "decimal digits"
    if name in ("date", "datetime") and isinstance(value, str):
        return None if _temporal_ok(value, clock=name == "datetime") else f"{name} {value!r}"
    if name == "timestamp" and isinstance(value, TimestampValue):
        return None if _temporal_ok(value.text, clock=True) else f"timestamp {value.text!r}"
    if name == "time" and isinstance(value, str):
        match = _TIME.fullmatch(value)
        if match is None:
            return f"time {value!r}"
        hours, minutes, seconds, fraction = match.groups()
        clock = (int(hours), int(minutes), int(seconds), int(fraction or "0"))
        return None if clock <= (838, 59, 59, 0) else f"time {value!r}"
    if name == "json" and isinstance(value, str):
        try:
            json.loads(value, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
        except (ValueError, RecursionError):
            return "json text"
        return None
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return "text not Unicode"
    return None


def _invalid(events: list[DecodedEvent]) -> str | None:
    for event in events:
        if type(event) is not DecodedRow:
            continue
        for column in (*(event.before or ()), *(event.after or ())):
            problem = independent_problem(column)
            if problem is not None:
                return f"{column.name}: {problem}"
    return None


@dataclass(slots=True)
class FuzzReport:
    """Outcome counts per protocol, and the inputs that crashed or passed invalid values.

    Inputs from a compressed fixture count twice: under their outcome, and under the outcome
    and the compression (``rejected lz4``).
    """

    counts: dict[str, Counter[str]] = field(default_factory=dict)
    crashes: list[tuple[str, str, list[Message], str]] = field(default_factory=list)
    invalid: list[tuple[str, str, list[Message], str]] = field(default_factory=list)

    def total(self, outcome: str) -> int:
        """How many inputs of every protocol had ``outcome``."""
        return sum(counter[outcome] for counter in self.counts.values())


_STATELESS = frozenset(p for p, codec in CODECS.items() if not isinstance(codec, SchemaCodec))
"""Protocols whose decoder reads each message on its own (all but Simple)."""


def _run(
    protocol: str, messages: list[Message], mutated: int, compression: Compression
) -> tuple[str, str]:
    """Decode the input as one partition, with the fixture's compression. A stateless decoder
    gets the mutated message only: the others are the fixture's own, whose decoding to valid
    values the golden decode cases already show, and nothing of them reaches the mutated one.
    Simple gets every message, the earlier ones for the schemas they announce, the later ones
    typed by them."""
    decoder = PartitionDecoder(protocol, compression=compression)
    events: list[DecodedEvent] = []
    todo = [(mutated, messages[mutated])] if protocol in _STATELESS else enumerate(messages)
    try:
        for index, message in todo:
            events.extend(decoder.decode(message, message_index=index))
    except DecodeError:
        return "rejected", ""
    except Exception as error:  # noqa: BLE001 - any other exception is the finding
        return "crashed", f"{type(error).__name__}: {error}"[:300]
    problem = _invalid(events)
    return ("invalid", problem) if problem else ("accepted", "")


def run_seed(protocol: str, seed: Seed, messages: list[Message], mutated: int) -> tuple[str, str]:
    """The outcome of ``messages`` (``seed``'s, one of them mutated) decoded as ``seed`` says."""
    return _run(protocol, messages, mutated, seed.compression)


def fuzz(corpus: Corpus, per_protocol: int, *, seed: int = 0) -> FuzzReport:
    """Run ``per_protocol`` mutated inputs through each protocol's decoder."""
    report = FuzzReport()
    gc.freeze()  # the corpus and the modules stay: the collector need not walk them again
    for protocol, fixtures in sorted(corpus.items()):
        rng = random.Random(f"{seed}:{protocol}")  # noqa: S311 - reproducible, not secret
        counter: Counter[str] = Counter()
        for _ in range(per_protocol):
            chosen = rng.choice(fixtures)
            index, mutated = mutate_one(chosen.messages, rng)
            outcome, detail = run_seed(protocol, chosen, mutated, index)
            counter[outcome] += 1
            if chosen.compression != "none":
                counter[f"{outcome} {chosen.compression}"] += 1
            if outcome == "crashed":
                report.crashes.append((protocol, chosen.name, mutated, detail))
            elif outcome == "invalid":
                report.invalid.append((protocol, chosen.name, mutated, detail))
        report.counts[protocol] = counter
    return report


def iter_findings(report: FuzzReport) -> Iterator[str]:
    """One line per crash or invalid acceptance, for assertion messages."""
    for kind, items in (("crash", report.crashes), ("invalid", report.invalid)):
        for protocol, name, _, detail in items[:20]:
            yield f"{kind} {protocol} {name}: {detail}"


def summary(report: FuzzReport) -> dict[str, Any]:
    """Counts per protocol and outcome, as plain data."""
    return {protocol: dict(counter) for protocol, counter in report.counts.items()}
