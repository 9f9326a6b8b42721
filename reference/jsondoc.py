"""JSON documents as the kit reads them: one recursive type, JSON Pointers, typed members.

Rules:

* ``Json`` is what a JSON parser returns: ``None``, ``bool``, ``int``, ``float``, ``str``, and
  lists and objects of them. Kinds are exact, as in the JSON text: ``true`` is no integer and
  ``1`` no float.
* A place in a document is a ``Path``: a tuple of reference tokens, member names (``str``) and
  array indexes (``int``). Errors keep the tuple; ``pointer`` renders it as a JSON Pointer
  (RFC 6901: ``~`` written ``~0``, ``/`` written ``~1``) only when it is shown. The empty path
  is the whole document and renders as ``""``.
* ``Members`` is typed access to one object: it checks the member names once, then returns
  each member narrowed to the kind asked for (no assert, no cast), or calls its ``fail`` with
  the path of the member at fault. A ``Wording`` gives a reader its messages: each protocol's
  decoder words its errors its own way, and those messages are part of the golden fixtures.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import NoReturn, TypeAlias, TypeVar

__all__ = [
    "WORDING",
    "Fail",
    "Json",
    "JsonObject",
    "Members",
    "Path",
    "Token",
    "Wording",
    "choice",
    "pointer",
]

Json: TypeAlias = "bool | int | float | str | list[Json] | dict[str, Json] | None"
JsonObject: TypeAlias = "dict[str, Json]"
Token: TypeAlias = str | int
Path: TypeAlias = tuple[Token, ...]
Fail: TypeAlias = Callable[[str, Path], NoReturn]
"""Rejects the member at a path: raises the reader's error (``DecodeError``, ``FormError``)."""

T = TypeVar("T")


def pointer(path: Path) -> str:
    """The JSON Pointer of ``path`` (``""`` for the whole document)."""
    return "".join("/" + str(token).replace("~", "~0").replace("/", "~1") for token in path)


def choice(value: Json, allowed: tuple[T, ...]) -> T | None:
    """The element of ``allowed`` equal to ``value`` (typed as ``allowed``), else ``None``."""
    for option in allowed:
        if type(value) is type(option) and value == option:
            return option
    return None


@dataclass(frozen=True, slots=True, kw_only=True)
class Wording:
    """The messages of one reader; ``{name}`` is a member name, ``{kind}`` a Python type name."""

    not_object: str = "expected an object"
    missing: str = "missing member {name!r}"
    wrong_kind: str = "expected {kind}"
    not_list: str = "expected a list"
    unknown: str = "unknown member"
    not_strings: str = "expected a list of strings"
    not_choice: str = "expected one of {allowed}"


WORDING = Wording()
"""The kit's own wording (the JSON forms)."""


class Members:
    """One JSON object at ``path``, with typed access to its members."""

    __slots__ = ("fail", "obj", "path", "wording")

    def __init__(
        self,
        raw: object,
        path: Path,
        fail: Fail,
        *,
        required: Collection[str] = (),
        optional: Collection[str] | None = None,
        wording: Wording = WORDING,
    ) -> None:
        """``raw`` (a parsed document or part of one) as an object with every ``required`` member.

        With ``optional`` given, a member outside ``required`` and ``optional`` is rejected.
        """
        if type(raw) is not dict:
            fail(wording.not_object, path)
        missing = [name for name in required if name not in raw]
        if missing:
            fail(wording.missing.format(name=min(missing)), path)
        if optional is not None:
            unknown = raw.keys() - {*required, *optional}
            if unknown:
                fail(wording.unknown, (*path, min(unknown)))
        self.obj: dict[str, Json] = raw
        self.path = path
        self.fail = fail
        self.wording = wording

    def __contains__(self, name: str) -> bool:
        return name in self.obj

    def at(self, name: str) -> Path:
        """The path of member ``name``."""
        return (*self.path, name)

    def _present(self, name: str) -> Json:
        if name not in self.obj:
            self.fail(self.wording.missing.format(name=name), self.path)
        return self.obj[name]

    def _of_kind(self, name: str, value: Json, kind: type[T]) -> T:
        if type(value) is not kind:
            self.fail(self.wording.wrong_kind.format(kind=kind.__name__), self.at(name))
        return value

    def get(self, name: str, kind: type[T]) -> T:
        """Member ``name``, which must be present and of ``kind``."""
        return self._of_kind(name, self._present(name), kind)

    def get_or(self, name: str, kind: type[T], *, default: T) -> T:
        """Member ``name`` of ``kind``, ``default`` when absent (``null`` is rejected)."""
        return default if name not in self.obj else self._of_kind(name, self.obj[name], kind)

    def optional(self, name: str, kind: type[T]) -> T | None:
        """Member ``name`` of ``kind``, ``None`` when absent or ``null``."""
        value = self.obj.get(name)
        return None if value is None else self._of_kind(name, value, kind)

    def members(
        self, name: str, *, required: Collection[str] = (), optional: Collection[str] | None = None
    ) -> Members:
        """Member ``name`` as an object, checked as ``Members`` checks one, same wording."""
        return Members(
            self._present(name),
            self.at(name),
            self.fail,
            required=required,
            optional=optional,
            wording=self.wording,
        )

    def optional_members(self, name: str) -> Members | None:
        """Member ``name`` as an object, ``None`` when absent or ``null``."""
        return None if self.obj.get(name) is None else self.members(name)

    def array(self, name: str) -> list[Json]:
        """Member ``name``, which must be a list."""
        value = self._present(name)
        if type(value) is not list:
            self.fail(self.wording.not_list, self.at(name))
        return value

    def optional_array(self, name: str) -> list[Json] | None:
        """Member ``name`` as a list, ``None`` when absent or ``null``."""
        return None if self.obj.get(name) is None else self.array(name)

    def strings(self, name: str) -> tuple[str, ...]:
        """Member ``name``, which must be a list of strings."""
        value = self._present(name)
        if type(value) is not list or not all(type(item) is str for item in value):
            self.fail(self.wording.not_strings, self.at(name))
        return tuple(item for item in value if type(item) is str)

    def optional_strings(self, name: str) -> tuple[str, ...] | None:
        """Member ``name`` as a list of strings, ``None`` when absent or ``null``."""
        return None if self.obj.get(name) is None else self.strings(name)

    def choice(self, name: str, allowed: tuple[T, ...]) -> T | None:
        """Member ``name``, one of ``allowed``; ``None`` when absent or ``null``."""
        value = self.obj.get(name)
        if value is None:
            return None
        chosen = choice(value, allowed)
        if chosen is None:
            names = ", ".join(map(str, allowed))
            self.fail(self.wording.not_choice.format(allowed=names), self.at(name))
        return chosen
