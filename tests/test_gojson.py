"""Go JSON text: strings as encoding/json and jsoniter write them, and the reader (§1.4)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference._gofloat import (
    format_float,
)
from ticdc_conformance.reference._gojson import (
    _GO_STD_SPECIAL,
    _JSONITER_SPECIAL,
    _NEGATIVE_ZERO,
    DRAFT_FLOAT_BOUND,
    GoJsonReader,
    JsonStyle,
    _go_std_escape,
    _jsoniter_escape,
    draft_loads,
    from_json_text,
    go_text,
    orjson_active,
    plain_json_only,
    quote,
    to_bytes,
)
from ticdc_conformance.reference.errors import DecodeError
from ticdc_conformance.reference.message import Message
from ticdc_conformance.suites.gate import load_cases
from ticdc_conformance.suites.gate._check import as_json
from ticdc_conformance.suites.gate.adapters import reference_decoder

GO, ITER = JsonStyle.GO_STD, JsonStyle.JSONITER


@pytest.mark.parametrize(
    ("data", "go", "jsoniter"),
    [
        ("plain", '"plain"', '"plain"'),
        ('"\\', r'"\"\\"', r'"\"\\"'),
        ("\n\r\t", r'"\n\r\t"', r'"\n\r\t"'),
        ("\b\f", r'"\b\f"', r'"\u0008\u000c"'),
        ("\x00\x1f", r'"\u0000\u001f"', r'"\u0000\u001f"'),
        ("\x7f", '"\x7f"', '"\x7f"'),
        ("<>&", r'"\u003c\u003e\u0026"', '"<>&"'),
        ("\u2028\u2029", r'"\u2028\u2029"', '"\u2028\u2029"'),
        ("é测😀", '"é测😀"', '"é测😀"'),
        (b"a\xffb", r'"a\ufffdb"', '"a\udcffb"'),
        (b"\xe2\x82A", r'"\ufffd\ufffdA"', '"\udce2\udc82A"'),  # one U+FFFD per invalid byte
        ("\ud800", r'"\ufffd\ufffd\ufffd"', '"\udced\udca0\udc80"'),
    ],
)
def test_quote(data: str | bytes, go: str, jsoniter: str) -> None:
    assert quote(data, GO) == go
    assert quote(data, ITER) == jsoniter


def test_jsoniter_keeps_invalid_bytes_raw() -> None:
    assert to_bytes(quote(b"\xff", ITER)) == b'"\xff"'


def _read(reader: GoJsonReader | json.JSONDecoder, text: str) -> tuple[str, object]:
    try:
        document = reader.decode(text)
    except json.JSONDecodeError as error:
        return "error", (error.msg, error.pos)
    except (ValueError, RecursionError) as error:
        return "error", (type(error).__name__, str(error))
    return "document", (document, json.dumps(document))


_JSON_TEXT = st.one_of(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=3),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
        max_leaves=6,
    ).map(json.dumps),
    st.text('{}[]":,-0123456789.eE tnuralsf\n', max_size=12),
)


@given(_JSON_TEXT, st.sampled_from(["", " ", "\n", "x", "1", "}"]), st.booleans())
def test_the_scanner_shortcut_reads_as_the_decoder_does(text: str, end: str, before: bool) -> None:
    text = (end + text) if before else (text + end)
    reader = GoJsonReader()
    plain = "-0" not in text or _NEGATIVE_ZERO.search(text) is None
    decoder = reader._plain if plain else reader._signed
    assert _read(reader, text) == _read(decoder, text)


_SPECIAL_TEXT = st.text(
    st.sampled_from('ab <>&"\\\x00\x08\x0c\n\r\t\x1f\x7f\u2028\u2029\udc80\udcff\ud800é')
    | st.characters(),
    max_size=12,
)


@given(_SPECIAL_TEXT)
def test_quote_escapes_as_a_substitution_per_character_does(text: str) -> None:
    # the translate tables against the rule applied character by character
    go = "".join(_go_std_escape(c) if _GO_STD_SPECIAL.match(c) else c for c in go_text(text))
    it = "".join(_jsoniter_escape(c) if _JSONITER_SPECIAL.match(c) else c for c in go_text(text))
    assert quote(text, GO) == f'"{go}"'
    assert quote(text, ITER) == f'"{it}"'


def _same(a: object, b: object) -> bool:
    """Equal, and of the same type and sign all the way down (``0 == -0.0`` is not enough)."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return a == b and math.copysign(1, a) == math.copysign(1, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize(
    ("text", "document"),
    [
        ("-0", -0.0),
        ("[-0, 0, -0.0, -0e0, -1, -10]", [-0.0, 0, -0.0, -0.0, -1, -10]),
        ('{"v": -0}', {"v": -0.0}),
        ('{"v":-0,"w":"a-0"}', {"v": -0.0, "w": "a-0"}),
        ('["2021-01-02", -0.5, 10]', ["2021-01-02", -0.5, 10]),  # no number -0: plain scan
        ('"-0"', "-0"),
        ("18446744073709551615", 2**64 - 1),
    ],
)
def test_reader_keeps_the_sign_of_negative_zero(text: str, document: object) -> None:
    assert _same(GoJsonReader().decode(text), document)


