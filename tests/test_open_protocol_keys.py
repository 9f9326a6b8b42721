"""The decoder's shortcut for today's key shapes gives what the full key check gives."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference import DecodeError
from ticdc_conformance.reference.jsondoc import Json
from ticdc_conformance.reference.open_protocol import _decode, _keys

_values: st.SearchStrategy[Json] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.sampled_from([0, 1, 2, 3, 4, -1, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 1.0, -0.0]),
    st.sampled_from(["", "a", "shop", "1"]),
)
_members = st.sampled_from(["ts", "scm", "tbl", "t", "rid", "ptn", "ohk", "ccl", "x"])
_typical = st.fixed_dictionaries(
    {
        "ts": st.integers(min_value=0, max_value=2**64 - 1),
        "scm": st.sampled_from(["", "shop"]),
        "tbl": st.sampled_from(["", "orders"]),
        "t": st.sampled_from([1, 2, 3]),
    },
    optional={
        "rid": st.integers(min_value=-(2**63), max_value=2**63 - 1),
        "ptn": st.integers(min_value=-(2**63), max_value=2**63 - 1),
    },
)
_documents: st.SearchStrategy[Any] = st.one_of(
    _typical,
    st.dictionaries(_members, _values, max_size=7),
    st.builds(lambda key, name, value: {**key, name: value}, _typical, _members, _values),
    st.sampled_from([None, [], "key", 1]),
)


def _outcome(check: str, document: Json) -> tuple[str, object]:
    entry = _decode.Entry("key", 16, 0)
    try:
        if check == "full":
            return "key", _keys._checked_key(document, entry)
        return "key", _keys.check_key(document, entry)
    except DecodeError as error:
        return "error", str(error)


@given(_documents)
def test_the_key_shortcut_agrees_with_the_full_check(document: Json) -> None:
    assert _outcome("shortcut", document) == _outcome("full", document)
