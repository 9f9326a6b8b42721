"""Compiled readers and writers kept within a budget, made only for what recurs.

A column-group header's compiled readers (``_fast_groups``) and a table's compiled image
writer (``_fast_rows``) cost milliseconds to make (tens of them for a wide table) and pay back
only over many groups or rows. ``Kept`` holds them under three rules:

* a key is made only at its second sighting: at the first the caller takes its generic path,
  so a header met in one group only, or a table in one row only, costs no compilation;
* what is kept is weighed (columns), and the weight is bounded: memory stays bounded whatever
  the stream;
* the least recently used go first, approximately: two generations, each of half the budget.
  A hit in the recent one is a plain dict lookup (the hot path); a hit in the older one moves
  the value to the recent one; when the recent one is full it becomes the older one and the
  older one is dropped. A value used again before about half the budget's weight of other
  values is kept is never made again, however many keys there are in all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Kept"]

K = TypeVar("K")
V = TypeVar("V")

_SIGHTED = 4096
"""Keys whose first sighting is remembered at most (then forgotten all at once: a forgotten
key is only made one sighting later)."""


class Kept(Generic[K, V]):
    """Values by key in two generations of at most ``budget // 2`` weight each (see above)."""

    __slots__ = ("_budget", "_older", "_sighted", "_weigh", "_weight", "recent")

    def __init__(self, budget: int, weigh: Callable[[V], int]) -> None:
        self.recent: dict[K, V] = {}
        """The recent generation: callers look here first, then call ``older``."""
        self._older: dict[K, V] = {}
        self._weight = 0
        self._budget = budget // 2
        self._weigh = weigh
        self._sighted: dict[K, tuple[object, int] | None] = {}

    def older(self, key: K) -> V | None:
        """The value kept for ``key`` in the older generation, moved to the recent one."""
        found = self._older.pop(key, None)
        if found is not None:
            self.keep(key, found)
        return found

    def sighted_before(self, key: K, mark: tuple[object, int] | None = None) -> bool:
        """Whether ``key`` was sighted before, and this sighting remembered otherwise.

        A sighting whose ``mark`` has the same object and number as the remembered one's is
        that sighting again (a decoder reading one group of one message twice: the message's
        own object, the group's offset); without a mark every sighting is a new one. The
        object is held while remembered, so no other object takes its identity meanwhile.
        """
        if key in self._sighted:
            seen = self._sighted[key]
            if mark is None or seen is None or seen[0] is not mark[0] or seen[1] != mark[1]:
                del self._sighted[key]
                return True
            return False
        if len(self._sighted) >= _SIGHTED:
            self._sighted.clear()
        self._sighted[key] = mark
        return False

    def keep(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key`` in the recent generation, making room as above."""
        weight = self._weigh(value)
        if self._weight + weight > self._budget and self.recent:
            self._older, self.recent, self._weight = self.recent, {}, 0
        self.recent[key] = value
        self._weight += weight

    def clear(self) -> None:
        """Forget everything: values kept and sightings."""
        self.recent, self._older, self._weight = {}, {}, 0
        self._sighted.clear()

    def __len__(self) -> int:
        return len(self.recent) + len(self._older)
