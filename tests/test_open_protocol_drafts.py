"""orjson's drafts of row values (``_gojson.draft_loads``) decode as the plain path reads them.

The decoder's fast paths read a row value from orjson's draft, whose numbers may differ from
the plain path's: an integer beyond 64 bits is a float there. The readers confirm a draft by
leaving every image with such a float to the entry path; these messages are made of the
numbers where the two reads part (integers past 64 bits, of 22 digits, ``-0`` as a value,
a type code or flags), in the columns whose readers take floats and in some that do not.
"""

from __future__ import annotations

import pytest
from helpers import frame
from hypothesis import given, settings
from hypothesis import strategies as st
from test_open_protocol_batch import _decoded
from test_open_protocol_plans import _clear_plans

from ticdc_conformance.reference import Message
from ticdc_conformance.reference._gojson import orjson_active, plain_json_only
from ticdc_conformance.reference.open_protocol import _batch, _plans, decode

pytestmark = pytest.mark.skipif(
    not orjson_active(), reason="orjson is not installed (the fast extra) or is turned off"
)

_KINDS = [(4, 0), (5, 65), (255, 0), (3, 0), (8, 193), (246, 65)]
"""FLOAT, DOUBLE, GEOMETRY (their readers take floats), INT, BIGINT UNSIGNED and DECIMAL."""
_NUMBERS = [
    "1000000000000000000000",  # 22 digits: the plain path refuses it for a float
    "-1000000000000000000000",
    "18446744073709551616",  # beyond uint64: orjson's is a float
    "-9223372036854775809",
    "18446744073709552000",  # a double of 2^64 as Go writes it
    "9223372036854775807",
    "9.2233720368547758e18",
    "1e20",
    "1e300",
    "-0",
    "0",
    "-0.0",
    "1.5",
    "7",
    "null",
    '"1.25"',
]


@st.composite
def _column(draw: st.DrawFn, kind: tuple[int, int]) -> str:
    code, flags = kind
    t, f = str(code), str(flags)
    if draw(st.integers(min_value=0, max_value=9)) == 0:
        t, f = draw(st.sampled_from([("-0", f), (t, "-0"), ("0", f), (t, "1.0")]))
    return f'{{"t":{t},"f":{f},"v":{draw(st.sampled_from(_NUMBERS))}}}'


def _message(values: list[str]) -> Message:
    keys = [
        f'{{"ts":{450_000_000_000_000_000 + i},"scm":"s","tbl":"t","t":1}}'.encode()
        for i in range(len(values))
    ]
    return frame(keys, [v.encode() for v in values])


@st.composite
def _messages(draw: st.DrawFn) -> tuple[Message, Message]:
    """A message of rows of one table, and one of the same table with NULLs (its plan)."""
    kinds = draw(st.lists(st.sampled_from(_KINDS), min_size=1, max_size=3))
    names = [f"c{i}" for i in range(len(kinds))]

    def image(columns: list[str]) -> str:
        return "{" + ",".join(f'"{n}":{c}' for n, c in zip(names, columns, strict=True)) + "}"

    nulls = image([f'{{"t":{code},"f":{flags},"v":null}}' for code, flags in kinds])
    values = []
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        after = image([draw(_column(kind)) for kind in kinds])
        before = image([draw(_column(kind)) for kind in kinds])
        values.append(draw(st.sampled_from([f'{{"u":{after}}}', f'{{"u":{after},"p":{before}}}'])))
    return _message(values), _message([f'{{"u":{nulls}}}'])


@settings(max_examples=600)
@given(_messages(), st.sampled_from([1, 100]))
def test_a_message_of_numbers_decodes_alike_with_and_without_orjson(
    messages: tuple[Message, Message], column_wise: int
) -> None:
    message, plan = messages
    with pytest.MonkeyPatch.context() as patch:
        # every message read column-wise (1) or image by image (100)
        patch.setattr(_batch, "COLUMN_WISE_ROWS", column_wise)
        decode(plan)  # the table's plan, for the fast paths
        accelerated = _decoded(message)
        with plain_json_only():
            assert _decoded(message) == accelerated


@pytest.mark.parametrize("compiled", [True, False])
@pytest.mark.parametrize("column_wise", [1, 100])
@pytest.mark.parametrize(
    "column",
    [
        '{"t":5,"f":65,"v":1000000000000000000000}',
        '{"t":255,"f":0,"v":18446744073709551616}',
        '{"t":4,"f":0,"v":-1000000000000000000000}',
        '{"t":3,"f":-0,"v":7}',
        '{"t":3,"f":0,"v":-0}',
        '{"t":8,"f":193,"v":-0}',  # flags not 0: the value's 0 is what the check looks at
        '{"t":5,"f":65,"v":-0}',
        '{"t":3,"f":65,"v":-0}',
    ],
)
def test_numbers_orjson_reads_otherwise_take_the_plain_path(
    column: str, column_wise: int, *, compiled: bool
) -> None:
    """Each of these reads as something else, or not at all, from orjson's draft (image by
    image with a compiled reader, or with the loop of a plan too wide to compile one)."""
    code, flags = column.split(",")[:2]
    code, flags = code.removeprefix('{"t":'), flags.removeprefix('"f":').replace("-0", "0")
    plan = _message([f'{{"u":{{"c":{{"t":{code},"f":{flags},"v":null}}}}}}'])
    message = _message([f'{{"u":{{"c":{column}}}}}'] * 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_batch, "COLUMN_WISE_ROWS", column_wise)
        patch.setattr(_plans, "_MAX_COMPILED", 256 if compiled else 0)
        _clear_plans()  # the plan made again, compiled or not
        decode(plan)
        accelerated = _decoded(message)
        with plain_json_only():
            plain = _decoded(message)
        _clear_plans()
    assert plain == accelerated
