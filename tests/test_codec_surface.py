"""Every codec module has exactly the surface ``Codec`` describes, checked by mypy and here.

The export check follows Hypothesis's ``_check_exports``: a codec's ``__all__`` is the codec
surface (plus ``SchemaCodec``'s for Simple), every public name of the module is in it, and every
exported name exists and is documented.
"""

from __future__ import annotations
import __future__

import inspect
from types import ModuleType

import pytest

from ticdc_conformance.reference import (
    CODECS,
    Codec,
    DecodeError,
    canal_json,
    craft,
    debezium,
    open_protocol,
    simple,
    simple_avro,
    simple_json,
)
from ticdc_conformance.reference.message import CODEC_SURFACE, SCHEMA_CODEC_SURFACE, SchemaCodec

MODULES = {
    "open": open_protocol,
    "craft": craft,
    "simple-json": simple_json,
    "simple-avro": simple_avro,
    "debezium": debezium,
    "canal-json": canal_json,
}


def test_every_codec_module_is_registered_by_its_protocol_name() -> None:
    assert CODECS == MODULES
    for protocol, module in MODULES.items():
        assert protocol == module.PROTOCOL


def _public_names(module: ModuleType) -> set[str]:
    """Names a user sees on the module: not private, not a submodule, not a future import."""
    return {
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, ModuleType | __future__._Feature)
    }


@pytest.mark.parametrize("protocol", sorted(MODULES))
def test_exports_are_exactly_the_codec_surface(protocol: str) -> None:
    module = MODULES[protocol]
    extra = SCHEMA_CODEC_SURFACE if isinstance(module, SchemaCodec) else frozenset()
    assert len(module.__all__) == len(set(module.__all__)), "a name is exported twice"
    assert set(module.__all__) == CODEC_SURFACE | extra
    assert _public_names(module) == set(module.__all__), "a public name is not exported"
    assert module.DecodeError is DecodeError


@pytest.mark.parametrize("protocol", sorted(MODULES))
def test_every_export_exists_and_is_documented(protocol: str) -> None:
    module = MODULES[protocol]
    for name in module.__all__:
        value = getattr(module, name)
        # a function or class has its own docstring; a constant is documented by the surface
        documented = value if callable(value) else getattr(Codec, name)
        assert inspect.getdoc(documented), f"{protocol}.{name} has no docstring"


def test_open_protocol_is_a_codec() -> None:
    codec: Codec[open_protocol.Config] = open_protocol  # mypy checks the surface here
    assert codec.config_from_options({}) == open_protocol.Config()
    assert set(codec.PROFILES) == {"tiflow", "ticdc"}


def test_craft_is_a_codec() -> None:
    codec: Codec[craft.Config] = craft
    assert codec.config_from_options({}) == craft.Config()
    assert codec.PROFILES == ("tiflow",)  # Craft exists only in classic TiCDC (§0)


def test_simple_encodings_are_codecs_sharing_one_config() -> None:
    json_codec: Codec[simple.Config] = simple_json  # mypy checks the surface here
    avro_codec: Codec[simple.Config] = simple_avro
    for codec in (json_codec, avro_codec):
        assert codec.Config is simple.Config
        assert codec.config_from_options({}) == simple.Config()
        assert set(codec.PROFILES) == {"tiflow", "ticdc"}


def test_debezium_is_a_codec() -> None:
    codec: Codec[debezium.Config] = debezium  # mypy checks the surface here
    assert codec.config_from_options({}) == debezium.Config()
    assert set(codec.PROFILES) == {"tiflow", "ticdc"}


def test_only_simple_offers_schema_state() -> None:
    stateful: SchemaCodec = simple_json  # mypy checks the extra surface here
    assert isinstance(stateful, SchemaCodec)
    assert {name for name, codec in CODECS.items() if isinstance(codec, SchemaCodec)} == {
        "simple-json",
        "simple-avro",
    }
