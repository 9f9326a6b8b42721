"""Open Protocol encoder: change events → Kafka messages (ground truth §2.1–§2.7).

Each row is encoded to a key JSON and a value JSON first; the large-message rules (§2.6) may
replace it by a handle-key-only or claim-check row; then it joins the current batch or opens a
new message (§2.2). DDL and resolved events close the batch and go out alone, as TiCDC flushes
rows before it writes a DDL or a checkpoint.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ticdc_conformance.reference._claim_check import claim_check_file
from ticdc_conformance.reference._gojson import JsonStyle, quote, to_bytes
from ticdc_conformance.reference.compression import compress
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.events import ChangeEvent, DDLEvent, RowChangedEvent
from ticdc_conformance.reference.message import RECORD_OVERHEAD, ClaimCheckObject, Message
from ticdc_conformance.reference.open_protocol._columns import write_value
from ticdc_conformance.reference.open_protocol._config import PROTOCOL, Config
from ticdc_conformance.reference.open_protocol._row_plan import (
    RowPlan,
    Unplanned,
    column_prefix,
    plan_of,
)
from ticdc_conformance.reference.tables import HANDLE_KEY_FLAG
from ticdc_conformance.reference.validation import check_row
from ticdc_conformance.reference.values import TimestampValue, Value, string_bytes

__all__ = ["encode"]

VERSION_HEADER = (1).to_bytes(8, "big")
"""``BatchVersion1`` (§2.1)."""
LENGTH_BYTES = 8
RESOLVED_VALUE = bytes(LENGTH_BYTES)
"""A resolved event's value entry: a zero length and no JSON (§2.8 O4)."""
_CLAIM_CHECK_NAMES = uuid.UUID("6f0c1e2a-8b1d-4c3e-9a55-3a1f0d7e2b90")


def _style(config: Config) -> JsonStyle:
    return JsonStyle.GO_STD if config.profile == "tiflow" else JsonStyle.JSONITER


def _entry(data: bytes) -> bytes:
    return len(data).to_bytes(LENGTH_BYTES, "big") + data


@dataclass(slots=True)
class _Batch:
    """One message's rows so far: key and value entries (§2.1), kept as parts until sent."""

    keys: list[bytes] = field(default_factory=lambda: [VERSION_HEADER])
    values: list[bytes] = field(default_factory=list)
    size: int = len(VERSION_HEADER) + RECORD_OVERHEAD
    """The key and value bytes so far and the record overhead: the message's length (§1.5)."""
    rows: int = 0
    claim_checks: list[ClaimCheckObject] = field(default_factory=list)

    def message(self) -> Message:
        return Message(
            key=b"".join(self.keys),
            value=b"".join(self.values),
            claim_checks=tuple(self.claim_checks),
        )


def _columns_json(
    event: RowChangedEvent,
    image: Sequence[Value],
    positions: Sequence[int],
    flags: Sequence[int],
    config: Config,
) -> str:
    style = _style(config)
    columns = event.table.columns
    if config.profile == "tiflow":
        # classic TiCDC builds a Go map, and encoding/json sorts map keys (§2.4)
        positions = sorted(positions, key=lambda i: columns[i].name)
    parts = []
    for i in positions:
        column = columns[i]
        type_code = column.effective_type_code
        try:
            value = write_value(type_code, image[i], flags[i], style)
        except ValueError as error:
            raise EncodeError(f"column {column.name!r}: {error}", protocol=PROTOCOL) from None
        prefix = column_prefix((column.name, type_code, flags[i]), style)
        parts.append(f"{prefix}{value}}}")
    return "{" + ",".join(parts) + "}"


def _same(old: Value, new: Value) -> bool:
    # TiCDC compares what it holds: strings as bytes (text and bytes alike), TIMESTAMP as
    # its rendered text (the zone is not part of the value it has)
    old, new = (v.text if isinstance(v, TimestampValue) else v for v in (old, new))
    if isinstance(old, str | bytes) and isinstance(new, str | bytes):
        return string_bytes(old) == string_bytes(new)
    return type(old) is type(new) and old == new


def _old_image(
    event: RowChangedEvent,
    before: Sequence[Value],
    chosen: list[int],
    flags: Sequence[int],
    config: Config,
) -> str | None:
    """The member of the old image: ``p`` of an update, ``d`` of a delete; or none (§2.4)."""
    if event.op == "delete":
        if config.delete_only_output_handle_key_columns:
            chosen = _handle_key(chosen, flags, "no handle-key column to output for the delete")
        return f'"d":{_columns_json(event, before, chosen, flags, config)}'
    if not config.output_old_value:
        return None
    if config.only_output_updated_columns:  # NULL to NULL is no change
        chosen = [i for i in chosen if not _same(before[i], event.image[i])]
    # tiflow's struct tag is omitempty: an update where nothing changed loses "p" (§2.4)
    if not chosen and config.profile == "tiflow":
        return None
    return f'"p":{_columns_json(event, before, chosen, flags, config)}'


