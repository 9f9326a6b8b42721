"""Claim-check references resolved through storage the caller reads (docs/kafka.md#claim-check).

Under ``large-message-handle-option=claim-check`` TiCDC writes an oversized row's full message
to external storage and sends a reference row in its place: the handle-key columns and the
file's location (``pkg/sink/kafka/claimcheck/claim_check.go`` in pingcap/tiflow and
pingcap/ticdc). The file is named by a UUID plus ``.json``; the location is the storage URI
with its trailing ``/`` trimmed, ``/``, and that name. The file holds
``{"key": base64|null, "value": base64}``, or with ``claim-check-raw-value=true`` the value
bytes alone (refused for Open: ``pkg/config/large_message.go``).

The reference does no I/O: a consumer passes a ``ClaimCheck``, whose ``storage`` turns a
location into the file's bytes (``generators.claim_check.file_storage`` reads ``file://``
storage). TiCDC's consumers read the location's file name from the storage they are
configured with, so a storage may do the same. ``stored_message`` reads and parses a file,
``resolve`` decodes it to the full row; a file that cannot be read, parsed or decoded to one
row is a ``DecodeError`` at the reference's message index, naming the location.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ticdc_conformance.reference import simple
from ticdc_conformance.reference.canal_json import claim_check as canal_claim_check
from ticdc_conformance.reference.decoded import DecodedColumn, DecodedEvent, DecodedRow
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import Message
from ticdc_conformance.reference.open_protocol import claim_check as open_claim_check

__all__ = [
    "CLAIM_CHECK_PROTOCOLS",
    "ClaimCheck",
    "ClaimCheckStorage",
    "file_name",
    "mismatch",
    "resolve",
    "stored_message",
]

ClaimCheckStorage = Callable[[str], bytes]
"""A location → the file's bytes; raises ``OSError`` or ``LookupError`` when it has none."""

_READERS: dict[str, Callable[[bytes, bool, int], Message]] = {
    "open": lambda content, _raw, index: open_claim_check.read_claim_check(
        content, message_index=index
    ),
    "simple-json": lambda content, raw, index: simple.read_claim_check(
        content, raw_value=raw, message_index=index
    ),
    "simple-avro": lambda content, raw, index: simple.read_claim_check(
        content, raw_value=raw, message_index=index
    ),
    "canal-json": lambda content, raw, index: canal_claim_check.read_claim_check(
        content, raw_value=raw, message_index=index
    ),
}
CLAIM_CHECK_PROTOCOLS = frozenset(_READERS)
"""The protocols TiCDC accepts ``claim-check`` for (``pkg/config/large_message.go``)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimCheck:
    """How a consumer reads claim-check files: its storage and ``claim-check-raw-value``."""

    storage: ClaimCheckStorage
    raw_value: bool = False


def file_name(location: str) -> str:
    """The file name of a location: what follows its last ``/`` (TiCDC's consumers read it)."""
    return location.rpartition("/")[2]


def _fail(protocol: str, location: str, reason: str, index: int) -> DecodeError:
    return DecodeError(
        f"claim-check file {location}: {reason}",
        protocol=protocol,
        part="value",
        message_index=index,
    )


def stored_message(
    protocol: str, location: str, claim_check: ClaimCheck, *, message_index: int = 0
) -> Message:
    """The message the file at ``location`` stores; ``DecodeError`` when it cannot be had."""
    if protocol not in _READERS:
        raise _fail(protocol, location, "the protocol has no claim-check files", message_index)
    if claim_check.raw_value and protocol == "open":
        raise _fail(protocol, location, "Open refuses claim-check-raw-value", message_index)
    try:
        content = claim_check.storage(location)
    except (OSError, LookupError, ValueError) as error:
        raise _fail(protocol, location, f"not readable: {error}", message_index) from None
    try:
        return _READERS[protocol](content, claim_check.raw_value, message_index)
    except DecodeError as error:
        raise _fail(protocol, location, f"not a claim-check file: {error}", message_index) from None


def resolve(
    protocol: str,
    row: DecodedRow,
    claim_check: ClaimCheck,
    decode: Callable[[Message], Sequence[DecodedEvent]],
    *,
    message_index: int = 0,
) -> DecodedRow:
    """The full row ``row`` refers to: its file read and decoded with ``decode``.

    ``DecodeError`` when the file cannot be read, does not decode, or holds anything but one
    row; the row may differ from the reference (``mismatch`` says how).
    """
    location = row.claim_check_location
    if location is None:
        return row
    message = stored_message(protocol, location, claim_check, message_index=message_index)
    try:
        events = list(decode(message))
    except DecodeError as error:
        raise _fail(protocol, location, f"does not decode: {error}", message_index) from None
    rows = [e for e in events if isinstance(e, DecodedRow)]
    if len(events) != 1 or len(rows) != 1:
        raise _fail(protocol, location, f"holds {len(events)} event(s), not one row", message_index)
    if rows[0].claim_check_location is not None:
        raise _fail(protocol, location, "holds another claim-check reference", message_index)
    return rows[0]


def _values(image: tuple[DecodedColumn, ...] | None) -> dict[str, object]:
    return {} if image is None else {c.name: c.value for c in image}


def mismatch(reference: DecodedRow, full: DecodedRow) -> str | None:
    """How the stored row differs from its reference, ``None`` when it is the same event.

    Same table, operation and commit ts, and every column the reference carries (its handle
    key) with the same value in the same image.
    """
    if (full.schema, full.table) != (reference.schema, reference.table):
        stored, named = f"{full.schema}.{full.table}", f"{reference.schema}.{reference.table}"
        return f"stored row of {stored}, reference {named}"
    if full.op != reference.op:
        return f"stored {full.op}, reference {reference.op}"
    if full.commit_ts != reference.commit_ts:
        return f"stored commit ts {full.commit_ts}, reference {reference.commit_ts}"
    for image in ("before", "after"):
        carried, kept = _values(getattr(reference, image)), _values(getattr(full, image))
        for name, value in carried.items():
            if name not in kept or kept[name] != value:
                return f"{image} column {name}: stored {kept.get(name)!r}, reference {value!r}"
    return None
