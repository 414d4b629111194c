"""The Markdown report: structure, exact headers and rows (docs/report.md), sanitising.

Expected rows are real rows of a published reference report rebuilt from hand-made rollups, or are
worked out by hand from the formatter rules.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from scorecard_assets.report.markdown import DEFAULT_LIMITATIONS, render_markdown
from scorecard_tests.factories.sidecar import (
    make_group,
    make_pool,
    make_rollup,
    make_sidecar,
    with_keys,
)

REGEN = "make scorecard WEEK=2026-09-14"

BUCKET_HEADER = (
    "| Model | Repo | Tier | Agent CLI | n | Delivered | Delivery rate | AC met | Cost/delivered "
    "| Median API-min | Median wall-clock-min | Review fixed/issue | Stalls | Escalations "
    "| Unverified exits |"
)
TOTALS_HEADER = (
    "| Model | Provider | Agent CLI | n | Delivered | Delivery rate | Δ vs prev | AC met | Cost/delivered "
    "| Billable tokens/delivered | Median API-min | Median wall-clock-min | Review fixed/issue | Stalls "
    "| Escalations | Unverified exits |"
)
SECTIONS = [
    "## Per model × repo × tier",
    "## Totals per model (all repos/tiers)",
    "## By risk class",
    "## Pairings ranked by what ships",
    "## Wall-clock per phase (all models)",
    "## Sources",
    "## Limitations",
    "## Data warnings",
]


def render(sidecar: dict[str, Any], **kwargs: Any) -> str:
    return render_markdown(sidecar, regenerate_cmd=REGEN, **kwargs)


def cells(line: str) -> list[str]:
    """The cells of a table row, split on pipes that are not escaped."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]


def line_starting(text: str, prefix: str) -> str:
    matches = [line for line in text.split("\n") if line.startswith(prefix)]
    assert len(matches) == 1, (prefix, matches)
    return matches[0]


# ------------------------------------------------------------------------------------ structure


def test_sections_come_in_order_after_the_title_block() -> None:
    text = render(make_sidecar())
    lines = text.split("\n")
    assert lines[0] == "# Model Scorecard"
    assert lines[1] == ""
    assert lines[2].startswith(
        "Generated: 2026-09-21T05:00:37.670Z | Window: 2026-08-22 → 2026-09-21 | Mode: runs"
    )
    positions = [lines.index(s) for s in SECTIONS]
    assert positions == sorted(positions)
    for position in positions:  # every section heading follows a blank line
        assert lines[position - 1] == ""


def test_file_ends_with_exactly_one_newline_after_the_warnings() -> None:
    text = render(make_sidecar())
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert text.split("\n")[-2] == "- acme/api: 1 run(s) recorded no model="


def test_data_warnings_section_only_when_there_are_warnings() -> None:
    text = render(make_sidecar(warnings=[]))
    assert "## Data warnings" not in text
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert text.rstrip("\n").split("\n")[-1].startswith("- **")  # ends with the last limitation


def test_reading_guide_names_the_sources_the_command_and_the_n_note() -> None:
    text = render(make_sidecar())
    assert f"`{REGEN}`" in text
    for source in ("runstate trails", "`runs.jsonl`", "`events.jsonl`", "agents' own logs"):
        assert source in text
    assert "n = 1 is a single data point" in text
    assert "read Cost/delivered and Delivery rate only together with `n`" in text


def test_issues_mode_says_it_is_for_the_latest_window_only() -> None:
    text = render(make_sidecar(windowMode="issues"))
    assert "Mode: issues" in text.split("\n")[2]
    assert "latest window only" in text.split("\n")[2]
    assert "Mode: runs" in render(make_sidecar()).split("\n")[2]


def test_report_title_is_configurable() -> None:
    assert render(make_sidecar(), report_title="Fleet scorecard").startswith("# Fleet scorecard\n")


# ------------------------------------------------------------------------------ bucket table


