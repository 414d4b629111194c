"""Model scorecard tables from issue rows: buckets, totals with providers, grand total, repo totals,
phases and risk classes (docs/scoring.md "Rollups"; key order: "The sidecar").

Input: a frame of ``schemas.ISSUE_ROWS`` (one row per issue). Every function returns plain
Python values (``int``, ``float``, ``str``, ``bool``, ``None``, lists and dicts) that
``json.dumps(..., allow_nan=False)`` accepts: a metric with no sample is ``None``, never NaN.

Numbers follow the reference's JSON: unrounded, and an integral value is written as an ``int``
(``1`` rather than ``1.0``), as JavaScript's ``JSON.stringify`` would (``js_numbers.js_number``).
Sums and means add values in row order, like the reference's ``reduce``.

Each rollup holds the reference's fields in its order (``sidecar.keys.ROLLUP_KEYS``), then ours
(``sidecar.keys.OUR_ROLLUP_KEYS``: ``costEstimateSamples``). ``costFromRunLogSamples`` keeps the
reference's rule (cost source ``agent-log``); price-table estimates are counted apart in
``costEstimateSamples``.

Grouping keys are tuples of columns (never joined strings), so a model name containing spaces or
separators stays one bucket. Lists are sorted with :func:`collation.collation_key` (JS
``localeCompare``).

Pure module: no Dagster.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.js_numbers import Number, finite_float, js_number
from scorecard_assets.scoring.collation import collation_key
from scorecard_assets.scoring.sidecar.keys import OUR_ROLLUP_KEYS, ROLLUP_KEYS

UNKNOWN = "<unknown>"
DIRECT = "direct"
UNCLASSIFIED = "<unclassified>"
RISK_CLASS_ORDER = ("low", "med", "high", UNCLASSIFIED)
AGENT_LOG_SOURCE = "agent-log"
ESTIMATE_SOURCE = "estimate"


def _sum(values: Sequence[float]) -> float:
    """Left-to-right sum (the reference's ``reduce((a, b) => a + b, 0)``)."""
    total = 0.0
    for v in values:
        total += v
    return total


def _mean(values: Sequence[float]) -> float | None:
    return _sum(values) / len(values) if values else None


def median(values: Sequence[float]) -> float | None:
    """Middle value; the mean of the two middle values for an even count; None when empty. No rounding."""
    if not values:
        return None
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


# ----------------------------------------------------------------------------- one bucket


def _is_text(value: object) -> bool:
    return isinstance(value, str) and value != ""


def phase_medians(phase_dicts: Iterable[object]) -> list[dict[str, Any]]:
    """``[{phase, n, medianSeconds}]`` over every (phase, seconds) of every row's ``phaseSeconds``.

    Sorted by median descending; equal medians keep the order in which phases were first seen.
    Non-numeric or non-finite seconds are not samples.
    """
    samples: dict[str, list[float]] = {}
    for phases in phase_dicts:
        if not isinstance(phases, dict):
            continue
        for phase, seconds in phases.items():
            kept = finite_float(seconds)
            if kept is not None:
                samples.setdefault(str(phase), []).append(kept)
    out = [
        {"phase": phase, "n": len(values), "medianSeconds": js_number(median(values))}
        for phase, values in samples.items()
    ]
    return sorted(out, key=lambda item: -item["medianSeconds"])


@dataclass(frozen=True)
class RowColumns:
    """The issue-row columns a rollup reads, extracted once as arrays (NaN = missing number).

    Grouped tables roll up index arrays into these columns instead of slicing frames per group.
    """

    delivered: np.ndarray
    blocked: np.ndarray
    cost: np.ndarray
    cost_from_log: np.ndarray
    cost_estimated: np.ndarray
    api_minutes: np.ndarray
    wall_minutes: np.ndarray
    input_tokens: np.ndarray
    output_tokens: np.ndarray
    cache_creation: np.ndarray
    cache_read: np.ndarray
    ac_met: np.ndarray
    ac_total: np.ndarray
    stalls: np.ndarray
    escalations: np.ndarray
    unverified_exits: np.ndarray
    unverified_exit_events: np.ndarray
    review_fixed: np.ndarray
    review_escalated: np.ndarray
    phase_seconds: list[object]
    agent_clis: list[object]

    @classmethod
    def of(cls, rows: pd.DataFrame) -> RowColumns:
        """The columns of an ``ISSUE_ROWS`` frame; non-numeric or non-finite numbers become NaN."""

        def numbers(column: str) -> np.ndarray:
            values = pd.to_numeric(rows[column], errors="coerce").astype("float64").to_numpy(copy=True)
            values[~np.isfinite(values)] = np.nan
            return values

        return cls(
            delivered=rows["delivered"].to_numpy(dtype=bool),
            blocked=rows["blocked"].to_numpy(dtype=bool),
            cost=numbers("costUsd"),
            cost_from_log=(rows["costSource"] == AGENT_LOG_SOURCE).to_numpy(dtype=bool),
            cost_estimated=(rows["costSource"] == ESTIMATE_SOURCE).to_numpy(dtype=bool),
            api_minutes=numbers("apiMinutes"),
            wall_minutes=numbers("wallClockMinutes"),
            input_tokens=numbers("inputTokens"),
            output_tokens=numbers("outputTokens"),
            cache_creation=numbers("cacheCreationTokens"),
            cache_read=numbers("cacheReadTokens"),
            ac_met=numbers("acMet"),
            ac_total=numbers("acTotal"),
            stalls=numbers("stalls"),
            escalations=numbers("escalations"),
            unverified_exits=numbers("unverifiedExits"),
            unverified_exit_events=numbers("unverifiedExitEvents")
            if "unverifiedExitEvents" in rows
            else np.zeros(len(rows), dtype="float64"),
            review_fixed=numbers("reviewFixed"),
            review_escalated=numbers("reviewEscalated"),
            phase_seconds=list(rows["phaseSeconds"]),
            agent_clis=list(rows["agentCli"]),
        )


def _known(values: np.ndarray) -> list[float]:
    """The non-NaN values in row order, as Python floats."""
    return values[~np.isnan(values)].tolist()


def _billable_tokens(c: RowColumns, done: np.ndarray) -> tuple[list[float], int]:
    """Billable tokens (input + output + cache creation + cache read, a missing cache half counting
    0) of the ``done`` rows that have both input and output, and how many of those carry cache tokens."""
    inp, out = c.input_tokens[done], c.output_tokens[done]
    create, read = c.cache_creation[done], c.cache_read[done]
    both = ~np.isnan(inp) & ~np.isnan(out)
    billable = inp + out + np.nan_to_num(create, nan=0.0) + np.nan_to_num(read, nan=0.0)
    with_cache = both & ~(np.isnan(create) & np.isnan(read))
    return billable[both].tolist(), int(with_cache.sum())


def _conformance(c: RowColumns, idx: np.ndarray) -> tuple[Number | None, Number | None, float | None, int]:
    """Σ acMet, Σ acTotal over rows with both, criteria-weighted rate, and the number of such rows."""
    met, total = c.ac_met[idx], c.ac_total[idx]
    both = ~np.isnan(met) & ~np.isnan(total)
    if not both.any():
        return None, None, None, 0
    met_sum, total_sum = _sum(met[both].tolist()), _sum(total[both].tolist())
    return js_number(met_sum), js_number(total_sum), _ratio(met_sum, total_sum), int(both.sum())


def _sum_or_none(values: list[float]) -> Number | None:
    return js_number(_sum(values)) if values else None


def _rollup(c: RowColumns, idx: np.ndarray) -> dict[str, Any]:
    """The rollup of the rows at positions ``idx`` (in row order) of ``c``."""
    n = len(idx)
    done = idx[c.delivered[idx]]
    costed = done[~np.isnan(c.cost[done])]
    costs = c.cost[costed].tolist()
    billable, cache_samples = _billable_tokens(c, done)
    ac_met, ac_total, conformance, conformance_samples = _conformance(c, idx)
    counters = {
        name: int(_sum(_known(values[idx])))
        for name, values in (
            ("stalls", c.stalls),
            ("escalations", c.escalations),
            ("unverifiedExits", c.unverified_exits),
        )
    }
    fixed, escalated = _known(c.review_fixed[idx]), _known(c.review_escalated[idx])
    delivered = len(done)
    out: dict[str, Any] = {
        "n": n,
        "delivered": delivered,
        "blocked": int(c.blocked[idx].sum()),
        "deliveryRate": js_number(_ratio(delivered, n)),
        "costPerDeliveredUsd": js_number(_mean(costs)),
        "costSamples": len(costs),
        "costFromRunLogSamples": int(c.cost_from_log[costed].sum()),
        "medianApiMinutes": js_number(median(_known(c.api_minutes[done]))),
        "billableTokensPerDeliveredIssue": js_number(_mean(billable)),
        "tokenSamples": len(billable),
        "cacheTokenSamples": cache_samples,
        "medianWallClockMinutes": js_number(median(_known(c.wall_minutes[done]))),
        "acMet": ac_met,
        "acTotal": ac_total,
        "conformanceRate": js_number(conformance),
        "conformanceSamples": conformance_samples,
        **counters,
        **{f"{name}PerIssue": js_number(_ratio(total, n)) for name, total in counters.items()},
        "reviewFixed": _sum_or_none(fixed),
        "reviewEscalated": _sum_or_none(escalated),
        "reviewFixedPerIssue": js_number(_mean(fixed)),
        "reviewEscalatedPerIssue": js_number(_mean(escalated)),
        "reviewSamples": len(fixed),
        "phaseMedians": phase_medians(c.phase_seconds[i] for i in idx),
        "agentClis": sorted({str(c.agent_clis[i]) for i in idx if _is_text(c.agent_clis[i])}),
        "costEstimateSamples": int(c.cost_estimated[costed].sum()),
        "unverifiedExitEvents": int(_sum(_known(c.unverified_exit_events[idx]))),
    }
    return {key: out[key] for key in ROLLUP_KEYS + OUR_ROLLUP_KEYS}


def bucket_rollup(rows: pd.DataFrame) -> dict[str, Any]:
    """Every metric of docs/scoring.md "Rollups" over ``rows``, keys in the order of ``ROLLUP_KEYS``,
    then ours (``OUR_ROLLUP_KEYS``; both from ``sidecar.keys``)."""
    return _rollup(RowColumns.of(rows), np.arange(len(rows)))


# ----------------------------------------------------------------------------- grouped tables


class _Table:
    """Issue rows prepared for grouping: their columns once, and the grouping labels - ``model`` and
    ``tier`` (missing or empty -> <unknown>), ``provider`` (missing -> direct), ``risk`` (anything but
    low/med/high -> <unclassified>) and ``repo``."""

    def __init__(self, rows: pd.DataFrame) -> None:
        self.columns = RowColumns.of(rows)
        self.labels = pd.DataFrame(
            {
                "model": [str(v) if _is_text(v) else UNKNOWN for v in rows["model"]],
                "repo": [str(v) for v in rows["repo"]],
                "tier": [str(v) if _is_text(v) else UNKNOWN for v in rows["tier"]],
                "provider": [str(v) if isinstance(v, str) else DIRECT for v in rows["provider"]],
                "risk": [
                    v if isinstance(v, str) and v in RISK_CLASS_ORDER[:3] else UNCLASSIFIED
                    for v in rows["riskClass"]
                ],
            },
            dtype=object,
        )

    def groups(
        self, keys: list[str], within: np.ndarray | None = None
    ) -> list[tuple[tuple[str, ...], np.ndarray]]:
        """(key tuple, row positions in row order) per distinct ``keys``, sorted with the collation key;
        ``within`` restricts the grouping to those positions."""
        positions = np.arange(len(self.labels)) if within is None else within
        if len(positions) == 0:
            return []
        labels = self.labels.iloc[positions]
        found = labels.groupby(keys, sort=False).indices
        grouped = [(k if isinstance(k, tuple) else (k,), positions[np.sort(i)]) for k, i in found.items()]
        return sorted(grouped, key=lambda item: tuple(collation_key(part) for part in item[0]))

    def rollup(self, idx: np.ndarray) -> dict[str, Any]:
        """The rollup of the rows at positions ``idx``."""
        return _rollup(self.columns, idx)


def buckets(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """One entry per (model, repo, tier): ``{model, repo, tier, ...rollup}``, sorted in that order."""
    table = _Table(rows)
    return [
        {"model": model, "repo": repo, "tier": tier, **table.rollup(idx)}
        for (model, repo, tier), idx in table.groups(["model", "repo", "tier"])
    ]


def totals(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """One entry per model over all repos and tiers: ``{model, ...rollup, providers}``, sorted by
    model; ``providers`` regroups the model's rows by ``provider`` (missing -> ``direct``)."""
    table = _Table(rows)
    return [
        {
            "model": model,
            **table.rollup(idx),
            "providers": [
                {"provider": provider, **table.rollup(sub)}
                for (provider,), sub in table.groups(["provider"], within=idx)
            ],
        }
        for (model,), idx in table.groups(["model"])
    ]


def grand_total(rows: pd.DataFrame) -> dict[str, Any]:
    """All rows as one bucket: ``{model: "TOTAL", ...rollup}``."""
    return {"model": "TOTAL", **bucket_rollup(rows)}


def repo_totals(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """One entry per (repo, model): ``{repo, model, ...rollup}``, sorted by repo then model."""
    table = _Table(rows)
    return [
        {"repo": repo, "model": model, **table.rollup(idx)}
        for (repo, model), idx in table.groups(["repo", "model"])
    ]


def phases(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Phase medians over all rows (``[{phase, n, medianSeconds}]``, median descending)."""
    return phase_medians(rows["phaseSeconds"])


def risk_classes(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """``[{riskClass, ...rollup}]`` in the order low, med, high, <unclassified>; only present classes."""
    table = _Table(rows)
    risks = table.labels["risk"].to_numpy()
    positions = {risk: np.flatnonzero(risks == risk) for risk in RISK_CLASS_ORDER}
    return [{"riskClass": risk, **table.rollup(idx)} for risk, idx in positions.items() if len(idx)]
