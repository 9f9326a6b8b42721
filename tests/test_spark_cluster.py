"""The cluster path for real: a Spark standalone master and worker on 127.0.0.1, the package
shipped to them only as a zip on ``--py-files`` (docs/stream-checker.md, "On a cluster").

The worker's Python sees pyarrow, fastavro and pyspark but not ``ticdc_conformance``: every
import on the executors comes from the zip. A Simple-Avro dump also loads the Avro schema from
inside the zip.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sysconfig
import time
import venv
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import build_wheel
from stream_helpers import dump_with, labelled

from ticdc_conformance.generators.dump import read_labels
from ticdc_conformance.generators.simulator import StreamSettings
from ticdc_conformance.reference.dispatch import DispatchRule

pytestmark = [pytest.mark.spark, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
_MASTER_URL = re.compile(r"Starting Spark master at (spark://127\.0\.0\.1:\d+)")
_REGISTERED = "Successfully registered with master"


def _spark_home() -> Path:
    pyspark = pytest.importorskip("pyspark")
    home = Path(pyspark.__file__).parent
    if not (home / "bin" / "spark-class").exists():
        pytest.skip("this pyspark has no bin/spark-class")
    return home


def _wait_for(log: Path, pattern: re.Pattern[str] | str, process: subprocess.Popen[bytes]) -> str:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        text = log.read_text(encoding="utf-8", errors="replace")
        match = re.search(pattern, text)
        if match:
            return match.group(1) if match.groups() else match.group()
        if process.poll() is not None:
            break
        time.sleep(0.5)
    pytest.fail(f"{log.name} never said {pattern!r}:\n{log.read_text(errors='replace')[-3000:]}")


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        # a new session: the daemon and the JVM it execs can be ended together, by group
        return subprocess.Popen(
            args, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A standalone master and one 2-core worker on 127.0.0.1; yields the master URL."""
    home = _spark_home()
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        pytest.skip("no Java runtime")
    folder = tmp_path_factory.mktemp("cluster")
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_NO_DAEMONIZE": "1",
    }
    spark_class = str(home / "bin" / "spark-class")
    master = _start(
        [
            spark_class,
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--webui-port",
            "0",
        ],
        folder / "master.log",
        env,
    )
    worker: subprocess.Popen[bytes] | None = None
    try:
        url = _wait_for(folder / "master.log", _MASTER_URL, master)
        worker = _start(
            [
                spark_class,
                "org.apache.spark.deploy.worker.Worker",
                "--host",
                "127.0.0.1",
                "--cores",
                "2",
                "--memory",
                "2g",
                "--webui-port",
                "0",
                "--work-dir",
                str(folder / "work"),
                url,
            ],
            folder / "worker.log",
            env,
        )
        _wait_for(folder / "worker.log", _REGISTERED, worker)
        yield url
    finally:
        for process in (worker, master):
            if process is not None:
                _stop(process)


def _python_without_the_package(folder: Path) -> Path:
    """A venv seeing this interpreter's site-packages except ``ticdc_conformance`` itself."""
    venv.create(folder, with_pip=False)
    python = folder / "bin" / "python"
    target = Path(sysconfig.get_paths()["purelib"])
    mirror = folder / "site-mirror"
    mirror.mkdir()
    for entry in target.iterdir():
        if not entry.name.startswith(("ticdc_conformance", "__editable__")):
            (mirror / entry.name).symlink_to(entry)
    site = Path(
        subprocess.check_output(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            text=True,
        ).strip()
    )
    (site / "mirror.pth").write_text(f"{mirror}\n", encoding="utf-8")
    hidden = subprocess.run(
        [python, "-c", "import ticdc_conformance"], capture_output=True, check=False
    )
    assert hidden.returncode != 0, "the package must come from the zip only"
    return python


def _package_zip(folder: Path) -> Path:
    """The wheel, renamed: Spark puts only .zip, .egg and .jar py-files on executor paths."""
    return build_wheel(folder).rename(folder / "ticdc_conformance.zip")


def test_a_standalone_cluster_runs_the_job_from_a_zip(cluster: str, tmp_path: Path) -> None:
    settings = StreamSettings(
        protocol="simple-avro", partitions=3, dispatcher=DispatchRule(partition="index-value")
    )
    folder = dump_with(settings, 600, ("wrong-partition",))
    python = _python_without_the_package(tmp_path / "venv")
    shipped = _package_zip(tmp_path / "wheel")
    report = tmp_path / "report.json"
    home = _spark_home()
    done = subprocess.run(
        [
            str(home / "bin" / "spark-submit"),
            "--master",
            cluster,
            "--conf",
            f"spark.pyspark.python={python}",
            "--conf",
            f"spark.pyspark.driver.python={python}",
            "--conf",
            "spark.driver.host=127.0.0.1",
            "--conf",
            "spark.driver.bindAddress=127.0.0.1",
            "--conf",
            "spark.ui.enabled=false",
            "--py-files",
            str(shipped),
            str(ROOT / "suites" / "stream" / "spark.py"),
            "--input",
            str(folder),
            "--report",
            str(report),
            "--quiet",
        ],
        env={**os.environ, "SPARK_HOME": str(home), "SPARK_LOCAL_IP": "127.0.0.1"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 1, done.stderr[-3000:]
    outcome = json.loads(report.read_text(encoding="utf-8"))
    assert outcome["messages"]["read"] == outcome["messages"]["decoded"] > 0
    samples = [
        (rule["id"], s["partition"], s["offset"], s["commit_ts"])
        for rule in outcome["rules"]
        for s in rule["samples"]
    ]
    assert sorted(samples) == labelled(read_labels(folder))
