"""Every protocol module satisfies ``Codec`` (checked by mypy) and is registered by name."""

from __future__ import annotations

from ticdc_conformance.reference import CODECS, Codec, debezium, open_protocol


def test_open_protocol_is_a_codec() -> None:
    codec: Codec[open_protocol.Config] = open_protocol  # mypy checks the surface here
    assert CODECS[codec.PROTOCOL] is codec
    assert codec.config_from_options({}) == open_protocol.Config()
    assert set(codec.PROFILES) == {"tiflow", "ticdc"}


def test_debezium_is_a_codec() -> None:
    codec: Codec[debezium.Config] = debezium  # mypy checks the surface here
    assert CODECS[codec.PROTOCOL] is codec
    assert codec.config_from_options({}) == debezium.Config()
    assert set(codec.PROFILES) == {"tiflow", "ticdc"}
