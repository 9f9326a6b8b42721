"""Simple encoder: change events → Kafka messages, one event per message (ground truth §4).

Every message has a nil key (§4.1). A row whose message is longer than ``max-message-bytes``
(value length + 36, §1.5) is an error unless ``large-message-handle-option`` replaces it by a
handle-key-only message, which under ``claim-check`` also names where the full message was
stored (§4.7). DDL and BOOTSTRAP messages over the limit are always errors.

``encode`` writes one message per event and never a BOOTSTRAP of its own accord: when TiCDC
sends one (before a table's first row, then periodically, to every partition; §6.6) is a rule
of the stream, kept by ``_bootstrap.BootstrapSchedule`` for ``encode_stream`` and the stream
simulator.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import replace

from ticdc_conformance.reference._claim_check import claim_check_file
from ticdc_conformance.reference.compression import compress
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, RowChangedEvent
from ticdc_conformance.reference.message import RECORD_OVERHEAD, Message
from ticdc_conformance.reference.simple import _avro, _json
from ticdc_conformance.reference.simple._checksum import Checksum, row_checksum
from ticdc_conformance.reference.simple._config import PROTOCOL, Config, EncodingFormat
from ticdc_conformance.reference.simple._schema import ddl_kind
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG, TableInfo
from ticdc_conformance.reference.validation import check_row
from ticdc_conformance.reference.values import TimestampValue, Value

__all__ = ["encode", "encode_bootstrap", "event_checksum"]

_CLAIM_CHECK_NAMES = uuid.UUID("0d7c4d6e-2f0a-4b8e-9a3c-5e1f7b2c9d40")


def _packed(value: bytes, config: Config) -> bytes:
    """The value compressed: every message's whole value is, BOOTSTRAP included (§1.5)."""
    return compress(config.large_message_handle_compression, value)


def _check_size(value: bytes, config: Config, what: str) -> Message:
    length = len(value) + RECORD_OVERHEAD
    if length > config.max_message_bytes:
        raise EncodeError(
            f"{what} needs {length} bytes, max-message-bytes is {config.max_message_bytes}"
            " (ErrMessageTooLarge)",
            protocol=PROTOCOL,
        )
    return Message(key=None, value=value)


def encode_bootstrap(table: TableInfo, config: Config, encoding: EncodingFormat) -> Message:
    """The BOOTSTRAP message of ``table``: its schema, commitTs 0, nil key (§4.9)."""
    marshal = _json if encoding == "json" else _avro
    try:
        value = _packed(marshal.bootstrap(table, config.build_ts(), config.profile), config)
        return _check_size(value, config, "BOOTSTRAP")
    except ValueError as error:  # EncodeError included: name the encoding
        reason = error.reason if isinstance(error, EncodeError) else str(error)
        raise EncodeError(reason, protocol=f"{PROTOCOL}-{encoding}") from None


def _in_zone(image: Sequence[Value], zone: str) -> list[Value]:
    return [TimestampValue(v.text, zone) if isinstance(v, TimestampValue) else v for v in image]


def event_checksum(event: RowChangedEvent, config: Config) -> Checksum | None:
    """The checksum TiDB computes for the row's images; ``None`` when both would be 0 (§4.6)."""
    current, previous = (
        0 if image is None else row_checksum(event.table, _in_zone(image, config.time_zone))
        for image in (event.after, event.before)
    )
    if current == 0 and previous == 0:
        return None  # TiCDC drops a checksum whose halves are both 0
    return Checksum(
        version=config.checksum_version, corrupted=False, current=current, previous=previous
    )


def _row_value(
    event: RowChangedEvent,
    config: Config,
    encoding: EncodingFormat,
    checksum: Checksum | None,
    *,
    handle_key_only: bool = False,
    location: str | None = None,
) -> bytes:
    flags = event.table.column_flags(config.profile)
    positions = [i for i, column in enumerate(event.table.columns) if not column.is_virtual]
    if handle_key_only:
        positions = [i for i in positions if flags[i] & HANDLE_KEY_FLAG]
        if not positions:
            raise EncodeError("handle-key-only needs a table with a handle key", protocol=PROTOCOL)
    if encoding == "json":
        return _json.dml(
            event,
            positions,
            build_ts=config.build_ts(),
            zone=config.time_zone,
            handle_key_only=handle_key_only,
            location=location,
            checksum=checksum,
        )
    return _avro.dml(
        event,
        positions,
        build_ts=config.build_ts(),
        zone=config.time_zone,
        profile=config.profile,
        large_message_handling=config.large_message_handle_option != "none",
        handle_key_only=handle_key_only,
        location=location,
        checksum=checksum,
    )


def _encode_row(event: RowChangedEvent, config: Config, encoding: EncodingFormat) -> Message:
    checksum = event_checksum(event, config) if config.enable_row_checksum else None
    value = _packed(_row_value(event, config, encoding, checksum), config)
    length = len(value) + RECORD_OVERHEAD
    if length <= config.max_message_bytes:
        return Message(key=None, value=value)
    option = config.large_message_handle_option
    if option == "none":
        return _check_size(value, config, "row")
    claim_check = (
        claim_check_file(
            None,  # the stored message's key is nil
            value,
            storage_uri=config.claim_check_storage_uri,
            raw_value=config.claim_check_raw_value,
            names=_CLAIM_CHECK_NAMES,
        )
        if option == "claim-check"
        else None
    )
    location = None if claim_check is None else claim_check.location
    small = _packed(
        _row_value(event, config, encoding, checksum, handle_key_only=True, location=location),
        config,
    )
    message = _check_size(small, config, f"row (after {option}, {length} before)")
    return replace(message, claim_checks=() if claim_check is None else (claim_check,))


def encode(
    events: Iterable[ChangeEvent], config: Config, encoding: EncodingFormat
) -> list[Message]:
    """Encode change events into Simple messages as the profile's TiCDC would."""
    marshal = _json if encoding == "json" else _avro
    protocol = f"{PROTOCOL}-{encoding}"
    messages: list[Message] = []
    for index, event in enumerate(events):
        try:
            if isinstance(event, RowChangedEvent):
                check_row(event, protocol)
                messages.append(_encode_row(event, config, encoding))
            elif isinstance(event, DDLEvent):
                kind = ddl_kind(event.ddl_type, config.profile)
                value = _packed(marshal.ddl(event, kind, config.build_ts(), config.profile), config)
                messages.append(_check_size(value, config, "DDL"))
            else:
                value = _packed(marshal.watermark(event.commit_ts, config.build_ts()), config)
                messages.append(Message(key=None, value=value))
        except EncodeError as error:
            raise EncodeError(error.reason, protocol=protocol, event_index=index) from None
        except ValueError as error:
            raise EncodeError(str(error), protocol=protocol, event_index=index) from None
    return messages