@pytest.mark.parametrize("text", ["NaN", "[Infinity]", "-Infinity", '{"v": -0, "w": NaN}'])
def test_reader_refuses_what_go_never_writes(text: str) -> None:
    with pytest.raises(ValueError, match="is not a JSON value"):
        GoJsonReader().decode(text)


@pytest.mark.parametrize("text", ["-01", "-", "[-0,]", "--0"])
def test_reader_raises_json_errors(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        GoJsonReader().decode(text)


@given(st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([GO, ITER]))
def test_reader_reads_back_every_float_it_is_given(x: float, style: JsonStyle) -> None:
    text = f"[{format_float(x, 64, style)}]"
    document = GoJsonReader().decode(text)
    assert isinstance(document, list)
    assert isinstance(document[0], int | float)
    assert _same(float(document[0]), x)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("plain", "plain"),
        ("caf\u00e9", "caf\u00e9"),
        (b"\xff\xfe".decode("utf-8", "surrogateescape"), b"\xff\xfe"),  # raw bytes, kept
        ("\ud800", b"\xed\xa0\x80"),  # an escaped lone surrogate: its surrogatepass bytes
        ("a\udfffb", b"a\xed\xbf\xbfb"),
    ],
)
def test_json_text_that_is_not_unicode_becomes_bytes(text: str, value: str | bytes) -> None:
    assert from_json_text(text) == value


needs_orjson = pytest.mark.skipif(
    not orjson_active(), reason="orjson is not installed (the fast extra) or is turned off"
)


def _read_both_ways(text: str, *, raw_bytes: bool = False) -> tuple[object, object]:
    """``text`` read with orjson allowed and on the plain path: a document or the error."""
    data = text.encode("utf-8", "surrogatepass")

    def read() -> object:
        try:
            return GoJsonReader().decode_bytes(data, raw_bytes=raw_bytes)
        except (ValueError, RecursionError) as error:
            return (type(error), str(error))

    accelerated = read()
    with plain_json_only():
        return accelerated, read()


_LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
)
_DOCUMENTS = st.recursive(
    _LEAVES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)


@needs_orjson
@given(_DOCUMENTS, st.booleans(), st.booleans())
def test_orjson_reads_every_document_as_the_plain_path(
    document: object, ascii_only: bool, raw_bytes: bool
) -> None:
    a, b = _read_both_ways(json.dumps(document, ensure_ascii=ascii_only), raw_bytes=raw_bytes)
    assert _same(a, b)


@needs_orjson
@given(
    st.floats(allow_nan=False, allow_infinity=False),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from([GO, ITER]),
)
def test_orjson_reads_go_floats_as_the_plain_path(x: float, y: float, style: JsonStyle) -> None:
    a, b = _read_both_ways(f'{{"v":[{format_float(x, 64, style)},{format_float(y, 32, style)}]}}')
    assert _same(a, b)


@needs_orjson
@given(st.text(alphabet='{}[]",:-0123456789.eE tfnrul\\\\u\ud800'))
def test_orjson_rejects_and_accepts_what_the_plain_path_does(text: str) -> None:
    a, b = _read_both_ways(text)
    assert _same(a, b)


@needs_orjson
@pytest.mark.parametrize(
    "text",
    [
        "18446744073709551616",  # beyond 64 bits: orjson would give a float
        "-9223372036854775809",
        "[18446744073709551615, -9223372036854775808, 1234567890123456789012.5]",
        '["00000000000000000000000", 1e1234567890123456789]',
        '{"a": 1, "a": 2}',  # the last of two equal names, both ways
        '{"v": -0}',
        "1e400",  # orjson refuses it, the plain path reads an infinity
        '"\\ud800"',  # a lone surrogate escape: orjson refuses it
        "[" * 600 + "]" * 600,  # deeper than orjson's scanner goes in some interpreters
        "[" * 512 + "]" * 512,  # as deep as orjson is allowed to read: 1,024 bytes
        "[" * 513 + "]" * 511,  # more openings than the limit in 1,024 bytes: not JSON
        "[" * 1000,
        '["' + "[{" * 400 + '"]',  # many openings in a string of a short text
        '"caf\u00e9"',
    ],
)
def test_orjson_edge_documents_read_as_the_plain_path(text: str) -> None:
    a, b = _read_both_ways(text)
    assert repr(a) == repr(b)  # repr tells -0.0 from 0 and 1 from 1.0, and nests in C


