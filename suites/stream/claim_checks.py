"""The ``claim-check`` rule: every claim-check reference resolves to the event it announces.

Under ``large-message-handle-option=claim-check`` TiCDC stores an oversized row's full message
in external storage and sends a reference row naming the file (docs/kafka.md#claim-check,
pingcap/tiflow ``pkg/sink/kafka/claimcheck/claim_check.go``). A consumer reads the file and
decodes it in place of the reference (tiflow ``pkg/sink/codec/simple/decoder.go``
``assembleClaimCheckRowChangedEvent``, ``pkg/sink/codec/canal/canal_json_decoder.go``,
``pkg/sink/codec/open/open_protocol_decoder.go``), so the rule holds when the file is there,
decodes with the topic's protocol (``claim-check-raw-value`` says how it is stored) to one
row, and that row is the one the reference announces: same table, operation and commit ts,
and the handle-key columns the reference carries with the same values
(``reference.claim_check.mismatch``).

The storage is the ``CheckSettings.claim_check_storage`` folder (a ``file://`` URI or a path;
by default a dump's ``_claim_check/``); a reference with no storage to read is a finding too.
One finding per message, at its offset, with the smallest commit ts among its failing rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ticdc_conformance.generators.claim_check import file_storage
from ticdc_conformance.reference import DecodedRow, DecodeError, Message
from ticdc_conformance.reference.claim_check import ClaimCheck, mismatch, resolve
from ticdc_conformance.reference.decoded import DecodedEvent
from ticdc_conformance.suites.stream.catalog import CheckSettings

__all__ = ["ClaimChecks"]


class ClaimChecks:
    """The ``claim-check`` rule over one partition's decoded rows."""

    def __init__(
        self,
        settings: CheckSettings,
        decode: Callable[[Message, int], Sequence[DecodedEvent]],
        stateful: Any = None,  # noqa: ANN401 - Simple's decoder
    ) -> None:
        self.protocol = settings.protocol
        self._decode = decode
        self._stateful = stateful
        raw = dict(settings.options).get("claim-check-raw-value", "false").lower() == "true"
        uri = settings.claim_check_storage
        self._claim_check = (
            None if uri is None else ClaimCheck(storage=file_storage(uri), raw_value=raw)
        )

    def problems(self, offset: int, rows: Sequence[DecodedRow]) -> tuple[int | None, str] | None:
        """(smallest commit ts, detail) of the references in ``rows`` that fail, or ``None``."""
        failing: list[tuple[int | None, str]] = []
        for row in rows:
            if row.claim_check_location is None:
                continue
            problem = self._problem(offset, row)
            if problem is not None:
                failing.append((row.commit_ts, problem))
        if not failing:
            return None
        stamps = [ts for ts, _ in failing if ts is not None]
        return min(stamps, default=None), failing[0][1]

    def _problem(self, offset: int, row: DecodedRow) -> str | None:
        location = row.claim_check_location
        if self._claim_check is None:
            return f"{location}: no claim-check storage to read (--claim-check-storage)"
        try:
            full = resolve(
                self.protocol,
                row,
                self._claim_check,
                lambda stored: self._stored_events(stored, offset),
                message_index=offset,
            )
        except DecodeError as error:
            return str(error)
        differs = mismatch(row, full)
        return None if differs is None else f"{location}: {differs}"

    def _stored_events(self, stored: Message, offset: int) -> Sequence[DecodedEvent]:
        """The stored message's events; Simple's typed by a schema already seen, never held."""
        events = self._decode(stored, offset)
        if self._stateful is None:
            return events
        for event in events:
            if isinstance(event, DecodedRow) and event.schema_version is not None:
                known = self._stateful.table_info(event.schema, event.table, event.schema_version)
                if known is None:
                    raise DecodeError(
                        f"schema version {event.schema_version} of {event.schema}.{event.table} "
                        "is unknown on this partition",
                        protocol=self.protocol,
                        message_index=offset,
                    )
        return list(self._stateful.feed(stored, message_index=offset))
