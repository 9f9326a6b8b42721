"""Go strings as goavro writes them into Avro (ground truth §4.8)."""

from __future__ import annotations

from ticdc_conformance.reference._gojson import go_text

__all__ = ["RawText", "avro_text"]


class RawText(str):
    """Text whose surrogate escapes are raw bytes on the Avro wire (Go strings are bytes)."""

    __slots__ = ()

    def encode(self, encoding: str = "utf-8", errors: str = "surrogateescape") -> bytes:
        """The raw bytes (fastavro calls this to write an Avro string)."""
        del errors
        return str.encode(self, encoding, "surrogateescape")


def avro_text(value: str | bytes) -> str:
    """A value for an Avro string: raw bytes pass through as goavro writes Go strings."""
    text = go_text(value)
    return text if text is value else RawText(text)