def test_bucket_header_and_the_spec_real_row() -> None:
    # a real row of the reference's per-bucket table, rebuilt from its numbers.
    rollup = make_rollup(
        9,
        8,
        conformanceRate=0.76,
        conformanceSamples=8,
        costPerDeliveredUsd=24.682,
        costSamples=8,
        medianApiMinutes=88.0,
        medianWallClockMinutes=82.8,
        reviewFixedPerIssue=24.7,
        reviewSamples=9,
        escalations=9,
        escalationsPerIssue=1.0,
        unverifiedExits=6,
        unverifiedExitsPerIssue=6 / 9,
        agentClis=["claude"],
    )
    bucket = with_keys(
        {"model": "claude-sonnet-5", "repo": "imboard-ai/ai-dossier", "tier": "strong"}, rollup
    )
    text = render(make_sidecar(buckets=[bucket]))
    lines = text.split("\n")
    header_at = lines.index(BUCKET_HEADER)
    assert lines[header_at + 1] == "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    assert lines[header_at + 2] == (
        "| `claude-sonnet-5` | imboard-ai/ai-dossier | strong | claude | 9 | 8 | 89% | 76% (n=8) | "
        "$24.682 (n=8) | 88.0 | 82.8 | 24.7 (n=9) | 0 | 9 (1.00/issue) | 6 (0.67/issue) |"
    )


def test_agent_cli_cell_in_the_model_line() -> None:
    # reference test case: agentClis ['claude'] on the bucket and the total
    text = render(make_sidecar())
    assert line_starting(text, "| `claude-sonnet-5` | acme/api | mid |").startswith(
        "| `claude-sonnet-5` | acme/api | mid | claude | 3 | 2 | 67% |"
    )
    assert cells(line_starting(text, "| `claude-sonnet-5` | direct |"))[2] == "claude"


def test_per_issue_counts_render_with_two_decimals() -> None:
    # reference test case: escalations 3 + 1 over 2 issues -> 4 (2.00/issue); unverified 1 + 0 -> 0.50
    rollup = make_rollup(
        2, 2, escalations=4, escalationsPerIssue=2.0, unverifiedExits=1, unverifiedExitsPerIssue=0.5
    )
    text = render(make_sidecar(buckets=[with_keys({"model": "m", "repo": "o/r", "tier": "mid"}, rollup)]))
    row = cells(line_starting(text, "| `m` | o/r |"))
    assert row[-2:] == ["4 (2.00/issue)", "1 (0.50/issue)"]


def test_empty_window_says_so_instead_of_an_empty_table() -> None:
    text = render(make_sidecar(buckets=[]))
    assert "No issue had a run in this window." in text
    assert BUCKET_HEADER not in text


# ------------------------------------------------------------------------------ totals table


