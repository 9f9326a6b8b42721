"""A throwaway PostgreSQL on 127.0.0.1 for consumer tests and examples (the ``consumer`` extra).

``running_postgres(folder)`` starts a PostgreSQL server from the binaries that PyPI's
``pgserver`` ships in its wheel, listening on 127.0.0.1 on a free port, and yields its DSN
(``postgresql://postgres@127.0.0.1:PORT/postgres``, password-less: trust authentication, for
tests only). On leaving the ``with`` block it stops that server (``pg_ctl stop``, by its data
directory: never another server) and removes its data.

* PostgreSQL refuses to run as root. Run as root (as CI runs), the server runs as the
  unprivileged system user ``pgserver`` (created with ``useradd`` if missing, as pgserver
  itself does), and its data directory lives in a fresh folder of the system's temporary
  folder owned by that user (a folder of root's, such as pytest's, is private to root), beside
  a copy of pgserver's installation (34 MB), which may sit in a folder private to root too.
  Otherwise the data directory is ``folder/pgdata``.
* Durability is off (``fsync``, ``synchronous_commit``, ``full_page_writes``): the data is
  thrown away, and a test's writes should not wait for the disk.
* Without pgserver, ``PostgresUnavailableError`` says how to install it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["SERVER_USER", "PostgresUnavailableError", "running_postgres"]

SERVER_USER = "pgserver"
"""The system user the server runs as when the caller is root (pgserver's own choice)."""
_START_ATTEMPTS = 3
"""Another process may take the free port between choosing it and the server binding it."""
_SETTINGS = (
    "-c listen_addresses=127.0.0.1",
    "-c unix_socket_directories=''",
    "-c fsync=off",
    "-c synchronous_commit=off",
    "-c full_page_writes=off",
)


class PostgresUnavailableError(RuntimeError):
    """No PostgreSQL can run here: pgserver is not installed, or its server does not start."""


@dataclass(frozen=True, slots=True)
class _Server:
    binaries: Path
    data: Path
    user: str | None

    def run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        command = [str(self.binaries / program), "-D", str(self.data), *args]
        return subprocess.run(  # noqa: S603 - the wheel's own binaries, fixed arguments
            command, check=False, capture_output=True, text=True, user=self.user, timeout=60
        )


def _binaries() -> Path:
    """The server binaries in pgserver's wheel.

    Found without importing pgserver: its import creates lock files and warns where no
    runtime folder is set.
    """
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.submodule_search_locations:
        raise PostgresUnavailableError(
            "a throwaway PostgreSQL needs pgserver: pip install 'ticdc-conformance[consumer]'"
        )
    binaries = Path(next(iter(spec.submodule_search_locations))) / "pginstall" / "bin"
    if not (binaries / "postgres").is_file():
        raise PostgresUnavailableError(f"pgserver ships no PostgreSQL server in {binaries}")
    return binaries


def _server_user() -> str | None:
    """``None`` when the caller may run PostgreSQL itself, else ``SERVER_USER`` (created)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(SERVER_USER)
    except KeyError:
        useradd = ["useradd", "--system", "--no-create-home", "--shell", "/bin/false"]
        created = subprocess.run(  # noqa: S603 - fixed arguments
            [*useradd, SERVER_USER],
            check=False,
            capture_output=True,
            text=True,
        )
        if created.returncode != 0:
            raise PostgresUnavailableError(
                f"PostgreSQL does not run as root, and user {SERVER_USER} could not be "
                f"created: {created.stderr.strip()}"
            ) from None
    return SERVER_USER


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _data_folder(folder: Path, user: str | None) -> Path:
    if user is None:
        return folder / "pgdata"
    owner = pwd.getpwnam(user)
    home = Path(tempfile.mkdtemp(prefix="ticdc-conformance-pg-"))
    os.chown(home, owner.pw_uid, owner.pw_gid)
    return home / "pgdata"


def _within_reach(binaries: Path, home: Path) -> Path:
    """The installation pgserver ships, copied into ``home``, where the server's user runs it.

    The wheel's copy may sit in a folder private to root: tox makes its ``.tox`` so. The
    programs find their libraries through ``$ORIGIN/../../../pgserver.libs``: the copy keeps
    that layout.
    """
    package = binaries.parent.parent
    shutil.copytree(binaries.parent, home / package.name / binaries.parent.name, symlinks=True)
    libraries = package.parent / f"{package.name}.libs"
    if libraries.is_dir():
        shutil.copytree(libraries, home / libraries.name, symlinks=True)
    return home / package.name / binaries.parent.name / binaries.name


def _start(server: _Server) -> int:
    log = server.data / "server.log"
    failure = ""
    for _ in range(_START_ATTEMPTS):
        port = _free_port()
        options = " ".join((*_SETTINGS, f"-p {port}"))
        started = server.run("pg_ctl", "-w", "-t", "30", "-l", str(log), "-o", options, "start")
        if started.returncode == 0:
            return port
        server.run("pg_ctl", "-w", "-m", "immediate", "stop")  # one that started too late
        failure = log.read_text(encoding="utf-8", errors="replace") if log.exists() else ""
        failure = failure or started.stderr
    raise PostgresUnavailableError(f"PostgreSQL did not start:\n{failure.strip()[-2000:]}")


@contextlib.contextmanager
def running_postgres(folder: Path) -> Iterator[str]:
    """A PostgreSQL server for the ``with`` block; yields its DSN (the module doc)."""
    binaries = _binaries()
    user = _server_user()
    folder.mkdir(parents=True, exist_ok=True)
    data = _data_folder(folder, user)
    if user is not None:
        binaries = _within_reach(binaries, data.parent)
    server = _Server(binaries, data, user)
    try:
        made = server.run(
            "initdb",
            "--auth=trust",
            "--username=postgres",
            "--encoding=UTF8",
            "--locale=C",
            "--no-sync",
        )
        if made.returncode != 0:
            raise PostgresUnavailableError(f"initdb failed:\n{made.stderr.strip()}")
        port = _start(server)
        try:
            yield f"postgresql://postgres@127.0.0.1:{port}/postgres"
        finally:
            server.run("pg_ctl", "-w", "-m", "immediate", "stop")
    finally:
        shutil.rmtree(server.data if user is None else server.data.parent, ignore_errors=True)
