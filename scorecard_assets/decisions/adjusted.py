"""Difficulty-adjusted model effects with statsmodels (docs/decisions.md "Adjusted effects").

Hard issues tend to go to strong models, so raw delivery rates mix the model's skill with the issues
it was given. Two regressions over the window's issue rows (one canonical run per issue):

- delivered (0/1): a binomial GLM with a logit link;
- cost of a delivered issue (positive costs only): a gamma GLM with a log link (so the fitted value
  is a mean cost, no retransformation needed);

each on the model (reference level: the model with the most issues) plus the configured covariates:
``repo``, ``risk_class`` and ``tier`` as categories (reference level: the most frequent), and two
size proxies, ``ac_total`` (acceptance criteria, from the issue) and ``files_changed`` (files the
canonical run touched, from the run table), as ``log1p`` with a missing-value indicator. Plan length
is not recorded in the run table, so it is not a covariate.

Adjusted effect = *standardised* (g-computation) level: the mean over every issue of the fit of the
prediction with the model set to ``m`` - what ``m`` would deliver (or cost) on this window's whole
issue mix. Intervals: ``resamples`` draws of the coefficients from their estimated normal
distribution, the central ``interval_level`` range of the standardised levels. Beside each: the raw
level, how far the adjustment moved it, and the contrast with the reference model.

Robustness: models with fewer than ``adjusted_min_runs`` issues (and ``<unknown>``) are left out of
the fit; design columns that are constant or collinear are dropped (named in the diagnostics). If the
plain fit separates, is singular, does not converge or yields non-finite or huge standard errors, the
same GLM is refitted with an L2 penalty (``ridge_penalty``, intercept free; intervals from the
penalised information), and the diagnostics say so. If that fails too, no adjusted effect is given.

What this can remove: differences in the *measured* covariates. What stays: any difficulty the
run table does not record, and the model's own influence on ``files_changed`` (a partly
post-treatment proxy). Observational, not an experiment.

Pure module: no Dagster; statsmodels is imported when a fit runs.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.decisions._common import (
    UNKNOWN,
    chunks,
    interval,
    number,
    ordered,
    risk_label,
    rng_for,
    text_or,
)
from scorecard_assets.decisions.config import DecisionsConfig
from scorecard_assets.decisions.warnings import ADJUSTED_ASSET
from scorecard_assets.records import DataWarning
from scorecard_assets.scoring.scorecard import window_issue_rows
from scorecard_assets.scoring.windows import Window

OUTCOMES = ("delivered", "cost")
CATEGORICAL = ("repo", "risk_class", "tier")
NUMERIC = ("ac_total", "files_changed")
MAX_ABS_COEF = 15.0
MAX_SE = 1e3
EFFECT_KEYS = (
    "model",
    "n",
    "raw",
    "adjusted",
    "adjustedInterval",
    "moved",
    "contrast",
    "contrastInterval",
    "estimated",
)
DIAGNOSTIC_KEYS = (
    "outcome",
    "family",
    "method",
    "fallbackReason",
    "n",
    "excludedIssues",
    "excludedModels",
    "covariates",
    "droppedColumns",
    "parameters",
    "converged",
    "iterations",
    "devianceExplained",
    "maxAbsMoved",
)
OUTCOME_KEYS = ("outcome", "scale", "contrastKind", "reference", "diagnostics", "effects")


@dataclass(frozen=True)
class AdjustedResult:
    """Adjusted effects for each outcome (``delivered``, ``cost``), or None where no fit was possible."""

    delivered: dict[str, Any] | None
    cost: dict[str, Any] | None
    warnings: list[DataWarning] = field(default_factory=list)

    def to_sidecar(self) -> dict[str, Any]:
        return {"delivered": self.delivered, "cost": self.cost}


# ------------------------------------------------------------------------------------------ data


def adjusted_frame(rows: pd.DataFrame, run_table: pd.DataFrame | None) -> pd.DataFrame:
    """One row per issue: model, the outcomes and every covariate (raw values; NaN = unknown).

    ``ac_total`` is the issue row's (from its review run), else the canonical run's; ``files_changed``
    is the canonical run's (``run_table``; unknown without one)."""
    cost = pd.to_numeric(rows["costUsd"], errors="coerce").astype("float64").to_numpy()
    ac_total = pd.to_numeric(rows["acTotal"], errors="coerce").astype("float64").to_numpy()
    ac_total = np.where(np.isnan(ac_total), _canonical_values(rows, run_table, "ac_total"), ac_total)
    return pd.DataFrame(
        {
            "model": [text_or(v, UNKNOWN) for v in rows["model"]],
            "delivered": rows["delivered"].to_numpy(dtype=bool),
            "cost": cost,
            "repo": [text_or(v, UNKNOWN) for v in rows["repo"]],
            "risk_class": [risk_label(v) for v in rows["riskClass"]],
            "tier": [text_or(v, UNKNOWN) for v in rows["tier"]],
            "ac_total": ac_total,
            "files_changed": _canonical_values(rows, run_table, "files_changed"),
        }
    )


