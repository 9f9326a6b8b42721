"""The batch path's view of a plan: its columns' kinds as tuples, repeated per image count.

A ``Layout`` is made once per plan (``_plans``) and column names; ``expected`` gives the
plan's type codes, flags, handle bits and names repeated for a group of images (the batch
path compares the members of all of the group's columns with them at once, and builds the
columns from them).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ticdc_conformance.reference.open_protocol._many import Many, many
from ticdc_conformance.reference.open_protocol._plans import Plan, plan_for
from ticdc_conformance.reference.open_protocol._readers import takes_floats, takes_numbers

__all__ = ["Layout", "Repeated", "layout_for"]


@dataclass(frozen=True, slots=True)
class Repeated:
    """A layout's tuples repeated for a number of images, and the members they have."""

    names: tuple[str, ...]
    codes: list[int]
    flags: list[int]
    handles: tuple[bool, ...]
    members: int


@dataclass(frozen=True, slots=True)
class Layout:
    """One plan's columns for the batch path."""

    plan: Plan
    names: tuple[str, ...]
    codes: tuple[int, ...]
    flags: tuple[int, ...]
    handles: tuple[bool, ...]
    members: int
    """Members per image: three per column, four per handle column."""
    small_codes: tuple[int, ...]
    """The columns whose type code is 0 or 1 (``false``/``true`` equal them)."""
    small_flags: tuple[int, ...]
    """The columns whose flags are 0 or 1."""
    handle_columns: tuple[int, ...]
    float_columns: tuple[int, ...]
    """The columns whose reader may return a JSON float as it is (``_readers.takes_floats``)."""
    number_columns: tuple[int, ...]
    """The columns whose reader takes a JSON number (``_readers.takes_numbers``)."""
    zero_flags: bool
    """Whether a column's flags are 0."""
    readers: tuple[Many, ...]
    repeated: dict[int, Repeated] = field(default_factory=dict, compare=False)

    def expected(self, count: int) -> Repeated:
        """The layout's tuples repeated for ``count`` images."""
        got = self.repeated.get(count)
        if got is None:
            got = Repeated(
                self.names * count,
                list(self.codes * count),
                list(self.flags * count),
                self.handles * count,
                self.members * count,
            )
            if len(self.repeated) < _MAX_COUNTS and count * len(self.names) <= _MAX_COLUMNS:
                self.repeated[count] = got
        return got


_MAX_COUNTS = 4
_MAX_COLUMNS = 1024
"""Image counts kept per layout, and the most columns of all their images: the batch size is
the producer's to choose, the memory is not (a larger group repeats the tuples itself)."""
_LAYOUTS: dict[tuple[str, ...], Layout] = {}
_MAX_LAYOUTS = 1024


def layout_for(names: tuple[str, ...]) -> Layout | None:
    """The layout of the plan of an image of column ``names``; ``None`` without a plan."""
    plan = plan_for(names)
    if plan is None:
        return None
    layout = _LAYOUTS.get(names)
    if layout is None or layout.plan is not plan:  # new, or the plan was made again since
        layout = _make(plan, names)
        if len(_LAYOUTS) < _MAX_LAYOUTS or names in _LAYOUTS:
            _LAYOUTS[names] = layout
    return layout


def _make(plan: Plan, names: tuple[str, ...]) -> Layout:
    readers = []
    for code, flags, _, _, _ in plan:
        read = many(code, flags)
        if read is None:  # not so: a plan's kinds all have a reader
            raise AssertionError((code, flags))
        readers.append(read)
    return Layout(
        plan=plan,
        names=names,
        codes=tuple(kind[0] for kind in plan),
        flags=tuple(kind[1] for kind in plan),
        handles=tuple(kind[3] for kind in plan),
        members=sum(kind[2] for kind in plan),
        small_codes=tuple(i for i, kind in enumerate(plan) if kind[0] in (0, 1)),
        small_flags=tuple(i for i, kind in enumerate(plan) if kind[1] in (0, 1)),
        handle_columns=tuple(i for i, kind in enumerate(plan) if kind[3]),
        float_columns=tuple(i for i, kind in enumerate(plan) if takes_floats(kind[0])),
        number_columns=tuple(i for i, kind in enumerate(plan) if takes_numbers(kind[0])),
        zero_flags=any(kind[1] == 0 for kind in plan),
        readers=tuple(readers),
    )
