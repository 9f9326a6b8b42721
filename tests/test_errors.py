"""The error tree: who was wrong, and where."""

from __future__ import annotations

import pytest

from ticdc_conformance.reference import DecodeError, EncodeError, FormError, ProtocolError


def test_root_is_abstract_and_everything_is_a_value_error() -> None:
    with pytest.raises(TypeError):
        ProtocolError("x")
    for error in (
        EncodeError("x", protocol="open"),
        DecodeError("x", protocol="open"),
        FormError("x"),
    ):
        assert isinstance(error, ProtocolError)
        assert isinstance(error, ValueError)


@pytest.mark.parametrize(
    ("error", "text"),
    [
        (DecodeError("bad", protocol="open"), "open: message 0: bad"),
        (
            DecodeError("bad", protocol="open", part="key", offset=3, message_index=2),
            "open: message 2, key byte 3: bad",
        ),
        (
            DecodeError("bad", protocol="open", part="value", offset=8, path=("u", "c")),
            "open: message 0, value byte 8, at /u/c: bad",
        ),
        (
            DecodeError("bad", protocol="open", part="value", path=()),
            "open: message 0, value, at /: bad",
        ),
        (EncodeError("too big", protocol="open", event_index=5), "open: event 5: too big"),
        (EncodeError("bad option", protocol="open"), "open: bad option"),
        (FormError("bad", path=("a",), line=3), "line 3, at /a: bad"),
        (FormError("bad"), "at /: bad"),
    ],
)
def test_messages_carry_the_location(error: ProtocolError, text: str) -> None:
    assert str(error) == text
