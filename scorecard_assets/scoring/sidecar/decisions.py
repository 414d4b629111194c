"""The sidecar's ``decisions`` block: its pydantic contract (docs/decisions.md "What the report shows").

The block is ``report/decisions.py`` ``decisions_sidecar``: one key per part (``keys.DECISIONS_KEYS``),
each the ``to_sidecar()`` dict of a decisions module, or None when that part was not computed.
Strict like the rest of the sidecar: unknown keys are refused, counts are non-negative integers,
rates lie in 0..1, every interval is a pair. Numbers that could not be measured are null.

Pure module, no Dagster.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Count = Annotated[int, Field(ge=0)]
Rate = Annotated[float, Field(ge=0.0, le=1.0)]
Interval = Annotated[list[float | None], Field(min_length=2, max_length=2)]
Kind = Literal["model", "pairing"]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


# ------------------------------------------------------------------------------------------ frontier


class FrontierOption(_Strict):
    option: str
    n: Count
    delivered: Count
    deliveryRate: Rate
    deliveryRateInterval: Interval
    costSamples: Count
    spendUsd: float | None
    spendPerDeliveredUsd: float | None
    spendPerDeliveredInterval: Interval
    spendPerIssueUsd: float | None
    onFrontier: bool
    frontierShare: Rate | None


class FrontierSegment(_Strict):
    segment: str
    riskClass: str | None
    tier: str | None
    kind: Kind
    n: Count
    unroutableIssues: Count
    options: list[FrontierOption]
    frontier: list[str]


class Frontier(_Strict):
    segments: list[FrontierSegment]


# ------------------------------------------------------------------------------------------- routing


class AdviceTest(_Strict):
    name: str
    marginPoints: float
    level: float
    resamples: Count
    minRuns: Count


class AdviceEvidence(_Strict):
    n: Count
    deliveryRate: Rate
    deliveryRateInterval: Interval
    spendPerDeliveredUsd: float | None
    spendPerDeliveredInterval: Interval
    bestN: Count
    bestDeliveryRate: Rate
    difference: float | None
    differenceLowerBound: float | None
    differenceInterval: Interval | None
    bootstrapP: Rate | None
    holmP: Rate | None


class AdviceSaving(_Strict):
    issues: Count
    actualSpendUsd: float | None
    actualSpendPerIssueUsd: float | None
    advisedSpendPerIssueUsd: float | None
    expectedSpendUsd: float | None
    expectedSavingUsd: float | None
    expectedSavingInterval: Interval
    actualDeliveryRate: Rate | None
    advisedDeliveryRate: Rate | None
    deliveryRateChange: float | None


class RefusedOption(_Strict):
    option: str
    n: Count
    reason: Literal["too_few_runs", "no_cost", "not_shown_non_inferior", "cheaper_option_passed"]
    deliveryRate: Rate | None
    spendPerDeliveredUsd: float | None
    difference: float | None
    bootstrapP: Rate | None
    holmP: Rate | None


class AdviceEntry(_Strict):
    segment: str
    riskClass: str | None
    tier: str | None
    kind: Kind
    status: Literal["advice", "no_advice"]
    reason: Literal["no_issues", "too_few_runs", "single_option", "no_cost"] | None
    reasonText: str | None
    advised: str | None
    best: str | None
    advisedIsBest: bool | None
    test: AdviceTest
    evidence: AdviceEvidence | None
    saving: AdviceSaving | None
    refused: list[RefusedOption]


class Routing(_Strict):
    test: str
    entries: list[AdviceEntry]


# -------------------------------------------------------------------------------------------- alerts

Metric = Literal["deliveryRate", "costPerDeliveredUsd"]
SeriesKind = Literal["model", "gateway"]
Direction = Literal["worse", "better"]


class AlertMethod(_Strict):
    name: str
    falseAlarmRate: float
    permutations: Count
    lookbackWindows: Count
    recentWindows: Count
    minSeriesIssues: Count
    minSegmentIssues: Count


class SeriesTest(_Strict):
    kind: SeriesKind
    name: str
    metric: Metric
    tested: bool
    reason: Literal["too_few_issues", "one_week", "no_split"] | None
    issues: Count
    weeks: Count
    statistic: float | None
    p: Rate | None
    q: Rate | None
    changeWeek: str | None
    before: float | None
    after: float | None
    direction: Direction | None
    alert: bool


class AlertNote(_Strict):
    what: str
    value: str | None
    week: str
    detail: Any


class TrendPoint(_Strict):
    week: str
    n: Count
    value: float | None


class Alert(_Strict):
    kind: SeriesKind
    name: str
    metric: Metric
    direction: Direction
    changeWeek: str
    before: float
    after: float
    beforeIssues: Count
    afterIssues: Count
    p: Rate
    q: Rate
    annotations: list[AlertNote]
    trend: list[TrendPoint]


class Alerts(_Strict):
    evaluatedWeek: str | None
    weeks: list[str]
    method: AlertMethod
    alerts: list[Alert]
    series: list[SeriesTest]


# ------------------------------------------------------------------------------------------ adjusted


class FitDiagnostics(_Strict):
    outcome: Literal["delivered", "cost"]
    family: str
    method: Literal["glm", "ridge"]
    fallbackReason: str | None
    n: Count
    excludedIssues: Count
    excludedModels: list[str]
    covariates: list[str]
    droppedColumns: list[str]
    parameters: Count
    converged: bool
    iterations: Count | None
    devianceExplained: float | None
    maxAbsMoved: float | None


class AdjustedEffect(_Strict):
    model: str
    n: Count
    raw: float | None
    adjusted: float | None
    adjustedInterval: Interval
    moved: float | None
    contrast: float | None
    contrastInterval: Interval
    estimated: bool


class AdjustedOutcome(_Strict):
    outcome: Literal["delivered", "cost"]
    scale: str
    contrastKind: Literal["difference", "ratio"]
    reference: str
    diagnostics: FitDiagnostics
    effects: list[AdjustedEffect]


class Adjusted(_Strict):
    delivered: AdjustedOutcome | None
    cost: AdjustedOutcome | None


# ---------------------------------------------------------------------------------- pairing compare


class TopPair(_Strict):
    rank: Annotated[int, Field(ge=1)] | None
    label: str
    scoreAdj: float | None
    interval: Interval
    tie: bool | None
    hjudged: Count | None


class AxisValue(_Strict):
    label: str
    value: float | None
    position: float | None
    n: Count | None


class AxisComparison(_Strict):
    axis: str
    tier: str
    values: list[AxisValue]
    spread: float | None
    separating: bool
    leader: str | None


class TierContribution(_Strict):
    tier: str
    weight: float
    contribution: float | None


class LeadGap(_Strict):
    between: Annotated[list[str], Field(min_length=2, max_length=2)]
    scoreGap: float | None
    tiers: list[TierContribution]


class Perturbation(_Strict):
    tier: str
    factor: float
    top: list[str]
    changed: bool


class Sensitivity(_Strict):
    baseline: list[str]
    perturbations: list[Perturbation]
    stable: bool
    changedBy: list[str]


class Comparison(_Strict):
    pool: Literal["fleet", "imported"]
    view: str
    title: str
    groups: Count
    top: list[TopPair]
    axes: list[AxisComparison]
    gap: LeadGap | None
    sensitivity: Sensitivity


class PairingComparison(_Strict):
    top: Count
    separation: float
    comparisons: list[Comparison]


class HarnessRow(_Strict):
    harness: str
    version: str
    n: Count
    delivered: Count
    deliveryRate: Rate
    deliveryRateInterval: Interval
    costSamples: Count
    spendPerDeliveredUsd: float | None


class HarnessView(_Strict):
    rows: list[HarnessRow]


class Decisions(_Strict):
    """The ``decisions`` block: each part, or None when it was not computed."""

    frontier: Frontier | None
    routing: Routing | None
    alerts: Alerts | None
    adjusted: Adjusted | None
    pairingComparison: PairingComparison | None
    harness: HarnessView | None
