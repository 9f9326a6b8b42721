"""librdkafka settings: parsing, secrets never shown, and the watch's verdicts."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from ticdc_conformance.kafka.client import BrokerError, Watch, is_secret, parse_config, redact
from ticdc_conformance.reference.errors import ExitCode, UsageError

confluent_kafka = pytest.importorskip("confluent_kafka")


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        ([], {}),
        (["security.protocol=SASL_SSL"], {"security.protocol": "SASL_SSL"}),
        (["sasl.password=a=b=c"], {"sasl.password": "a=b=c"}),  # only the first = splits
        ([" acks = all "], {"acks": "all"}),
        (["acks=1", "acks=all"], {"acks": "all"}),  # the last one wins
        (["ssl.ca.location="], {"ssl.ca.location": ""}),
    ],
)
def test_config_pairs(pairs: list[str], expected: dict[str, str]) -> None:
    assert parse_config(pairs) == expected


@pytest.mark.parametrize(
    ("pair", "said"),
    [
        ("no-equals", "NAME=VALUE"),
        ("=value", "NAME=VALUE"),
        ("group.id=mine", "group.id is set by the command itself"),
        ("enable.partition.eof=false", "is set by the command itself"),
    ],
)
def test_bad_config_pairs_are_usage_errors(pair: str, said: str) -> None:
    with pytest.raises(UsageError, match=said) as caught:
        parse_config([pair])
    assert caught.value.exit_code == ExitCode.USAGE


def test_config_file_then_pairs(tmp_path: Path) -> None:
    file = tmp_path / "client.properties"
    file.write_text("# a cluster\n\nsecurity.protocol=SASL_SSL\nsasl.password=s3cret\nacks=1\n")
    assert parse_config(["acks=all"], [file]) == {
        "security.protocol": "SASL_SSL",
        "sasl.password": "s3cret",
        "acks": "all",
    }


def test_a_bad_config_file_line_is_named_without_its_value(tmp_path: Path) -> None:
    file = tmp_path / "client.properties"
    file.write_text("acks=all\nsasl.password s3cret\n")
    with pytest.raises(UsageError, match=r"line 2") as caught:
        parse_config([], [file])
    assert "s3cret" not in str(caught.value)
    with pytest.raises(UsageError, match="No such file"):
        parse_config([], [tmp_path / "absent"])


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("sasl.password", True),
        ("ssl.key.password", True),
        ("ssl.keystore.password", True),
        ("sasl.oauthbearer.client.secret", True),
        ("ssl.key.pem", True),
        ("sasl.jaas.config", True),
        ("sasl.username", False),
        ("security.protocol", False),
        ("bootstrap.servers", False),
    ],
)
def test_secret_settings(name: str, secret: bool) -> None:
    assert is_secret(name) is secret


def test_redact_hides_secret_values_only() -> None:
    config = {"sasl.username": "alice", "sasl.password": "s3cret"}
    assert redact("alice failed with s3cret", config) == "alice failed with ***"


def _error(name: str, *, fatal: bool = False) -> Any:
    code = getattr(confluent_kafka.KafkaError, name)
    return confluent_kafka.KafkaError(code, "said by the client", fatal=fatal)


def test_watch_fails_at_once_on_refused_credentials() -> None:
    watch = Watch({"sasl.password": "said"}, timeout=60)
    watch.check("reading")  # nothing wrong yet
    watch(_error("SASL_AUTHENTICATION_FAILED"))
    with pytest.raises(BrokerError, match="refused") as caught:
        watch.check("reading")
    assert "said" not in str(caught.value)  # the password's value never shows
    assert caught.value.exit_code == ExitCode.BROKEN


def test_watch_fails_at_once_on_a_fatal_error() -> None:
    watch = Watch({}, timeout=60)
    watch(_error("_FENCED", fatal=True))
    with pytest.raises(BrokerError, match="_FENCED"):
        watch.check("sending")


def test_watch_fails_when_nothing_moves() -> None:
    watch = Watch({}, timeout=0.05)
    watch(_error("_TRANSPORT"))
    time.sleep(0.1)
    watch.check("following", idle_ok=True)  # idle and no broker down: fine while following
    with pytest.raises(
        BrokerError, match=r"nothing from the cluster .* while sending .*_TRANSPORT"
    ):
        watch.check("sending")
    watch.progress()
    watch.check("sending")


def test_watch_fails_when_every_broker_is_down_even_when_idling_is_fine() -> None:
    watch = Watch({}, timeout=0.05)
    watch(_error("_ALL_BROKERS_DOWN"))
    assert watch.down
    watch.check("following", idle_ok=True)  # not down for long yet
    time.sleep(0.1)
    with pytest.raises(BrokerError, match="no broker reachable"):
        watch.check("following", idle_ok=True)
    watch.progress()  # records came: the brokers are back
    assert not watch.down


def test_watch_settings_keep_librdkafka_quiet_unless_asked() -> None:
    watch = Watch({"bootstrap.servers": "127.0.0.1:1"}, timeout=1)
    settings = watch.settings({"enable.idempotence": True})
    assert settings["log_level"] == 0
    assert settings["error_cb"] is watch
    assert settings["enable.idempotence"] is True
    assert "log_level" not in Watch({"debug": "broker"}, timeout=1).settings()
