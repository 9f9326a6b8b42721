"""Row-image readers compiled once per plan: ``_plans``' checks and readers, unrolled.

A plan (``_plans``) says, for one sequence of column names, each column's type code, flags,
member count, handle bit and reader. ``image_reader`` turns it into one function, made as
Python source and compiled once, that reads an image of those names in a straight line: per
column the member checks ``_plans`` states (an object of exactly ``t``, ``f`` and ``v``, and
``h`` as ``true`` for a handle column; ``t`` the plan's very object, type codes being
integers the interpreter shares, and ``f`` the plan's as a JSON integer: the same object for
an integer the interpreter shares, else an ``int`` of equal value) and the reader's quick
test inline (``_readers.quick_form``), the reader itself called only for a value the test
does not take. Two or more DATE, DATETIME and TIMESTAMP columns are tested by one pattern
over their texts joined (``_fast_checks.joined_test``; it matches where each column's own
test matches), each by its own where it does not match.

It returns the image's columns, or ``None`` for
anything it does not recognise, a reader's ``ValueError`` or ``Invalid`` value, and also for
a float of magnitude ``_gojson.DRAFT_FLOAT_BOUND`` or more in a column whose reader may
return a float (``_readers.takes_floats``): such an image is left to the column loop, so an
image read here never holds a float orjson may have read from an integer (``draft_loads``).

The source holds positions, integer bounds and local names only: no column name, type code
or flag of the table's, which reach the function as objects (the factory's arguments).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ticdc_conformance.reference._fast_checks import JOINED_SEPARATOR, joinable, joined_test
from ticdc_conformance.reference._gojson import DRAFT_FLOAT_BOUND
from ticdc_conformance.reference.decoded import DecodedColumn
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol._readers import (
    DECIMAL_CHARACTERS,
    INTEGRAL_HIGH,
    INTEGRAL_LOW,
    Invalid,
    Reader,
    quick_form,
    takes_floats,
)
from ticdc_conformance.reference.values import valid_decimal, valid_timestamp

__all__ = ["ImageReader", "Kind", "image_reader"]

ImageReader = Callable[[dict[str, Json]], tuple[DecodedColumn, ...] | None]
Kind = tuple[int, int, int, bool, Reader]
"""A column's type code, flags, member count, handle-key bit and reader."""

_SHARED_INTS = range(-5, 257)
"""Integers the interpreter keeps one object of: a parsed one equal to them is that object."""


def _value_lines(j: int, kind: Kind) -> list[str]:
    """The lines that read column ``j``'s ``v`` (local ``v{j}``) into ``v{j}``."""
    code, _, _, _, read = kind
    quick = quick_form(read)
    v = f"v{j}"
    call = f"elif {v} is not None: {v} = r{j}({v})"
    if quick.form == "integer":
        return [f"if type({v}) is int and {quick.low} <= {v} < {quick.high}: pass", call]
    if quick.form == "float":
        # the reader's fast test, below the draft bound; a larger float leaves the image
        integral = f"{INTEGRAL_LOW} < {v} < {INTEGRAL_HIGH}"
        return [
            f"if type({v}) is float:",
            f"    if not -m{j} < {v} < m{j}: return None",
            f"elif type({v}) is int and {integral}: {v} = float({v})",
            call,
        ]
    if quick.form == "ascii":
        return [f"if type({v}) is str and {v}.isascii(): pass", call]
    if quick.form == "text":
        return [f"if type({v}) is str and m{j}({v}): pass", call]
    if quick.form == "timestamp":
        return [f"if type({v}) is str and m{j}({v}): {v} = timestamp({v})", call]
    if quick.form == "decimal":
        test = f"len({v}) <= {DECIMAL_CHARACTERS} and m{j}({v})"
        return [f"if type({v}) is str and {test}: {v} = decimal({v})", call]
    if takes_floats(code):  # the reader may return a float as it is
        return [f"if type({v}) is float and not -big < {v} < big: return None", call]
    return [f"if {v} is not None: {v} = r{j}({v})"]


def _member_test(j: int, kind: Kind) -> str:
    """The condition under which column ``j`` has other ``t``, ``f`` or ``h`` than the plan's.

    Its member count is checked for the whole image.
    """
    _, flags, _, handle, _ = kind
    tests = [f"c{j}['t'] is not t{j}"]
    if flags in _SHARED_INTS:
        tests.append(f"c{j}['f'] is not f{j}")
    else:  # a flags integer of its own: compared by type and value
        tests.append(f"((f := c{j}['f']) is not f{j} and (type(f) is not int or f != f{j}))")
    if handle:
        tests.append(f"c{j}['h'] is not True")
    return " or ".join(tests)


