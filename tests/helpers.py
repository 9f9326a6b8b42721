"""Builders that keep the table-driven cases short."""

from __future__ import annotations

from ticdc_conformance.reference import ClaimCheckObject, Message


def frame(
    keys: list[bytes], values: list[bytes], claim_checks: tuple[ClaimCheckObject, ...] = ()
) -> Message:
    """An Open Protocol message from key JSON and value entries (§2.1 framing)."""
    key = (1).to_bytes(8, "big") + b"".join(len(k).to_bytes(8, "big") + k for k in keys)
    value = b"".join(len(v).to_bytes(8, "big") + v for v in values)
    return Message(key=key, value=value, claim_checks=claim_checks)
