"""Typing functions compiled once per table schema: a plan's one-pass image, written out.

``image_function``, ``update_function`` and ``row_function`` are ``Plan``'s one-pass typing
(``Plan.image``'s first try, ``parsed_image``, ``parsed_update``, ``parsed_row``) made as
Python source and compiled once per plan, unrolled per column: each value's reader is called
only where its fast test (``_readers.Quick``), written inline, does not take it. The source
holds positions and local names only: no name, type, bound or value of the table's, which
reach the function as objects. What they answer is what the plan's readers answer, value
by value: the typed columns in schema order, or ``None`` when an image lacks a column or has
another, or a reader refuses a value.
"""

from __future__ import annotations

import binascii
from collections.abc import Callable, Sequence
from typing import NamedTuple

from ticdc_conformance.reference.decoded import DecodedColumn, DecodedRow, decoded_row
from ticdc_conformance.reference.simple._readers import Invalid, Quick, Reader
from ticdc_conformance.reference.simple._values import Unsigned
from ticdc_conformance.reference.simple._wire import Columns, Wire
from ticdc_conformance.reference.values import TimestampValue, valid_decimal, valid_timestamp

__all__ = ["Column", "Image", "Row", "Update", "image_function", "row_function", "update_function"]

Image = Callable[[Columns], "tuple[DecodedColumn, ...] | None"]
Row = Callable[[Wire], "DecodedRow | None"]
Update = Callable[
    [Columns, Columns], "tuple[tuple[DecodedColumn, ...], tuple[DecodedColumn, ...]] | None"
]


class Column(NamedTuple):
    """One column as a typing function sees it."""

    name: str
    mysql_type: str
    read: Reader
    """The column's reader (for a JSON image as parsed, the one taking its TIMESTAMP object)."""
    quick: Quick | None
    """The fast test written inline; ``None``: every value is ``read``."""


_TESTS: dict[str, tuple[str, ...]] = {
    # the test of raw value {v}, its value {x} when it passes, and the value's check if any
    "digits": (
        (
            "type({v}) is str and {v}.isascii()"
            " and ({v}.isdigit() or ({v}[:1] == '-' and {v}[1:].isdigit()))"
        ),
        "int({v})",
        "{a} <= {x} < {b}",
    ),
    "float": ("type({v}) is str and {a}({v})", "float({v})", "-{b} <= {x} <= {b}"),
    "decimal": ("type({v}) is str and len({v}) <= {b} and {a}({v})", "_dec({v})"),
    "ascii": ("type({v}) is str and {v}.isascii()", "{v}"),
    "ascii_limit": ("type({v}) is str and {v}.isascii() and len({v}) <= {a}", "{v}"),
    "match": ("type({v}) is str and {a}({v})", "{v}"),
    "long": ("type({v}) is int and {a} <= {v} < {b}", "{v}"),
    "unsigned": ("type({v}) is _U and {a} <= {v}.value < {b}", "{v}.value"),
    "double": ("type({v}) is float and -{a} <= {v} <= {a}", "{v}"),
    "bytes": ("type({v}) is bytes", "{v}"),
    "bytes_limit": ("type({v}) is bytes and len({v}) <= {a}", "{v}"),
    "timestamp": ("type({v}) is _TS and {a}({v}.text)", "{v}"),
}
"""Each form's source: ``{a}`` and ``{b}`` name its arguments, per column."""


def _read_value(j: int, column: Column, names: dict[str, object], v: str, x: str) -> list[str]:
    """Lines setting ``x`` to column ``j``'s value of raw value ``v``."""
    names[f"r{j}"] = column.read
    quick = column.quick
    if quick is None:  # every reader reads null as None
        return [f"{x} = None if {v} is None else r{j}({v})"]
    form, args = quick
    for letter, arg in zip("ab", args, strict=False):
        names[f"{letter}{j}"] = arg
    if form == "object":  # a TIMESTAMP object of exactly location and value
        return [
            f"if type({v}) is dict and len({v}) == 2:",
            f"    t = {v}['value']",  # a KeyError: the reader refuses it too (ValueError)
            f"    z = {v}['location']",
            f"    if type(t) is str and type(z) is str and a{j}(t):",
            f"        {x} = _ts(t, z)",
            "    else:",
            f"        {x} = r{j}({v})",
            "else:",
            f"    {x} = r{j}({v})",
        ]
    if form == "base64":  # binascii's strict read, as ``b64decode(validate=True)``
        limit = [] if args[0] is None else ["    else:", f"        if len({x}) > a{j}:"]
        return [
            f"if type({v}) is str:",
            "    try:",
            f"        {x} = _b64({v}, strict_mode=True)",
            "    except ValueError:",  # binascii.Error is one
            f"        {x} = r{j}({v})",
            *limit,
            *([f"            {x} = r{j}({v})"] if limit else []),
            f"elif {v} is None:",
            f"    {x} = None",
            "else:",
            f"    {x} = r{j}({v})",
        ]
    if form in ("ascii", "bytes") and args[0] is not None:
        form += "_limit"
    test, value, *check = (part.format(v=v, x=x, a=f"a{j}", b=f"b{j}") for part in _TESTS[form])
    lines = [f"if {test}:", f"    {x} = {value}"]
    if check:
        lines += [f"    if not ({check[0]}):", f"        {x} = r{j}({v})"]
    # every reader reads null as None
    return [*lines, f"elif {v} is None:", f"    {x} = None", "else:", f"    {x} = r{j}({v})"]