def _joined(kinds: Sequence[Kind]) -> tuple[list[int], Callable[[str], object] | None]:
    """The date and time columns tested by one call (``_fast_checks.joined_test``), and it.

    Two or more columns of the ``text`` or ``timestamp`` quick form whose test is one of the
    date and time tests (others in the image are read each by its own); else none.
    """
    tests = {
        j: quick.test
        for j, quick in enumerate(quick_form(kind[4]) for kind in kinds)
        if quick.form in ("text", "timestamp") and quick.test is not None and joinable(quick.test)
    }
    joined = joined_test(list(tests.values())) if len(tests) > 1 else None
    return (list(tests), joined) if joined is not None else ([], None)


def _joined_lines(kinds: Sequence[Kind], columns: Sequence[int]) -> list[str]:
    """The lines that read the ``columns`` (``_joined``) with one test, or each by its own."""
    if not columns:
        return []
    types = " and ".join(f"type(v{j}) is str" for j in columns)
    texts = "".join(f"v{j}, " for j in columns)
    stamps = [f"    v{j} = timestamp(v{j})" for j in columns if _form(kinds[j]) == "timestamp"]
    test = f"if {types} and joined({JOINED_SEPARATOR!r}.join(({texts}))):"
    lines = [test, *(stamps or ["    pass"]), "else:"]
    for j in columns:
        lines += [f"    {line}" for line in _value_lines(j, kinds[j])]
    return lines


def _form(kind: Kind) -> str:
    return quick_form(kind[4]).form


def _source(kinds: Sequence[Kind], joined: Sequence[int]) -> str:
    width = len(kinds)
    lengths = " + ".join(f"len(c{j})" for j in range(width))
    body = [
        f"{''.join(f'c{j}, ' for j in range(width))}= image.values()",
        # every column holds its plan's members (looked up below): the count says no more
        # (added up inline, a call fewer than summing a map of them)
        f"if {lengths} != {sum(kind[2] for kind in kinds)}: return None",
    ]
    for j, kind in enumerate(kinds):
        body += [f"v{j} = c{j}['v']", f"if {_member_test(j, kind)}: return None"]
        if j not in joined:  # those read together below
            body += _value_lines(j, kind)
    body += _joined_lines(kinds, joined)
    built = ", ".join(
        f"new(column, (n{j}, v{j}, t{j}, f{j}, h{j}, None, None))" for j in range(width)
    )
    parameters = ", ".join(f"n{j}, t{j}, f{j}, h{j}, r{j}, m{j}" for j in range(width))
    return "\n".join(
        [
            f"def make(big, timestamp, decimal, new, column, joined, {parameters}):",
            "    def read(image):",
            "        try:",
            *(f"            {line}" for line in body),
            "        except (KeyError, TypeError, ValueError, Invalid):",
            "            return None  # not of the plan's shape, or the column loop's to word",
            f"        return ({built},)",
            "    return read",
        ]
    )


_MAKERS: dict[str, Callable[..., ImageReader]] = {}
"""The compiled factory of each source: plans of one shape (kinds alike but for names, type
codes and flags, which are the factory's arguments) share one code object."""
_MAKERS_KEPT = 256


def image_reader(names: tuple[str, ...], kinds: Sequence[Kind]) -> ImageReader:
    """The compiled reader of images of column ``names`` whose plan is ``kinds``."""
    joined, joined_check = _joined(kinds)
    source = _source(kinds, joined)
    make = _MAKERS.get(source)
    if make is None:
        namespace: dict[str, object] = {"Invalid": Invalid}
        # positions, bounds and local names only: the table's names and kinds are arguments
        exec(compile(source, "<open-protocol image reader>", "exec"), namespace)  # noqa: S102
        compiled: Callable[..., ImageReader] = namespace["make"]  # type: ignore[assignment]
        if len(_MAKERS) >= _MAKERS_KEPT:
            _MAKERS.clear()
        _MAKERS[source] = make = compiled
    arguments: list[object] = []
    for name, (code, flags, _, handle, read) in zip(names, kinds, strict=True):
        quick = quick_form(read)
        bound = min(quick.high, DRAFT_FLOAT_BOUND) if quick.form == "float" else None
        arguments += [name, code, flags, handle, read, quick.test or bound]
    return make(
        DRAFT_FLOAT_BOUND,
        valid_timestamp,
        valid_decimal,
        tuple.__new__,
        DecodedColumn,
        joined_check,
        *arguments,
    )
