"""Report rendering of issue 16's first contact: charts beside their sections, model ids of pairing
tables in code spans, the Sources table without rows that read nothing and with the readers' notes,
the journal's unverified-exit column only where the sidecar records it, one warning count, and
``digest.txt`` as clean plain text."""

from __future__ import annotations

from typing import Any

from scorecard_assets.report.digest import render_digest
from scorecard_assets.report.markdown import (
    DELIVERY_CHART,
    PAIRING_CHART,
    render_markdown,
    warning_count_text,
)
from scorecard_tests.factories.sidecar import make_rollup, make_sidecar, with_keys

REGEN = "make week WEEK=2026-11-16"


def render(sidecar: dict[str, Any], **kwargs: Any) -> str:
    return render_markdown(sidecar, regenerate_cmd=REGEN, **kwargs)


def section(text: str, title: str) -> str:
    """The text of ``## title`` up to the next ``## `` heading."""
    start = text.index(f"## {title}")
    end = text.find("\n## ", start + 1)
    return text[start : end if end != -1 else len(text)]


def test_each_chart_sits_in_the_section_it_illustrates() -> None:
    sidecar = make_sidecar(warnings=[f"w{i}" for i in range(70)])
    text = render(
        sidecar, charts={DELIVERY_CHART: DELIVERY_CHART, PAIRING_CHART: "data:image/png;base64,AA=="}
    )
    totals = section(text, "Totals per model (all repos/tiers)")
    pairings = section(text, "Pairings ranked by what ships")
    assert f"]({DELIVERY_CHART})" in totals
    assert "](data:image/png;base64,AA==)" in pairings
    assert text.index("](data:image/png") < text.index("## Data warnings")


def test_no_chart_targets_means_no_images() -> None:
    assert "![" not in render(make_sidecar())


def test_pairing_ids_are_code_spans_on_both_sides_of_the_arrow() -> None:
    text = render(make_sidecar())
    assert "| 1 | `claude-opus` → `claude-sonnet` |" in text
    assert "&#91;" not in section(text, "Pairings ranked by what ships")


def test_sources_leave_out_rows_that_read_nothing_and_show_the_notes() -> None:
    sources = [
        {"source": "events.jsonl", "host": "h1", "repo": "o/r", "files": 1, "rows": 10, "malformed": 0,
         "cost_usd": None, "notes": "192 lines: 10 scored events kept, 182 other scheduler events ignored"},
        {"source": "events.jsonl", "host": "h2", "repo": "o/r", "files": 0, "rows": 0, "malformed": 0,
         "cost_usd": None, "notes": None},
        {"source": "agent logs", "host": "h2", "repo": "o/r", "files": 0, "rows": 0, "malformed": 0,
         "cost_usd": None, "notes": None},
    ]  # fmt: skip
    text = section(render(make_sidecar(sources=sources)), "Sources")
    assert "| Source | Host | Repo | Files | Rows | Malformed | Cost | Notes |" in text
    assert "182 other scheduler events ignored" in text
    assert "| h2 |" not in text
    assert "2 source(s) read nothing (no file, row or cost) and are left out: events.jsonl / h2 / o/r" in text


def test_the_journal_column_shows_only_in_a_sidecar_that_records_it() -> None:
    plain = render(make_sidecar())
    tables = [line for line in plain.split("\n") if line.startswith("|")]
    assert not any("Unverified (journal)" in line for line in tables)  # the reference's tables
    rollup = make_rollup(2, 1, unverifiedExitEvents=3)
    bucket = with_keys({"model": "m", "repo": "o/r", "tier": "mid"}, rollup)
    grand = with_keys({"model": "TOTAL"}, make_rollup(2, 1, unverifiedExitEvents=3))
    text = render(make_sidecar(buckets=[bucket], grandTotal=grand))
    header = next(line for line in text.split("\n") if line.startswith("| Model | Repo |"))
    assert header.endswith("| Unverified exits | Unverified (journal) |")
    row = next(line for line in text.split("\n") if line.startswith("| `m` | o/r |"))
    assert row.endswith("| 0 | 3 (1.50/issue) |")
    assert "**Two unverified-exit counts.**" in text


def test_the_warning_count_is_stated_once_with_its_unit() -> None:
    sidecar = make_sidecar(warnings=["a", "b", "c"])
    text = render(sidecar)
    digest = render_digest(sidecar, report_link="r.md")
    assert warning_count_text(3) == "3 data warning(s)"
    assert "3 data warning(s): one line per problem" in text
    assert text.count("\n- ", text.index("## Data warnings")) == 3
    assert digest[5].endswith("⚠️ 3 data warning(s)")


def test_digest_txt_is_plain_text_with_urls_defanged() -> None:
    hostile = "[free credits](https://evil.example) | www.evil.example `x`"
    repo_totals = [with_keys({"repo": "o/r", "model": hostile}, make_rollup(1, 1, costPerDeliveredUsd=1.0))]
    lines = render_digest(make_sidecar(repoTotals=repo_totals), report_link="file:///r.md")
    text = "\n".join(lines)
    assert "\\|" not in text and "`" not in text
    assert "https://evil" not in text and "www.evil" not in text
    assert "https[:]//evil.example" in lines[1] and "www[.]evil.example" in lines[1]
    assert lines[5].startswith("🔗 file:///r.md")  # our own link stays usable