def glm_total(providers: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    rollup = make_rollup(
        47,
        42,
        conformanceRate=0.98,
        conformanceSamples=41,
        medianWallClockMinutes=139.3,
        reviewFixedPerIssue=11.3,
        reviewSamples=44,
        stalls=1,
        stallsPerIssue=1 / 47,
        escalations=6,
        escalationsPerIssue=6 / 47,
        agentClis=["opencode"],
    )
    return with_keys({"model": "glm-5.3"}, rollup, {"providers": providers, **fields})


def provider_row(name: str, n: int = 1, delivered: int = 1, **fields: Any) -> dict[str, Any]:
    return with_keys({"provider": name}, make_rollup(n, delivered, **fields))


def test_totals_header_model_row_with_k_providers_and_sub_rows() -> None:
    # real rows of the reference's totals table, rebuilt from their numbers.
    providers = [
        provider_row("direct", 33, 29),
        provider_row("llmgateway", 8, 7),
        provider_row("z-ai", 3, 2),
        provider_row(
            "zai-coding-plan", medianWallClockMinutes=139.3, reviewFixedPerIssue=2.0, reviewSamples=1
        ),
    ]
    text = render(make_sidecar(totals=[glm_total(providers, deliveryRateDelta=0.003)]))
    lines = text.split("\n")
    header_at = lines.index(TOTALS_HEADER)
    assert lines[header_at + 1] == "|" + "---|" * 16
    assert lines[header_at + 2] == (
        "| `glm-5.3` | 4 providers ↓ | opencode | 47 | 42 | 89% | +0pt | 98% (n=41) | N/A | N/A | N/A "
        "| 139.3 | 11.3 (n=44) | 1 (0.02/issue) | 6 (0.13/issue) | 0 |"
    )
    assert lines[header_at + 3].startswith("| ↳ | direct | unknown | 33 | 29 | 88% | — |")
    assert lines[header_at + 6] == (
        "| ↳ | zai-coding-plan | unknown | 1 | 1 | 100% | — | N/A | N/A | N/A | N/A | 139.3 "
        "| 2.0 (n=1) | 0 | 0 | 0 |"
    )
    assert lines[header_at + 7].startswith("| **TOTAL** | — |")


def test_single_provider_is_inline_without_sub_rows() -> None:
    # reference test case
    text = render(make_sidecar(totals=[glm_total([provider_row("llmgateway")])]))
    assert "| `glm-5.3` | llmgateway |" in text
    assert "| ↳ |" not in text


def test_two_providers_and_a_forged_provider_name() -> None:
    # reference test case: two providers -> "2 providers ↓" and one sub-row each; a forged name stays one cell
    providers = [provider_row("llmgateway"), provider_row("evil | 100% | $0.001")]
    text = render(make_sidecar(totals=[glm_total(providers)]))
    assert "| `glm-5.3` | 2 providers ↓ |" in text
    assert "| ↳ | llmgateway |" in text
    assert "| ↳ | evil \\| 100% \\| $0.001 |" in text
    assert len(cells(line_starting(text, "| ↳ | evil"))) == 16


def test_total_row_from_the_spec() -> None:
    grand = with_keys(
        {"model": "TOTAL"},
        make_rollup(
            448,
            321,
            conformanceRate=0.97,
            conformanceSamples=277,
            costPerDeliveredUsd=25.831,
            costSamples=50,
            billableTokensPerDeliveredIssue=49152478,
            tokenSamples=51,
            medianApiMinutes=67.8,
            medianWallClockMinutes=116.0,
            reviewFixedPerIssue=11.3,
            reviewSamples=353,
            stalls=1,
            stallsPerIssue=1 / 448,
            escalations=46,
            escalationsPerIssue=46 / 448,
            unverifiedExits=28,
            unverifiedExitsPerIssue=28 / 448,
            agentClis=["claude", "opencode"],
        ),
    )
    text = render(make_sidecar(grandTotal=grand))
    assert line_starting(text, "| **TOTAL** |") == (
        "| **TOTAL** | — | claude,opencode | 448 | 321 | 72% | — | 97% (n=277) | $25.831 (n=50) | "
        "49,152,478 (n=51) | 67.8 | 116.0 | 11.3 (n=353) | 1 (0.00/issue) | 46 (0.10/issue) "
        "| 28 (0.06/issue) |"
    )


def test_delta_cell_shows_points_or_a_dash() -> None:
    # reference test case: -0.5 -> -50pt; no delta -> — ; provider sub-rows never get one
    text = render(make_sidecar())
    assert cells(line_starting(text, "| `claude-sonnet-5` | direct |"))[6] == "-50pt"
    assert cells(line_starting(text, "| `glm-5.3` | 2 providers"))[6] == "—"
    assert all(cells(line)[6] == "—" for line in text.split("\n") if line.startswith("| ↳ |"))


def test_baseline_window_is_named_in_the_totals_note() -> None:
    assert "the window that ended on 2026-09-14" in render(make_sidecar())


def test_cost_disclosure_only_when_some_cost_came_from_agent_logs() -> None:
    # reference test case: costs (4 runs.jsonl, 58 agent-log, None) -> costSamples 2, from the log 1
    text = render(make_sidecar())
    assert (
        "Of the 2 delivered issues that have a cost figure, 1 took it from the dispatch's agent log" in text
    )
    grand = with_keys({"model": "TOTAL"}, make_rollup(5, 3, costPerDeliveredUsd=4.0, costSamples=2))
    assert "took it from the dispatch's agent log" not in render(make_sidecar(grandTotal=grand))


def test_cost_disclosure_counts_price_table_estimates() -> None:
    grand = with_keys(
        {"model": "TOTAL"},
        make_rollup(
            9, 6, costPerDeliveredUsd=3.0, costSamples=6, costFromRunLogSamples=1, costEstimateSamples=2
        ),
    )
    text = render(make_sidecar(grandTotal=grand))
    assert "Of the 6 delivered issues that have a cost figure, 1 took it" in text
    assert "and 2 are estimates priced from their logged tokens" in text
    assert (
        "Of the 6 delivered issues with a cost, 3 took it from `runs.jsonl`, 1 from agent logs and 2 from"
        in text
    )


def test_billable_tokens_note_defines_the_sum() -> None:
    text = render(make_sidecar())
    assert "uncached input, cache-creation, cache-read and output tokens" in text


# ------------------------------------------------------------------------------- risk classes


def test_risk_class_rows_put_the_class_first() -> None:
    text = render(make_sidecar())
    assert line_starting(text, "| Risk class |") == (
        "| Risk class | Agent CLI | n | Delivered | Delivery rate | AC met | Cost/delivered | Median API-min "
        "| Median wall-clock-min | Review fixed/issue | Stalls | Escalations | Unverified exits |"
    )
    assert (
        line_starting(text, "| low |")
        == "| low | unknown | 1 | 1 | 100% | N/A | N/A | N/A | N/A | N/A | 0 | 0 | 0 |"
    )
    assert line_starting(text, "| &lt;unclassified&gt; |").startswith(
        "| &lt;unclassified&gt; | unknown | 2 | 0 | 0% |"
    )


# ---------------------------------------------------------------------------------- pairings


def test_pairing_tables_for_families_then_models_with_tie_marks() -> None:
    text = render(make_sidecar())
    lines = text.split("\n")
    family_at, model_at = lines.index("#### Family pairings"), lines.index("#### Model pairings")
    assert family_at < model_at
    header = (
        "| Rank | Pairing | Score | 90 % interval | Tie | Judged cycles | Outcome | Cost | Precision "
        "| Discipline | Efficiency | Latency |"
    )
    assert lines[family_at + 2] == header
    assert lines[family_at + 4] == (
        "| 1 | `claude-opus` → `claude-sonnet` | 61 | 56.2–66.2 | ≈ | 40 "
        "| 50.0 | 50.0 | 50.0 | 50.0 | 50.0 | 50.0 |"
    )
    assert cells(lines[family_at + 5])[:5] == ["2", "`grok` → `grok`", "58", "53.0–63.0", "≈"]
    assert cells(lines[model_at + 4])[4] == "—"  # not tied
    assert "### Imported cycles" not in text


def test_pairing_scores_round_like_js_and_mark_imputed_tiers() -> None:
    group = make_group(
        "a → b",
        62.5,  # toFixed(0) of an exact .5 rounds up
        1,
        imputed=["Latency"],
        tiersAdj={
            "Outcome": 87.35910576551898,
            "Cost": 53.35,
            "Precision": 42.75,
            "Discipline": 36.4,
            "Efficiency": 81.1,
            "Latency": 50.0,
        },
        interval=[57.94, 66.25],
    )
    sidecar = make_sidecar(pairings={"fleet": make_pool([group], []), "imported": None})
    row = cells(line_starting(render(sidecar), "| 1 | `a` → `b` |"))
    assert row == [
        "1",
        "`a` → `b`",
        "63",
        "57.9–66.3",
        "—",
        "40",
        "87.4",
        "53.4",
        "42.8",
        "36.4",
        "81.1",
        "50.0†",
    ]


def test_ranks_follow_the_rank_field_and_small_groups_are_left_out() -> None:
    groups = [
        make_group("second", 40.0, 2),
        make_group("first", 70.0, 1),
        make_group("tiny", 90.0, 3, hjudged=4),
    ]
    sidecar = make_sidecar(pairings={"fleet": make_pool(groups, []), "imported": None})
    text = render(sidecar)
    assert text.index("| 1 | `first` |") < text.index("| 2 | `second` |")
    assert "tiny" not in text
    assert "1 family pairings with fewer than 10 judged cycles are not ranked." in text


def test_a_clear_sentence_when_no_group_reaches_the_floor() -> None:
    pool = make_pool([make_group("a → b", 60.0, 1, hjudged=9)], [])
    text = render(make_sidecar(pairings={"fleet": pool, "imported": None}))
    assert "No family pairing reaches 10 judged cycles yet, so none is ranked." in text
    assert "No model pairing reaches 10 judged cycles yet, so none is ranked." in text


def test_imported_cycles_get_their_own_tables() -> None:
    imported = make_pool([make_group("gpt → gpt", 52.0, 1)], [make_group("gpt-6 → gpt-6", 48.0, 1)])
    fleet = make_sidecar()["pairings"]["fleet"]
    text = render(make_sidecar(pairings={"fleet": fleet, "imported": imported}))
    imported_at = text.index("### Imported cycles")
    assert text.index("### Fleet cycles") < imported_at
    assert text.index("| 1 | `gpt` → `gpt` |") > imported_at
    assert text.count("#### Family pairings") == 2


def test_no_fleet_pool_is_said_plainly() -> None:
    text = render(make_sidecar(pairings={"fleet": None, "imported": None}))
    assert "No fleet cycles were scored for this window." in text


# ------------------------------------------------------------------------------ phases, sources


def test_phase_table_uses_fmt_seconds() -> None:
    # reference test case: implement 100 + 40 -> 140 s, review 50 s
    text = render(make_sidecar())
    assert "| Phase | n | Median |\n|---|---|---|\n| implement | 1 | 2.3m |\n| review | 1 | 50s |" in text


def test_sources_table_sums_per_file_records_of_a_source_and_host() -> None:
    sources = [
        {
            "source": "runs.jsonl",
            "host": "box1",
            "repo": None,
            "path": "/a",
            "files": 1,
            "rows": 10,
            "malformed": 1,
            "bytes": 0,
            "cost_usd": 12.5,
            "notes": None,
        },
        {
            "source": "runs.jsonl",
            "host": "box1",
            "repo": None,
            "path": "/b",
            "files": 1,
            "rows": 5,
            "malformed": 0,
            "bytes": 0,
            "cost_usd": 0.25,
            "notes": None,
        },
        {
            "source": "events.jsonl",
            "host": "box2",
            "repo": "acme/api",
            "path": None,
            "files": 2,
            "rows": 40,
            "malformed": 3,
            "bytes": 0,
            "cost_usd": None,
            "notes": None,
        },
    ]
    text = render(make_sidecar(sources=sources))
    assert "| Source | Host | Repo | Files | Rows | Malformed | Cost |" in text
    assert "| runs.jsonl | box1 | — | 2 | 15 | 1 | $12.750 |" in text
    assert "| events.jsonl | box2 | acme/api | 2 | 40 | 3 | N/A |" in text


def test_sources_section_splits_delivered_costs_by_source() -> None:
    text = render(make_sidecar())
    assert "Of the 2 delivered issues with a cost, 1 took it from `runs.jsonl` and 1 from agent logs" in text
    grand = with_keys({"model": "TOTAL"}, make_rollup(2, 0))
    assert "No delivered issue has a cost figure in this window." in render(make_sidecar(grandTotal=grand))


# ---------------------------------------------------------------------------------- limitations


def test_default_and_custom_limitations() -> None:
    text = render(make_sidecar())
    section = text[text.index("## Limitations") : text.index("## Data warnings")]
    assert section.count("\n- **") == len(DEFAULT_LIMITATIONS) >= 8
    for topic in ("cost per phase", "start", "latest window", "configured hosts", "observational", "alias"):
        assert topic in section
    custom = render(make_sidecar(), limitations=[("Only one.", "A single caveat.")])
    assert "- **Only one.** A single caveat." in custom
    assert "No cost per phase." not in custom


# ---------------------------------------------------------------------------------- sanitising


HOSTILE_MODEL = "evil | 100% | $0.001 (n=1"
HOSTILE_TIER = "sneaky`](https://phish.example"


def test_hostile_model_and_tier_cannot_forge_columns_or_escape_code_spans() -> None:
    # reference test case
    bucket = with_keys({"model": HOSTILE_MODEL, "repo": "o/r", "tier": HOSTILE_TIER}, make_rollup(1, 1))
    text = render(make_sidecar(buckets=[bucket]))
    row = line_starting(text, "| `evil")
    assert row.startswith("| `evil \\| 100% \\| $0.001 (n=1` | o/r | sneaky'")
    assert "`](https://phish.example" not in text
    assert "](https://phish.example" not in text
    assert len(cells(row)) == 15


def test_control_characters_and_huge_values_are_scrubbed_and_capped() -> None:
    bucket = with_keys(
        {"model": "m\x1b[31m" + "x" * 5000, "repo": "o/r", "tier": "t\u202e\r\n"}, make_rollup(1, 1)
    )
    text = render(make_sidecar(buckets=[bucket]))
    assert "\x1b" not in text and "\u202e" not in text and "\r" not in text
    row = line_starting(text, "| `m")
    model_cell = cells(row)[0]
    assert len(model_cell) == 2 + 121 and model_cell.endswith("…`")
    assert len(cells(row)) == 15


def test_hostile_values_in_every_cell_kind() -> None:
    evil = "x | y`z](http://e.example)<img>\x1b"
    sidecar = make_sidecar()
    sidecar["buckets"][0]["agentClis"] = [evil]
    sidecar["riskClasses"][0]["riskClass"] = evil
    sidecar["phases"][0]["phase"] = evil
    sidecar["pairings"]["fleet"]["views"]["famCombo"]["groups"][0]["label"] = evil
    sidecar["sources"][0]["host"] = evil
    text = render(sidecar)
    assert "\x1b" not in text
    # the pairing label is a model id: it sits in a code span, where markup is inert
    assert "| 1 | `x \\| y'z](http://e.example)<img>\ufffd` |" in text
    outside = text.replace("`x \\| y'z](http://e.example)<img>\ufffd`", "")
    assert "<img>" not in outside
    assert "](http://e.example" not in outside
    assert "`z" not in text
    for line in text.split("\n"):
        if "x \\| y" in line:
            assert "| y" not in line.replace("\\|", "")


def test_regenerate_command_cannot_break_its_code_span() -> None:
    text = render_markdown(make_sidecar(), regenerate_cmd="make x`; rm -rf /`")
    assert "`make x'; rm -rf /'`" in text


def test_warnings_are_untrusted() -> None:
    # reference test case
    warning = "o/r: [click here](https://evil.example)\u001b[31m…"
    text = render(make_sidecar(warnings=[warning, "w" * 5000]))
    assert "[click here](" not in text
    assert "\x1b" not in text
    assert "&#91;click here&#93;" in text
    long_line = [line for line in text.split("\n") if line.startswith("- www")][0]
    assert len(long_line) < 320 and long_line.endswith("…")


# ---------------------------------------------------------------------------------- robustness


def test_empty_or_odd_sidecars_render_without_crashing() -> None:
    text = render_markdown({}, regenerate_cmd="x")
    for section in SECTIONS[:-1]:
        assert section in text
    odd = make_sidecar(buckets=["nope", None], totals="not-a-list", phases=[{"phase": "p"}], riskClasses=None)
    text = render(odd)
    assert "_2 bucket row(s) in the sidecar are not an object; not shown._" in text
    assert "| p | N/A | N/A |" in text


def test_sidecar_without_the_per_issue_fields_computes_them() -> None:
    rollup = make_rollup(2, 2, escalations=3)
    for key in ("stallsPerIssue", "escalationsPerIssue", "unverifiedExitsPerIssue"):
        del rollup[key]
    text = render(make_sidecar(buckets=[with_keys({"model": "m", "repo": "o/r", "tier": "t"}, rollup)]))
    assert cells(line_starting(text, "| `m` |"))[-2] == "3 (1.50/issue)"


# ---------------------------------------------------------------------------- reference sidecar


@pytest.fixture(scope="module")
def reference_render(reference_dir: Path) -> str:
    sidecar = json.loads((reference_dir / "reference-sidecar-2026-09-07.json").read_text(encoding="utf-8"))
    return render_markdown(sidecar, regenerate_cmd="npm run scorecard -- --since 2026-08-25")


def test_reference_sidecar_renders_its_grand_total(reference_render: str) -> None:
    # By hand from its grandTotal: 146/187 = 78%; 18.0579... -> $18.058; 159278.25 -> 159,278;
    # 103.875 (exact) -> 103.9; per issue 1/187, 25/187, 5/187 (this older sidecar has no rates).
    assert line_starting(reference_render, "| **TOTAL** |") == (
        "| **TOTAL** | — | claude,opencode | 187 | 146 | 78% | — | 97% (n=139) | $18.058 (n=12) | "
        "159,278 (n=12) | 48.0 | 103.9 | 12.1 (n=159) | 1 (0.01/issue) | 25 (0.13/issue) | 5 (0.03/issue) |"
    )


def test_reference_sidecar_rows_match_the_reference_report(
    reference_dir: Path, reference_render: str
) -> None:
    report = (reference_dir / "reference-report-2026-09-02.md").read_text(encoding="utf-8")
    # Rows whose data did not change between the two reference versions render identically.
    for row in (
        "| ↳ | z-ai | opencode | 3 | 2 | 67% | — | 100% (n=2) | N/A | N/A | N/A | 337.0 | 9.5 (n=2) "
        "| 1 (0.33/issue) | 6 (2.00/issue) | 0 |",
        "| `gpt-5.6-luna` | 2 providers ↓ | unknown | 5 | 4 | 80% | — | 100% (n=3) | N/A | N/A | N/A | 255.3 "
        "| 1.5 (n=4) | 0 | 0 | 0 |",
        "| `kimi-latest` | openrouter | opencode | 1 | 1 | 100% | — | 100% (n=1) | N/A | N/A | N/A | 527.1 "
        "| 15.0 (n=1) | 0 | 0 | 0 |",
        "| gate | 54 | 32.5m |",
        "| batch-validate | 3 | 28.0m |",
        "| plan | 165 | 5.7m |",
        "| setup | 164 | 2.7m |",
        "| report | 130 | 53s |",
    ):
        assert row in report
        assert row in reference_render
