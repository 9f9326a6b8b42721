"""Helpers shared by the forms: located errors, the members both event forms share, values."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from typing import NoReturn

from ticdc_conformance.reference.decoded import DecodedDDL
from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import DDLEvent
from ticdc_conformance.reference.jsondoc import Json, Members, Path
from ticdc_conformance.reference.mysql import ANY_INT
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "Json",
    "at_line",
    "b64",
    "ddl_members",
    "fail",
    "kind_of",
    "members",
    "read_value",
    "write_ddl",
    "write_value",
]


def fail(reason: str, path: Path) -> NoReturn:
    """Reject the member at ``path``."""
    raise FormError(reason, path=path)


def members(
    raw: object, path: Path, required: Collection[str], optional: Collection[str]
) -> Members:
    """``raw`` as an object with all ``required`` members and no others than ``optional``."""
    return Members(raw, path, fail, required=required, optional=optional)


def b64(text: Json, path: Path) -> bytes:
    """The bytes of standard base64 ``text``."""
    if not isinstance(text, str):
        fail("expected base64 text", path)
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as error:
        fail(f"invalid base64: {error}", path)


def read_value(raw: object, path: Path = ()) -> Value:
    """A ``Value`` from its JSON form."""
    if raw is None or type(raw) is str or type(raw) is float:
        return raw
    if type(raw) is int:
        if raw not in ANY_INT:
            fail("integer outside the int64/uint64 range", path)
        return raw
    if type(raw) is dict:
        if raw.keys() == {"bytes"}:
            return b64(raw["bytes"], (*path, "bytes"))
        try:
            tagged = _tagged(raw)
        except ValueError as error:
            fail(str(error), path)
        if tagged is not None:
            return tagged
    fail("not a value: use null, a number, text, or a bytes/decimal/timestamp object", path)


def _tagged(raw: dict[str, Json]) -> DecimalValue | TimestampValue | None:
    """A decimal or timestamp object (``ValueError`` for bad text), ``None`` for others."""
    text = raw.get("decimal")
    if raw.keys() == {"decimal"} and type(text) is str:
        return DecimalValue(text)
    text, zone = raw.get("timestamp"), raw.get("zone")
    if raw.keys() != {"timestamp", "zone"} or type(text) is not str:
        return None
    if zone is None or type(zone) is str:
        return TimestampValue(text, zone)
    return None


def write_value(value: Value) -> Json:
    """The JSON form of a ``Value``."""
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, DecimalValue):
        return {"decimal": value.text}
    if isinstance(value, TimestampValue):
        return {"timestamp": value.text, "zone": value.zone}
    return value


_DDL = ("kind", "commit_ts", "schema", "table", "query", "ddl_type")


@contextmanager
def at_line(line: int | None) -> Iterator[None]:
    """Give every error raised inside the line number of the JSON Lines document."""
    try:
        yield
    except FormError as error:
        raise FormError(error.reason, path=error.path, line=line) from None
    except ValueError as error:  # an event's own validation, about the whole document
        raise FormError(str(error), line=line) from None


def kind_of(raw: object) -> object:
    """The ``kind`` member of an event document, if it is an object."""
    return raw.get("kind") if type(raw) is dict else None


def write_ddl(event: DDLEvent | DecodedDDL) -> dict[str, Json]:
    """The members of a DDL both forms share."""
    return {
        "kind": "ddl",
        "commit_ts": event.commit_ts,
        "schema": event.schema,
        "table": event.table,
        "query": event.query,
        "ddl_type": event.ddl_type,
    }


def ddl_members(raw: object, required: tuple[str, ...], optional: tuple[str, ...]) -> Members:
    """A DDL object: the members both forms share, and the form's own ``required``."""
    return members(raw, (), (*_DDL, *required), optional)
