"""Simple protocol encoder options, named after TiCDC's sink options (ground truth §1.5, §4).

One ``Config`` serves both encodings: TiCDC's ``encoding-format`` is the codec itself
(``simple_json`` or ``simple_avro``). The four ``send-*bootstrap*`` options are TiCDC's sink
options for the BOOTSTRAP schedule (tiflow and ticdc ``pkg/config/sink.go``, §6.6), read by
``encode_stream`` and the stream simulator. ``buildTs`` is the wall-clock time at encoding (§4.2).
The reference reads no clock: the ``build_ts`` callable gives it, and its default always
answers 0 so that output is reproducible. Comparisons of Simple messages must ignore
``buildTs`` (decoded events do not carry it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

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

PROTOCOL = "simple"
PROFILES: tuple[Profile, ...] = ("tiflow", "ticdc")

EncodingFormat = Literal["json", "avro"]
"""TiCDC's ``encoding-format``: the kit's protocols ``simple-json`` and ``simple-avro``."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Encoder options; field names are TiCDC's option names with ``_`` for ``-``."""

    profile: Profile = "tiflow"
    max_message_bytes: int = 10 * 1024 * 1024
    large_message_handle_option: LargeMessageHandleOption = "none"
    claim_check_storage_uri: str = ""
    large_message_handle_compression: Compression = "none"
    """Compress every message's whole value, claim-check files included (§1.5)."""
    claim_check_raw_value: bool = False
    """The claim-check file holds the value bytes alone instead of ``{"key","value"}``."""
    enable_row_checksum: bool = False
    """``[integrity] integrity-check-level = "correctness"``: DML messages carry ``checksum``."""
    checksum_version: int = 1
    """The row checksum version TiDB wrote (carried as is, §4.6)."""
    time_zone: str = "UTC"
    """TiCDC server ``tz`` as a Go location name: TIMESTAMP ``location`` (§4.3). TiCDC's
    default ``System`` prints as ``Local``; the reference defaults to ``UTC``."""
    send_bootstrap_interval_in_sec: int = 120
    """Re-send a table's BOOTSTRAP after this many seconds of commit time (0: never send)."""
    send_bootstrap_in_msg_count: int = 10_000
    """Re-send a table's BOOTSTRAP after this many of its rows (0: never send)."""
    send_bootstrap_to_all_partition: bool = True
    """BOOTSTRAP to every partition of the table's topic (``false``: partition 0 only)."""
    send_all_bootstrap_at_start: bool = False
    """Every table's BOOTSTRAP, broadcast when the changefeed starts."""
    build_ts: Callable[[], int] = field(default=no_clock, compare=False)
    """Unix milliseconds for ``buildTs``; inject a real clock to imitate TiCDC."""

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
        if not 0 <= self.send_bootstrap_interval_in_sec < 2**63:
            problems.append("send-bootstrap-interval-in-sec must be an int64 of 0 or more")
        if not 0 <= self.send_bootstrap_in_msg_count < 2**31:
            problems.append("send-bootstrap-in-msg-count must be an int32 of 0 or more")
        if not self.time_zone:
            problems.append("time zone must be a location name")
        if problems:
            raise EncodeError("; ".join(problems), protocol=PROTOCOL)


OPTIONS: Mapping[str, str] = {
    "max-message-bytes": "bytes per Kafka message at most (default 10485760)",
    "large-message-handle-option": "none|handle-key-only|claim-check (default none)",
    "claim-check-storage-uri": "storage URI for claim-check files, e.g. s3://bucket/claim-check",
    "large-message-handle-compression": "none|snappy|lz4: compress the whole value (default none)",
    "claim-check-raw-value": "true|false: claim-check files hold the raw value (default false)",
    "integrity-check-level": "none|correctness: correctness adds the row checksum to DML",
    "tz": "the TiCDC server time zone, TIMESTAMP's location (default UTC; TiCDC's is System)",
    "send-bootstrap-interval-in-sec": "re-send a table's BOOTSTRAP after this many seconds of "
    "commit time (default 120; 0 sends none)",
    "send-bootstrap-in-msg-count": "re-send a table's BOOTSTRAP after this many of its rows "
    "(default 10000; 0 sends none)",
    "send-bootstrap-to-all-partition": "true|false: BOOTSTRAP to every partition or partition 0 "
    "(default true)",
    "send-all-bootstrap-at-start": "true|false: every table's BOOTSTRAP first (default false)",
}


def config_from_options(
    options: Mapping[str, str], *, profile: str | None = None, encoding: EncodingFormat
) -> Config:
    """Build a ``Config`` from TiCDC option names and text values (``EncodeError`` if invalid)."""
    read = OptionReader(options, protocol=f"{PROTOCOL}-{encoding}", known=OPTIONS)
    default = Config()
    integrity = read.choice(
        "integrity-check-level",
        "correctness" if default.enable_row_checksum else "none",
        ("none", "correctness"),
    )
    return Config(
        profile=read.profile(profile, default.profile),
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
        enable_row_checksum=integrity == "correctness",
        time_zone=read.text("tz", default.time_zone),
        send_bootstrap_interval_in_sec=read.whole(
            "send-bootstrap-interval-in-sec", default.send_bootstrap_interval_in_sec
        ),
        send_bootstrap_in_msg_count=read.whole(
            "send-bootstrap-in-msg-count", default.send_bootstrap_in_msg_count
        ),
        send_bootstrap_to_all_partition=read.flag(
            "send-bootstrap-to-all-partition", default.send_bootstrap_to_all_partition
        ),
        send_all_bootstrap_at_start=read.flag(
            "send-all-bootstrap-at-start", default.send_all_bootstrap_at_start
        ),
    )
