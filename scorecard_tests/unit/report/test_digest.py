"""The 6-line digest (docs/report.md; a case of the reference's own tests adapted to per-repo winners and line 6)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from scorecard_assets.report.digest import render_digest, repo_winners
from scorecard_tests.factories.sidecar import make_rollup, make_sidecar, with_keys

LINK = "reports/2026-09-21/model-scorecard.md"


def repo_row(repo: str, model: str, n: int, delivered: int, **fields: Any) -> dict[str, Any]:
    return with_keys({"repo": repo, "model": model}, make_rollup(n, delivered, **fields))


def two_repo_totals() -> list[dict[str, Any]]:
    """ai-dossier: glm cheapest, sonnet fastest; monorepo: sonnet cheapest, glm fastest."""
    return [
        repo_row(
            "imboard-ai/ai-dossier", "claude-sonnet-5", 4, 3, costPerDeliveredUsd=5.0, medianApiMinutes=10.0
        ),
        repo_row("imboard-ai/ai-dossier", "glm-5.3", 4, 2, costPerDeliveredUsd=2.0, medianApiMinutes=30.0),
        repo_row(
            "imboard-ai/imboard-monorepo",
            "claude-sonnet-5",
            5,
            5,
            costPerDeliveredUsd=1.0,
            medianApiMinutes=50.0,
        ),
        repo_row(
            "imboard-ai/imboard-monorepo", "glm-5.3", 10, 9, costPerDeliveredUsd=3.0, medianApiMinutes=20.0
        ),
    ]


def digest(**overrides: Any) -> list[str]:
    return render_digest(make_sidecar(**overrides), report_link=LINK)


def test_six_lines_with_per_repo_winners() -> None:
    lines = digest(repoTotals=two_repo_totals(), drops=[], warnings=[])
    assert lines == [
        "📊 Model scorecard (2026-08-22 → 2026-09-21)",
        "💰 Cheapest/delivered: ai-dossier glm-5.3 ($2.000, n=4) · "
        "imboard-monorepo claude-sonnet-5 ($1.000, n=5)",
        "🎯 Best delivery rate: ai-dossier claude-sonnet-5 (75%, n=4) · "
        "imboard-monorepo claude-sonnet-5 (100%, n=5)",
        "⚡ Fastest: ai-dossier claude-sonnet-5 (10.0 API-min, n=4) · "
        "imboard-monorepo glm-5.3 (20.0 API-min, n=10)",
        "📉 Delivery rate drop >10pt: none",
        f"🔗 {LINK}",
    ]


def test_cheapest_model_is_named() -> None:
    totals = [
        repo_row("o/r", "pricey", 2, 2, costPerDeliveredUsd=9.5),
        repo_row("o/r", "cheap", 2, 1, costPerDeliveredUsd=0.5),
    ]
    assert digest(repoTotals=totals)[1] == "💰 Cheapest/delivered: r cheap ($0.500, n=2)"


def test_a_repo_without_measurable_data_is_left_out_but_the_digest_keeps_six_lines() -> None:
    totals = [*two_repo_totals(), repo_row("acme/empty", "m", 3, 0), repo_row("acme/zero", "z", 0, 0)]
    lines = digest(repoTotals=totals)
    assert len(lines) == 6
    assert "empty" not in lines[1] and "empty" not in lines[3]
    assert "empty m (0%, n=3)" in lines[2]  # a 0 % rate is still a measured rate
    assert "zero" not in "".join(lines)  # n = 0 never wins


def test_no_data_at_all() -> None:
    lines = digest(repoTotals=[], drops=[], warnings=[])
    assert lines[1:4] == [
        "💰 Cheapest/delivered: no data",
        "🎯 Best delivery rate: no data",
        "⚡ Fastest: no data",
    ]
    assert len(lines) == 6


def test_ties_keep_the_earlier_row() -> None:
    rows = [
        repo_row("o/r", "first", 2, 1, costPerDeliveredUsd=1.0),
        repo_row("o/r", "second", 2, 1, costPerDeliveredUsd=1.0),
    ]
    assert [r["model"] for r in repo_winners(rows, "costPerDeliveredUsd", lowest=True)] == ["first"]
    assert [r["model"] for r in repo_winners(rows, "deliveryRate", lowest=False)] == ["first"]


def test_drops_line_names_every_drop_worst_first_up_to_three() -> None:
    drop = {"model": "flaky", "previousRate": 0.9, "currentRate": 0.5, "n": 4}
    assert digest(drops=[drop])[4] == "📉 Delivery rate drop >10pt: flaky 90% → 50%"
    drops = [
        {"model": "a", "previousRate": 0.9, "currentRate": 0.7, "n": 4},  # -20
        {"model": "b", "previousRate": 1.0, "currentRate": 0.5, "n": 4},  # -50
        {"model": "c", "previousRate": 0.8, "currentRate": 0.6, "n": 4},  # -20 (after a: stable)
        {"model": "d", "previousRate": 0.6, "currentRate": 0.3, "n": 4},  # -30
        {"model": "e", "previousRate": 0.5, "currentRate": 0.35, "n": 4},  # -15
    ]
    assert (
        digest(drops=drops)[4]
        == "📉 Delivery rate drop >10pt: b 100% → 50% · d 60% → 30% · a 90% → 70% (+2 more)"
    )


def test_line_six_counts_data_warnings() -> None:
    assert digest(warnings=["w1", "w2"])[5] == f"🔗 {LINK} — ⚠️ 2 data warning(s)"
    assert digest(warnings=[])[5] == f"🔗 {LINK}"


def test_hostile_names_cannot_add_lines_or_forge_text() -> None:
    totals = [repo_row("o/r", "evil\nmodel | `x`", 2, 2, costPerDeliveredUsd=1.0, medianApiMinutes=1.0)]
    drops = [{"model": "bad\r\nline", "previousRate": 0.9, "currentRate": 0.1, "n": 2}]
    lines = digest(repoTotals=totals, drops=drops)
    assert len(lines) == 6
    assert all("\n" not in line and "\r" not in line for line in lines)
    assert "evil\ufffdmodel | 'x'" in lines[1]  # plain text: no markdown escape


def test_missing_keys_still_give_six_lines() -> None:
    lines = render_digest({}, report_link=LINK)
    assert len(lines) == 6
    assert lines[0] == "📊 Model scorecard (? → ?)"
    assert lines[4].endswith("none")
    assert lines[5] == f"🔗 {LINK}"


def test_reference_sidecar_digest(reference_dir: Path) -> None:
    sidecar = json.loads((reference_dir / "reference-sidecar-2026-09-07.json").read_text(encoding="utf-8"))
    lines = render_digest(sidecar, report_link="docs/reports/model-scorecard.md")
    assert len(lines) == 6
    assert lines[0] == "📊 Model scorecard (2026-08-25 → 2026-09-02)"
    assert lines[1].count(" · ") == 1  # two repos
    assert lines[4] == "📉 Delivery rate drop >10pt: none"
    assert lines[5] == "🔗 docs/reports/model-scorecard.md — ⚠️ 3 data warning(s)"


def test_digest_names_cannot_carry_live_links() -> None:
    from scorecard_assets.report.digest import _plain

    out = _plain("[free credits](https://evil.example)\nline2")
    assert "](" not in out and "\n" not in out
    assert _plain("claude-opus-5[1m]") == "claude-opus-5[1m]"