def _canonical_values(rows: pd.DataFrame, run_table: pd.DataFrame | None, column: str) -> np.ndarray:
    """Per issue row: ``column`` of its canonical run in ``run_table`` as a float (NaN when unknown)."""
    if run_table is None or run_table.empty or rows.empty:
        return np.full(len(rows), np.nan)
    values = pd.to_numeric(run_table[column], errors="coerce").astype("float64").to_numpy()
    runs = zip(run_table["repo"], run_table["issue"], run_table["run_id"], strict=True)
    lookup = dict(zip(runs, values, strict=True))
    keys = zip(rows["repo"], rows["issue"], rows["canonicalRunId"], strict=True)
    return np.array([lookup.get(k, np.nan) for k in keys], dtype=float)


@dataclass(frozen=True)
class Design:
    """A design matrix: intercept, model dummies, covariate columns (names kept)."""

    matrix: np.ndarray
    names: list[str]
    models: list[str]  # model order; models[0] is the reference
    model_columns: list[int]  # column of models[1:], in order
    dropped: list[str]
    covariates: list[str]


def _most_frequent(values: pd.Series) -> list[str]:
    counts = values.value_counts()
    return sorted(counts.index.tolist(), key=lambda v: (-int(counts[v]), str(v)))


def build_design(data: pd.DataFrame, covariates: tuple[str, ...]) -> Design:
    """Intercept, model dummies (reference = most issues), then the covariates (module doc)."""
    models = _most_frequent(data["model"])
    columns: list[tuple[str, np.ndarray, str | None]] = [("const", np.ones(len(data)), None)]
    columns += [(f"model[{m}]", (data["model"] == m).to_numpy(dtype=float), None) for m in models[1:]]
    for name in covariates:
        if name in CATEGORICAL:
            levels = _most_frequent(data[name])
            for level in levels[1:]:
                columns.append((f"{name}[{level}]", (data[name] == level).to_numpy(dtype=float), name))
        else:
            values = data[name].to_numpy(dtype=float)
            known = np.isfinite(values) & (values >= 0)
            logged = np.where(known, np.log1p(np.where(known, values, 0.0)), 0.0)
            columns.append((f"log1p({name})", logged, name))
            columns.append((f"{name} missing", (~known).astype(float), name))
    kept, dropped = _independent(columns, protected=len(models))
    used = {covariate for _, _, covariate in kept if covariate is not None}
    return Design(
        matrix=np.column_stack([c for _, c, _ in kept]),
        names=[n for n, _, _ in kept],
        models=models,
        model_columns=list(range(1, len(models))),
        dropped=dropped,
        covariates=[c for c in covariates if c in used],
    )


def _independent(
    columns: list[tuple[str, np.ndarray, str | None]], *, protected: int
) -> tuple[list[tuple[str, np.ndarray, str | None]], list[str]]:
    """Columns kept in order while each raises the rank (constant covariate columns never do).
    The first ``protected`` columns (intercept and model dummies) are always kept."""
    kept: list[tuple[str, np.ndarray, str | None]] = []
    dropped: list[str] = []
    rank = 0
    for i, (name, column, covariate) in enumerate(columns):
        if i >= protected and np.ptp(column) == 0:
            dropped.append(name)
            continue
        new_rank = int(np.linalg.matrix_rank(np.column_stack([c for _, c, _ in kept] + [column])))
        if new_rank > rank or i < protected:
            kept.append((name, column, covariate))
            rank = new_rank
        else:
            dropped.append(name)
    return kept, dropped