def _names(columns: Sequence[Column]) -> dict[str, object]:
    """The function's globals.

    A column's objects are a letter and its position (``n0``, ``a64``); every other name
    starts with an underscore, so no column's name ever meets one.
    """
    names: dict[str, object] = {
        "_C": DecodedColumn,
        "_new": tuple.__new__,
        "_Invalid": Invalid,
        "_U": Unsigned,
        "_TS": TimestampValue,
        "_dec": valid_decimal,
        "_b64": binascii.a2b_base64,
        "_ts": valid_timestamp,
        "_count": len(columns),
    }
    for j, column in enumerate(columns):
        names[f"n{j}"] = column.name
        names[f"m{j}"] = column.mysql_type
    return names


def _picks(image: str, prefix: str, count: int) -> list[str]:
    """Lines taking every column's raw value of ``image`` (``KeyError`` if one is missing)."""
    return [f"{prefix}{j} = {image}[n{j}]" for j in range(count)] or ["pass"]


def _column(j: int, x: str) -> str:
    return f"_new(_C, (n{j}, {x}, None, None, None, m{j}, None))"


def _compile(source: list[str], names: dict[str, object], function: str) -> object:
    text = "\n".join(source)  # positions and local names: nothing of the table's
    exec(compile(text, "<simple typing plan>", "exec"), names)  # noqa: S102
    return names[function]


def _indent(lines: list[str], depth: int) -> list[str]:
    return [" " * depth + line for line in lines]


def image_function(columns: Sequence[Column]) -> Image:
    """An image typed in one pass, written out: the typed columns, or ``None``."""
    names = _names(columns)
    count = len(columns)
    body = ["def image(raw):", "    if len(raw) != _count:", "        return None", "    try:"]
    body += _indent(_picks("raw", "v", count), 8)
    body += ["    except KeyError:", "        return None", "    try:"]
    for j, column in enumerate(columns):
        body += _indent(_read_value(j, column, names, f"v{j}", f"x{j}"), 8)
    body += ["        pass", "    except (_Invalid, ValueError, KeyError):", "        return None"]
    body.append(f"    return ({''.join(_column(j, f'x{j}') + ', ' for j in range(count))})")
    function: Image = _compile(body, names, "image")  # type: ignore[assignment]
    return function


def _update_body(columns: Sequence[Column], names: dict[str, object]) -> list[str]:
    """Lines typing ``data`` and ``old`` into columns ``c0``… and ``d0``… (else ``None``)."""
    count = len(columns)
    body = [
        "if len(data) != _count or len(old) != _count:",
        "    return None",
        "try:",
    ]
    body += _indent(_picks("data", "v", count) + _picks("old", "o", count), 4)
    body += ["except KeyError:", "    return None", "try:"]
    for j, column in enumerate(columns):
        body += _indent(_read_value(j, column, names, f"v{j}", f"x{j}"), 4)
    for j in range(count):
        body.append(f"    c{j} = {_column(j, f'x{j}')}")
    for j, column in enumerate(columns):
        body += [f"    if o{j} == v{j}:", f"        d{j} = c{j}", "    else:"]
        body += _indent(_read_value(j, column, names, f"o{j}", f"y{j}"), 8)
        body.append(f"        d{j} = {_column(j, f'y{j}')}")
    return [*body, "    pass", "except (_Invalid, ValueError, KeyError):", "    return None"]


def _images(letter: str, count: int) -> str:
    return f"({''.join(f'{letter}{j}, ' for j in range(count))})"


def update_function(columns: Sequence[Column]) -> Update:
    """``Plan.parsed_update``'s two images, written out: (new, old) typed, or ``None``.

    The new image is typed first, then each column of the old one: the new column itself
    where the old value equals the new one (equal JSON values are equally read), else read.
    """
    names = _names(columns)
    body = ["def update(data, old):", *_indent(_update_body(columns, names), 4)]
    body.append(f"    return {_images('c', len(columns))}, {_images('d', len(columns))}")
    function: Update = _compile(body, names, "update")  # type: ignore[assignment]
    return function


def row_function(columns: Sequence[Column], other: Callable[[Wire], DecodedRow | None]) -> Row:
    """``Plan.parsed_row``: ``other(wire)``, written out for an UPDATE of both images.

    The images typed as ``update_function`` types them, the row made of them and the
    message's members as ``_rows.row`` makes it; ``None`` when an image is not typed.
    """
    names = _names(columns)
    names["_other"], names["_row_of"] = other, decoded_row
    body = [
        "def row(wire):",
        (
            "    (_, dml_type, commit_ts, _, _, _, _, database, table, table_id, schema_version,"
            " location, key_only, _, data, old, _) = wire"
        ),
        "    if dml_type != 'UPDATE' or data is None or old is None:",
        "        return _other(wire)",
        *_indent(_update_body(columns, names), 4),
        (
            "    return _row_of(commit_ts, database, table, 'update',"
            f" {_images('d', len(columns))}, {_images('c', len(columns))},"
            " None, table_id, None, schema_version, key_only, location)"
        ),
    ]
    function: Row = _compile(body, names, "row")  # type: ignore[assignment]
    return function
