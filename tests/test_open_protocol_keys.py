"""The decoder's shortcuts for today's keys give what reading the JSON and the full check give."""

from __future__ import annotations

import json
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


def _text(document: Json, shape: str) -> bytes:
    if shape == "classic" and isinstance(document, dict):  # rid and ptn before t
        order = ["ts", "scm", "tbl", "rid", "ptn", "t"]
        document = dict(sorted(document.items(), key=lambda m: [*order, m[0]].index(m[0])))
    text = json.dumps(document, separators=(",", ":"))
    if shape == "spaced":
        text = json.dumps(document)
    elif shape == "escaped":
        text = text.replace('"a"', '"\\u0061"')
    elif shape == "negative zero":
        text = text.replace(":0,", ":-0,").replace(":0}", ":-0}")
    elif shape == "leading zero":
        text = text.replace(":1", ":01")
    return text.encode()


@given(
    _documents,
    st.sampled_from(["compact", "classic", "classic", "spaced", "escaped", "negative zero"])
    | st.just("leading zero"),
)
def test_a_key_read_from_its_text_is_the_key_the_json_gives(document: Json, shape: str) -> None:
    data = _text(document, shape)
    read = _keys.key_from_text(data)
    if read is None:
        return  # the decoder reads the JSON: nothing to compare
    entry = _decode.Entry("key", 16, 0)
    assert read == _keys.check_key(entry.parse(data), entry)
    assert [type(member) for member in read] == [
        type(member) for member in _keys.check_key(entry.parse(data), entry)
    ]


def test_todays_keys_are_read_from_their_text() -> None:
    classic = b'{"ts":424316553934667777,"scm":"a","tbl":"c","rid":-5,"ptn":6,"t":1}'
    new = b'{"ts":1,"scm":"","tbl":"c","t":3,"ptn":7}'
    assert _keys.key_from_text(classic) == (424316553934667777, "a", "c", 1, -5, 6, False, None)
    assert _keys.key_from_text(new) == (1, "", "c", 3, None, 7, False, None)
    for other in [
        b'{"ts":18446744073709551616,"scm":"a","tbl":"c","t":1}',  # past uint64
        b'{"ts":1,"scm":"a","tbl":"c","rid":-0,"t":1}',  # -0 reads as -0.0
        b'{"ts":1,"scm":"a","tbl":"c","ptn":1,"t":1,"ptn":2}',  # ptn twice
        b'{"ts":1,"scm":"a\\u0062","tbl":"c","t":1}',  # an escape
    ]:
        assert _keys.key_from_text(other) is None


_RIDS = ["0", "-0", "01", "-01", "-1", "7", "9223372036854775807", "9223372036854775808"]
_RIDS += ["-9223372036854775808", "-9223372036854775809", "", "1a", "+1", "-", " 1", "1.0"]
"""``rid`` integers the pattern reads and some it does not."""


_ts_texts = (
    st.sampled_from(["0", "1", "01", "00", "", "-1", "18446744073709551615"])
    | st.sampled_from(["18446744073709551616", "99999999999999999999", "1" * 21, "1a", " 1", "1.0"])
    | st.integers(min_value=0, max_value=2**64 - 1).map(str)
)


@given(
    st.lists(
        st.tuples(
            _documents,
            st.sampled_from(["compact", "classic", "spaced", "negative zero", "leading zero"]),
            st.none() | _ts_texts,
        ),
        max_size=6,
    )
)
def test_keys_looked_up_by_their_text_after_ts_are_the_keys_the_pattern_reads(
    keys: list[tuple[Json, str, str | None]],
) -> None:
    texts = []
    for document, shape, ts in keys:
        text = _text(document, shape)
        if ts is not None and text.startswith(b'{"ts":') and b"," in text:
            text = b'{"ts":' + ts.encode() + text[text.index(b",") :]
        texts.append(text)
    patterned = [_keys._key_from_pattern(text) for text in texts]
    for _ in range(2):  # the second time, the texts after ts are known
        for text, expected in zip(texts, patterned, strict=True):
            key = _keys.key_from_text(text)
            assert key == expected
            assert [type(m) for m in key or ()] == [type(m) for m in expected or ()]
        together = _keys.keys_from_texts(texts)
        assert together == (None if None in patterned else patterned)
    for text in texts:  # other ts and rid around a text after ts that is known now
        if text.startswith(b'{"ts":') and b"," in text:
            for ts in ["0", "01", "", "-1", "1.0", "18446744073709551615", "18446744073709551616"]:
                other = b'{"ts":' + ts.encode() + text[text.index(b",") :]
                assert _keys.key_from_text(other) == _keys._key_from_pattern(other)
        head, rid, tail = text.partition(b',"rid":')
        others = [
            head + rid + row_id.encode() + tail[tail.index(b",") :]
            for row_id in (_RIDS if rid and b"," in tail else ())
        ]
        for other in others:
            key, expected = _keys.key_from_text(other), _keys._key_from_pattern(other)
            assert key == expected
            assert [type(m) for m in key or ()] == [type(m) for m in expected or ()]
        for size in range(1, len(others) + 1):  # one table's keys, read together
            expected_keys = [_keys._key_from_pattern(other) for other in others[:size]]
            together = _keys.keys_from_texts(others[:size])
            assert together == (None if None in expected_keys else expected_keys)


@given(st.lists(_ts_texts, min_size=1, max_size=8), st.lists(st.sampled_from(_RIDS), max_size=8))
def test_one_table_s_keys_read_together_are_the_keys_the_pattern_reads(
    stamps: list[str], row_ids: list[str]
) -> None:
    texts = [
        f'{{"ts":{ts},"scm":"s","tbl":"t","rid":{row_id},"t":1}}'.encode()
        for ts, row_id in zip(stamps, [*row_ids, *["7"] * len(stamps)], strict=False)
    ]
    texts += [f'{{"ts":{ts},"scm":"s","tbl":"t","ptn":3,"t":1}}'.encode() for ts in stamps]
    for batch in (texts[: len(stamps)], texts[len(stamps) :]):
        expected = [_keys._key_from_pattern(text) for text in batch]
        for _ in range(2):  # the second time, the table's pattern is known
            read = _keys.keys_from_texts(batch)
            assert read == (None if None in expected else expected)
            if read is not None:
                assert [type(m) for k in read for m in k] == [
                    type(m) for k in expected for m in k or ()
                ]


def test_keys_read_together_are_one_a_text() -> None:
    """A text holding two keys on two lines is no key, though the table's pattern finds one
    on each line: the texts together then hold as many keys as there are texts."""
    keys = [f'{{"ts":{ts},"scm":"s","tbl":"t","t":1}}'.encode() for ts in range(1, 6)]
    other_kind = b'{"ts":9,"scm":"s","tbl":"t","t":9}'
    texts = [keys[0], keys[1] + b"\n" + keys[2], other_kind, keys[3], keys[4]]
    for _ in range(2):  # the second time, the table's pattern is known
        assert _keys.keys_from_texts(texts) is None
    assert _keys.keys_from_texts(keys) == [_keys._key_from_pattern(text) for text in keys]