# ------------------------------------------------------------------------------------------ fits


@dataclass(frozen=True)
class Fit:
    params: np.ndarray
    cov: np.ndarray
    method: str
    fallback_reason: str | None
    converged: bool
    iterations: int | None
    deviance_explained: float | None


def _family(outcome: str) -> Any:
    from statsmodels.genmod import families

    if outcome == "delivered":
        return families.Binomial()
    return families.Gamma(link=families.links.Log())


def _plain_fit(y: np.ndarray, x: np.ndarray, outcome: str) -> tuple[Fit | None, str | None]:
    from statsmodels.genmod.generalized_linear_model import GLM
    from statsmodels.tools.sm_exceptions import PerfectSeparationError, PerfectSeparationWarning

    model = GLM(y, x, family=_family(outcome))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = model.fit(maxiter=100)
        except (PerfectSeparationError, np.linalg.LinAlgError, ValueError) as exc:
            return None, f"the plain fit failed ({type(exc).__name__})"
    categories = {w.category for w in caught}
    if PerfectSeparationWarning in categories:
        return None, "perfect or quasi-perfect separation"
    params, bse = np.asarray(result.params), np.asarray(result.bse)
    if not bool(getattr(result, "converged", True)):
        return None, "the plain fit did not converge"
    if not (np.all(np.isfinite(params)) and np.all(np.isfinite(bse))):
        return None, "non-finite estimates or standard errors (singular information)"
    if np.max(np.abs(params[1:]), initial=0) > MAX_ABS_COEF or np.max(bse, initial=0) > MAX_SE:
        return None, "huge coefficients or standard errors (near separation)"
    return (
        Fit(
            params=params,
            cov=np.asarray(result.cov_params()),
            method="glm",
            fallback_reason=None,
            converged=True,
            iterations=_iterations(result),
            deviance_explained=_deviance_explained(result),
        ),
        None,
    )


def _iterations(result: Any) -> int | None:
    history = getattr(result, "fit_history", None) or {}
    value = history.get("iteration") if isinstance(history, dict) else None
    return int(value) if value is not None else None


def _deviance_explained(result: Any) -> float | None:
    """``1 - deviance / null deviance``: the share of the null model's deviance the fit explains."""
    try:
        deviance, null = float(result.deviance), float(result.null_deviance)
    except (AttributeError, ValueError, np.linalg.LinAlgError):
        return None
    return 1 - deviance / null if null > 0 and math.isfinite(deviance) and math.isfinite(null) else None


def _ridge_fit(y: np.ndarray, x: np.ndarray, outcome: str, penalty: float, reason: str) -> Fit | None:
    from statsmodels.genmod.generalized_linear_model import GLM

    model = GLM(y, x, family=_family(outcome))
    n = len(y)
    alpha = np.full(x.shape[1], penalty / n)
    alpha[0] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = model.fit_regularized(alpha=alpha, L1_wt=0.0, maxiter=200)
            params = np.asarray(result.params)
            mu = model.predict(params)
            scale = 1.0
            if outcome == "cost":
                dof = max(1, n - x.shape[1])
                scale = float(np.sum((y - mu) ** 2 / mu**2) / dof)
            info = -model.hessian(params, scale=scale, observed=False) + np.diag(alpha * n / scale)
            cov = np.linalg.inv(info)
        except (np.linalg.LinAlgError, ValueError, FloatingPointError):
            return None
    if not (np.all(np.isfinite(params)) and np.all(np.isfinite(cov))):
        return None
    return Fit(
        params=params,
        cov=(cov + cov.T) / 2,
        method="ridge",
        fallback_reason=reason,
        converged=True,
        iterations=None,
        deviance_explained=None,
    )


