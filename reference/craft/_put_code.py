"""One compiled writer per table plan: an image's checks, writes and column group in one call.

``_fast_rows`` writes an image column by column with each column's put (``_puts``), then the
group's nullable bytes chunk. ``image_writer`` writes the same as Python source for one plan,
unrolled per column, and compiles it once: the image unpacked into locals, the primary key
columns tested for NULL, each non-null value put (its put's cheap test and write written out
where the put has one, ``_puts.inline_form``, the put itself called where the test fails or
there is none), then the chunk of the written columns' lengths and their bytes. The puts, the
names, the type and flag chunks and the estimate reach the function as the names of its own
globals (as ``_group_code``'s readers): the source holds positions, bounds and local names
only, no name, type or value of a table's.

The function gives what ``_fast_rows``' loop gives: the same ``Group``, or ``Slow`` (or a
put's ``ValueError``) where that loop raises one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ticdc_conformance.reference.craft._puts import Put, Slow, inline_form
from ticdc_conformance.reference.craft._rows import Group
from ticdc_conformance.reference.values import Value

__all__ = ["ImageWriter", "image_writer"]

ImageWriter = Callable[[int, Sequence[Value]], Group]
"""``(kind, image)``: the column group of kind ``kind`` for ``image``, or ``Slow``."""


def image_writer(  # noqa: PLR0917 - a plan's members, by position
    puts: Sequence[Put],
    chosen: Sequence[int],
    keys: Sequence[int],
    names: tuple[bytes, ...],
    types_and_flags: bytes,
    estimate: int,
    lengths: object,
) -> ImageWriter:
    """The compiled writer of one plan's images (see the module doc).

    ``lengths`` maps a value's length to its ZigZag varint's bytes (``_fast_rows``).
    """
    count = len(puts)
    namespace: dict[str, object] = {
        "_Slow": Slow,
        "_new": tuple.__new__,
        "_Group": Group,
        "_NULL": b"\x01",
        "_L": lengths,
        "_names": names,
        "_tf": types_and_flags,
        "_estimate": estimate,
    }
    lines = []
    for j, put in enumerate(puts):
        namespace[f"p{j}"] = put
        form = inline_form(put)
        if form is None:
            lines.append(f"    w{j} = None if v{j} is None else p{j}(v{j})")
            continue
        text, used = form
        # a separator: "pack32" of column 5 and "pack" of column 325 stay two names
        local = {name: f"{name}_{j}" for name in used}
        namespace.update({f"{name}_{j}": value for name, value in used.items()})
        text = text.format(put=f"p{j}", **local).replace("@", f"v{j}")
        lines.append(f"    w{j} = None if v{j} is None else {text}")
    vs = ", ".join(f"v{j}" for j in range(count))
    written = "".join(f"w{i}, " for i in chosen)
    chunk = "".join(f"_NULL if w{i} is None else _L[len(w{i})], " for i in chosen)
    source = "\n".join(
        [
            "def write(kind, image):",
            f"    if len(image) != {count}:",
            "        raise _Slow",
            f"    {vs}, = image",
            *(f"    if v{k} is None:\n        raise _Slow" for k in keys),
            *lines,
            f"    data = b''.join(filter(None, ({written})))",
            f"    chunk = b''.join(({chunk}))",
            "    return _new(_Group, (kind, _names, _tf, chunk + data, _estimate + len(data)))",
        ]
    )
    exec(compile(source, "<craft image writer>", "exec"), namespace)  # noqa: S102
    made: ImageWriter = namespace["write"]  # type: ignore[assignment]
    return made