def _handle_key(positions: Sequence[int], flags: Sequence[int], problem: str) -> list[int]:
    """The handle-key columns among ``positions``; ``EncodeError`` (``problem``) if none."""
    handle = [i for i in positions if flags[i] & HANDLE_KEY_FLAG]
    if not handle:
        raise EncodeError(problem, protocol=PROTOCOL)
    return handle


def _row_value(event: RowChangedEvent, config: Config, handle_key_only: bool) -> str:
    flags = event.table.column_flags(config.profile)
    chosen = [i for i, column in enumerate(event.table.columns) if not column.is_virtual]
    if handle_key_only:
        chosen = _handle_key(chosen, flags, "handle-key-only needs a table with a handle key")
    members = []
    if event.after is not None:
        members.append(f'"u":{_columns_json(event, event.after, chosen, flags, config)}')
    if event.before is not None and (old := _old_image(event, event.before, chosen, flags, config)):
        members.append(old)
    return "{" + ",".join(members) + "}"


def _tiflow_key(
    event: RowChangedEvent, style: JsonStyle, handle_key_only: bool, location: str | None
) -> list[str]:
    """Classic TiCDC's key members after ``ts``: empty ones omitted (§2.3)."""
    table = event.table
    members = []
    if table.schema:
        members.append(f'"scm":{quote(table.schema, style)}')
    if table.name:
        members.append(f'"tbl":{quote(table.name, style)}')
    if row_id := event.effective_row_id():
        members.append(f'"rid":{row_id}')
    if table.partition_id is not None:
        members.append(f'"ptn":{table.partition_id}')
    members.append('"t":1')
    if handle_key_only and location is None:
        members.append('"ohk":true')
    if location is not None:
        members.append(f'"ccl":{quote(location, style)}')
    return members


def _ticdc_key(
    event: RowChangedEvent, style: JsonStyle, handle_key_only: bool, location: str | None
) -> list[str]:
    """The new architecture's key members after ``ts``: no ``rid``, ``ptn`` last (§2.3)."""
    table = event.table
    members = [f'"scm":{quote(table.schema, style)}', f'"tbl":{quote(table.name, style)}', '"t":1']
    if handle_key_only:
        members.append('"ohk":true')
    if location is not None:
        # new-arch writes the flag a second time before the location (§2.3 quirk)
        members += ['"ohk":false', f'"ccl":{quote(location, style)}']
    if table.partition_id is not None:
        members.append(f'"ptn":{table.partition_id}')
    return members


_KEYS = {"tiflow": _tiflow_key, "ticdc": _ticdc_key}
"""Profile → the members of a row's key JSON after ``ts``."""


def _row_key(
    event: RowChangedEvent, config: Config, handle_key_only: bool, location: str | None
) -> str:
    members = _KEYS[config.profile](event, _style(config), handle_key_only, location)
    return f'{{"ts":{event.commit_ts},' + ",".join(members) + "}"


def _encode_row(
    event: RowChangedEvent,
    config: Config,
    handle_key_only: bool = False,
    location: str | None = None,
) -> tuple[bytes, bytes]:
    key = to_bytes(_row_key(event, config, handle_key_only, location))
    value = to_bytes(_row_value(event, config, handle_key_only))
    # the value JSON is compressed, never the key; sizes count the compressed bytes (§1.5)
    return key, compress(config.large_message_handle_compression, value)


def _single_row_length(key: bytes, value: bytes) -> int:
    # one key and value, the record overhead, two length prefixes and the version (§2.2)
    return len(key) + len(value) + _ROW_OVERHEAD


_ROW_OVERHEAD = RECORD_OVERHEAD + 2 * LENGTH_BYTES + len(VERSION_HEADER)