def fit_outcome(y: np.ndarray, x: np.ndarray, outcome: str, penalty: float) -> Fit | None:
    """The plain GLM, else the ridge fallback (module doc); None when neither gives usable estimates."""
    fit, reason = _plain_fit(y, x, outcome)
    if fit is not None:
        return fit
    return _ridge_fit(y, x, outcome, penalty, reason or "the plain fit failed")


# ------------------------------------------------------------------------------- standardisation


def _inverse_link(eta: np.ndarray, outcome: str) -> np.ndarray:
    if outcome == "delivered":
        return 1 / (1 + np.exp(-np.clip(eta, -35, 35)))
    return np.exp(np.clip(eta, -50, 50))


def standardised_levels(design: Design, params: np.ndarray, outcome: str) -> np.ndarray:
    """``params``: (k,) or (draws, k). Per model (``design.models`` order): the mean prediction over
    every issue of the fit with the model set to it. Returns (models,) or (draws, models)."""
    x = design.matrix.copy()
    x[:, design.model_columns] = 0.0
    draws = np.atleast_2d(params)
    out = np.empty((draws.shape[0], len(design.models)))
    start = 0
    for size in chunks(draws.shape[0], x.shape[0]):
        block = draws[start : start + size]
        base = x @ block.T  # issues x draws, every issue at the reference model
        for i, _ in enumerate(design.models):
            eta = base if i == 0 else base + block[:, design.model_columns[i - 1]][None, :]
            out[start : start + size, i] = _inverse_link(eta, outcome).mean(axis=0)
        start += size
    return out[0] if np.ndim(params) == 1 else out


def _outcome_data(data: pd.DataFrame, outcome: str) -> pd.DataFrame:
    if outcome == "delivered":
        return data
    cost = data["cost"].to_numpy(dtype=float)
    return data[data["delivered"].to_numpy(dtype=bool) & np.isfinite(cost) & (cost > 0)]


def adjust_outcome(
    data: pd.DataFrame, outcome: str, config: DecisionsConfig
) -> tuple[dict[str, Any] | None, str | None]:
    """The adjusted effects of one outcome (``OUTCOME_KEYS``), or None and the reason."""
    subset = _outcome_data(data, outcome)
    counts = subset["model"].value_counts()
    keep = [m for m in counts.index if m != UNKNOWN and int(counts[m]) >= config.adjusted_min_runs]
    excluded = sorted(m for m in counts.index if m not in keep)
    fit_data = subset[subset["model"].isin(keep)].reset_index(drop=True)
    if len(keep) < 2:
        return None, f"fewer than two models have {config.adjusted_min_runs} or more issues for this outcome"
    design = build_design(fit_data, config.covariates)
    y = fit_data["delivered" if outcome == "delivered" else "cost"].to_numpy(dtype=float)
    fit = fit_outcome(y, design.matrix, outcome, config.ridge_penalty)
    if fit is None:
        return None, "neither the plain nor the penalised fit gave usable estimates"
    point = standardised_levels(design, fit.params, outcome)
    rng = rng_for(config.seed, "adjusted", outcome)
    draws = rng.multivariate_normal(fit.params, fit.cov, size=config.resamples, method="eigh")
    drawn = standardised_levels(design, draws, outcome)
    raw = {m: raw_level(fit_data, m, outcome) for m in design.models}
    effects = []
    for i, model in enumerate(design.models):
        if outcome == "delivered":
            contrast, contrast_draws = point[i] - point[0], drawn[:, i] - drawn[:, 0]
        else:
            contrast, contrast_draws = point[i] / point[0], drawn[:, i] / drawn[:, 0]
        effects.append(
            ordered(
                EFFECT_KEYS,
                {
                    "model": model,
                    "n": int(counts[model]),
                    "raw": number(raw[model]),
                    "adjusted": number(point[i]),
                    "adjustedInterval": interval(drawn[:, i], config.interval_level),
                    "moved": number(point[i] - raw[model]),
                    "contrast": number(contrast) if i else None,
                    "contrastInterval": interval(contrast_draws, config.interval_level)
                    if i
                    else [None, None],
                    "estimated": True,
                },
            )
        )
    effects += [_not_estimated(m, int(counts[m]), raw_level(subset, m, outcome)) for m in excluded]
    moved = [abs(e["moved"]) for e in effects if e["estimated"] and e["moved"] is not None]
    diagnostics = ordered(
        DIAGNOSTIC_KEYS,
        {
            "outcome": outcome,
            "family": "binomial, logit link" if outcome == "delivered" else "gamma, log link",
            "method": fit.method,
            "fallbackReason": fit.fallback_reason,
            "n": len(fit_data),
            "excludedIssues": int(len(subset) - len(fit_data)),
            "excludedModels": excluded,
            "covariates": design.covariates,
            "droppedColumns": design.dropped,
            "parameters": len(design.names),
            "converged": fit.converged,
            "iterations": fit.iterations,
            "devianceExplained": number(fit.deviance_explained),
            "maxAbsMoved": number(max(moved)) if moved else None,
        },
    )
    return (
        ordered(
            OUTCOME_KEYS,
            {
                "outcome": outcome,
                "scale": "delivery rate" if outcome == "delivered" else "USD per delivered issue",
                "contrastKind": "difference" if outcome == "delivered" else "ratio",
                "reference": design.models[0],
                "diagnostics": diagnostics,
                "effects": effects,
            },
        ),
        None,
    )


