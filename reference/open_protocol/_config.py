"""Open Protocol encoder options, named after TiCDC's sink options (ground truth §1.5, §2.2)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ticdc_conformance.reference._options import (
    LARGE_MESSAGE_OPTIONS,
    LargeMessageHandleOption,
    OptionReader,
    large_message_problems,
)
from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.tables import Profile

PROTOCOL = "open"
PROFILES: tuple[Profile, ...] = ("tiflow", "ticdc")


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Encoder options; field names are TiCDC's sink option names with ``_`` for ``-``."""

    profile: Profile = "tiflow"
    max_message_bytes: int = 10 * 1024 * 1024
    """Kafka ``max-message-bytes`` (default 10 MiB, ground truth §1.5)."""
    max_batch_size: int = 16
    """Rows per message at most (default 16)."""
    max_batched_bytes: int | None = None
    """``ticdc`` only: the batching limit ``MaxBatchedBytes``; ``None``: max-message-bytes."""
    output_old_value: bool = True
    """``[sink.open] output-old-value``: write ``p`` for updates."""
    delete_only_output_handle_key_columns: bool = False
    only_output_updated_columns: bool = False
    large_message_handle_option: LargeMessageHandleOption = "none"
    claim_check_storage_uri: str = ""
    large_message_handle_compression: Compression = "none"
    """Compress each row's and DDL's value JSON, not keys or length prefixes (§1.5)."""

    def __post_init__(self) -> None:
        problems = []
        if self.profile not in PROFILES:
            problems.append(f"profile must be one of {', '.join(PROFILES)}")
        if self.max_message_bytes <= 0 or self.max_batch_size <= 0:
            problems.append("max-message-bytes and max-batch-size must be positive")
        if self.max_batched_bytes is not None:
            if self.profile != "ticdc":
                problems.append("max-batched-bytes exists only in profile ticdc")
            elif not 0 < self.max_batched_bytes <= self.max_message_bytes:
                problems.append("max-batched-bytes must be in 1..max-message-bytes")
        problems += large_message_problems(
            self.large_message_handle_option,
            self.claim_check_storage_uri,
            self.large_message_handle_compression,
        )
        if problems:
            raise EncodeError("; ".join(problems), protocol=PROTOCOL)

    @property
    def batch_limit(self) -> int:
        """The byte limit batching compares against (§2.2)."""
        return self.max_message_bytes if self.max_batched_bytes is None else self.max_batched_bytes


OPTIONS: Mapping[str, str] = {
    "max-message-bytes": "bytes per Kafka message at most (default 10485760)",
    "max-batch-size": "rows per Kafka message at most (default 16)",
    "max-batched-bytes": "profile ticdc: byte limit for batching rows (default max-message-bytes)",
    "output-old-value": "true|false: write the old image 'p' of updates (default true)",
    "delete-only-output-handle-key-columns": "true|false: deletes carry handle-key columns only",
    "only-output-updated-columns": "true|false: 'p' keeps only the columns that changed",
    "large-message-handle-option": "none|handle-key-only|claim-check (default none)",
    "claim-check-storage-uri": "storage URI for claim-check files, e.g. s3://bucket/claim-check",
    "large-message-handle-compression": "none|snappy|lz4: compress each value JSON (default none)",
}


def config_from_options(options: Mapping[str, str], *, profile: str | None = None) -> Config:
    """Build a ``Config`` from TiCDC option names and text values (``EncodeError`` if invalid)."""
    if options.get("claim-check-raw-value", "false") != "false":
        raise EncodeError(
            "claim-check-raw-value is not supported for the open protocol: TiCDC refuses it "
            "(pingcap/tiflow and pingcap/ticdc pkg/config/large_message.go)",
            protocol=PROTOCOL,
        )
    options = {k: v for k, v in options.items() if k != "claim-check-raw-value"}
    read = OptionReader(options, protocol=PROTOCOL, known=OPTIONS)
    default = Config()
    return Config(
        profile=read.profile(profile, default.profile),
        max_message_bytes=read.whole("max-message-bytes", default.max_message_bytes),
        max_batch_size=read.whole("max-batch-size", default.max_batch_size),
        max_batched_bytes=read.optional_whole("max-batched-bytes"),
        output_old_value=read.flag("output-old-value", default.output_old_value),
        delete_only_output_handle_key_columns=read.flag(
            "delete-only-output-handle-key-columns",
            default.delete_only_output_handle_key_columns,
        ),
        only_output_updated_columns=read.flag(
            "only-output-updated-columns", default.only_output_updated_columns
        ),
        large_message_handle_option=read.choice(
            "large-message-handle-option",
            default.large_message_handle_option,
            LARGE_MESSAGE_OPTIONS,
        ),
        claim_check_storage_uri=read.text(
            "claim-check-storage-uri", default.claim_check_storage_uri
        ),
        large_message_handle_compression=read.compression(),
    )
