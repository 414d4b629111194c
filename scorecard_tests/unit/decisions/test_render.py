"""The decisions' markdown sections, sidecar block and charts: sections present, evidence shown,
untrusted strings sanitised and model ids in code spans."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorecard_assets.decisions.adjusted import adjusted_effects
from scorecard_assets.decisions.alerts import detect_changes
from scorecard_assets.decisions.frontier import build_frontier
from scorecard_assets.decisions.pairing_compare import compare_pairings
from scorecard_assets.decisions.routing import advice_of_frontier
from scorecard_assets.report.decisions import (
    FRONTIER_PNG,
    SIDECAR_KEYS,
    decisions_chart_pngs,
    decisions_markdown,
    decisions_sidecar,
    trend_file_name,
)
from scorecard_tests.factories.decisions import (
    FLAT_TIERS,
    fast_config,
    group,
    observations,
    pool_result,
    run_table,
    specs_for,
    stationary_series,
    step_series,
    week_labels,
    window,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
HOSTILE = "evil](https://x.example)|`rm`\u202egnp"
HOSTILE_ALERTED = "gpt\x1b[31m|`x`"


@pytest.fixture(scope="module")
def block() -> dict:
    """Every part on one small fleet: a planted cheaper model, a hostile model id, a planted step."""
    rng = np.random.default_rng(31)
    specs = (
        specs_for("strong-model", 600, 570, 1.0, rng)
        + specs_for("cheap-good", 600, 564, 0.3, rng)
        + specs_for(HOSTILE, 40, 30, 0.5, rng, risk="high")
    )
    for spec in specs:
        spec.cost = (spec.cost or 0) * float(np.exp(rng.normal(0, 0.2)))
    config = fast_config()
    table = run_table(specs)
    frontier = build_frontier(table, window(), config)
    routing = advice_of_frontier(frontier, config)
    rows = step_series(HOSTILE_ALERTED, 14, 40, 0.9, 0.5, 10, rng)
    for r in rows:
        r["hversion"] = "9.9" if r["week"] >= 10 else "1.0"
    rows += stationary_series("steady", 14, 30, 0.8, rng)
    alerts = detect_changes(observations(rows)[lambda f: f["week"] <= 10], week_labels(11), config)
    adjusted = adjusted_effects(table, window(), config)
    pool = pool_result(
        [group(f"{HOSTILE} → a", 1, {**FLAT_TIERS, "Outcome": 70.0}), group("b → c", 2, FLAT_TIERS)]
    )
    pairings = compare_pairings({"fleet": pool, "imported": None})
    return decisions_sidecar(
        frontier=frontier, routing=routing, alerts=alerts, adjusted=adjusted, pairing_comparison=pairings
    )


def test_the_sidecar_block_is_json_ready_with_a_stable_key_order(block: dict) -> None:
    assert list(block) == list(SIDECAR_KEYS)
    text = json.dumps(block, allow_nan=False)
    assert json.loads(text) == block
    assert list(block["routing"]["entries"][0])[:5] == ["segment", "riskClass", "tier", "kind", "status"]
    assert decisions_sidecar() == dict.fromkeys(SIDECAR_KEYS)


def test_every_section_is_present_with_its_evidence(block: dict) -> None:
    md = decisions_markdown(block)
    for heading in (
        "## Routing advice",
        "## Change alerts",
        "## Difficulty-adjusted model effects",
        "## Pairing comparisons",
        "### Whole window — models",
        "### Delivery rate",
        "### Cost per delivered issue",
    ):
        assert heading in md
    assert "**Route to `cheap-good`**" in md and "bootstrap p =" in md and "Holm" in md
    assert "expected saving of $" in md
    assert "Benjamini-Hochberg" in md and "alert(s) over" in md and "new harness version `9.9`" in md
    assert "delivery rate worsened from" in md
    assert "unmeasured" not in md or "difficulty the data do not record stays" in md
    assert "difficulty the data do not record stays" in md
    assert "Weight sensitivity" in md


def _outside_code_spans(line: str) -> str:
    """The text of a markdown line outside its code spans (even-numbered backtick segments)."""
    return "".join(part for k, part in enumerate(line.split("`")) if k % 2 == 0)


def test_untrusted_strings_are_sanitised_and_in_code_spans(block: dict) -> None:
    md = decisions_markdown(block)
    assert "\u202e" not in md and "\x1b" not in md
    shown = 0
    for line in md.splitlines():
        outside = _outside_code_spans(line)
        assert "evil]" not in outside and "x.example" not in outside and "gpt\ufffd" not in outside
        shown += line.count("evil](https://x.example)\\|'rm'\ufffdgnp")
    assert shown >= 3  # the hostile model in the advice, the frontier table and the adjusted tables
    assert "`gpt\ufffd[31m\\|'x'`" in md


def test_an_empty_fleet_renders_reasons_not_numbers() -> None:
    table = run_table([])
    config = fast_config()
    frontier = build_frontier(table, window(), config)
    block = decisions_sidecar(
        frontier=frontier,
        routing=advice_of_frontier(frontier, config),
        alerts=detect_changes(observations([]), week_labels(6), config),
        adjusted=adjusted_effects(table, window(), config),
    )
    md = decisions_markdown(block)
    assert "**No advice**: no routable issue in this segment." in md
    assert "no model or gateway had issues" in md
    assert "Not estimated: too few issues or models" in md
    assert decisions_chart_pngs(block) == {}  # nothing to plot: no frontier chart, no image link
    assert "decision-frontier.png" not in md


def test_no_data_renders_plain_sentences() -> None:
    md = decisions_markdown(decisions_sidecar())
    assert "Routing advice was not computed" in md
    assert "Change alerts were not computed" in md
    assert "Adjusted effects were not computed" in md
    assert "No pairing view has two ranked pairs" in md


def test_charts_are_png_bytes_one_frontier_and_one_trend_per_alert(block: dict) -> None:
    pngs = decisions_chart_pngs(block)
    assert set(pngs) == {
        FRONTIER_PNG,
        *(trend_file_name(i + 1, a) for i, a in enumerate(block["alerts"]["alerts"])),
    }
    assert len(pngs) == 1 + len(block["alerts"]["alerts"]) >= 2
    assert all(data.startswith(PNG_MAGIC) for data in pngs.values())
    alerts_only = {"alerts": block["alerts"]}
    assert decisions_chart_pngs(alerts_only) == decisions_chart_pngs(alerts_only)  # reproducible bytes


def test_trend_file_names_are_safe_whatever_the_name() -> None:
    name = trend_file_name(3, {"kind": "model", "name": "../../etc/passwd\u202e", "metric": "deliveryRate"})
    assert name == "trend-03-model-etc-passwd-deliveryrate.png"
    assert "/" not in name and ".." not in name
