"""Difficulty-adjusted effects: a planted confounder that the raw rates show and the adjustment
removes; graceful fallbacks when the plain fit separates or a covariate is collinear."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scorecard_assets.decisions.adjusted import adjusted_effects, adjusted_frame, build_design
from scorecard_assets.scoring.scorecard import window_issue_rows
from scorecard_tests.factories.decisions import fast_config, run_table, specs_for, window

STRONG, WEAK = "strong-model", "weak-model"


def _stratum(model: str, risk: str, n: int, delivered: int, cost: float, rng) -> list:
    """``n`` issues of one risk class: exactly ``delivered`` delivered, costs log-normal around ``cost``,
    acceptance criteria more numerous on high-risk issues (a size proxy that adds nothing beyond risk)."""
    specs = specs_for(model, n, delivered, cost, rng, risk=risk)
    for spec in specs:
        spec.cost = cost * float(np.exp(rng.normal(0.0, 0.2)))
        spec.ac_total = int(rng.integers(1, 6) if risk == "low" else rng.integers(4, 12))
    return specs


@pytest.fixture(scope="module")
def confounded():
    """Within each risk class the strong model delivers 10 points more (low: 95 % vs 85 %, high:
    60 % vs 50 %) at the same cost, but it gets 80 % of the hard (high-risk, 3x dearer) issues and the
    weak model 20 %: raw, the strong model looks worse and dearer."""
    rng = np.random.default_rng(17)
    specs = (
        _stratum(STRONG, "high", 240, 144, 3.0, rng)
        + _stratum(STRONG, "low", 60, 57, 1.0, rng)
        + _stratum(WEAK, "high", 60, 30, 3.0, rng)
        + _stratum(WEAK, "low", 240, 204, 1.0, rng)
    )
    return adjusted_effects(run_table(specs), window(), fast_config())


def _effect(outcome: dict, model: str) -> dict:
    return next(e for e in outcome["effects"] if e["model"] == model)


def test_the_raw_rate_shows_the_confounder_and_the_adjusted_effect_removes_it(confounded) -> None:
    delivered = confounded.delivered
    assert delivered["diagnostics"]["method"] == "glm" and delivered["diagnostics"]["converged"]
    strong, weak = _effect(delivered, STRONG), _effect(delivered, WEAK)
    assert strong["raw"] - weak["raw"] < -0.05  # raw: the strong model looks worse (0.67 vs 0.78)
    # adjusted: the planted +10 points within each class, standardised over the whole issue mix
    difference = strong["adjusted"] - weak["adjusted"]
    assert difference == pytest.approx(0.10, abs=0.03)
    contrast = strong if delivered["reference"] == WEAK else weak
    low, high = contrast["contrastInterval"]
    assert low > 0 or high < 0  # the interval excludes no difference
    assert strong["moved"] > 0.05 and weak["moved"] < 0
    assert low <= contrast["contrast"] <= high
    assert delivered["diagnostics"]["covariates"] == ["risk_class", "ac_total"]


def test_the_adjusted_cost_removes_the_dearer_issue_mix(confounded) -> None:
    cost = confounded.cost
    strong, weak = _effect(cost, STRONG), _effect(cost, WEAK)
    assert strong["raw"] / weak["raw"] > 1.5  # raw: the strong model's delivered issues cost more
    assert strong["adjusted"] / weak["adjusted"] == pytest.approx(1.0, abs=0.05)
    assert cost["diagnostics"]["family"] == "gamma, log link"
    assert confounded.warnings == []
    json.dumps(confounded.to_sidecar(), allow_nan=False)


def test_separation_falls_back_to_a_penalised_fit_and_says_so() -> None:
    rng = np.random.default_rng(2)
    specs = specs_for("always", 40, 40, 1.0, rng) + specs_for("sometimes", 40, 25, 1.0, rng)
    for spec in specs:
        spec.cost = float(np.exp(rng.normal(0.0, 0.3)))
    result = adjusted_effects(run_table(specs), window(), fast_config())
    diagnostics = result.delivered["diagnostics"]
    assert diagnostics["method"] == "ridge" and diagnostics["fallbackReason"]
    always = _effect(result.delivered, "always")
    assert 0.9 < always["adjusted"] < 1.0
    assert all(v is not None for v in always["adjustedInterval"])
    assert [w.code for w in result.warnings] == ["adjusted_fallback"]
    assert result.cost["diagnostics"]["method"] == "glm"


def test_costs_without_any_spread_give_no_cost_effect_and_say_why() -> None:
    rng = np.random.default_rng(3)
    specs = specs_for("a", 30, 20, 1.0, rng) + specs_for("b", 30, 15, 1.0, rng)
    result = adjusted_effects(run_table(specs), window(), fast_config())
    assert result.delivered is not None and result.cost is None
    warning = next(w for w in result.warnings if w.code == "adjusted_unavailable")
    assert "cost per delivered issue" in warning.message


def test_small_models_are_left_out_and_one_model_is_reported_unavailable() -> None:
    rng = np.random.default_rng(4)
    specs = specs_for("big", 50, 30, 1.0, rng) + specs_for("tiny", 3, 3, 1.0, rng)
    result = adjusted_effects(run_table(specs), window(), fast_config())
    assert result.delivered is None and result.cost is None
    assert [w.code for w in result.warnings] == ["adjusted_unavailable", "adjusted_unavailable"]


def test_constant_and_collinear_covariate_columns_are_dropped_and_named() -> None:
    rng = np.random.default_rng(6)
    specs = specs_for("a", 30, 20, 1.0, rng, repo="acme/a") + specs_for("b", 30, 15, 1.0, rng, repo="acme/b")
    rows = window_issue_rows(run_table(specs), window())
    design = build_design(adjusted_frame(rows, None), ("repo", "tier", "ac_total"))
    assert "repo[acme/b]" in design.dropped or "repo[acme/a]" in design.dropped  # repo == model here
    assert "log1p(ac_total)" in design.dropped  # never known: constant
    assert design.names[: len(design.models)] == ["const", f"model[{design.models[1]}]"]
    assert np.linalg.matrix_rank(design.matrix) == design.matrix.shape[1]


def test_no_covariates_reproduces_the_raw_rates() -> None:
    rng = np.random.default_rng(8)
    specs = specs_for("a", 40, 30, 1.0, rng, risk="high") + specs_for("b", 40, 20, 2.0, rng)
    result = adjusted_effects(run_table(specs), window(), fast_config(covariates=()))
    for effect in result.delivered["effects"]:
        assert effect["adjusted"] == pytest.approx(effect["raw"], abs=1e-6)
    assert result.delivered["diagnostics"]["covariates"] == []
