"""One Simple message as read, before its DML values are typed (shared by JSON and Avro)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import NamedTuple, NoReturn

from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.jsondoc import Fail, Path
from ticdc_conformance.reference.simple._checksum import Checksum
from ticdc_conformance.reference.simple._values import Raw
from ticdc_conformance.reference.tables import TableInfo

__all__ = ["VERSION", "Columns", "Wire", "failer", "read_columns"]

VERSION = 1
"""``version`` is always 1 (§4.2)."""

Columns = dict[str, Raw]
"""A ``data`` or ``old`` map in wire order: column name → raw value (never changed once read)."""


class Wire(NamedTuple):
    """The members of one message; those its type does not carry keep their defaults.

    A named tuple: one is built per message, and a frozen dataclass of 16 members costs
    several times as much to construct.
    """

    kind: str
    """WATERMARK, BOOTSTRAP, DDL or DML."""
    type: str
    """The JSON ``type``: the kind, or the DDL type (CREATE…), or INSERT/UPDATE/DELETE."""
    commit_ts: int
    build_ts: int
    sql: str = ""
    table_schema: TableInfo | None = None
    pre_table_schema: TableInfo | None = None
    database: str = ""
    table: str = ""
    table_id: int = 0
    schema_version: int = 0
    claim_check_location: str | None = None
    handle_key_only: bool = False
    checksum: Checksum | None = None
    data: Columns | None = None
    old: Columns | None = None
    unchecked: bool = False
    """``data`` and ``old`` are JSON objects as parsed, their values not yet checked."""


def failer(protocol: str, message_index: int) -> Fail:
    """A function that raises ``DecodeError`` for the member at a path of the value."""

    def fail(reason: str, path: Path) -> NoReturn:
        raise DecodeError(
            reason, protocol=protocol, part="value", path=path, message_index=message_index
        )

    return fail


def read_columns(
    raw: Mapping[str, object], plain: frozenset[type], read: Callable[[str, object], Raw]
) -> Columns:
    """A ``data``/``old`` map's values, read only where they need it.

    A value whose type is ``plain`` stays as it is; any other is ``read(name, value)``, in map
    order, so the first bad value is the one refused. A map of ``plain`` values only is itself
    the answer, not copied.
    """
    if plain.issuperset(map(type, raw.values())):
        return raw  # type: ignore[return-value]  # plain values are raw values as they are
    return {
        name: value if type(value) in plain else read(name, value)  # type: ignore[misc]
        for name, value in raw.items()
    }
