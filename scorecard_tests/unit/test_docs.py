"""Code cites the repository's own docs (docs/README.md): no comment or docstring points at a spec
file outside the repository, and a cited section of a docs page is a heading of that page."""

from __future__ import annotations

import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
CODE_ROOTS = ("scorecard_assets", "scorecard_tests", "bench")
# The design files that live outside the repository; their facts are restated under docs/.
OUTSIDE = re.compile(
    r"(?<![\w/-])(?:scorecard|product|pragmatikos|sources|dagster|sessions|batches)\.md\b"
    r"|shared/spec|/work/shared|\.\./shared"
)
CITATION = re.compile(r'docs/([a-z_-]+\.md)\s+"([^"]+)"')
THIS_FILE = Path(__file__).resolve()


def code_files() -> list[Path]:
    return sorted(
        p
        for root in CODE_ROOTS
        for p in (REPO_ROOT / root).rglob("*.py")
        if "sample_fleet/data" not in p.as_posix() and p.resolve() != THIS_FILE
    )


def headings(page: Path) -> set[str]:
    return {
        line.lstrip("#").strip()
        for line in page.read_text(encoding="utf-8").splitlines()
        if line.startswith("#")
    }


def test_no_code_cites_a_design_file_outside_the_repository() -> None:
    offenders = [
        f"{path.relative_to(REPO_ROOT)}:{n}: {line.strip()}"
        for path in code_files()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert offenders == [], "cite the docs/ page that states the fact instead"


def test_the_pattern_tells_outside_files_from_our_pages() -> None:
    assert OUTSIDE.search("rules of scorecard.md section 3")
    assert OUTSIDE.search("see ../shared/reference")
    assert not OUTSIDE.search('docs/sources.md "Repo slugs"')
    assert not OUTSIDE.search("writes model-scorecard.md")


def test_cited_sections_are_headings_of_their_page() -> None:
    missing = []
    for path in code_files():
        text = path.read_text(encoding="utf-8")
        for page, section in CITATION.findall(re.sub(r"\s*\n\s*(?:#\s*)?", " ", text)):
            doc = REPO_ROOT / "docs" / page
            if doc.is_file() and section not in headings(doc):
                missing.append(f'{path.relative_to(REPO_ROOT)}: docs/{page} "{section}"')
    assert missing == []
