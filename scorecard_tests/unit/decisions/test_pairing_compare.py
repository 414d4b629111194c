"""Per-axis comparison of the top pairings and the tier-weight sensitivity line."""

from __future__ import annotations

import json

import pytest

from scorecard_assets.decisions.pairing_compare import compare_pairings, weighted_score
from scorecard_tests.factories.decisions import group, pool_result

FLAT = {
    "Outcome": 60.0,
    "Cost": 50.0,
    "Precision": 50.0,
    "Discipline": 50.0,
    "Efficiency": 50.0,
    "Latency": 50.0,
}


def _pool():
    """``a`` leads on Outcome, ``b`` on Cost (and is cheaper per ship), ``c`` trails both."""
    a = group("a → x", 1, {**FLAT, "Outcome": 70.0, "Cost": 40.0})
    b = group("b → x", 2, {**FLAT, "Outcome": 60.0, "Cost": 52.0})
    b["adj"]["dpss"] = 0.5  # half the pool's dollars per ship
    c = group("c → x", 3, {**FLAT, "Outcome": 55.0})
    d = group("d → x", 4, {**FLAT, "Outcome": 40.0})
    return pool_result([a, b, c, d])


def test_the_gap_between_the_top_two_splits_into_tier_contributions() -> None:
    comparison = compare_pairings({"fleet": _pool(), "imported": None}).comparisons[0]
    assert comparison["pool"] == "fleet" and comparison["view"] == "modelCombo"
    assert [t["label"] for t in comparison["top"]] == ["a → x", "b → x", "c → x"]
    gap = comparison["gap"]
    assert sum(t["contribution"] for t in gap["tiers"]) == pytest.approx(gap["scoreGap"])
    by_tier = {t["tier"]: t["contribution"] for t in gap["tiers"]}
    assert by_tier["Outcome"] == pytest.approx(3.0) and by_tier["Cost"] == pytest.approx(-2.4)


def test_separating_axes_are_flagged_with_their_leader() -> None:
    comparison = compare_pairings(_pool()).comparisons[0]
    axes = {a["axis"]: a for a in comparison["axes"]}
    assert axes["dpss"]["separating"] is True and axes["dpss"]["leader"] == "b → x"
    assert axes["shipr"]["separating"] is False and axes["shipr"]["spread"] == 0


def test_weight_sensitivity_names_the_moves_that_change_the_top_three() -> None:
    sensitivity = compare_pairings(_pool()).comparisons[0]["sensitivity"]
    assert sensitivity["baseline"] == ["a → x", "b → x", "c → x"]
    assert len(sensitivity["perturbations"]) == 12
    assert sensitivity["stable"] is False
    assert "Cost x1.5" in sensitivity["changedBy"] and "Outcome x0.5" in sensitivity["changedBy"]
    flipped = next(p for p in sensitivity["perturbations"] if p["tier"] == "Cost" and p["factor"] == 1.5)
    assert flipped["top"][:2] == ["b → x", "a → x"]
    json.dumps(compare_pairings(_pool()).to_sidecar(), allow_nan=False)


def test_views_with_fewer_than_two_pairs_and_missing_pools_are_skipped() -> None:
    assert compare_pairings(None).comparisons == []
    assert compare_pairings({"fleet": None, "imported": None}).comparisons == []
    assert compare_pairings(pool_result([group("solo", 1, FLAT)])).comparisons == []


def test_weighted_score_is_the_engines_weighted_mean() -> None:
    assert weighted_score(FLAT, {"Outcome": 30, "Cost": 20}) == pytest.approx(56.0)
    assert weighted_score({"Outcome": None}, {"Outcome": 1}) is None
