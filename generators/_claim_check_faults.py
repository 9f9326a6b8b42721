"""Fault kinds that break the ``claim-check`` rule (docs/dump-format.md, docs/rules/stream.md).

The injectors of ``ticdc_conformance.generators.faults`` for a log written with
``large-message-handle-option=claim-check``, where a row message over ``max-message-bytes`` is
a reference naming the file TiCDC stored (pingcap/tiflow
``pkg/sink/kafka/claimcheck/claim_check.go``):

* ``missing-claim-check``: a reference message whose stored files were never written (the
  message stays as it was; ``generate`` writes no file for it);
* ``swapped-claim-check``: a reference whose file holds another reference's stored message,
  a row of another commit ts or handle key.

Each is one finding at the reference message, with the smallest commit ts among its
references that fail.
"""

from __future__ import annotations

import dataclasses

from ticdc_conformance.generators._placement import FaultPlacementError, Injector, Mark, row_ts
from ticdc_conformance.generators.simulator import Delivery, StreamSettings
from ticdc_conformance.reference import DecodedRow, DecodeError, Message
from ticdc_conformance.reference.claim_check import ClaimCheck, mismatch, stored_message

__all__ = ["CLAIM_CHECK_FAULTS", "claim_check_inapplicable", "missing_claim_check", "swapped"]

CLAIM_CHECK_FAULTS = ("missing-claim-check", "swapped-claim-check")


def claim_check_inapplicable(kind: str, settings: StreamSettings) -> str | None:
    """Why a fault kind of this module cannot go into a log of ``settings``; ``None`` if it can."""
    options = dict(settings.options)
    if kind in CLAIM_CHECK_FAULTS and options.get("large-message-handle-option") != "claim-check":
        return f"{kind} needs large-message-handle-option=claim-check among the options"
    return None


def _references(inj: Injector, delivery: Delivery) -> dict[str, DecodedRow]:
    """Location → reference row, for every claim-check reference ``delivery`` carries."""
    return {
        row.claim_check_location: row
        for row in inj.decode_rows(delivery)
        if row.claim_check_location is not None
    }


def missing_claim_check(inj: Injector, zone: int) -> list[Mark]:
    for p, _, _, rows in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in rows:
            delivery = deliveries[i]
            references = _references(inj, delivery)
            if not delivery.message.claim_checks or not references:
                continue
            message = dataclasses.replace(delivery.message, claim_checks=())
            deliveries[i] = dataclasses.replace(delivery, message=message)
            oldest = min(row_ts(row) for row in references.values())
            return [Mark("claim-check", p, deliveries[i], oldest)]
    raise FaultPlacementError("no message with a claim-check reference")


def _stored_row(inj: Injector, content: bytes) -> DecodedRow | None:
    """The row a claim-check file of the log stores (the log's own options say how)."""
    raw = dict(inj.log.settings.options).get("claim-check-raw-value") == "true"
    reader = ClaimCheck(storage=lambda _location: content, raw_value=raw)
    try:
        stored = stored_message(inj.log.settings.protocol, "", reader)
        events = inj.codec.decode(stored, compression=inj.compression)
    except DecodeError:
        return None
    rows = [e for e in events if isinstance(e, DecodedRow)]
    return rows[0] if len(rows) == 1 else None


def swapped(inj: Injector, zone: int) -> list[Mark]:
    others = [
        stored
        for deliveries in inj.log.partitions
        for d in deliveries
        for stored in d.message.claim_checks
    ]
    for p, _, _, rows in inj.stretches(zone):
        deliveries = inj.log.partitions[p]
        for i in rows:
            delivery = deliveries[i]
            references = _references(inj, delivery)
            for k, mine in enumerate(delivery.message.claim_checks):
                reference = references.get(mine.location)
                if reference is None:
                    continue
                for other in others:
                    full = _stored_row(inj, other.content)
                    if full is None or mismatch(reference, full) is None:
                        continue
                    # the reference keeps its location; the file there holds the other row
                    files = list(delivery.message.claim_checks)
                    files[k] = dataclasses.replace(mine, content=other.content)
                    message: Message = dataclasses.replace(
                        delivery.message, claim_checks=tuple(files)
                    )
                    deliveries[i] = dataclasses.replace(delivery, message=message)
                    return [Mark("claim-check", p, deliveries[i], row_ts(reference))]
    raise FaultPlacementError("no claim-check reference whose file can hold another row")
