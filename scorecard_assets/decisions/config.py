"""The ``decisions:`` section of the configuration file (docs/decisions.md "Configuration").

A pydantic model like the rest of ``config.py``: unknown keys and out-of-range values fail at load
time. Every default is the value docs/decisions.md argues for; the sample fleet runs on them.

Pure module: no Dagster.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

Covariate = Literal["repo", "risk_class", "tier", "ac_total", "files_changed"]
ALL_COVARIATES: tuple[Covariate, ...] = ("repo", "risk_class", "tier", "ac_total", "files_changed")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AlertsConfig(_Strict):
    """Change alerts over weekly bins (docs/decisions.md "Change alerts")."""

    false_alarm_rate: float = Field(
        default=0.05,
        gt=0,
        lt=0.5,
        description="Benjamini-Hochberg level over every series of one report; with no real change "
        "anywhere it is also the chance that the report raises any alert",
    )
    permutations: int = Field(
        default=999, ge=99, le=20_000, description="Monte Carlo permutations per series (p floor 1/(B+1))"
    )
    lookback_windows: int = Field(
        default=12, ge=4, le=104, description="weekly bins up to the evaluated week that one test reads"
    )
    recent_windows: int = Field(
        default=3,
        ge=1,
        le=52,
        description="alert only when the estimated change lies in the last this many weeks "
        "(an older change was already reported)",
    )
    min_series_issues: int = Field(
        default=30, ge=4, description="a series with fewer issues over the lookback is not tested"
    )
    min_segment_issues: int = Field(
        default=8, ge=2, description="each side of a candidate change holds at least this many issues"
    )
    tier_shift_tvd: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description="total-variation distance between the tier (or risk) mix before and after the change "
        "above which the mix shift is named in the alert",
    )

    @model_validator(mode="after")
    def _recent_inside_lookback(self) -> AlertsConfig:
        if self.recent_windows >= self.lookback_windows:
            raise ValueError(
                f"decisions.alerts.recent_windows ({self.recent_windows}) must be smaller than "
                f"lookback_windows ({self.lookback_windows})"
            )
        return self


class DecisionsConfig(_Strict):
    """Routing advice, frontier, change alerts and adjusted effects (docs/decisions.md)."""

    margin_points: float = Field(
        default=5.0,
        gt=0,
        le=50,
        description="non-inferiority margin in delivery-rate percentage points: an option no more than "
        "this much below the best counts as no worse",
    )
    level: float = Field(
        default=0.05, gt=0, lt=0.5, description="one-sided level of the non-inferiority test"
    )
    interval_level: float = Field(
        default=0.90, gt=0, lt=1, description="two-sided level of the bootstrap intervals shown"
    )
    resamples: int = Field(default=2000, ge=200, le=100_000, description="bootstrap resamples per option")
    seed: int = Field(default=20261201, ge=0, description="seed of every random draw (reproducible results)")
    min_runs: int = Field(
        default=20,
        ge=2,
        description="issues (one canonical run each) an option needs in a segment before advice uses it",
    )
    frontier_min_runs: int = Field(
        default=5, ge=1, description="issues an option needs in a segment to be drawn on the frontier"
    )
    covariates: tuple[Covariate, ...] = Field(
        default=ALL_COVARIATES,
        description="covariates of the adjusted regressions; an empty list fits model only (no adjustment)",
    )
    adjusted_min_runs: int = Field(
        default=5, ge=2, description="issues a model needs in the window to get an adjusted effect"
    )
    ridge_penalty: float = Field(
        default=0.25,
        gt=0,
        le=100,
        description="L2 penalty (a normal prior's precision per coefficient, intercept free) of the fallback "
        "fit used when the plain fit separates, is singular or does not converge",
    )
    alerts: AlertsConfig = Field(default_factory=AlertsConfig)

    @model_validator(mode="after")
    def _unique_covariates(self) -> DecisionsConfig:
        if len(set(self.covariates)) != len(self.covariates):
            raise ValueError(f"decisions.covariates lists a covariate twice: {list(self.covariates)}")
        return self
