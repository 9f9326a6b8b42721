"""Go strconv.Quote / Unquote for BINARY values (§2.5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference._gostrconv import _quote_rune, quote, unquote


@pytest.mark.parametrize(
    ("data", "quoted"),
    [
        (b"\x89PNG\r\n\x1a\n", r"\x89PNG\r\n\x1a\n"),
        (b'"\\', r"\"\\"),
        (b"\a\b\f\v\t", r"\a\b\f\v\t"),
        (b"\x00\x7f", r"\x00\x7f"),
        ("é测".encode(), "é测"),
        ("\u00a0\u2028".encode(), r"\u00a0\u2028"),
        ("\U000e0001".encode(), r"\U000e0001"),
        (b"\xc3", r"\xc3"),
        (b"plain ascii", "plain ascii"),
    ],
)
def test_quote_and_unquote(data: bytes, quoted: str) -> None:
    assert quote(data) == quoted
    assert unquote(quoted) == data


@pytest.mark.parametrize(
    "text", ['"', "\n", "\\q", "\\'", "\\x1", "\\400", "\\ud800", "\\U00110000", "\\"]
)
def test_unquote_rejects_what_go_rejects(text: str) -> None:
    with pytest.raises(ValueError):  # noqa: PT011 - Go says only "invalid syntax" too
        unquote(text)


def test_unquote_takes_octal_and_reads_raw_invalid_bytes_as_replacement() -> None:
    assert unquote("\\101\\u00e9") == "Aé".encode()
    assert unquote("a\udcffb") == "a\ufffdb".encode()


@given(st.binary())
def test_round_trip(data: bytes) -> None:
    assert unquote(quote(data)) == data


@given(st.one_of(st.binary(), st.text().map(lambda t: t.encode("utf-8", "surrogatepass"))))
def test_quote_reads_each_rune_as_the_rune_rules_say(data: bytes) -> None:
    """The translate table (cached code points, the rare ones above U+FFFF) against the rules
    applied rune by rune, over raw bytes and over text of any plane."""
    text = data.decode("utf-8", "surrogateescape")
    assert quote(data) == "".join(map(_quote_rune, text))
    assert quote(data) == "".join(map(_quote_rune, text))  # again, from the filled table
