"""Canal-JSON encoder options, named after TiCDC's sink options.

TiCDC reads them in ``pkg/sink/codec/common/config.go`` (pingcap/tiflow and pingcap/ticdc):
``content-compatible`` turns ``only-output-updated-columns`` on as well, and the large-message
options need ``enable-tidb-extension`` for canal-json (``pkg/config/large_message.go``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ticdc_conformance.reference._options import (
    LARGE_MESSAGE_OPTIONS,
    LargeMessageHandleOption,
    OptionReader,
    large_message_problems,
    no_clock,
)
from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.tables import Profile

PROTOCOL = "canal-json"
PROFILES: tuple[Profile, ...] = ("tiflow", "ticdc")


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Encoder options; field names are TiCDC's option names with ``_`` for ``-``."""

    profile: Profile = "tiflow"
    enable_tidb_extension: bool = False
    """``_tidb`` with ``commitTs`` on rows and DDLs, and TIDB_WATERMARK messages."""
    content_compatible: bool = False
    """``mysqlType`` as the full column type (``varchar(20)``); implies only-output-updated."""
    only_output_updated_columns: bool = False
    """``old`` keeps only the columns whose value changed."""
    delete_only_output_handle_key_columns: bool = False
    """Deletes carry the handle-key columns only."""
    max_message_bytes: int = 10 * 1024 * 1024
    large_message_handle_option: LargeMessageHandleOption = "none"
    claim_check_storage_uri: str = ""
    large_message_handle_compression: Compression = "none"
    """Compress every message's whole value, claim-check files included (§1.5)."""
    claim_check_raw_value: bool = False
    """The claim-check file holds the value bytes alone instead of ``{"key","value"}``."""
    now_ms: Callable[[], int] = field(default=no_clock, compare=False)
    """The clock behind ``ts`` (wall time in TiCDC, ignored by Canal adapters and Flink)."""

    def __post_init__(self) -> None:
        problems = []
        if self.profile not in PROFILES:
            problems.append(f"profile must be one of {', '.join(PROFILES)}")
        if self.max_message_bytes <= 0:
            problems.append("max-message-bytes must be positive")
        problems += large_message_problems(
            self.large_message_handle_option,
            self.claim_check_storage_uri,
            self.large_message_handle_compression,
        )
        if self.large_message_handle_option != "none" and not self.enable_tidb_extension:
            problems.append("large-message-handle-option needs enable-tidb-extension=true")
        if problems:
            raise EncodeError("; ".join(problems), protocol=PROTOCOL)

    @property
    def only_updated(self) -> bool:
        """Whether ``old`` keeps only changed columns (content-compatible implies it)."""
        return self.only_output_updated_columns or self.content_compatible


OPTIONS: Mapping[str, str] = {
    "enable-tidb-extension": "true|false: _tidb commitTs, TIDB_WATERMARK messages (default false)",
    "content-compatible": "true|false: full column types in mysqlType, only updated old columns",
    "only-output-updated-columns": "true|false: 'old' keeps only the columns that changed",
    "delete-only-output-handle-key-columns": "true|false: deletes carry handle-key columns only",
    "max-message-bytes": "bytes per Kafka message at most (default 10485760)",
    "large-message-handle-option": "none|handle-key-only|claim-check (needs the TiDB extension)",
    "claim-check-storage-uri": "storage URI for claim-check files, e.g. s3://bucket/claim-check",
    "claim-check-raw-value": "true|false: claim-check files hold the raw value",
    "large-message-handle-compression": "none|snappy|lz4: compress the whole value (default none)",
}


def config_from_options(options: Mapping[str, str], *, profile: str | None = None) -> Config:
    """Build a ``Config`` from TiCDC option names and text values (``EncodeError`` if invalid)."""
    read = OptionReader(options, protocol=PROTOCOL, known=OPTIONS)
    default = Config()
    return Config(
        profile=read.profile(profile, default.profile),
        enable_tidb_extension=read.flag("enable-tidb-extension", default.enable_tidb_extension),
        content_compatible=read.flag("content-compatible", default.content_compatible),
        only_output_updated_columns=read.flag(
            "only-output-updated-columns", default.only_output_updated_columns
        ),
        delete_only_output_handle_key_columns=read.flag(
            "delete-only-output-handle-key-columns",
            default.delete_only_output_handle_key_columns,
        ),
        max_message_bytes=read.whole("max-message-bytes", default.max_message_bytes),
        large_message_handle_option=read.choice(
            "large-message-handle-option",
            default.large_message_handle_option,
            LARGE_MESSAGE_OPTIONS,
        ),
        claim_check_storage_uri=read.text(
            "claim-check-storage-uri", default.claim_check_storage_uri
        ),
        large_message_handle_compression=read.compression(),
        claim_check_raw_value=read.flag("claim-check-raw-value", default.claim_check_raw_value),
    )
