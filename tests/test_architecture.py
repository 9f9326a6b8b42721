"""The import arrows docs/architecture.md allows, checked over every module's imports.

Each module belongs to a part (``reference``, ``generators``, ``fixtures`` and its
``fixtures.builder``, ``suites.gate``, ``suites.testee``, ``suites.inputs``, ``suites.stream``, ``suites.plugin``,
``cli``, …). A part may import the parts its row allows at module level, and a few more only
inside functions (loaded when a command needs them: the ``lazy`` column). Third-party packages
are confined the same way: pytest to the plugin, pyspark to the Spark job.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE_FOLDERS = ("reference", "generators", "fixtures", "suites", "kafka", "cli")


@dataclass(frozen=True, slots=True)
class Arrows:
    eager: frozenset[str]
    lazy: frozenset[str] = frozenset()
    third_party: frozenset[str] = frozenset()


def arrows(eager: str = "", lazy: str = "", third_party: str = "") -> Arrows:
    return Arrows(frozenset(eager.split()), frozenset(lazy.split()), frozenset(third_party.split()))


ALLOWED = {
    "reference": arrows(third_party="fastavro cramjam orjson"),
    "generators": arrows("reference", third_party="hypothesis pyarrow tqdm"),
    "fixtures": arrows(lazy="fixtures.builder reference", third_party="pooch"),
    "fixtures.builder": arrows("fixtures generators reference", lazy="suites.consumer"),
    "suites": arrows(lazy="suites.gate"),
    "suites.gate": arrows("fixtures reference", lazy="generators", third_party="hypothesis"),
    "suites.testee": arrows("fixtures reference suites.gate"),
    "suites.inputs": arrows("generators reference", lazy="fixtures"),
    "suites.stream": arrows(
        "generators reference suites.inputs suites.report", third_party="pyarrow pyspark"
    ),
    "suites.report": arrows(third_party="jinja2 markupsafe matplotlib"),
    "suites.consumer": arrows(
        "generators reference suites.inputs suites.report suites.stream",
        third_party="pyarrow pyspark pytest adbc_driver_postgresql",
    ),
    "suites.plugin": arrows(
        lazy="fixtures reference suites suites.consumer suites.gate suites.testee",
        third_party="pytest",
    ),
    "kafka": arrows(
        "generators reference",
        lazy="fixtures",
        third_party="confluent_kafka pyarrow pytest testcontainers docker",
    ),
    "cli": arrows(
        "fixtures generators reference",
        lazy="fixtures.builder kafka suites suites.consumer suites.gate suites.report "
        "suites.stream suites.testee",
    ),
}
"""Part → the parts and third-party packages it may import."""

ONLY_IN = {
    "cramjam": {"reference/compression.py"},
    "orjson": {"reference/_gojson.py"},  # the optional accelerator of the JSON readers
    "pytest": {
        "suites/plugin.py",
        "kafka/pytest_fixtures.py",
        "suites/consumer/pytest_fixtures.py",
    },
    "pyspark": {
        "suites/stream/spark.py",
        "suites/stream/phases.py",
        "suites/consumer/spark.py",
        "suites/consumer/spark_state.py",
    },
}
"""Third-party packages only these modules may import (the plugin's, the Spark job)."""


def part_of(module: str) -> str:
    names = module.removesuffix(".__init__").split(".")[1:]
    if names[:2] == ["fixtures", "builder"]:
        return "fixtures.builder"
    if names[0] == "suites" and len(names) > 1:
        return f"suites.{names[1]}"
    return names[0]


def imports(path: Path) -> list[tuple[str, bool]]:
    """(module imported, whether inside a function) for every import of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    local: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local.update(id(inner) for inner in ast.walk(node) if inner is not node)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            local.update(id(inner) for inner in ast.walk(node) if inner is not node)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in local) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "ticdc_conformance":  # from ticdc_conformance import fixtures
                found += [(f"ticdc_conformance.{a.name}", id(node) in local) for a in node.names]
            else:
                found.append((node.module, id(node) in local))
    return found


def modules() -> list[Path]:
    return sorted(
        path
        for folder in SOURCE_FOLDERS
        for path in (ROOT / folder).rglob("*.py")
        if "data" not in path.relative_to(ROOT).parts
    )


@pytest.mark.parametrize("path", modules(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_imports_follow_the_allowed_arrows(path: Path) -> None:
    relative = path.relative_to(ROOT).with_suffix("")
    me = part_of("ticdc_conformance." + ".".join(relative.parts))
    allowed = ALLOWED[me]
    wrong = []
    for module, inside_function in imports(path):
        top = module.split(".")[0]
        if top == "ticdc_conformance":
            other = part_of(module) if module != "ticdc_conformance" else me
            ok = (
                other == me or other in allowed.eager or (inside_function and other in allowed.lazy)
            )
            if not ok:
                wrong.append(f"{module} ({me} may not import {other} here)")
        elif top not in sys.stdlib_module_names and top != "__future__":
            if top not in allowed.third_party:
                wrong.append(f"{module} (third-party, not allowed in {me})")
            elif top in ONLY_IN and relative.as_posix() + ".py" not in ONLY_IN[top]:
                wrong.append(f"{module} (only {sorted(ONLY_IN[top])} import it)")
    assert not wrong, f"{relative}.py imports " + "; ".join(wrong)


def test_every_part_is_described() -> None:
    parts = {
        part_of("ticdc_conformance." + ".".join(p.relative_to(ROOT).with_suffix("").parts))
        for p in modules()
    }
    assert parts == set(ALLOWED)
    described = (ROOT / "docs/architecture.md").read_text(encoding="utf-8")
    for part in parts:
        assert f"`{part}`" in described, f"docs/architecture.md does not describe {part}"


def test_the_import_check_sees_lazy_and_eager_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "import json\n"
        "from ticdc_conformance import fixtures\n"
        "def f():\n"
        "    from ticdc_conformance.suites.gate import Case\n"
    )
    assert imports(module) == [
        ("json", False),
        ("ticdc_conformance.fixtures", False),
        ("ticdc_conformance.suites.gate", True),
    ]


EXAMPLE_CONSUMERS = sorted((ROOT / "examples" / "consumers").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLE_CONSUMERS, ids=lambda p: p.name)
def test_the_example_consumers_use_the_kit_as_a_user_does(path: Path) -> None:
    """Outside the package (not in the wheel): they import the kit's public decoders and forms
    only, their siblings, and the consumer extra's clients; never its tests or internals."""
    public = {"ticdc_conformance.reference", "ticdc_conformance.suites.consumer"}
    siblings = {p.stem for p in EXAMPLE_CONSUMERS}
    wrong = [
        module
        for module, _ in imports(path)
        if module.split(".")[0] not in {*sys.stdlib_module_names, "__future__", "psycopg"}
        and module.split(".")[0] not in {"confluent_kafka", *siblings}
        and not any(module == p or module.startswith(p + ".") for p in public)
    ]
    assert not wrong
    assert not any("._" in module for module, _ in imports(path)), "a private module"


def test_no_module_of_the_kit_imports_the_examples() -> None:
    assert not [
        (path.name, module)
        for path in modules()
        for module, _ in imports(path)
        if module.split(".")[0] == "examples" or "examples.consumers" in module
    ]