def _planned_row(
    event: RowChangedEvent, config: Config, plan: RowPlan | None
) -> tuple[bytes, bytes, ClaimCheckObject | None]:
    """``check_row`` then ``_fit_row``, through ``plan`` (the table's ``plan_of``) if it takes it.

    A plan writes only values that pass the checks, the same bytes as the full path; a row
    it leaves, or one too large for a message (§2.6), takes the full path.
    """
    if plan is not None:
        try:
            key_json, value_json = plan.encode(event)
        except Unplanned:
            pass
        else:
            # to_bytes, without its call: JSON text to bytes, surrogate escapes as raw bytes
            key = key_json.encode("utf-8", "surrogateescape")
            value = value_json.encode("utf-8", "surrogateescape")
            if config.large_message_handle_compression != "none":
                value = compress(config.large_message_handle_compression, value)
            if len(key) + len(value) + _ROW_OVERHEAD <= config.max_message_bytes:
                return key, value, None
    check_row(event, PROTOCOL)
    return _fit_row(event, config)


def _fit_row(
    event: RowChangedEvent, config: Config
) -> tuple[bytes, bytes, ClaimCheckObject | None]:
    key, value = _encode_row(event, config)
    if _single_row_length(key, value) <= config.max_message_bytes:
        return key, value, None
    option = config.large_message_handle_option
    too_large = (
        f"row needs {_single_row_length(key, value)} bytes, "
        f"max-message-bytes is {config.max_message_bytes}"
    )
    if option == "none":
        raise EncodeError(too_large + " (ErrMessageTooLarge)", protocol=PROTOCOL)
    claim_check = (
        claim_check_file(
            VERSION_HEADER + _entry(key),
            _entry(value),
            storage_uri=config.claim_check_storage_uri,
            raw_value=False,  # TiCDC refuses claim-check-raw-value for Open
            names=_CLAIM_CHECK_NAMES,
        )
        if option == "claim-check"
        else None
    )
    location = None if claim_check is None else claim_check.location
    key, value = _encode_row(event, config, handle_key_only=True, location=location)
    if _single_row_length(key, value) > config.max_message_bytes:
        raise EncodeError(too_large + f" and still too large after {option}", protocol=PROTOCOL)
    return key, value, claim_check


def _control_message(key_json: str, value: bytes) -> Message:
    return Message(key=VERSION_HEADER + _entry(to_bytes(key_json)), value=value)


def _encode_ddl(event: DDLEvent, config: Config) -> Message:
    style = _style(config)
    members = [f'"ts":{event.commit_ts}']
    if config.profile == "ticdc" or event.schema:
        members.append(f'"scm":{quote(event.schema, style)}')
    if config.profile == "ticdc" or event.table:
        members.append(f'"tbl":{quote(event.table, style)}')
    members.append('"t":2')
    value_json = f'{{"q":{quote(event.query, style)},"t":{event.ddl_type}}}'
    value = compress(config.large_message_handle_compression, to_bytes(value_json))
    return _control_message("{" + ",".join(members) + "}", _entry(value))


def encode(events: Iterable[ChangeEvent], config: Config | None = None) -> list[Message]:
    """Encode change events into Kafka messages exactly as the profile's TiCDC would."""
    config = config or Config()
    messages: list[Message] = []
    batch: _Batch | None = None
    max_rows, limit = config.max_batch_size, config.batch_limit
    table: object = None  # the last row's table, whose plan is ``plan``
    plan: RowPlan | None = None
    for index, event in enumerate(events):
        try:
            if isinstance(event, RowChangedEvent):
                if event.table is not table:
                    table = event.table
                    plan = plan_of(event.table, config)
                key, value, claim_check = _planned_row(event, config, plan)
                key_length, value_length = len(key), len(value)
                row_bytes = key_length + value_length + 2 * LENGTH_BYTES
                # one more row must stay within max-batch-size and the byte limit (§2.2)
                if batch is not None and not (
                    batch.rows < max_rows and batch.size + row_bytes <= limit
                ):
                    messages.append(batch.message())
                    batch = None
                if batch is None:
                    batch = _Batch()
                # the row's key and value entries: a length, then the bytes (§2.1)
                batch.keys += (key_length.to_bytes(LENGTH_BYTES, "big"), key)
                batch.values += (value_length.to_bytes(LENGTH_BYTES, "big"), value)
                batch.size += row_bytes
                batch.rows += 1
                if claim_check is not None:
                    batch.claim_checks.append(claim_check)
                continue
            if batch is not None:
                messages.append(batch.message())
                batch = None
            if isinstance(event, DDLEvent):
                messages.append(_encode_ddl(event, config))
            else:
                messages.append(
                    _control_message(f'{{"ts":{event.commit_ts},"t":3}}', RESOLVED_VALUE)
                )
        except EncodeError as error:
            raise EncodeError(error.reason, protocol=PROTOCOL, event_index=index) from None
    if batch is not None:
        messages.append(batch.message())
    return messages
