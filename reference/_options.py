"""TiCDC sink option text → typed config field values, the same way for every protocol.

A codec's ``config_from_options`` reads its options field by field through ``OptionReader``:
``true``/``false`` for a flag, decimal digits for a whole number, one word of a fixed set for a
choice, the text itself otherwise. An option not given keeps the field's default, which the
codec takes from a default ``Config``. An unknown option name or malformed text raises
``EncodeError``. ``large-message-handle-compression`` is one of ``none``, ``snappy`` and ``lz4``
for every codec (TiCDC validates it apart from the other large-message options,
``pkg/config/large_message.go``); a codec that never compresses refuses the option instead.

``no_clock`` is the default clock of a config with a wall-clock member (Simple ``buildTs``,
Debezium ``ts_ms``): it always answers 0, so that output is reproducible.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Literal, NoReturn, TypeVar

from ticdc_conformance.reference.compression import COMPRESSION_OPTION, COMPRESSIONS, Compression
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.jsondoc import choice
from ticdc_conformance.reference.tables import Profile

__all__ = [
    "COMPRESSION",
    "LARGE_MESSAGE_OPTIONS",
    "LargeMessageHandleOption",
    "OptionReader",
    "compression_problems",
    "large_message_problems",
    "no_clock",
]

COMPRESSION = COMPRESSION_OPTION
LargeMessageHandleOption = Literal["none", "handle-key-only", "claim-check"]
LARGE_MESSAGE_OPTIONS: tuple[LargeMessageHandleOption, ...] = (
    "none",
    "handle-key-only",
    "claim-check",
)
"""``large-message-handle-option`` values (Open and Simple, ground truth §1.5)."""
_PROFILES: tuple[Profile, ...] = ("tiflow", "ticdc")
T = TypeVar("T")


def no_clock() -> int:
    """The default wall clock of a config: always 0 (the reference reads no clock)."""
    return 0


class OptionReader:
    """One codec's sink options, read as typed field values."""

    __slots__ = ("options", "protocol")

    def __init__(
        self, options: Mapping[str, str], *, protocol: str, known: Collection[str]
    ) -> None:
        """Check the option names against ``known``; ``protocol`` names the codec in errors."""
        self.options = options
        self.protocol = protocol
        for name in options:
            if name not in known:
                self._fail(f"unknown option {name!r}")

    def _fail(self, reason: str) -> NoReturn:
        raise EncodeError(reason, protocol=self.protocol)

    def flag(self, name: str, default: bool) -> bool:
        """Option ``name`` as ``true`` or ``false``."""
        text = self.options.get(name)
        if text is None:
            return default
        if text not in ("true", "false"):
            self._fail(f"option {name} takes true or false")
        return text == "true"

    def whole(self, name: str, default: int) -> int:
        """Option ``name`` as a whole number."""
        found = self.optional_whole(name)
        return default if found is None else found

    def optional_whole(self, name: str) -> int | None:
        """Option ``name`` as a whole number, ``None`` when not given."""
        text = self.options.get(name)
        if text is None:
            return None
        if not (text.isascii() and text.isdigit()):
            self._fail(f"option {name} takes a whole number")
        return int(text)

    def text(self, name: str, default: str) -> str:
        """Option ``name`` as it is written."""
        return self.options.get(name, default)

    def choice(self, name: str, default: T, allowed: tuple[T, ...]) -> T:
        """Option ``name``, one of the words ``allowed``."""
        text = self.options.get(name)
        if text is None:
            return default
        chosen = choice(text, allowed)
        if chosen is None:
            *others, last = map(str, allowed)
            self._fail(f"option {name} takes {', '.join(others)} or {last}")
        return chosen

    def compression(self) -> Compression:
        """``large-message-handle-compression``: ``none`` (the default), ``snappy`` or ``lz4``."""
        return self.choice(COMPRESSION, "none", COMPRESSIONS)

    def profile(self, profile: str | None, default: Profile) -> Profile:
        """The producer profile asked for (``None``: ``default``)."""
        if profile is None:
            return default
        chosen = choice(profile, _PROFILES)
        if chosen is None:
            self._fail(f"profile must be one of {', '.join(_PROFILES)}")
        return chosen


def large_message_problems(
    option: str, claim_check_storage_uri: str, compression: str = "none"
) -> list[str]:
    """What is wrong with the large-message options (Open and Simple, ground truth §1.5)."""
    problems = compression_problems(compression)
    if option not in LARGE_MESSAGE_OPTIONS:
        problems.append("large-message-handle-option must be none, handle-key-only or claim-check")
    if (option == "claim-check") != bool(claim_check_storage_uri):
        problems.append("claim-check-storage-uri goes with large-message-handle-option=claim-check")
    return problems


def compression_problems(compression: str) -> list[str]:
    """What is wrong with a ``large-message-handle-compression`` value (§1.5)."""
    if compression in COMPRESSIONS:
        return []
    return ["large-message-handle-compression must be none, snappy or lz4"]
