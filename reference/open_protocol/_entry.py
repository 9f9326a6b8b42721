"""One JSON document inside an Open Protocol frame, and how an error there is worded."""

from __future__ import annotations

import json
from typing import NoReturn

from ticdc_conformance.reference._gojson import GoJsonReader
from ticdc_conformance.reference.errors import DecodeError, Part
from ticdc_conformance.reference.jsondoc import Json, JsonObject, Members, Path, Wording
from ticdc_conformance.reference.open_protocol._config import PROTOCOL

__all__ = ["Entry", "parse_json"]

_json_decoder = GoJsonReader()


def parse_json(data: bytes) -> Json:
    """The JSON document in ``data`` as ``Entry.parse`` reads it; ``None`` also when it fails."""
    try:
        return _json_decoder.decode_bytes(data, raw_bytes=True)
    except (ValueError, RecursionError):  # JSONDecodeError is a ValueError
        return None


class Entry:
    """One JSON document inside the frame, with what an error needs to locate itself."""

    __slots__ = ("decompressed", "invalid", "message_index", "offset", "part")

    def __init__(
        self, part: Part, offset: int, message_index: int, *, decompressed: bool = False
    ) -> None:
        self.part = part
        self.offset = offset
        self.message_index = message_index
        self.decompressed = decompressed
        """The document was compressed: its byte positions are not the message's."""
        self.invalid = False
        """A value may be invalid: the message is checked value by value (``_findings``)."""

    def fail(self, reason: str, *tokens: str) -> NoReturn:
        """Reject the member at path ``tokens`` (the document itself when none)."""
        self._raise(reason, self.offset, tokens)

    def fail_at(self, reason: str, path: Path) -> NoReturn:
        """Reject the member at ``path`` (a ``jsondoc.Fail``)."""
        self._raise(reason, self.offset, path)

    def members(self, raw: Json, allowed: frozenset[str], wording: Wording) -> JsonObject:
        """The document ``raw`` as an object of ``allowed`` members."""
        if type(raw) is dict and raw.keys() <= allowed:
            return raw  # what Members accepts, without building one
        return Members(raw, (), self.fail_at, optional=allowed, wording=wording).obj

    def _raise(self, reason: str, offset: int, path: Path | None) -> NoReturn:
        raise DecodeError(
            reason,
            protocol=PROTOCOL,
            part=self.part,
            offset=offset,
            path=path,
            message_index=self.message_index,
        )

    def parse(self, data: bytes) -> Json:
        """The JSON document in ``data``."""
        try:
            # profile ticdc copies invalid UTF-8 raw (§1.4): keep those bytes as escapes
            return _json_decoder.decode_bytes(data, raw_bytes=True)
        except json.JSONDecodeError as error:
            text = data.decode("utf-8", "surrogateescape")
            at = len(text[: error.pos].encode("utf-8", "surrogateescape"))
            if self.decompressed:  # the compressed entry starts at offset
                self._raise(
                    f"invalid JSON: {error.msg} (decompressed byte {at})", self.offset, None
                )
            self._raise(f"invalid JSON: {error.msg}", self.offset + at, None)
        except ValueError as error:  # NaN or Infinity, which Python reads and JSON lacks
            self._raise(f"invalid JSON: {error}", self.offset, None)
        except RecursionError:
            self._raise("JSON nested too deeply", self.offset, None)
