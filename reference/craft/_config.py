"""Craft encoder options, named after TiCDC's sink options (ground truth §1.5, §3.2, §3.4)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ticdc_conformance.reference._options import OptionReader
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.tables import Profile

PROTOCOL = "craft"
PROFILES: tuple[Profile, ...] = ("tiflow",)
"""Craft exists only in classic TiCDC; the new architecture removed its stub in 2025 (§0)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Encoder options; field names are TiCDC's sink option names with ``_`` for ``-``."""

    profile: Profile = "tiflow"
    max_message_bytes: int = 10 * 1024 * 1024
    """Kafka ``max-message-bytes`` (default 10 MiB): compared with the *estimated* size (§3.4)."""
    max_batch_size: int = 16
    """Rows per message at most (default 16)."""
    delete_only_output_handle_key_columns: bool = False
    """A DELETE's old column group keeps only the handle-key columns (§3.2)."""

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise EncodeError(
                f"profile {self.profile!r} has no Craft: only classic TiCDC (tiflow) writes it; "
                "the new architecture (pingcap/ticdc) has no Craft encoder (docs/craft.md)",
                protocol=PROTOCOL,
            )
        if self.max_message_bytes <= 0 or self.max_batch_size <= 0:
            raise EncodeError(
                "max-message-bytes and max-batch-size must be positive", protocol=PROTOCOL
            )


OPTIONS: Mapping[str, str] = {
    "max-message-bytes": "estimated bytes per Kafka message before a flush (default 10485760)",
    "max-batch-size": "rows per Kafka message at most (default 16)",
    "delete-only-output-handle-key-columns": "true|false: deletes carry handle-key columns only",
}

_NOT_FOR_CRAFT = {
    "output-old-value": "Craft always writes both images of an UPDATE (docs/craft.md)",
    "only-output-updated-columns": "Craft always writes every column (docs/craft.md)",
    "large-message-handle-option": "TiCDC accepts large-message options only for Open, "
    "Simple and canal-json (pingcap/tiflow pkg/config/large_message.go)",
    "large-message-handle-compression": "TiCDC's Craft encoder never compresses: it takes the "
    "option and ignores it (pingcap/tiflow pkg/sink/codec/craft)",
    "claim-check-storage-uri": "TiCDC accepts large-message options only for Open, Simple "
    "and canal-json (pingcap/tiflow pkg/config/large_message.go)",
}


def config_from_options(options: Mapping[str, str], *, profile: str | None = None) -> Config:
    """Build a ``Config`` from TiCDC option names and text values (``EncodeError`` if invalid)."""
    for name in options:
        if name in _NOT_FOR_CRAFT:
            raise EncodeError(
                f"option {name} does not apply: {_NOT_FOR_CRAFT[name]}", protocol=PROTOCOL
            )
    read = OptionReader(options, protocol=PROTOCOL, known=OPTIONS)
    default = Config()
    return Config(
        profile=read.profile(profile, default.profile),
        max_message_bytes=read.whole("max-message-bytes", default.max_message_bytes),
        max_batch_size=read.whole("max-batch-size", default.max_batch_size),
        delete_only_output_handle_key_columns=read.flag(
            "delete-only-output-handle-key-columns",
            default.delete_only_output_handle_key_columns,
        ),
    )
