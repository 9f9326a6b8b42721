"""Helpers shared by the forms: located errors, typed members, the value form."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn, TypeVar

from ticdc_conformance.reference.decoded import DecodedDDL
from ticdc_conformance.reference.errors import FormError
from ticdc_conformance.reference.events import DDLEvent
from ticdc_conformance.reference.values import DecimalValue, TimestampValue, Value

__all__ = [
    "Json",
    "at_line",
    "b64",
    "ddl_fields",
    "fail",
    "kind_of",
    "object_with",
    "read_value",
    "typed",
    "with_commit_ts",
    "write_ddl",
    "write_value",
]

T = TypeVar("T")
Json = object


def fail(reason: str, path: str) -> NoReturn:
    """Reject the member at JSON Pointer ``path``."""
    raise FormError(reason, path=path)


def object_with(raw: Json, path: str, required: set[str], optional: set[str]) -> dict[str, Json]:
    """``raw`` as an object with all ``required`` members and no others than ``optional``."""
    if not isinstance(raw, dict):
        fail("expected an object", path)
    missing = required - raw.keys()
    if missing:
        fail(f"missing member {min(missing)!r}", path)
    unknown = raw.keys() - required - optional
    if unknown:
        fail("unknown member", f"{path}/{min(unknown)}")
    return raw


def typed(raw: dict[str, Json], name: str, kind: type[T], path: str, *, default: T) -> T:
    """Member ``name`` of ``raw``, which must be a ``kind`` (``default`` when absent)."""
    value = raw.get(name, default)
    if value is None and default is None:
        return default
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        fail(f"expected {kind.__name__}", f"{path}/{name}")
    return value


def b64(text: Json, path: str) -> bytes:
    """The bytes of standard base64 ``text``."""
    if not isinstance(text, str):
        fail("expected base64 text", path)
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as error:
        fail(f"invalid base64: {error}", path)


def read_value(raw: Json, path: str = "") -> Value:
    """A ``Value`` from its JSON form."""
    if raw is None or isinstance(raw, str) or (isinstance(raw, int) and not isinstance(raw, bool)):
        if isinstance(raw, int) and not -(2**63) <= raw < 2**64:
            fail("integer outside the int64/uint64 range", path)
        return raw
    if isinstance(raw, float):
        return raw
    if isinstance(raw, dict):
        if raw.keys() == {"bytes"}:
            return b64(raw["bytes"], f"{path}/bytes")
        try:
            if raw.keys() == {"decimal"} and isinstance(raw["decimal"], str):
                return DecimalValue(raw["decimal"])
            if raw.keys() == {"timestamp", "zone"} and isinstance(raw["timestamp"], str):
                zone = raw["zone"]
                if zone is None or isinstance(zone, str):
                    return TimestampValue(raw["timestamp"], zone)
        except ValueError as error:
            fail(str(error), path)
    fail("not a value: use null, a number, text, or a bytes/decimal/timestamp object", path)


def write_value(value: Value) -> Json:
    """The JSON form of a ``Value``."""
    if isinstance(value, bytes):
        return {"bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, DecimalValue):
        return {"decimal": value.text}
    if isinstance(value, TimestampValue):
        return {"timestamp": value.text, "zone": value.zone}
    return value


_DDL = {"kind", "commit_ts", "schema", "table", "query", "ddl_type"}


@contextmanager
def at_line(line: int | None) -> Iterator[None]:
    """Give every error raised inside the line number of the JSON Lines document."""
    try:
        yield
    except FormError as error:
        raise FormError(error.reason, path=error.path, line=line) from None
    except ValueError as error:  # an event's own validation, about the whole document
        raise FormError(str(error), path="", line=line) from None


def kind_of(raw: Json) -> Json:
    """The ``kind`` member of an event document, if it is an object."""
    return raw.get("kind") if isinstance(raw, dict) else None


def with_commit_ts(
    raw: Json, members: set[str], optional: set[str], *, nullable: bool = False
) -> tuple[dict[str, Json], int]:
    """``raw`` checked by ``object_with``, and its ``commit_ts`` (``nullable``: may be null)."""
    obj = object_with(raw, "", members, optional)
    if nullable and obj.get("commit_ts", 0) is None:
        return obj, None  # type: ignore[return-value]
    return obj, typed(obj, "commit_ts", int, "", default=0)


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


def ddl_fields(
    raw: Json, required: set[str], optional: set[str], *, nullable_ts: bool = False
) -> tuple[dict[str, Json], int, str, str, str, int | None]:
    """A DDL object checked, with the members both forms share.

    Returns the object, commit_ts, schema, table, query and ddl_type; ``required`` and
    ``optional`` name the form's further members.
    """
    obj, commit_ts = with_commit_ts(raw, _DDL | required, optional, nullable=nullable_ts)
    return (
        obj,
        commit_ts,
        typed(obj, "schema", str, "", default=""),
        typed(obj, "table", str, "", default=""),
        typed(obj, "query", str, "", default=""),
        typed(obj, "ddl_type", int, "", default=None),
    )
