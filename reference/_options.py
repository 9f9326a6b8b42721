"""TiCDC sink option text → config field values, the same way for every protocol.

An option ``max-batch-size`` sets the config field ``max_batch_size``; the field's default
decides how the text reads: ``true``/``false`` for a bool, decimal digits for an int (or for a
field named in ``integers`` whose default is ``None``), the text itself otherwise.
``large-message-handle-compression`` takes only ``none``: snappy and lz4 are not implemented.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping

from ticdc_conformance.reference.errors import EncodeError

__all__ = ["large_message_problems", "read_options"]

COMPRESSION = "large-message-handle-compression"


def read_options(
    options: Mapping[str, str],
    defaults: object,
    *,
    protocol: str,
    known: Collection[str],
    renames: Mapping[str, str] | None = None,
    integers: Collection[str] = (),
    special: Mapping[str, Callable[[str], tuple[str, object]]] | None = None,
) -> dict[str, object]:
    """Config field values for ``options`` (``EncodeError`` for unknown names or bad text).

    ``defaults`` is a default config; ``renames`` maps an option to a field of another name;
    ``special`` maps an option to a reader returning (field, value) for options with their
    own text forms.
    """
    values: dict[str, object] = {}
    for name, text in options.items():
        if name not in known:
            raise EncodeError(f"unknown option {name!r}", protocol=protocol)
        if name == COMPRESSION:
            if text != "none":
                raise EncodeError(f"compression {text!r} is not implemented", protocol=protocol)
            continue
        if special and name in special:
            try:
                field, value = special[name](text)
            except ValueError as error:
                raise EncodeError(f"option {name}: {error}", protocol=protocol) from None
            values[field] = value
            continue
        field = (renames or {}).get(name, name.replace("-", "_"))
        default = getattr(defaults, field)
        if isinstance(default, bool):
            if text not in ("true", "false"):
                raise EncodeError(f"option {name} takes true or false", protocol=protocol)
            values[field] = text == "true"
        elif isinstance(default, int) or field in integers:
            if not (text.isascii() and text.isdigit()):
                raise EncodeError(f"option {name} takes a whole number", protocol=protocol)
            values[field] = int(text)
        else:
            values[field] = text
    return values


def large_message_problems(option: str, claim_check_storage_uri: str) -> list[str]:
    """What is wrong with the large-message options (Open and Simple, ground truth §1.5)."""
    problems = []
    if option not in ("none", "handle-key-only", "claim-check"):
        problems.append("large-message-handle-option must be none, handle-key-only or claim-check")
    if (option == "claim-check") != bool(claim_check_storage_uri):
        problems.append("claim-check-storage-uri goes with large-message-handle-option=claim-check")
    return problems
