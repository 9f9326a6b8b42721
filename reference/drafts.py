"""Frozen slotted objects made without their constructor: the kit's one way to do it.

A frozen dataclass's ``__init__`` sets each member through ``object.__setattr__`` and runs
its checks, which a reader or generator that has proven its values does not need, once per
value or row. ``draft_class`` gives a class of the same slots, in the same order, and none
of the frozen class's ``__setattr__``: an object of it takes its members by plain slot
stores, then becomes an object of the frozen class by assigning its ``__class__`` (allowed
between classes of the same slots). From then on it is as frozen as any, and equal, hashed
and printed as the constructor's object of the same members. Each maker that uses one is
held to its class's constructor by a test.
"""

from __future__ import annotations

__all__ = ["draft_class"]


def draft_class(cls: type) -> type:
    """A class of ``cls``'s slots and nothing else (``cls`` a slotted dataclass)."""
    return type(f"_Draft{cls.__name__}", (), {"__slots__": cls.__slots__})  # type: ignore[attr-defined]
