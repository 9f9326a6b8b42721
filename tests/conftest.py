"""Shared test helpers: where ../shared is, and small builders for tables and messages."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=150
)
settings.register_profile("ci", parent=settings.get_profile("default"), derandomize=True)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=5000)
settings.load_profile(
    os.environ.get("TICDC_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "default")
)


def shared_dir() -> Path:
    """The project's shared material beside the checkout (override: TICDC_CONFORMANCE_SHARED)."""
    override = os.environ.get("TICDC_CONFORMANCE_SHARED")
    return Path(override) if override else Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture
def shared() -> Path:
    path = shared_dir()
    if not path.is_dir():
        pytest.skip("../shared is not beside the checkout")
    return path


@pytest.fixture(scope="session")
def spark() -> object:
    """One local Spark session (127.0.0.1, no UI) for every Spark test; skip without pyspark."""
    pytest.importorskip("pyspark")
    from ticdc_conformance.suites.stream.spark import session

    spark = session("local[2]")
    yield spark
    spark.stop()
