"""The JSON sidecar (``model-scorecard.json``): its pydantic contract, key order and serialiser.

Shape (docs/scoring.md "The sidecar"): the reference's top-level keys
``generatedAt .. warnings`` in its order, then ours ``windowMode .. warningRecords``. Every rollup
(bucket, total, provider, repo total, grand total, risk class) holds the reference's rollup fields
in its order; ours may follow (``costEstimateSamples``, the delivered issues whose cost is a
price-table estimate). The key lists themselves are defined once in ``keys.py``.

- :func:`validate_sidecar` checks a whole sidecar (strict types: an int field takes no float or
  string, a rate lies in 0..1, sample counts never exceed what they sample).
- :func:`validate_reference_part` checks only the reference keys, and accepts rollups of older
  reference versions (the 2026-09-07 sidecar has no ``costFromRunLogSamples``,
  ``cacheTokenSamples`` nor the ``*PerIssue`` counts; they came later).
- :func:`sidecar_key_order_problems` lists keys that are missing, unknown or out of order (pydantic
  does not see order; the reference's consumers and our payload comparison do).
- :func:`dump_sidecar` serialises like the reference's ``JSON.stringify(x, null, 2) + "\\n"``:
  floats unrounded; NaN and infinities become ``null`` (JSON has neither; "not measured" is null);
  integral floats print without ``.0`` as JavaScript does; numpy/pandas scalars become plain values.

Pure module, no Dagster.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
import pandas as pd
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    create_model,
    model_validator,
)

from scorecard_assets.js_numbers import js_number
from scorecard_assets.pairings.constants import AXES, TIER_NAMES
from scorecard_assets.records import DataWarning, SourceStat
from scorecard_assets.sanitize import scrub_json_text
from scorecard_assets.scoring.scorecard import DROP_THRESHOLD
from scorecard_assets.scoring.sidecar.decisions import Decisions
from scorecard_assets.scoring.sidecar.keys import (
    DECISIONS_KEYS,
    DROP_KEYS,
    GROUP_KEYS,
    LATER_ROLLUP_KEYS,
    OUR_GROUP_KEYS,
    OUR_ROLLUP_KEYS,
    PAIRING_POOLS,
    PHASE_KEYS,
    POOL_KEYS,
    REFERENCE_KEYS,
    ROLLUP_KEYS,
    SIDECAR_KEYS,
    TOTAL_OPTIONAL_TAIL,
    VIEW_KEYS,
)

VIEW_NAMES = Literal["model", "family", "modelEffort", "modelCombo", "famCombo", "modelEffortCombo"]
TIER_NAME = Literal["Outcome", "Cost", "Precision", "Discipline", "Efficiency", "Latency"]

LEGACY_CONTEXT_KEY = "legacy_rollups"

Count = Annotated[int, Field(ge=0)]
Rate = Annotated[float, Field(ge=0.0, le=1.0)]
NonNegative = Annotated[float, Field(ge=0.0)]
IsoDate = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


class PhaseMedian(_Strict):
    phase: str
    n: Count
    medianSeconds: float


class Rollup(_Strict):
    """The rollup fields of one group of report rows (docs/scoring.md "Rollups")."""

    n: Count
    delivered: Count
    blocked: Count
    deliveryRate: Rate | None
    costPerDeliveredUsd: NonNegative | None
    costSamples: Count
    costFromRunLogSamples: Count | None = None
    medianApiMinutes: NonNegative | None
    billableTokensPerDeliveredIssue: NonNegative | None
    tokenSamples: Count
    cacheTokenSamples: Count | None = None
    medianWallClockMinutes: float | None
    acMet: Count | None
    acTotal: Count | None
    conformanceRate: Rate | None
    conformanceSamples: Count
    stalls: Count
    escalations: Count
    unverifiedExits: Count
    stallsPerIssue: NonNegative | None = None
    escalationsPerIssue: NonNegative | None = None
    unverifiedExitsPerIssue: NonNegative | None = None
    reviewFixed: Count | None
    reviewEscalated: Count | None
    reviewFixedPerIssue: NonNegative | None
    reviewEscalatedPerIssue: NonNegative | None
    reviewSamples: Count
    phaseMedians: list[PhaseMedian]
    agentClis: list[str]
    costEstimateSamples: Count | None = None
    unverifiedExitEvents: Count | None = None

    @model_validator(mode="before")
    @classmethod
    def _later_fields_present(cls, data: Any, info: ValidationInfo) -> Any:
        """Our sidecar always carries the later rollup fields; only a legacy reference part may not."""
        legacy = bool((info.context or {}).get(LEGACY_CONTEXT_KEY))
        if isinstance(data, dict) and not legacy:
            missing = [f for f in LATER_ROLLUP_KEYS if f not in data]
            if missing:
                raise ValueError(f"missing rollup field(s): {', '.join(missing)}")
            for count_field in ("costFromRunLogSamples", "cacheTokenSamples"):
                if data.get(count_field) is None:
                    raise ValueError(f"{count_field} must be a count, not null")
        return data

    @model_validator(mode="after")
    def _samples_within_their_rows(self) -> Rollup:
        """Counts that sample a subset never exceed it."""
        checks = [
            ("delivered", self.delivered, "n", self.n),
            ("blocked", self.blocked, "n", self.n),
            ("costSamples", self.costSamples, "delivered", self.delivered),
            ("tokenSamples", self.tokenSamples, "delivered", self.delivered),
            ("conformanceSamples", self.conformanceSamples, "n", self.n),
            ("reviewSamples", self.reviewSamples, "n", self.n),
        ]
        if self.costFromRunLogSamples is not None:
            checks.append(
                ("costFromRunLogSamples", self.costFromRunLogSamples, "costSamples", self.costSamples)
            )
        if self.cacheTokenSamples is not None:
            checks.append(("cacheTokenSamples", self.cacheTokenSamples, "tokenSamples", self.tokenSamples))
        if self.costEstimateSamples is not None:
            checks.append(("costEstimateSamples", self.costEstimateSamples, "costSamples", self.costSamples))
        broken = [f"{a} ({va}) > {b} ({vb})" for a, va, b, vb in checks if va > vb]
        if broken:
            raise ValueError("inconsistent counts: " + "; ".join(broken))
        return self


class Bucket(Rollup):
    model: str
    repo: str
    tier: str


class ProviderRollup(Rollup):
    provider: str


class ModelTotal(Rollup):
    model: str
    providers: list[ProviderRollup]
    deliveryRateDelta: float | None = None
    deliveryRateBaselineWindowEnd: str | None = None


class RepoTotal(Rollup):
    repo: str
    model: str


class GrandTotal(Rollup):
    model: Literal["TOTAL"]


class RiskClassRollup(Rollup):
    riskClass: str


class Drop(_Strict):
    """A model whose delivery rate fell by more than 10 points against the baseline window."""

    model: str
    previousRate: Rate
    currentRate: Rate
    n: Count

    @model_validator(mode="after")
    def _is_a_drop(self) -> Drop:
        if not self.currentRate - self.previousRate < DROP_THRESHOLD:
            raise ValueError(f"not a drop of more than 10 points: {self.previousRate} -> {self.currentRate}")
        return self


# One value per Pragmatikos axis (``raw``, ``adj``, ``pool``), one evidence count per axis (``ev``) and
# one score per tier, field names and order taken from the method's constants.
AxisValues = create_model("AxisValues", __base__=_Strict, **{axis: (float | None, ...) for axis in AXES})
AxisEvidence = create_model("AxisEvidence", __base__=_Strict, **{axis: (Count, ...) for axis in AXES})
TierScores = create_model("TierScores", __base__=_Strict, **{tier: (float, ...) for tier in TIER_NAMES})


class PoolGroup(_Strict):
    """One Pragmatikos group (docs/pairings.md "The pool file") plus our rank, 90 % interval and tie."""

    id: str
    label: str
    hue: float
    hjudged: Count
    hshipped: Count
    hshipJudged: Count
    raw: AxisValues
    adj: AxisValues
    ev: AxisEvidence
    tiers: TierScores
    tiersAdj: TierScores
    imputed: list[TIER_NAME]
    score: float | None
    scoreAdj: float | None
    rank: Annotated[int, Field(ge=1)] | None
    interval: Annotated[list[float], Field(min_length=2, max_length=2)] | None
    tie: bool

    @model_validator(mode="after")
    def _ordered_interval(self) -> PoolGroup:
        if self.interval is not None and self.interval[0] > self.interval[1]:
            raise ValueError(f"interval low {self.interval[0]} is above high {self.interval[1]}")
        return self


class PoolMeta(BaseModel):
    """The pool's summary (docs/pairings.md "The pool file"); the engine may add fields of its own."""

    model_config = ConfigDict(strict=True, extra="allow", frozen=True)

    generated: str
    start: str | None
    end: str | None
    judged: Count
    shipped: Count
    shipJudged: Count
    pending: Count
    impossible: Count
    contributors: Count
    schema_: int = Field(alias="schema")
    minJudged: Count
    evidenceK: NonNegative
    weights: str


