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

from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol._image_readers import (
    ImageReader,
    Kind,
    image_reader,
)

__all__ = ["Kind", "Plan", "plan_for", "read_planned", "reader_for", "remember"]

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
"""The compiled reader of the plan of an image of these column names, if one was made: it
returns ``read_planned``'s answer."""


def remember(names: tuple[str, ...], kinds: Sequence[Kind]) -> None:
    """Keep the plan of an image of column ``names``: its columns' ``kinds``, in order.

    Only for an image the column loop read without an error, an invalid value or a column of
    another shape. The plan kept already is kept as it is (its reader is compiled once).
    """
    plan = tuple(kinds)
    if _PLANS.get(names) == plan:
        return
    if len(_PLANS) < _MAX_PLANS or names in _PLANS:
        _READERS[names] = image_reader(names, plan)
        _PLANS[names] = plan


def read_planned(
    plan: Plan, names: tuple[str, ...], image: dict[str, Json]
) -> tuple[DecodedColumn, ...] | None:
    """The columns of ``image``, whose names are ``names``, read by ``plan``.

    ``None``: not by this plan (the module's rules), and for an image holding a float of
    magnitude ``_gojson.DRAFT_FLOAT_BOUND`` or more where its reader may return a float.
    """
    read = _READERS.get(names) if _PLANS.get(names) is plan else None
    return (read or image_reader(names, plan))(image)
