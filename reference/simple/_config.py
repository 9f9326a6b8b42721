"""Simple protocol encoder options, named after TiCDC's sink options (ground truth §1.5, §4).

``buildTs`` is the wall-clock time at encoding (§4.2). The reference reads no clock: the
``build_ts`` callable gives it, and its default always answers 0 so that output is
reproducible. Comparisons of Simple messages must ignore ``buildTs`` (decoded events do not
carry it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from ticdc_conformance.reference._options import large_message_problems, read_options
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.tables import Profile

PROTOCOL = "simple"
PROFILES: tuple[Profile, ...] = ("tiflow", "ticdc")

EncodingFormat = Literal["json", "avro"]
LargeMessageHandleOption = Literal["none", "handle-key-only", "claim-check"]


def no_clock() -> int:
    """The default ``buildTs``: always 0 (the reference reads no wall clock)."""
    return 0


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Encoder options; field names are TiCDC's option names with ``_`` for ``-``."""

    profile: Profile = "tiflow"
    encoding_format: EncodingFormat = "json"
    """``[sink.kafka-config.codec-config] encoding-format`` (§4)."""
    max_message_bytes: int = 10 * 1024 * 1024
    large_message_handle_option: LargeMessageHandleOption = "none"
    claim_check_storage_uri: str = ""
    enable_row_checksum: bool = False
    """``[integrity] integrity-check-level = "correctness"``: DML messages carry ``checksum``."""
    checksum_version: int = 1
    """The row checksum version TiDB wrote (carried as is, §4.6)."""
    time_zone: str = "UTC"
    """TiCDC server ``tz`` as a Go location name: TIMESTAMP ``location`` (§4.3). TiCDC's
    default ``System`` prints as ``Local``; the reference defaults to ``UTC``."""
    build_ts: Callable[[], int] = field(default=no_clock, compare=False)
    """Unix milliseconds for ``buildTs``; inject a real clock to imitate TiCDC."""

    def __post_init__(self) -> None:
        problems = []
        if self.profile not in PROFILES:
            problems.append(f"profile must be one of {', '.join(PROFILES)}")
        if self.encoding_format not in ("json", "avro"):
            problems.append("encoding-format must be json or avro")
        if self.max_message_bytes <= 0:
            problems.append("max-message-bytes must be positive")
        problems += large_message_problems(
            self.large_message_handle_option, self.claim_check_storage_uri
        )
        if not self.time_zone:
            problems.append("time zone must be a location name")
        if problems:
            raise EncodeError("; ".join(problems), protocol=PROTOCOL)

    @property
    def protocol(self) -> str:
        """The kit's protocol name for this encoding: ``simple-json`` or ``simple-avro``."""
        return f"{PROTOCOL}-{self.encoding_format}"


OPTIONS: Mapping[str, str] = {
    "max-message-bytes": "bytes per Kafka message at most (default 10485760)",
    "large-message-handle-option": "none|handle-key-only|claim-check (default none)",
    "claim-check-storage-uri": "storage URI for claim-check files, e.g. s3://bucket/claim-check",
    "large-message-handle-compression": "none only: snappy and lz4 are not implemented",
    "integrity-check-level": "none|correctness: correctness adds the row checksum to DML",
    "tz": "the TiCDC server time zone, TIMESTAMP's location (default UTC; TiCDC's is System)",
}


def _integrity_check_level(text: str) -> tuple[str, object]:
    if text not in ("none", "correctness"):
        raise ValueError("takes none or correctness")
    return "enable_row_checksum", text == "correctness"


def config_from_options(
    options: Mapping[str, str],
    *,
    profile: str | None = None,
    encoding_format: EncodingFormat = "json",
) -> Config:
    """Build a ``Config`` from TiCDC option names and text values (``EncodeError`` if invalid)."""
    values = read_options(
        options, Config(), protocol=f"{PROTOCOL}-{encoding_format}", known=OPTIONS,
        renames={"tz": "time_zone"},
        special={"integrity-check-level": _integrity_check_level},
    )  # fmt: skip
    values["encoding_format"] = encoding_format
    if profile is not None:
        values["profile"] = profile
    return Config(**values)  # type: ignore[arg-type]