class PoolView(_Strict):
    groups: list[PoolGroup]
    pool: AxisValues
    span: int


class PoolResult(_Strict):
    meta: PoolMeta
    views: dict[VIEW_NAMES, PoolView]


class Pairings(_Strict):
    fleet: PoolResult | None
    imported: PoolResult | None
    # your own sessions (docs/sessions.md); absent when the config's sessions: section is off
    sessions: PoolResult | None = None


class BatchModelTokens(_Strict):
    model: str | None
    tokens: NonNegative | None
    costUsd: NonNegative | None


class BatchRow(_Strict):
    """One batch of the window (docs/batches.md "The per-batch row")."""

    batch: str
    repo: str
    kind: Literal["sched", "manual"]
    anchor: Count | None
    enqueued: Count | None
    members: list[Count]
    evictions: Count
    outcome: Literal["shipped", "dissolved", "blocked", "open"]
    blockedReason: str | None
    pr: Count | None
    shipped: Count
    ciFixAttempts: Count | None
    gateRuns: Count
    gateMinutes: NonNegative | None
    wallMinutes: NonNegative | None
    tokensByModel: list[BatchModelTokens] | None
    tokens: NonNegative | None
    costUsd: NonNegative | None
    prepTokens: NonNegative | None


class BatchSummaryRow(_Strict):
    """One repo and kind (docs/batches.md "The summary rows"); batch-only fields null on full-cycle."""

    repo: str
    kind: Literal["sched", "manual", "full-cycle"]
    batches: Count | None
    singleMember: Count | None
    singleMemberRate: Rate | None
    shippedBatches: Count | None
    dissolvedBatches: Count | None
    blockedBatches: Count | None
    enqueued: Count | None
    shippedIssues: Count
    evictions: Count | None
    gateRuns: Count
    issuesPerGateRun: NonNegative | None
    medianGateMinutes: NonNegative | None
    wallMinutesPerShipped: NonNegative | None
    wallSamples: Count
    tokensPerShipped: NonNegative | None
    tokenSamples: Count
    prepTokensPerShipped: NonNegative | None
    prepSamples: Count
    costPerShippedUsd: NonNegative | None
    costSamples: Count


