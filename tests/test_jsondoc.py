"""JSON documents: paths as tokens, JSON Pointers when shown, typed members that fail located."""

from __future__ import annotations

import json
from typing import Any, NoReturn

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ticdc_conformance.reference.errors import DecodeError, FormError
from ticdc_conformance.reference.jsondoc import Members, Path, Wording, choice, pointer


class RejectedError(Exception):
    def __init__(self, reason: str, path: Path) -> None:
        super().__init__(reason)
        self.reason, self.path = reason, path


def fail(reason: str, path: Path) -> NoReturn:
    raise RejectedError(reason, path)


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ((), ""),
        (("a",), "/a"),
        (("a", 0, "b"), "/a/0/b"),
        (("a/b", "m~n"), "/a~1b/m~0n"),  # RFC 6901: ~ first, then /
        (("~1",), "/~01"),
        (("",), "/"),
    ],
)
def test_pointer_renders_tokens(path: Path, text: str) -> None:
    assert pointer(path) == text


def _resolve(document: Any, text: str) -> Any:
    """A JSON Pointer resolved by RFC 6901's rules, written here independently of ``pointer``."""
    for token in text.split("/")[1:]:
        name = token.replace("~1", "/").replace("~0", "~")
        document = document[int(name)] if isinstance(document, list) else document[name]
    return document


@given(st.lists(st.text(max_size=6) | st.integers(0, 3), max_size=4))
def test_a_pointer_finds_what_its_tokens_name(tokens: list[str | int]) -> None:
    document: Any = "here"
    for token in reversed(tokens):
        document = [None] * token + [document] if isinstance(token, int) else {token: document}
    assert _resolve(json.loads(json.dumps(document)), pointer(tuple(tokens))) == "here"


def test_errors_keep_tokens_and_show_the_pointer() -> None:
    decode = DecodeError("bad", protocol="open", part="value", path=("u", "a/b", 0))
    assert (decode.path, decode.pointer) == (("u", "a/b", 0), "/u/a~1b/0")
    assert str(decode) == "open: message 0, value, at /u/a~1b/0: bad"
    assert DecodeError("bad", protocol="open").pointer is None
    form = FormError("bad", path=("after", "c"), line=2)
    assert (form.pointer, str(form)) == ("/after/c", "line 2, at /after/c: bad")


def test_choice_is_exact() -> None:
    assert choice("b", ("a", "b")) == "b"
    assert choice(1, (True, False)) is None  # 1 is no boolean in JSON
    assert choice(json.loads("true"), (1, 2)) is None
    assert choice(None, ("a",)) is None


def test_members_check_names_once() -> None:
    with pytest.raises(RejectedError) as caught:
        Members([1], ("x",), fail)
    assert (caught.value.reason, caught.value.path) == ("expected an object", ("x",))
    with pytest.raises(RejectedError) as caught:
        Members({"a": 1}, (), fail, required=("a", "c", "b"))
    assert (caught.value.reason, caught.value.path) == ("missing member 'b'", ())
    with pytest.raises(RejectedError) as caught:
        Members({"a": 1, "z": 2, "y": 3}, ("o",), fail, required=("a",), optional=())
    assert (caught.value.reason, caught.value.path) == ("unknown member", ("o", "y"))
    assert "a" in Members({"a": 1, "z": 2}, (), fail, required=("a",))  # no optional: any more


@pytest.mark.parametrize(
    ("call", "reason", "path"),
    [
        (lambda m: m.get("n", int), "expected int", ("d", "n")),  # true is no int
        (lambda m: m.get("f", float), "expected float", ("d", "f")),  # 1 is no float
        (lambda m: m.get("absent", str), "missing member 'absent'", ("d",)),
        (lambda m: m.get_or("null", bool, default=False), "expected bool", ("d", "null")),
        (lambda m: m.array("s"), "expected a list", ("d", "s")),
        (lambda m: m.strings("mixed"), "expected a list of strings", ("d", "mixed")),
        (lambda m: m.choice("s", ("a", "b")), "expected one of a, b", ("d", "s")),
        (lambda m: m.members("s"), "expected an object", ("d", "s")),
    ],
)
def test_members_fail_at_the_member(call: Any, reason: str, path: Path) -> None:
    document = {"n": True, "f": 1, "null": None, "s": "x", "mixed": ["a", 1]}
    with pytest.raises(RejectedError) as caught:
        call(Members(document, ("d",), fail))
    assert (caught.value.reason, caught.value.path) == (reason, path)


def test_members_narrow_what_is_there() -> None:
    document = {"n": 1, "s": "x", "l": ["a"], "o": {"k": True}, "null": None}
    members = Members(document, (), fail)
    assert members.get("n", int) + 1 == 2
    assert members.get_or("absent", str, default="d") == "d"
    assert (members.optional("null", int), members.optional("absent", int)) == (None, None)
    assert members.strings("l") == ("a",)
    assert members.optional_strings("null") is None
    assert members.members("o").get("k", bool) is True
    assert members.optional_members("null") is None
    assert members.optional_array("absent") is None
    assert members.choice("s", ("x", "y")) == "x"
    assert members.at("n") == ("n",)


def test_wording_is_the_readers() -> None:
    wording = Wording(missing="missing member {name}", wrong_kind="must be a {kind}")
    members = Members({"n": "1"}, ("p",), fail, wording=wording)
    with pytest.raises(RejectedError, match="must be a int"):
        members.get("n", int)
    with pytest.raises(RejectedError, match=r"^missing member x$"):
        members.members("x")
