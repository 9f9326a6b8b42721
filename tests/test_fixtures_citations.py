"""The rule catalog (docs/rules/) and every citation of it.

Every anchor the manifest, the stream and consumer catalogs, the builder's section map and the
project's docs cite exists in docs/rules/, every catalog rule names a TiCDC source file at a
pinned commit, and nothing users read cites the kit's research notes.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ticdc_conformance import fixtures
from ticdc_conformance.fixtures.builder._citations import ANCHORS, cite
from ticdc_conformance.suites.consumer.catalog import RULES as CONSUMER_RULES
from ticdc_conformance.suites.stream.catalog import RULES as STREAM_RULES

REPO = Path(__file__).resolve().parent.parent
RULES_DIR = REPO / "docs" / "rules"
_ANCHOR = re.compile(r'<a id="([a-z0-9-]+)"></a>')
_SOURCE = re.compile(
    r"^Source: \[(tiflow|ticdc)[^\]]*\]\(https://github\.com/pingcap/(tiflow|ticdc)/blob/[0-9a-f]{40}/",
    re.MULTILINE,
)


def catalog() -> dict[str, list[str]]:
    """Page (``docs/rules/x.md``) → its anchors, in order."""
    return {
        f"docs/rules/{page.name}": _ANCHOR.findall(page.read_text(encoding="utf-8"))
        for page in sorted(RULES_DIR.glob("*.md"))
    }


_TICDC_SOURCE = re.compile(r"pingcap/(tiflow|ticdc) [\w/.-]+\.go( \(\w+\))?")
"""A facts case's source: the TiCDC file (a test, or the code it reads) it is rebuilt from."""


def exists(citation: str) -> bool:
    """Whether ``docs/...[#anchor]`` names a document (and an anchor in it) of the project, or
    the citation names a TiCDC source file."""
    if _TICDC_SOURCE.fullmatch(citation):
        return True
    page, _, anchor = citation.partition("#")
    if not (REPO / page).is_file():
        return False
    return not anchor or anchor in catalog().get(page, [])


def test_every_page_has_unique_anchors_each_with_a_pinned_source() -> None:
    pages = catalog()
    assert {"codec", "open", "craft", "simple", "debezium", "canal-json", "stream", "consumer"} <= {
        Path(p).stem for p in pages
    }
    every = [a for anchors in pages.values() for a in anchors]
    assert len(every) == len(set(every)), "an anchor is defined twice"
    for page in pages:
        text = (REPO / page).read_text(encoding="utf-8")
        sections = text.split('<a id="')[1:]
        assert sections, page
        for section in sections:
            assert _SOURCE.search(section), f"{page}: {section[:40]} names no pinned source"


def test_every_manifest_citation_exists() -> None:
    cited = set()
    for case in fixtures.load_manifest()["cases"]:
        citations = case["spec"].split(", ")
        assert citations, case["id"]
        for citation in citations:
            cited.add(citation if citation.startswith("pingcap/") else citation.split(" ")[0])
    missing = sorted(c for c in cited if not exists(c))
    assert not missing
    assert any("#" in c for c in cited)


def test_every_catalog_rule_and_section_map_entry_exists() -> None:
    docs = [rule.doc for rule in STREAM_RULES.values()]
    docs += [rule.doc for rule in CONSUMER_RULES.values()]
    docs += [f"docs/rules/{a}" for anchors in ANCHORS.values() for a in anchors]
    assert [d for d in docs if not exists(d)] == []


def test_every_link_into_the_catalog_from_the_docs_exists() -> None:
    links = []
    for doc in sorted((REPO / "docs").rglob("*.md")):
        for target in re.findall(
            r"\]\(((?:\.\./)?(?:rules/)?[a-z-]+\.md#[a-z0-9-]+)\)", doc.read_text(encoding="utf-8")
        ):
            page = (doc.parent / target.split("#")[0]).resolve().relative_to(REPO)
            if page.parent.name == "rules":
                links.append(f"{page.as_posix()}#{target.split('#')[1]}")
    assert links
    assert [link for link in links if not exists(link)] == []


def test_nothing_users_read_cites_the_research_notes() -> None:
    read = [
        *sorted((REPO / "docs").rglob("*.md")),
        REPO / "README.md",
        REPO / "fixtures" / "README.md",
        REPO / "fixtures" / "manifest.json",
        REPO / "fixtures" / "manifest.schema.json",
    ]
    for path in read:
        text = path.read_text(encoding="utf-8")
        assert "ground-truth" not in text, path
        assert "ground truth" not in text, path
        assert "§" not in text, path
        assert "shared/" not in text, path


@pytest.mark.parametrize(
    ("spec", "protocol", "expected"),
    [
        ("§2.1", "open", "docs/rules/open.md#open-framing"),
        (
            "§1.1, §2.5, §3.3, §4.3, §5.3",
            "craft",
            "docs/rules/codec.md#value-model, docs/rules/craft.md#craft-values",
        ),
        (
            "§1.1, §2.5, §3.3, §4.3, §5.3",
            "simple-avro",
            "docs/rules/codec.md#value-model, docs/rules/simple.md#simple-values",
        ),
        # a spec of other protocols only keeps its anchors rather than citing nothing
        (
            "§2.4, §3.2",
            "debezium",
            "docs/rules/open.md#open-value, docs/rules/craft.md#craft-layout",
        ),
        # where a fact was found cites nothing of its own
        ("§2.2, §7.2", "open", "docs/rules/open.md#open-batching"),
        (
            "§6.6",
            "simple-json",
            "docs/rules/simple.md#simple-bootstrap, docs/rules/stream.md#schema-resolvable",
        ),
        ("docs/generators.md (shop workload)", "open", "docs/generators.md (shop workload)"),
        # Canal-JSON cites its own page's anchor for the same kind of rule
        (
            "§1.1, §2.5, §3.3, §4.3, §5.3",
            "canal-json",
            "docs/rules/codec.md#value-model, docs/rules/canal-json.md#canal-types",
        ),
        (
            "§2.4, §3.4, §4.2, §5.5",
            "canal-json",
            "docs/rules/canal-json.md#canal-message, docs/rules/canal-json.md#canal-watermark",
        ),
        ("§6.5", "canal-json", "docs/rules/stream.md#split-update"),
    ],
)
def test_cite(spec: str, protocol: str, expected: str) -> None:
    assert cite(spec, protocol) == expected


@pytest.mark.parametrize("spec", ["no section", "§9.9", "§7.1"])
def test_cite_refuses_what_cites_no_rule(spec: str) -> None:
    with pytest.raises(ValueError, match="spec"):
        cite(spec, "open")
