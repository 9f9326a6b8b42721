"""Row-image plans: the column kinds of an image seen before, checked instead of looked up.

A plan belongs to one sequence of column names, the member names of a row image (``u``,
``p`` or ``d``) in order, and records what the decoder's column loop found there: each
column's type code, flags, member count (three, or four with ``"h": true``) and reader
(``_readers.reader``). An image of the same names is read with the plan while every column
is again an object of exactly those members with the same ``t`` and ``f`` as JSON integers
(compared with ``is`` first, so no ``True`` or ``1.0`` passes for ``1``): the reader comes
from the plan, not from a lookup per column. Each plan is compiled once into a function that
makes those checks and reads in a straight line (``_image_readers``).

A plan only ever returns what the column loop returns for the same image: anything it does
not recognise, a reader's ``ValueError`` or an ``Invalid`` value, makes it answer ``None``,
and the decoder reads the image again with its column loop (which words the error or marks
the entry for its value-by-value check). Readers have no side effects, so reading a value
twice is harmless.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from ticdc_conformance.reference._gojson import DRAFT_FLOAT_BOUND
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol._image_readers import (
    ImageReader,
    Kind,
    image_reader,
)
from ticdc_conformance.reference.open_protocol._readers import Invalid, takes_floats

__all__ = ["Kind", "Plan", "plan_for", "reader_for", "remember"]

Plan = tuple[Kind, ...]

_MAX_PLANS = 1024
"""Plans kept: the column names are the message's to choose, the memory is not."""
_PLANS: dict[tuple[str, ...], Plan] = {}
_READERS: dict[tuple[str, ...], ImageReader] = {}
"""Each plan's compiled reader (``_image_readers``), by the same names."""


plan_for: Callable[[tuple[str, ...]], Plan | None] = _PLANS.get
"""The plan of an image of these column names, if one was made (the dict's own ``get``: no
Python-level call per image)."""
reader_for: Callable[[tuple[str, ...]], ImageReader | None] = _READERS.get
"""The reader of the plan of an image of these column names, if one was made (compiled, or a
loop for a plan of more than ``_MAX_COMPILED`` columns): the image's columns, or ``None``
for anything not of the plan (the module's rules) and for an image holding a float of
magnitude ``_gojson.DRAFT_FLOAT_BOUND`` or more where its reader may return a float."""


_MAX_COMPILED = 256
"""Columns of the widest plan compiled: compiling takes time in step with the columns, and
a wider image is read by ``_read_by_loop`` (the names are the message's to choose)."""


def remember(names: tuple[str, ...], kinds: Sequence[Kind]) -> None:
    """Keep the plan of an image of column ``names``: its columns' ``kinds``, in order.

    Only for an image the column loop read without an error, an invalid value or a column of
    another shape. The plan kept already is kept as it is (its reader is compiled once).
    """
    plan = tuple(kinds)
    if _PLANS.get(names) == plan:
        return
    if len(_PLANS) < _MAX_PLANS or names in _PLANS:
        _READERS[names] = _reader_of(names, plan)
        _PLANS[names] = plan


_MADE: dict[tuple[tuple[str, ...], Plan], ImageReader] = {}
"""Readers made, by names and plan: two tables of the same column names but other kinds
(flags, types) in one stream take turns as the plan of their names without a reader made
again each turn."""


def _reader_of(names: tuple[str, ...], plan: Plan) -> ImageReader:
    made = _MADE.get((names, plan))
    if made is None:
        made = (
            image_reader(names, plan)
            if len(plan) <= _MAX_COMPILED
            else partial(_read_by_loop, plan, names)
        )
        if len(_MADE) >= _MAX_PLANS:
            _MADE.clear()
        _MADE[names, plan] = made
    return made


_new_tuple = tuple.__new__


def _read_by_loop(
    plan: Plan, names: tuple[str, ...], image: dict[str, Json]
) -> tuple[DecodedColumn, ...] | None:
    """The reader of a plan too wide to compile (``reader_for``): a loop over its columns."""
    columns: list[DecodedColumn] = []
    append = columns.append
    bound = DRAFT_FLOAT_BOUND
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
                or (type(raw) is float and not -bound < raw < bound and takes_floats(code))
            ):
                return None
        except (KeyError, TypeError):  # TypeError: a column that is not an object
            return None
        if raw is not None:
            try:
                raw = read(raw)
            except (ValueError, Invalid):  # the column loop words the error or marks the entry
                return None
        append(_new_tuple(DecodedColumn, (name, raw, code, flags, handle, None, None)))
    return tuple(columns)