def raw_level(data: pd.DataFrame, model: str, outcome: str) -> float:
    column = "delivered" if outcome == "delivered" else "cost"
    return float(data.loc[data["model"] == model, column].astype(float).mean())


def _not_estimated(model: str, n: int, raw: float) -> dict[str, Any]:
    return ordered(
        EFFECT_KEYS,
        {
            "model": model,
            "n": n,
            "raw": number(raw),
            "adjusted": None,
            "adjustedInterval": [None, None],
            "moved": None,
            "contrast": None,
            "contrastInterval": [None, None],
            "estimated": False,
        },
    )


def _warnings(
    result: dict[str, dict | None], reasons: dict[str, str | None], asset: str
) -> list[DataWarning]:
    out = []
    for outcome in OUTCOMES:
        what = "delivery" if outcome == "delivered" else "cost per delivered issue"
        entry = result[outcome]
        if entry is None:
            out.append(
                DataWarning(
                    code="adjusted_unavailable",
                    asset=asset,
                    message=f"no difficulty-adjusted {what} effect: {reasons[outcome]}",
                    values={"outcome": outcome},
                )
            )
        elif entry["diagnostics"]["method"] != "glm":
            out.append(
                DataWarning(
                    code="adjusted_fallback",
                    asset=asset,
                    message=f"the adjusted {what} regression fell back to a penalised fit: "
                    f"{entry['diagnostics']['fallbackReason']}; its intervals are approximate",
                    values={"outcome": outcome, "method": entry["diagnostics"]["method"]},
                )
            )
    return out


def adjusted_of_rows(
    rows: pd.DataFrame,
    config: DecisionsConfig,
    *,
    run_table: pd.DataFrame | None = None,
    asset: str = ADJUSTED_ASSET,
) -> AdjustedResult:
    """:func:`adjusted_effects` from a window's issue rows (``run_table`` supplies ``files_changed``)."""
    data = adjusted_frame(rows, run_table)
    results: dict[str, dict | None] = {}
    reasons: dict[str, str | None] = {}
    for outcome in OUTCOMES:
        results[outcome], reasons[outcome] = adjust_outcome(data, outcome, config)
    return AdjustedResult(
        delivered=results["delivered"], cost=results["cost"], warnings=_warnings(results, reasons, asset)
    )


def adjusted_effects(
    run_table: pd.DataFrame,
    window: Window,
    config: DecisionsConfig,
    *,
    rows: pd.DataFrame | None = None,
    asset: str = ADJUSTED_ASSET,
) -> AdjustedResult:
    """Difficulty-adjusted delivery and cost effects per model for ``window`` (module doc)."""
    if rows is None:
        rows = window_issue_rows(run_table, window)
    return adjusted_of_rows(rows, config, run_table=run_table, asset=asset)
