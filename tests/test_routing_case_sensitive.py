"""``case-sensitive`` of a changefeed configuration file: how the dispatcher matchers compare
names under each profile (cli/_generate.py ``read_case_sensitive``; docs/kafka.md "Topic
routing"), what ``generate`` writes with it and how ``check-stream`` reads it back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ticdc_conformance.cli._generate import read_case_sensitive, read_dispatchers
from ticdc_conformance.cli.main import main
from ticdc_conformance.generators.dump import read_dump, read_labels
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.reference.errors import UsageError
from ticdc_conformance.reference.tables import Profile
from ticdc_conformance.suites.stream.plain import check_records
from ticdc_conformance.suites.stream.rules import CheckSettings

RULE = '[[sink.dispatchers]]\nmatcher = ["Shop.Orders"]\ntopic = "orders"\n'


def _topic(config: str, profile: Profile, tmp_path: Path) -> str:
    """The topic of ``shop.orders`` under the configuration file ``config``."""
    path = tmp_path / "changefeed.toml"
    path.write_text(config)
    settings = StreamSettings(
        profile=profile,
        topic="cdc",
        routes=read_dispatchers(path),
        case_sensitive=read_case_sensitive(path, profile),
    )
    return settings.router().topic_of_table("shop", "orders")


@pytest.mark.parametrize(
    ("profile", "setting", "topic"),
    [
        # tiflow: the top-level key (ReplicaConfig.CaseSensitive), false by default
        ("tiflow", "", "orders"),
        ("tiflow", "case-sensitive = false\n", "orders"),
        ("tiflow", "case-sensitive = true\n", "cdc"),
        # ticdc: [sink] case-sensitive never reaches the changefeed through cdc cli or the
        # OpenAPI, and the top-level key filters tables only
        ("ticdc", "", "orders"),
        ("ticdc", "case-sensitive = true\n", "orders"),
        ("ticdc", "[sink]\ncase-sensitive = true\n", "orders"),
    ],
)
def test_a_mixed_case_matcher_takes_the_table_or_not(
    profile: Profile, setting: str, topic: str, tmp_path: Path
) -> None:
    assert _topic(setting + RULE, profile, tmp_path) == topic


def test_a_case_sensitive_matcher_takes_the_names_as_they_are(tmp_path: Path) -> None:
    config = 'case-sensitive = true\n[[sink.dispatchers]]\nmatcher = ["shop.orders"]\n'
    config += 'topic = "{schema}_{table}"\n'
    assert _topic(config, "tiflow", tmp_path) == "shop_orders"


@pytest.mark.parametrize(
    ("profile", "setting", "message"),
    [
        ("tiflow", 'case-sensitive = "yes"\n', "case-sensitive must be true or false"),
        ("ticdc", "[sink]\ncase-sensitive = 1\n", "sink.case-sensitive must be true or false"),
        ("tiflow", "[sink]\ncase-sensitive = true\n", "tiflow's [sink] has no case-sensitive"),
    ],
)
def test_a_setting_ticdc_refuses_is_refused(
    profile: Profile, setting: str, message: str, tmp_path: Path
) -> None:
    path = tmp_path / "changefeed.toml"
    path.write_text(setting + RULE)
    with pytest.raises(UsageError, match=re.escape(message)):
        read_case_sensitive(path, profile)


@pytest.mark.parametrize("sensitive", [True, False])
def test_generate_routes_by_it_and_check_stream_reads_it_back(
    sensitive: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "changefeed.toml"
    config.write_text(f"case-sensitive = {str(sensitive).lower()}\n" + RULE)
    out = tmp_path / "dump"
    args = "--protocol open --messages 300 --partitions 2 --topic cdc --quiet"
    assert main(["generate", *args.split(), "--sink-config", str(config), "--out", str(out)]) == 0
    capsys.readouterr()
    labels = read_labels(out)["settings"]
    assert labels["topics"] == ({"cdc": 2} if sensitive else {"cdc": 2, "orders": 2})
    assert labels.get("case-sensitive", False) is sensitive
    records = [(r.topic, r.partition, r.offset, r.key, r.value) for r in read_dump(out)]
    settings = CheckSettings.from_labels(labels)
    assert settings.case_sensitive is sensitive
    assert check_records(records, settings).findings == ()
    if sensitive:  # read without it, every shop.orders row seems on the wrong topic
        misread = CheckSettings.from_labels(labels, case_sensitive=False)
        rules = {f.rule for f in check_records(records, misread).findings}
        assert rules == {"topic-routing"}
