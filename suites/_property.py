"""Property round trip: change events from the generators, reference encoder → decoder under test.

Hypothesis draws rows of every MySQL type (``ticdc_conformance.generators.strategies``); the
reference encodes them; the decoder under test must decode exactly what the reference decoder
decodes from the same messages. Derandomized, so a run is repeatable; Hypothesis shrinks a
failure to a small row and prints it. Needs ``hypothesis`` (the ``generators`` extra).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ticdc_conformance.fixtures import decode_messages
from ticdc_conformance.reference import CODECS, RowChangedEvent
from ticdc_conformance.reference.errors import EncodeError
from ticdc_conformance.reference.forms import write_change_event, write_decoded_event
from ticdc_conformance.reference.message import SchemaCodec
from ticdc_conformance.suites._check import as_json, json_diff

__all__ = ["round_trip_property"]


def round_trip_property(
    protocol: str, profile: str, decoder: Callable[..., Any], *, examples: int
) -> None:
    """Check ``examples`` drawn rows; raise ``AssertionError`` with the shrunk row on a failure."""
    from hypothesis import HealthCheck, given, reject, settings  # noqa: PLC0415

    from ticdc_conformance.generators.strategies import row_changed_events  # noqa: PLC0415

    codec = CODECS[protocol]
    config = codec.config_from_options({}, profile=profile)
    encode_bootstrap = codec.encode_bootstrap if isinstance(codec, SchemaCodec) else None

    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(event=row_changed_events())
    def check(event: RowChangedEvent) -> None:
        try:
            messages = codec.encode([event], config)
            if encode_bootstrap is not None:
                messages = [encode_bootstrap(event.table, config), *messages]
        except EncodeError:
            reject()  # the protocol cannot carry this row; nothing to check
        expected = [write_decoded_event(e) for e in decode_messages(protocol, messages)]
        actual = as_json(decoder(protocol, messages))
        differences = json_diff(expected, actual)
        if differences:
            raise AssertionError(
                f"{protocol} ({profile}): the decoder disagrees with the reference on the "
                f"change event {json.dumps(write_change_event(event), ensure_ascii=False)}:\n  "
                + "\n  ".join(differences)
            )

    check()
