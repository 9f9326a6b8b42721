"""The reference testee: the kit's own codecs behind the testee protocol.

Run ``python -m ticdc_conformance.suites.testee.reference`` as a testee
(``ticdc-conformance run --testee "python -m ticdc_conformance.suites.testee.reference"``):
it declares every protocol and profile in both directions and passes every case. It is the
smallest complete testee, to read before writing one in another language
(docs/testee-protocol.md), and a self-test of the runner.
"""

from __future__ import annotations

import json
import sys
from typing import IO, Any

from ticdc_conformance.fixtures import kit_version
from ticdc_conformance.reference import CODECS
from ticdc_conformance.reference.errors import ProtocolError
from ticdc_conformance.reference.forms import (
    read_change_event,
    read_message,
    write_decoded_event,
    write_message,
)
from ticdc_conformance.suites.gate.adapters import reference_decoder, reference_encoder
from ticdc_conformance.suites.testee._protocol import PROTOCOL_VERSION

__all__ = ["answer", "main"]


def answer(request: dict[str, Any]) -> dict[str, Any] | None:
    """The response to one request; ``None`` for ``shutdown``."""
    kind = request.get("type")
    if kind == "hello":
        every = {protocol: list(codec.PROFILES) for protocol, codec in CODECS.items()}
        return {
            "protocol_version": PROTOCOL_VERSION,
            "name": "ticdc-conformance reference",
            "version": kit_version(),
            "capabilities": {"decode": every, "encode": every},
        }
    if kind == "shutdown":
        return None
    case_id = request["id"]
    try:
        if kind == "decode":
            messages = [read_message(m) for m in request["messages"]]
            events = reference_decoder(request["protocol"], messages, request.get("options") or {})
            return {"id": case_id, "events": [write_decoded_event(e) for e in events]}
        changes = [read_change_event(e) for e in request["events"]]
        encoded = reference_encoder(
            request["protocol"], request["profile"], request["options"], changes
        )
        return {"id": case_id, "messages": [write_message(m) for m in encoded]}
    except ProtocolError as error:  # DecodeError, EncodeError, FormError
        return {"id": case_id, "error": {"message": str(error)}}


def main(stdin: IO[str] | None = None, stdout: IO[str] | None = None) -> int:
    """Answer requests line by line until ``shutdown`` or the end of input."""
    stdin, stdout = stdin or sys.stdin, stdout or sys.stdout
    for line in stdin:
        response = answer(json.loads(line))
        if response is None:
            break
        stdout.write(json.dumps(response, separators=(",", ":")) + "\n")
        stdout.flush()  # one response per request, at once: the runner waits for it
    return 0


if __name__ == "__main__":
    sys.exit(main())