class BatchAmortization(_Strict):
    summary: list[BatchSummaryRow]
    batches: list[BatchRow]


class ReferenceSidecar(_Strict):
    """The reference keys of the sidecar (docs/scoring.md "The sidecar")."""

    generatedAt: str
    windowStart: IsoDate
    windowEnd: IsoDate
    windowDays: Annotated[int, Field(gt=0)] | None
    since: IsoDate | None
    buckets: list[Bucket]
    totals: list[ModelTotal]
    repoTotals: list[RepoTotal]
    grandTotal: GrandTotal
    phases: list[PhaseMedian]
    warnings: list[str]


class Sidecar(ReferenceSidecar):
    """The whole sidecar: the reference keys, then ours."""

    windowMode: Literal["runs", "issues"]
    baselineWindowEnd: IsoDate | None
    drops: list[Drop]
    riskClasses: list[RiskClassRollup]
    batchAmortization: BatchAmortization
    pairings: Pairings
    sources: list[SourceStat]
    warningRecords: list[DataWarning]
    decisions: Decisions | None  # decisions.py: routing advice, alerts, adjusted effects, comparisons


def validate_sidecar(d: dict) -> Sidecar:
    """Validate a whole sidecar; raises ``pydantic.ValidationError`` naming each bad field."""
    return Sidecar.model_validate(d)


