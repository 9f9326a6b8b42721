"""Property round trips: change events from the generators, through the implementation under test.

Hypothesis draws rows of every MySQL type (``ticdc_conformance.generators.strategies``).

* Decoder under test: the reference encodes each row; the decoder under test must decode
  exactly what the reference decoder decodes from the same messages.
* Encoder under test: the encoder under test encodes each row (no sink options); the reference
  decoder must decode from its messages exactly what it decodes from the reference encoder's
  messages for the same row. The comparison is of decoded events, not bytes, so that it holds
  for protocols carrying wall time too (Simple ``buildTs``, Debezium ``ts_ms``); the golden
  encode cases compare bytes where TiCDC's output is deterministic.

Simple rows are typed by a schema: the reference's BOOTSTRAP for the row's table goes first
in both directions (a consumer has it before the row). Rows the reference cannot encode
(``EncodeError``: the protocol cannot carry them) are rejected, not checked. Derandomized, so
a run is repeatable; Hypothesis shrinks a failure to a small row and prints it. Needs
``hypothesis`` (the ``generators`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ticdc_conformance.reference import CODECS, Message, RowChangedEvent
from ticdc_conformance.reference.decoding import decode_messages
from ticdc_conformance.reference.errors import DecodeError, EncodeError
from ticdc_conformance.reference.forms import write_change_event, write_decoded_event
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.suites.gate._check import as_json, json_diff

__all__ = ["encoder_round_trip_property", "round_trip_property"]


def _run(examples: int, property_: Callable[[RowChangedEvent], None]) -> None:
    from hypothesis import HealthCheck, given, settings

    from ticdc_conformance.generators.strategies import row_changed_events

    @settings(
        max_examples=examples,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(event=row_changed_events())
    def check(event: RowChangedEvent) -> None:  # the name Hypothesis prints
        property_(event)

    check()


def _reference_messages(protocol: str, profile: str, event: RowChangedEvent) -> list[Message]:
    """The reference's messages for ``event`` (BOOTSTRAP first for Simple).

    Rejects the row when the protocol cannot carry it.
    """
    from hypothesis import reject

    codec = CODECS[protocol]
    config = codec.config_from_options({}, profile=profile)
    try:
        return [*_bootstrap(protocol, profile, event), *codec.encode([event], config)]
    except EncodeError:
        reject()  # the protocol cannot carry this row; nothing to check


def _bootstrap(protocol: str, profile: str, event: RowChangedEvent) -> list[Message]:
    codec = CODECS[protocol]
    if not isinstance(codec, SchemaCodec):
        return []
    return [codec.encode_bootstrap(event.table, codec.config_from_options({}, profile=profile))]


def _disagreement(
    protocol: str, profile: str, what: str, event: RowChangedEvent, lines: list[str]
) -> AssertionError:
    return AssertionError(
        f"{protocol} ({profile}): {what} on the change event "
        f"{json.dumps(write_change_event(event), ensure_ascii=False)}:\n  " + "\n  ".join(lines)
    )


def round_trip_property(
    protocol: str, profile: str, decoder: Callable[..., Any], *, examples: int
) -> None:
    """Reference encoder → ``decoder``, over ``examples`` drawn rows.

    Raises ``AssertionError`` with the shrunk row on a failure.
    """

    def check(event: RowChangedEvent) -> None:
        messages = _reference_messages(protocol, profile, event)
        expected = [write_decoded_event(e) for e in decode_messages(protocol, messages)]
        differences = json_diff(expected, as_json(decoder(protocol, messages)))
        if differences:
            raise _disagreement(
                protocol, profile, "the decoder disagrees with the reference", event, differences
            )

    _run(examples, check)


def encoder_round_trip_property(
    protocol: str, profile: str, encoder: Callable[..., Any], *, examples: int
) -> None:
    """``encoder`` → reference decoder, over ``examples`` drawn rows.

    Raises ``AssertionError`` with the shrunk row on a failure.
    """

    def check(event: RowChangedEvent) -> None:
        reference = _reference_messages(protocol, profile, event)
        expected = [write_decoded_event(e) for e in decode_messages(protocol, reference)]
        try:
            messages = list(encoder(protocol, profile, {}, [event]))
        except Exception as error:  # noqa: BLE001 - the reference carries this row: a failure
            raise _disagreement(
                protocol, profile, "the encoder raised", event, [f"{type(error).__name__}: {error}"]
            ) from None
        try:
            decoded = decode_messages(protocol, [*_bootstrap(protocol, profile, event), *messages])
        except DecodeError as error:
            raise _disagreement(
                protocol,
                profile,
                "the reference cannot decode the encoder's output",
                event,
                [str(error)],
            ) from None
        differences = json_diff(expected, as_json(decoded))
        if differences:
            raise _disagreement(
                protocol,
                profile,
                "the reference decodes the encoder's output differently from its own",
                event,
                ["(reference encoder vs encoder under test, by JSON Pointer)", *differences],
            )

    _run(examples, check)
