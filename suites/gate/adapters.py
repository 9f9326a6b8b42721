"""Adapters: how the suites call an implementation, and the reference's own adapters.

A decoder adapter is ``decoder(protocol, messages) -> events``: it gets a case's messages in
order (one consumer reads them all; Simple BOOTSTRAPs come first) and returns the decoded
events, as ``DecodedEvent`` objects or in their JSON form (docs/decoded-events.md). One that
takes a third argument, ``options``, gets the case's TiCDC sink options, the consumer's
configuration (``large-message-handle-compression``: how the values are compressed); a case
of compressed messages is skipped for a decoder without it.

An encoder adapter is ``encoder(protocol, profile, options, events) -> messages``: it gets the
change events and TiCDC sink options, and returns ``Message`` objects.

Name either on a command line as ``module:callable`` (``reference`` names the reference).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from ticdc_conformance.reference import CODECS, ChangeEvent, DecodedEvent, Message
from ticdc_conformance.reference.compression import compression_of
from ticdc_conformance.reference.decoding import decode_messages

__all__ = [
    "DecoderAdapter",
    "EncoderAdapter",
    "load_adapter",
    "reference_decoder",
    "reference_encoder",
]

DecoderAdapter = Callable[..., Iterable[DecodedEvent | Mapping[str, Any]]]
EncoderAdapter = Callable[[str, str, Mapping[str, str], Sequence[ChangeEvent]], Sequence[Message]]


def reference_decoder(
    protocol: str, messages: Sequence[Message], options: Mapping[str, str] | None = None
) -> list[DecodedEvent]:
    """Decode with the reference codec, as one consumer reading ``messages`` in order.

    ``options``: the consumer's TiCDC sink options (only the compression matters).
    """
    compression = compression_of(options or {})
    return decode_messages(protocol, list(messages), compression=compression)


def reference_encoder(
    protocol: str, profile: str, options: Mapping[str, str], events: Sequence[ChangeEvent]
) -> list[Message]:
    """Encode with the reference codec."""
    codec = CODECS[protocol]
    return codec.encode(list(events), codec.config_from_options(options, profile=profile))


_REFERENCE: dict[str, Callable[..., Any]] = {
    "decoder": reference_decoder,
    "encoder": reference_encoder,
}


def load_adapter(spec: str, kind: str) -> Callable[..., Any]:
    """The callable ``spec`` names: ``module:callable``, or ``reference``.

    ``kind`` is ``decoder`` or ``encoder``. Raises ``ValueError`` with the reason when it
    cannot.
    """
    if spec == "reference":
        return _REFERENCE[kind]
    module_name, sep, attribute = spec.partition(":")
    if not sep or not module_name or not attribute:
        raise ValueError(f"{kind} {spec!r}: expected module:callable or reference")
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as error:
        raise ValueError(f"{kind} {spec!r}: cannot import {module_name}: {error}") from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise ValueError(f"{kind} {spec!r}: {module_name} has no {attribute}") from None
    if not callable(target):
        raise ValueError(f"{kind} {spec!r}: not callable")
    return target  # type: ignore[no-any-return]