def validate_reference_part(d: dict) -> ReferenceSidecar:
    """Validate the reference keys of ``d`` (ours are ignored), accepting older reference rollups."""
    part = {k: d[k] for k in REFERENCE_KEYS if k in d}
    return ReferenceSidecar.model_validate(part, context={LEGACY_CONTEXT_KEY: True})


def sidecar_problems(d: dict) -> list[str]:
    """Everything wrong with a whole sidecar, as lines: validation errors, then key-order problems."""
    problems: list[str] = []
    try:
        validate_sidecar(d)
    except ValidationError as err:
        for e in err.errors():
            where = ".".join(str(p) for p in e["loc"]) or "(top level)"
            problems.append(f"{where}: {e['msg']}")
    return problems + sidecar_key_order_problems(d)


# -------------------------------------------------------------------------------------- key order


def sidecar_key_order_problems(d: dict, *, reference_only: bool = False) -> list[str]:
    """Keys missing, unknown or out of order anywhere a key order is part of the contract.

    ``reference_only``: ``d`` is a reference-style sidecar (only the reference keys; its rollups may
    lack the fields the reference added later). Empty list = the order is right.
    """
    if not isinstance(d, dict):
        return ["(top level): not an object"]
    top_required = REFERENCE_KEYS if reference_only else SIDECAR_KEYS
    problems = _order_problems("(top level)", d, top_required, top_required)
    rollup_required = _rollup_required(reference_only)
    for section, prefix, tail in (
        ("buckets", ("model", "repo", "tier"), ()),
        ("totals", ("model",), ("providers",)),
        ("repoTotals", ("repo", "model"), ()),
        ("riskClasses", ("riskClass",), ()),
    ):
        if reference_only and section == "riskClasses":
            continue
        for i, row in _indexed_dicts(d.get(section)):
            problems += _rollup_order(f"{section}[{i}]", row, prefix, tail, rollup_required)
            if section == "totals":
                for j, sub in _indexed_dicts(row.get("providers")):
                    problems += _rollup_order(
                        f"totals[{i}].providers[{j}]", sub, ("provider",), (), rollup_required
                    )
    if isinstance(d.get("grandTotal"), dict):
        problems += _rollup_order("grandTotal", d["grandTotal"], ("model",), (), rollup_required)
    for i, row in _indexed_dicts(d.get("phases")):
        problems += _order_problems(f"phases[{i}]", row, PHASE_KEYS, PHASE_KEYS)
    if not reference_only:
        problems += _our_sections_order(d)
    return problems


def _rollup_required(reference_only: bool) -> tuple[str, ...]:
    if reference_only:
        return tuple(f for f in ROLLUP_KEYS if f not in LATER_ROLLUP_KEYS)
    return ROLLUP_KEYS


def _rollup_order(
    where: str, row: dict, prefix: tuple[str, ...], tail: tuple[str, ...], rollup_required: tuple[str, ...]
) -> list[str]:
    optional_tail = TOTAL_OPTIONAL_TAIL if tail == ("providers",) else ()
    expected = prefix + ROLLUP_KEYS + OUR_ROLLUP_KEYS + tail + optional_tail
    required = prefix + rollup_required + tail
    problems = _order_problems(where, row, expected, required)
    for j, phase in _indexed_dicts(row.get("phaseMedians")):
        problems += _order_problems(f"{where}.phaseMedians[{j}]", phase, PHASE_KEYS, PHASE_KEYS)
    return problems


