"""``Terms.names`` and ``Terms.lookup`` decide as ``Terms.term`` does, ID by ID: the same
names, the same ``DecodeError`` (reason, offset) at the same ID, the same next new ID after."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ticdc_conformance.reference.craft._groups import Terms
from ticdc_conformance.reference.errors import DecodeError


def _by_term(terms: Terms, ids: list[int], offset: int) -> list[str | None]:
    return [None if t == -1 else terms.term(t, i, offset) for i, t in enumerate(ids)]


def _by_term_only(terms: Terms, ids: list[int], offset: int) -> list[str]:
    return [terms.term(t, i, offset) for i, t in enumerate(ids)]


def _outcome(
    terms: Terms, ids: list[int], *, one_by_one: bool, lookup: bool = False
) -> tuple[object, int]:
    try:
        found: object
        if lookup:
            found = _by_term_only(terms, ids, 7) if one_by_one else terms.lookup(ids, 7)
        else:
            found = _by_term(terms, ids, 7) if one_by_one else terms.names(ids, 7)
    except DecodeError as error:
        found = ("error", error.reason, error.offset)
    return found, terms.next_new


@settings(max_examples=1000, deadline=None)
@given(
    size=st.integers(0, 6),
    start=st.integers(0, 6),
    ids=st.lists(st.integers(-2, 8), max_size=8),
)
def test_names_as_term_by_term(size: int, start: int, ids: list[int]) -> None:
    words = [f"t{i}" for i in range(size)]
    fast, full = Terms(list(words)), Terms(list(words))
    fast.next_new = full.next_new = min(start, size)
    assert _outcome(fast, ids, one_by_one=False) == _outcome(full, ids, one_by_one=True)
    fast, full = Terms(list(words)), Terms(list(words))
    fast.next_new = full.next_new = min(start, size)
    assert _outcome(fast, ids, one_by_one=False, lookup=True) == _outcome(
        full, ids, one_by_one=True, lookup=True
    )