def _confirmed(document: object) -> bool:
    """What a ``draft_loads`` reader confirms: small floats only, nested 512 deep at most."""
    pending = [(document, 0)]
    while pending:
        member, depth = pending.pop()
        if isinstance(member, float) and not -DRAFT_FLOAT_BOUND < member < DRAFT_FLOAT_BOUND:
            return False
        if isinstance(member, dict | list):
            if depth == 512:
                return False
            inner = member.values() if isinstance(member, dict) else member
            pending += [(value, depth + 1) for value in inner]
    return True


def _draft_against_plain(data: bytes) -> None:
    """A confirmed draft of ``data`` is the plain path's document."""
    draft = draft_loads(data)
    if draft is None or not _confirmed(draft):
        return
    with plain_json_only():
        plain = GoJsonReader().decode_bytes(data, raw_bytes=True)
    assert _same(draft, plain)


_NUMBERS = st.sampled_from(
    [
        *("-0", "0", "-0.0", "-0e1", "18446744073709551615", "18446744073709551616", "1e20"),
        *("-9223372036854775808", "-9223372036854775809", "12345678901234567890123", "1.5"),
        *("9223372036854775807.5", "-1e400", "1E2", "-01", "00"),
    ]
)
"""Number texts where orjson's reading and the plain path's part, or may."""


_WITH_NUMBERS = st.recursive(
    _LEAVES | _NUMBERS.map(lambda number: f"<{number}>"),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
    max_leaves=12,
)
"""Documents with number texts Go may write or not (``"<n>"`` marks where ``n`` goes)."""
_MARKED = re.compile(r'"<([-0-9.eE]+)>"')


@needs_orjson
@given(_WITH_NUMBERS, st.booleans())
def test_a_confirmed_draft_is_the_plain_path_document(document: object, spaced: bool) -> None:
    text = _MARKED.sub(
        r"\1", json.dumps(document, separators=(", ", ": ") if spaced else (",", ":"))
    )
    _draft_against_plain(text.encode("utf-8", "surrogatepass"))
    _draft_against_plain(f'{{"v":[{text},{text}]}}'.encode("utf-8", "surrogatepass"))


@needs_orjson
@given(st.text(alphabet='{}[]",:-0123456789.eE tfnrul\\u\ud800'))
def test_a_confirmed_draft_of_any_text_is_the_plain_path_document(text: str) -> None:
    _draft_against_plain(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize(
    "text",
    ["-0", '{"v":-0}', "[1,-0]", '{"t":1,"f":-0,"v":2}', "{", "1e400", '"\\ud800"', "NaN"],
)
def test_no_draft_of_a_negative_zero_or_of_what_orjson_refuses(text: str) -> None:
    assert draft_loads(text.encode()) is None


@needs_orjson
@pytest.mark.parametrize(
    ("text", "confirmed"),
    [
        ("18446744073709551616", False),  # orjson's float of an integer: not confirmed
        ("-9223372036854775809", False),
        ("[9223372036854775807, 1.5, -0.0]", True),
        ("9.2233720368547748e18", True),  # the largest float below the bound
        ("[" * 600 + "]" * 600, False),
    ],
)
def test_drafts_of_large_numbers_are_left_unconfirmed(text: str, *, confirmed: bool) -> None:
    draft = draft_loads(text.encode())
    assert draft is not None
    assert _confirmed(draft) is confirmed


def _golden_outcome(protocol: str, messages: Sequence[Message], options: dict[str, str]) -> object:
    try:
        return as_json(reference_decoder(protocol, messages, options))
    except DecodeError as error:
        return ("error", str(error), error.offset, error.pointer)


@needs_orjson
def test_every_golden_case_decodes_alike_with_and_without_orjson() -> None:
    """The differential test (issue 20): no behaviour change from the accelerator."""
    compared = 0
    for case in load_cases():
        if case.direction == "encode":
            continue
        messages = case.all_messages()
        accelerated = _golden_outcome(case.protocol, messages, dict(case.options))
        with plain_json_only():
            plain = _golden_outcome(case.protocol, messages, dict(case.options))
        assert accelerated == plain, case.id
        compared += 1
    assert compared > 1000
