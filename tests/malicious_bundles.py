"""Malicious fixture bundles: each tries to write outside the folder it is unpacked into.

Standard library only, so that the same attacks run under every supported Python:
``python malicious_bundles.py PATH/TO/fixtures/_safe_tar.py WORKDIR`` unpacks each with that
module's ``extract`` and prints the outcomes as JSON (tests/test_fixtures_safe_tar.py).
"""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import tarfile
from collections.abc import Callable
from pathlib import Path

TOP = "ticdc-conformance-fixtures-0.0.0"
Member = tuple[tarfile.TarInfo, bytes | None]


def _file(name: str, data: bytes = b"pwned\n") -> Member:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _special(name: str, kind: bytes, target: str = "") -> Member:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    info.devmajor, info.devminor = 1, 3  # /dev/null's numbers, for the device
    return info, None


def attacks(outside: Path) -> dict[str, list[Member]]:
    """Each attack's members; ``outside`` (beside the target) must stay untouched."""
    return {
        "traversal": [_file(f"{TOP}/../../{outside.name}/traversal.txt")],
        "absolute": [_file(str(outside / "absolute.txt"))],
        "symlink": [
            _special(f"{TOP}/link", tarfile.SYMTYPE, str(outside)),
            _file(f"{TOP}/link/through-symlink.txt"),
        ],
        "relative-symlink": [
            _special(f"{TOP}/up", tarfile.SYMTYPE, "../.."),
            _file(f"{TOP}/up/{outside.name}/through-symlink.txt"),
        ],
        "hardlink": [
            _special(f"{TOP}/hard", tarfile.LNKTYPE, str(outside / "victim.txt")),
            _file(f"{TOP}/hard"),
        ],
        "device": [_special(f"{TOP}/null", tarfile.CHRTYPE)],
        "fifo": [_special(f"{TOP}/pipe", tarfile.FIFOTYPE)],
        "outside-top": [_file("elsewhere.txt")],
        "backslash": [_file(f"{TOP}\\..\\..\\{outside.name}\\backslash.txt")],
        "duplicate": [_file(f"{TOP}/a.txt"), _file(f"{TOP}/a.txt", b"again\n")],
    }


def _snapshot(folder: Path, skip: Path) -> dict[str, str]:
    """Every path under ``folder`` but ``skip``, with its content or link target."""
    seen = {}
    for path in sorted(folder.rglob("*")):
        if path == skip or skip in path.parents:
            continue
        if path.is_symlink():
            seen[str(path)] = f"link to {path.readlink()}"
        elif path.is_file():
            seen[str(path)] = path.read_text(errors="replace")
        else:
            seen[str(path)] = "folder"
    return seen


def attack(extract: Callable[[Path, Path, str], Path], workdir: Path) -> dict[str, str]:
    """Unpack each attack with ``extract``: its error, plus what it wrote where it must not."""
    outcomes = {}
    for name in attacks(workdir / "placeholder"):
        case = workdir / name
        outside = case / "outside"
        outside.mkdir(parents=True)
        (outside / "victim.txt").write_text("keep\n")
        archive, target = case / "bundle.tar", case / "target"
        with tarfile.open(archive, "w", format=tarfile.GNU_FORMAT) as tar:
            for info, data in attacks(outside)[name]:
                tar.addfile(info, None if data is None else io.BytesIO(data))
        before = _snapshot(workdir, target)
        try:
            extract(archive, target, TOP)
            outcome = "not refused"
        except Exception as error:  # noqa: BLE001 - the outcome is whatever it raised
            outcome = f"{type(error).__name__}: {error}"
        after = _snapshot(workdir, target)
        if after != before:
            changed = sorted(set(after.items()) ^ set(before.items()))
            outcome += f" | WROTE OUTSIDE THE TARGET: {changed}"
        if target.exists():
            outcome += " | left the target behind"
        outcomes[name] = outcome
    return outcomes


if __name__ == "__main__":
    spec = importlib.util.spec_from_file_location("safe_tar", sys.argv[1])
    if spec is None or spec.loader is None:
        sys.exit(f"cannot load {sys.argv[1]}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.stdout.write(json.dumps(attack(module.extract, Path(sys.argv[2]))) + "\n")
