"""Row-image plans: the column kinds of an image seen before, checked instead of looked up.

A plan belongs to one sequence of column names, the member names of a row image (``u``,
``p`` or ``d``) in order, and records what the decoder's column loop found there: each
column's type code, flags, member count (three, or four with ``"h": true``) and reader
(``_readers.reader``). An image of the same names is read with the plan while every column
is again an object of exactly those members with the same ``t`` and ``f`` as JSON integers
(compared with ``is`` first, so no ``True`` or ``1.0`` passes for ``1``): the reader comes
from the plan, not from a lookup per column.

A plan only ever returns what the column loop returns for the same image: anything it does
not recognise, a reader's ``ValueError`` or an ``Invalid`` value, makes it answer ``None``,
and the decoder reads the image again with its column loop (which words the error or marks
the entry for its value-by-value check). Readers have no side effects, so reading a value
twice is harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol._readers import Invalid, Reader

__all__ = ["Kind", "Plan", "plan_for", "read_planned", "remember"]

Kind = tuple[int, int, int, bool, Reader]
"""A column's type code, flags, member count, handle-key bit and reader."""
Plan = tuple[Kind, ...]

_new_tuple = tuple.__new__
_MAX_PLANS = 1024
"""Plans kept: the column names are the message's to choose, the memory is not."""
_PLANS: dict[tuple[str, ...], Plan] = {}


plan_for: Callable[[tuple[str, ...]], Plan | None] = _PLANS.get
"""The plan of an image of these column names, if one was made (the dict's own ``get``: no
Python-level call per image)."""


def remember(names: tuple[str, ...], kinds: Sequence[Kind]) -> None:
    """Keep the plan of an image of column ``names``: its columns' ``kinds``, in order.

    Only for an image the column loop read without an error, an invalid value or a column of
    another shape.
    """
    if len(_PLANS) < _MAX_PLANS or names in _PLANS:
        _PLANS[names] = tuple(kinds)


def read_planned(
    plan: Plan, names: tuple[str, ...], image: dict[str, Json]
) -> tuple[DecodedColumn, ...] | None:
    """The columns of ``image``, whose names are ``names``, read by ``plan``.

    ``None``: not by this plan.
    """
    columns: list[DecodedColumn] = []
    append = columns.append
    for name, column, (code, flags, size, handle, read) in zip(
        names, image.values(), plan, strict=True
    ):
        try:
            raw = column["v"]  # type: ignore[call-overload, index]
            if (
                column["t"] is not code  # type: ignore[call-overload, index]
                # flags past 256 are not shared int objects: compared by value and type
                or ((f := column["f"]) is not flags and (type(f) is not int or f != flags))  # type: ignore[call-overload, index]
                or len(column) != size  # type: ignore[arg-type]
                or (handle and column["h"] is not True)  # type: ignore[call-overload, index]
            ):
                return None
        except (KeyError, TypeError):  # TypeError: a column that is not an object
            return None
        if raw is not None:
            try:
                raw = read(raw)
            except (ValueError, Invalid):  # the column loop words the error or marks the entry
                return None
        # tuple.__new__ itself: a DecodedColumn from all its members, without the named
        # tuple's __new__ (a Python call) or a partial's argument handling
        append(_new_tuple(DecodedColumn, (name, raw, code, flags, handle, None, None)))
    return tuple(columns)
