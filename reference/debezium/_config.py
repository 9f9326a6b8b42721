"""Debezium encoder options, named after TiCDC's sink and server options (ground truth §5)."""

from __future__ import annotations

import zoneinfo
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, tzinfo

from ticdc_conformance.reference._options import OptionReader, compression_problems, no_clock
from ticdc_conformance.reference.compression import Compression
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.tables import Profile

PROTOCOL = "debezium"
PROFILES: tuple[Profile, ...] = ("tiflow", "ticdc")


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """Encoder options; field names are TiCDC's option names with ``_`` for ``-``."""

    profile: Profile = "tiflow"
    cluster_id: str = "default"
    """TiCDC server ``cluster-id``: source ``name``/``cluster_id`` and the schema name prefix."""
    time_zone: str = "UTC"
    """TiCDC server ``tz`` (IANA name): the zone TIMESTAMP text is rendered in (§1.1, §5.3).
    TiCDC's own default is the host zone; the reference does not read the host, so UTC."""
    output_old_value: bool = True
    """``[sink.debezium] output-old-value``: write ``before`` for updates (§5.2)."""
    enable_tidb_extension: bool = False
    """``tidb_type`` in field schemas and WATERMARK messages (§5.3, §5.5)."""
    debezium_disable_schema: bool = False
    """Leave out the ``schema`` member of keys and values (§5.1)."""
    debezium_include_start_ts: bool = False
    """Profile ``ticdc`` only (``[sink.debezium] include-start-ts``, URL parameter
    ``debezium-include-start-ts``; ticdc ``pkg/sink/codec/common/config.go``): a row's
    ``source`` carries ``start_ts``, its transaction's start ts, declared last in the DML
    source schema (ticdc ``pkg/sink/codec/debezium/codec.go``)."""
    large_message_handle_compression: Compression = "none"
    """Compress every message's key and value, watermarks and DDL included (§1.5)."""
    now_ms: Callable[[], int] = field(default=no_clock, compare=False)
    """The clock behind payload ``ts_ms`` (wall time in TiCDC, never compared: TiCDC's own
    golden test ignores it). Injected so that the reference never reads the wall clock."""

    def __post_init__(self) -> None:
        problems = []
        if self.profile not in PROFILES:
            problems.append(f"profile must be one of {', '.join(PROFILES)}")
        try:
            self.zone  # noqa: B018 - resolving the name is the check
        except (ValueError, zoneinfo.ZoneInfoNotFoundError):
            problems.append(f"unknown time zone {self.time_zone!r}")
        if self.debezium_include_start_ts and self.profile != "ticdc":
            problems.append("debezium-include-start-ts exists only in profile ticdc")
        problems += compression_problems(self.large_message_handle_compression)
        if problems:
            raise EncodeError("; ".join(problems), protocol=PROTOCOL)

    @property
    def zone(self) -> tzinfo:
        """``time_zone`` as a tzinfo (UTC needs no time zone database)."""
        return UTC if self.time_zone == "UTC" else zoneinfo.ZoneInfo(self.time_zone)


OPTIONS: Mapping[str, str] = {
    "enable-tidb-extension": "true|false: tidb_type in field schemas, WATERMARK messages",
    "debezium-disable-schema": "true|false: leave out the schema member of key and value",
    "debezium-include-start-ts": "true|false, profile ticdc: source.start_ts in rows "
    "(default false; the change events need start_ts)",
    "output-old-value": "true|false: write 'before' for updates (default true)",
    "cluster-id": "TiCDC server cluster-id (default 'default')",
    "tz": "TiCDC server time zone, an IANA name (default UTC; TiCDC's is System)",
    "large-message-handle-compression": "none|snappy|lz4: compress each key and value "
    "(default none)",
}


def config_from_options(options: Mapping[str, str], *, profile: str | None = None) -> Config:
    """Build a ``Config`` from TiCDC option names and text values (``EncodeError`` if invalid)."""
    read = OptionReader(options, protocol=PROTOCOL, known=OPTIONS)
    default = Config()
    return Config(
        profile=read.profile(profile, default.profile),
        cluster_id=read.text("cluster-id", default.cluster_id),
        time_zone=read.text("tz", default.time_zone),
        output_old_value=read.flag("output-old-value", default.output_old_value),
        enable_tidb_extension=read.flag("enable-tidb-extension", default.enable_tidb_extension),
        debezium_disable_schema=read.flag(
            "debezium-disable-schema", default.debezium_disable_schema
        ),
        debezium_include_start_ts=read.flag(
            "debezium-include-start-ts", default.debezium_include_start_ts
        ),
        large_message_handle_compression=read.compression(),
    )
