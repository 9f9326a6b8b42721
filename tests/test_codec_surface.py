"""Every protocol module satisfies ``Codec`` (checked by mypy) and is registered by name."""

from __future__ import annotations

from ticdc_conformance.reference import CODECS, Codec, craft, debezium, open_protocol, simple
from ticdc_conformance.reference.message import SchemaCodec


def test_open_protocol_is_a_codec() -> None:
    codec: Codec[open_protocol.Config] = open_protocol  # mypy checks the surface here
    assert CODECS[codec.PROTOCOL] is codec
    assert codec.config_from_options({}) == open_protocol.Config()
    assert set(codec.PROFILES) == {"tiflow", "ticdc"}


def test_craft_is_a_codec() -> None:
    codec: Codec[craft.Config] = craft
    assert CODECS[codec.PROTOCOL] is codec
    assert codec.config_from_options({}) == craft.Config()
    assert codec.PROFILES == ("tiflow",)  # Craft exists only in classic TiCDC (§0)


def test_simple_encodings_are_codecs() -> None:
    json_codec: Codec[simple.Config] = simple.JSON  # mypy checks the surface here
    avro_codec: Codec[simple.Config] = simple.AVRO
    for codec, encoding in ((json_codec, "json"), (avro_codec, "avro")):
        assert CODECS[codec.PROTOCOL] is codec
        assert f"simple-{encoding}" == codec.PROTOCOL
        assert codec.config_from_options({}) == simple.Config(encoding_format=encoding)  # type: ignore[arg-type]
        assert set(codec.PROFILES) == {"tiflow", "ticdc"}


def test_debezium_is_a_codec() -> None:
    codec: Codec[debezium.Config] = debezium  # mypy checks the surface here
    assert CODECS[codec.PROTOCOL] is codec
    assert codec.config_from_options({}) == debezium.Config()
    assert set(codec.PROFILES) == {"tiflow", "ticdc"}


def test_only_simple_offers_schema_state() -> None:
    stateful: SchemaCodec = simple.JSON  # mypy checks the extra surface here
    assert isinstance(stateful, SchemaCodec)
    assert {name for name, codec in CODECS.items() if isinstance(codec, SchemaCodec)} == {
        "simple-json", "simple-avro",
    }  # fmt: skip
