"""Routing advice and the frontier on fleets with a planted answer (docs/decisions.md)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorecard_assets.decisions.frontier import build_frontier, pareto_mask
from scorecard_assets.decisions.routing import (
    ADVICE,
    NO_ADVICE,
    REFUSED_FEW_RUNS,
    REFUSED_TEST,
    TOO_FEW_RUNS,
    routing_advice,
)
from scorecard_tests.factories.decisions import fast_config, run_table, specs_for, window

STRONG, CHEAP_GOOD, LUCKY_FEW, CHEAP_THIN = "strong-model", "cheap-good", "lucky-few", "cheap-thin"


@pytest.fixture(scope="module")
def planted_fleet():
    """``cheap-good`` delivers 90 % against the strong model's 91 % (well inside the 5-point margin) at
    a third of the cost: the answer. ``lucky-few`` (8 of 8) and ``cheap-thin`` (23 of 25) are cheaper
    and look as good or better, on too little evidence."""
    rng = np.random.default_rng(7)
    specs = (
        specs_for(STRONG, 600, 546, 1.00, rng, planner="planner-a")
        + specs_for(CHEAP_GOOD, 600, 540, 0.30, rng, planner="planner-a")
        + specs_for(LUCKY_FEW, 8, 8, 0.10, rng, planner="planner-a")
        + specs_for(CHEAP_THIN, 25, 23, 0.20, rng, planner="planner-a")
    )
    config = fast_config()
    table = run_table(specs)
    frontier = build_frontier(table, window(), config)
    return table, config, frontier, routing_advice(table, window(), config, frontier=frontier)


def _entry(result, kind="model", segment="overall"):
    return next(e for e in result.entries if e["kind"] == kind and e["segment"] == segment)


def test_advice_finds_the_cheaper_option_that_is_truly_as_good(planted_fleet) -> None:
    _, config, _, advice = planted_fleet
    entry = _entry(advice)
    assert entry["status"] == ADVICE
    assert entry["best"] == STRONG
    assert entry["advised"] == CHEAP_GOOD and entry["advisedIsBest"] is False
    evidence = entry["evidence"]
    assert evidence["n"] == 600 and evidence["bestN"] == 600
    assert evidence["difference"] == pytest.approx(-0.01)
    assert evidence["differenceLowerBound"] > -config.margin_points / 100
    assert evidence["holmP"] <= config.level
    saving = entry["saving"]
    assert saving["issues"] == 1233
    assert saving["expectedSavingUsd"] > 0
    low, high = saving["expectedSavingInterval"]
    assert low <= saving["expectedSavingUsd"] <= high


def test_advice_refuses_options_that_only_look_as_good_on_few_runs(planted_fleet) -> None:
    _, _, _, advice = planted_fleet
    entry = _entry(advice)
    refused = {r["option"]: r for r in entry["refused"]}
    assert refused[LUCKY_FEW]["reason"] == REFUSED_FEW_RUNS  # 8 of 8, below min_runs
    assert refused[CHEAP_THIN]["reason"] == REFUSED_TEST  # 23 of 25: not shown within the margin
    assert refused[CHEAP_THIN]["bootstrapP"] > 0.05
    assert entry["advised"] not in (LUCKY_FEW, CHEAP_THIN)


def test_pairing_advice_and_the_cell_segment_agree_with_the_model_advice(planted_fleet) -> None:
    _, _, _, advice = planted_fleet
    assert _entry(advice, "pairing")["advised"] == f"planner-a → {CHEAP_GOOD}"
    assert _entry(advice, "model", "low / mid")["advised"] == CHEAP_GOOD
    assert advice.warnings == []


def test_no_advice_when_every_option_has_too_few_runs() -> None:
    rng = np.random.default_rng(3)
    specs = specs_for("a", 10, 9, 1.0, rng) + specs_for("b", 12, 11, 0.2, rng)
    result = routing_advice(run_table(specs), window(), fast_config())
    entry = _entry(result)
    assert entry["status"] == NO_ADVICE and entry["reason"] == TOO_FEW_RUNS
    assert entry["advised"] is None and entry["saving"] is None
    assert {r["option"] for r in entry["refused"]} == {"a", "b"}
    assert [w.code for w in result.warnings] == ["advice_withheld", "advice_withheld"]


def test_frontier_keeps_the_non_dominated_options_with_intervals() -> None:
    rng = np.random.default_rng(11)
    specs = (
        specs_for("cheap-low", 100, 60, 0.20, rng)
        + specs_for("mid", 100, 80, 0.50, rng)
        + specs_for("dear-high", 100, 90, 1.00, rng)
        + specs_for("dominated", 100, 70, 0.90, rng)
        + specs_for("<unknown>", 10, 5, 0.10, rng)
    )
    result = build_frontier(run_table(specs), window(), fast_config())
    overall = next(s for s in result.segments if s["segment"] == "overall" and s["kind"] == "model")
    assert overall["frontier"] == ["cheap-low", "mid", "dear-high"]
    assert overall["unroutableIssues"] == 10
    options = {o["option"]: o for o in overall["options"]}
    assert options["dominated"]["onFrontier"] is False and options["dominated"]["frontierShare"] < 0.2
    for o in options.values():
        low, high = o["deliveryRateInterval"]
        assert low <= o["deliveryRate"] <= high
        low, high = o["spendPerDeliveredInterval"]
        assert low <= o["spendPerDeliveredUsd"] <= high
    assert options["mid"]["spendPerDeliveredUsd"] == pytest.approx(0.5 / 0.8)
    json.dumps(result.to_sidecar(), allow_nan=False)


def test_pareto_mask_handles_ties_missing_costs_and_resample_columns() -> None:
    spend = np.array([1.0, 1.0, 2.0, np.nan])
    rate = np.array([0.5, 0.5, 0.9, 0.99])
    assert pareto_mask(spend, rate).tolist() == [True, True, True, False]
    draws = np.array([[1.0, 3.0], [2.0, 1.0]])  # two options x two resamples
    rates = np.array([[0.5, 0.5], [0.6, 0.6]])
    assert pareto_mask(draws, rates).tolist() == [[True, False], [True, True]]


def test_results_are_reproducible_and_json_ready() -> None:
    rng = np.random.default_rng(13)
    table = run_table(specs_for("a", 60, 50, 1.0, rng) + specs_for("b", 60, 48, 0.4, rng, risk="high"))
    first, again = (routing_advice(table, window(), fast_config()) for _ in range(2))
    assert json.dumps(again.to_sidecar(), allow_nan=False) == json.dumps(first.to_sidecar(), allow_nan=False)
    frontier = build_frontier(table, window(), fast_config())
    assert [(s["segment"], s["kind"]) for s in frontier.segments] == [
        ("overall", "model"),
        ("overall", "pairing"),
        ("high / mid", "model"),
        ("high / mid", "pairing"),
        ("low / mid", "model"),
        ("low / mid", "pairing"),
    ]
    assert list(frontier.segments[0]) == [
        "segment",
        "riskClass",
        "tier",
        "kind",
        "n",
        "unroutableIssues",
        "options",
        "frontier",
    ]