def _our_sections_order(d: dict) -> list[str]:
    problems: list[str] = []
    for i, row in _indexed_dicts(d.get("drops")):
        problems += _order_problems(f"drops[{i}]", row, DROP_KEYS, DROP_KEYS)
    source_keys = tuple(SourceStat.model_fields)
    for i, row in _indexed_dicts(d.get("sources")):
        problems += _order_problems(f"sources[{i}]", row, source_keys, source_keys)
    warning_keys = tuple(DataWarning.model_fields)
    for i, row in _indexed_dicts(d.get("warningRecords")):
        problems += _order_problems(f"warningRecords[{i}]", row, warning_keys, warning_keys)
    pairings = d.get("pairings")
    if isinstance(pairings, dict):
        problems += _order_problems("pairings", pairings, PAIRING_POOLS, ("fleet", "imported"))
        for origin in PAIRING_POOLS:
            if isinstance(pairings.get(origin), dict):
                problems += _pool_order(f"pairings.{origin}", pairings[origin])
    if isinstance(d.get("decisions"), dict):
        problems += _order_problems("decisions", d["decisions"], DECISIONS_KEYS, DECISIONS_KEYS)
    return problems


def _pool_order(where: str, pool: dict) -> list[str]:
    problems = _order_problems(where, pool, POOL_KEYS, POOL_KEYS)
    views = pool.get("views")
    if not isinstance(views, dict):
        return problems
    for name, view in views.items():
        if not isinstance(view, dict):
            continue
        problems += _order_problems(f"{where}.views.{name}", view, VIEW_KEYS, VIEW_KEYS)
        for i, group in _indexed_dicts(view.get("groups")):
            expected = GROUP_KEYS + tuple(k for k in group if k in OUR_GROUP_KEYS)
            required = GROUP_KEYS + OUR_GROUP_KEYS
            problems += _order_problems(f"{where}.views.{name}.groups[{i}]", group, expected, required)
    return problems


def _indexed_dicts(value: object) -> list[tuple[int, dict]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, dict)] if isinstance(value, list) else []


def _order_problems(where: str, row: dict, expected: Sequence[str], required: Sequence[str]) -> list[str]:
    """Missing required keys, unknown keys, and the first key out of the expected order."""
    actual = list(row.keys())
    known = set(expected)
    problems = [f"{where}: missing key {k!r}" for k in required if k not in row]
    problems += [f"{where}: unknown key {k!r}" for k in actual if k not in known]
    present_in_order = [k for k in expected if k in row]
    actual_known = [k for k in actual if k in known]
    for position, (got, want) in enumerate(zip(actual_known, present_in_order, strict=True)):
        if got != want:
            problems.append(
                f"{where}: key {got!r} at position {position} (among the contract's keys), expected {want!r}"
            )
            break
    return problems


# ------------------------------------------------------------------------------------ serialising


def dump_sidecar(d: dict) -> str:
    """``d`` as the sidecar file text: 2-space JSON, non-ASCII kept, a final newline.

    NaN and +-infinity become ``null``; integral floats below 1e21 print as integers (as
    ``JSON.stringify`` does, ``js_numbers.js_number``); numpy / pandas scalars and pydantic models
    become plain JSON values; dates become ISO strings. Any other type raises ``TypeError`` naming
    where it sits.
    """
    return json.dumps(to_json_value(d), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def to_json_value(value: Any, where: str = "$") -> Any:
    """A JSON-ready copy of ``value`` (see :func:`dump_sidecar`)."""
    if isinstance(value, str):
        return scrub_json_text(value)  # docs/reliability.md "Sanitiser": no hidden characters
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, dict):
        return {_json_key(k, where): to_json_value(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, BaseModel):
        return to_json_value(value.model_dump(mode="python", by_alias=True), where)
    if isinstance(value, np.generic):
        return to_json_value(value.item(), where)
    if isinstance(value, np.ndarray):
        return to_json_value(value.tolist(), where)
    if value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    raise TypeError(f"sidecar value at {where} has type {type(value).__name__}, which JSON cannot hold")


def _json_key(key: object, where: str) -> str:
    if isinstance(key, str):
        return scrub_json_text(key)
    raise TypeError(f"sidecar key {key!r} at {where} is not a string")
