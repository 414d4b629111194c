"""The cost-quality frontier of one window, per segment, over models and over pairings
(docs/decisions.md "Frontier").

Unit: the scorecard's issue row (one canonical run per issue, ``schemas.ISSUE_ROWS``). An *option*
is a model (``model``) or a pairing (``plannerModel → builderModel``); a *segment* is the whole
window (``overall``) or one risk class × tier cell. Per option and segment:

- delivery rate = delivered / issues;
- spend per delivered issue = the summed cost of the option's issues that report a cost, divided by
  how many of those issues were delivered. Unlike the scorecard's ``costPerDeliveredUsd`` (the mean
  cost of delivered issues) it charges what failed issues cost too: it is what one delivered issue
  costs when routed there;
- bootstrap: the option's issues are resampled with replacement ``resamples`` times (seeded per
  segment, kind and option, so an option's draws do not depend on the others); each resample gives a
  rate and a spend; the intervals are their central ``interval_level`` percentile ranges.

The frontier holds the options that no other option beats on both axes (lower or equal spend and
higher or equal rate, one of them strictly). ``frontierShare`` is the fraction of resamples in which
the option is on the frontier of the resampled options: a measure of how sure its place is.
Options named ``<unknown>`` cannot be routed to and are left out (counted in ``unroutableIssues``).

Pure module: no Dagster.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.decisions._common import (
    OVERALL,
    PAIR_ARROW,
    UNKNOWN,
    chunks,
    interval,
    number,
    ordered,
    ratio,
    resample_counts,
    risk_label,
    rng_for,
    text_or,
)
from scorecard_assets.decisions.config import DecisionsConfig
from scorecard_assets.records import DataWarning
from scorecard_assets.scoring.scorecard import window_issue_rows
from scorecard_assets.scoring.windows import Window

KINDS = ("model", "pairing")
OPTION_KEYS = (
    "option",
    "n",
    "delivered",
    "deliveryRate",
    "deliveryRateInterval",
    "costSamples",
    "spendUsd",
    "spendPerDeliveredUsd",
    "spendPerDeliveredInterval",
    "spendPerIssueUsd",
    "onFrontier",
    "frontierShare",
)
SEGMENT_KEYS = ("segment", "riskClass", "tier", "kind", "n", "unroutableIssues", "options", "frontier")


@dataclass(frozen=True)
class Segment:
    """The whole window (both None) or one risk class × tier cell."""

    risk: str | None = None
    tier: str | None = None

    @property
    def key(self) -> str:
        return OVERALL if self.risk is None and self.tier is None else f"{self.risk} / {self.tier}"


@dataclass(frozen=True, eq=False)
class OptionSample:
    """One option in one segment: its observed counts and its bootstrap draws (arrays of ``resamples``)."""

    option: str
    n: int
    delivered: int
    costed: int
    delivered_costed: int
    spend: float
    rate_draws: np.ndarray
    spend_per_delivered_draws: np.ndarray
    spend_per_issue_draws: np.ndarray

    @property
    def rate(self) -> float:
        return self.delivered / self.n

    @property
    def spend_per_delivered(self) -> float:
        """Spend per delivered issue; NaN without a costed issue, inf when no costed issue delivered."""
        if self.costed == 0:
            return float("nan")
        return self.spend / self.delivered_costed if self.delivered_costed else float("inf")

    @property
    def spend_per_issue(self) -> float:
        return self.spend / self.costed if self.costed else float("nan")

    @property
    def has_cost(self) -> bool:
        return self.costed > 0


@dataclass(frozen=True, eq=False)
class SegmentSamples:
    """The options of one segment and kind, plus the segment's totals (for the saving over actual)."""

    segment: Segment
    kind: str
    n: int
    unroutable: int
    costed: int
    spend: float
    delivered: int
    options: list[OptionSample]


@dataclass(frozen=True)
class FrontierResult:
    """Frontier per segment and kind; ``samples`` keeps the draws for :mod:`routing` (not serialised)."""

    segments: list[dict[str, Any]]
    samples: list[SegmentSamples]
    warnings: list[DataWarning] = field(default_factory=list)

    def to_sidecar(self) -> dict[str, Any]:
        """``{"segments": [...]}``: every segment's options and frontier, JSON-ready, stable order."""
        return {"segments": self.segments}


# ----------------------------------------------------------------------------------------- rows


def decision_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """Issue rows reduced to what the decisions read: model, pairing, risk, tier, delivered, cost."""
    planner = [text_or(v, UNKNOWN) for v in rows["plannerModel"]]
    builder = [text_or(v, UNKNOWN) for v in rows["builderModel"]]
    cost = pd.to_numeric(rows["costUsd"], errors="coerce").astype("float64").to_numpy(copy=True)
    cost[~np.isfinite(cost)] = np.nan
    return pd.DataFrame(
        {
            "model": [text_or(v, UNKNOWN) for v in rows["model"]],
            "pairing": [f"{p}{PAIR_ARROW}{b}" for p, b in zip(planner, builder, strict=True)],
            "risk": [risk_label(v) for v in rows["riskClass"]],
            "tier": [text_or(v, UNKNOWN) for v in rows["tier"]],
            "delivered": rows["delivered"].to_numpy(dtype=bool),
            "cost": cost,
        }
    )


def segments_of(table: pd.DataFrame) -> list[tuple[Segment, np.ndarray]]:
    """``overall`` then every risk class × tier cell present, each with its row positions."""
    out = [(Segment(), np.arange(len(table)))]
    if table.empty:
        return out
    cells = table.groupby(["risk", "tier"], sort=True).indices
    out += [(Segment(risk, tier), np.sort(idx)) for (risk, tier), idx in cells.items()]
    return out


def _routable(label: str, kind: str) -> bool:
    return UNKNOWN not in (label.split(PAIR_ARROW) if kind == "pairing" else [label])


def option_sample(
    option: str, delivered: np.ndarray, cost: np.ndarray, rng: np.random.Generator, resamples: int
) -> OptionSample:
    """Counts and bootstrap draws of one option's issues (``delivered`` bool, ``cost`` NaN = none)."""
    n = len(delivered)
    costed = ~np.isnan(cost)
    d = delivered.astype(float)
    c = np.where(costed, cost, 0.0)
    k = costed.astype(float)
    per_item = np.column_stack([d, c, d * k, k])  # delivered, spend, delivered with a cost, costed
    sums = np.vstack([resample_counts(rng, n, size) @ per_item for size in chunks(resamples, n)])
    delivered_draws, spend, delivered_costed, costed_draws = sums.T
    spend_per_delivered = ratio(spend, delivered_costed)
    spend_per_delivered[(delivered_costed == 0) & (costed_draws > 0)] = np.inf
    return OptionSample(
        option=option,
        n=n,
        delivered=int(delivered.sum()),
        costed=int(costed.sum()),
        delivered_costed=int((delivered & costed).sum()),
        spend=float(c.sum()),
        rate_draws=delivered_draws / n,
        spend_per_delivered_draws=spend_per_delivered,
        spend_per_issue_draws=ratio(spend, costed_draws),
    )


def segment_samples(table: pd.DataFrame, config: DecisionsConfig) -> list[SegmentSamples]:
    """Per segment and kind: every routable option's sample (sorted by label)."""
    out: list[SegmentSamples] = []
    delivered_all = table["delivered"].to_numpy(dtype=bool)
    cost_all = table["cost"].to_numpy(dtype=float)
    for segment, idx in segments_of(table):
        for kind in KINDS:
            labels = table[kind].to_numpy(dtype=object)[idx]
            options: list[OptionSample] = []
            unroutable = 0
            for label in sorted(set(labels)):
                members = idx[labels == label]
                if not _routable(label, kind):
                    unroutable += len(members)
                    continue
                rng = rng_for(config.seed, "frontier", segment.key, kind, label)
                options.append(
                    option_sample(label, delivered_all[members], cost_all[members], rng, config.resamples)
                )
            seg_cost = cost_all[idx]
            out.append(
                SegmentSamples(
                    segment=segment,
                    kind=kind,
                    n=len(idx),
                    unroutable=unroutable,
                    costed=int((~np.isnan(seg_cost)).sum()),
                    spend=float(np.nansum(seg_cost)),
                    delivered=int(delivered_all[idx].sum()),
                    options=options,
                )
            )
    return out


# ------------------------------------------------------------------------------------ frontier


def pareto_mask(spend: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """Non-dominated points. Arrays are ``(options,)`` or ``(options, resamples)``; NaN spend never
    dominates and is never on the frontier. A point is dominated when another has spend <= and rate
    >= with one strictly better."""
    s = np.where(np.isnan(spend), np.inf, spend)
    known = ~np.isnan(spend)
    cheaper_eq = s[None, :] <= s[:, None]
    better_eq = rate[None, :] >= rate[:, None]
    strict = (s[None, :] < s[:, None]) | (rate[None, :] > rate[:, None])
    dominated = (cheaper_eq & better_eq & strict & known[None, :]).any(axis=1)
    return ~dominated & known


def _frontier_entry(seg: SegmentSamples, config: DecisionsConfig) -> dict[str, Any]:
    drawn = [o for o in seg.options if o.n >= config.frontier_min_runs and o.has_cost]
    on = np.zeros(len(drawn), dtype=bool)
    share = np.zeros(len(drawn))
    if drawn:
        spend = np.array([o.spend_per_delivered for o in drawn])
        rate = np.array([o.rate for o in drawn])
        on = pareto_mask(spend, rate)
        spend_draws = np.vstack([o.spend_per_delivered_draws for o in drawn])
        rate_draws = np.vstack([o.rate_draws for o in drawn])
        share = pareto_mask(spend_draws, rate_draws).mean(axis=1)
    position = {o.option: i for i, o in enumerate(drawn)}
    options = []
    for o in seg.options:
        i = position.get(o.option)
        options.append(
            ordered(
                OPTION_KEYS,
                {
                    "option": o.option,
                    "n": o.n,
                    "delivered": o.delivered,
                    "deliveryRate": number(o.rate),
                    "deliveryRateInterval": interval(o.rate_draws, config.interval_level),
                    "costSamples": o.costed,
                    "spendUsd": number(o.spend) if o.has_cost else None,
                    "spendPerDeliveredUsd": number(o.spend_per_delivered),
                    "spendPerDeliveredInterval": interval(o.spend_per_delivered_draws, config.interval_level),
                    "spendPerIssueUsd": number(o.spend_per_issue),
                    "onFrontier": bool(on[i]) if i is not None else False,
                    "frontierShare": number(share[i]) if i is not None else None,
                },
            )
        )
    frontier = sorted(
        (o for o in drawn if on[position[o.option]]), key=lambda o: (o.spend_per_delivered, -o.rate, o.option)
    )
    return ordered(
        SEGMENT_KEYS,
        {
            "segment": seg.segment.key,
            "riskClass": seg.segment.risk,
            "tier": seg.segment.tier,
            "kind": seg.kind,
            "n": seg.n,
            "unroutableIssues": seg.unroutable,
            "options": options,
            "frontier": [o.option for o in frontier],
        },
    )


def frontier_of_rows(rows: pd.DataFrame, config: DecisionsConfig) -> FrontierResult:
    """:func:`build_frontier` from a window's issue rows (``schemas.ISSUE_ROWS``)."""
    samples = segment_samples(decision_rows(rows), config)
    return FrontierResult(segments=[_frontier_entry(s, config) for s in samples], samples=samples)


def build_frontier(
    run_table: pd.DataFrame, window: Window, config: DecisionsConfig, *, rows: pd.DataFrame | None = None
) -> FrontierResult:
    """The frontier of ``window`` over ``run_table`` (``schemas.RUN_TABLE``): per segment
    (``overall`` first, then risk class × tier cells) and kind (``model``, ``pairing``), every option
    with its rate and spend, their bootstrap intervals, ``onFrontier`` and ``frontierShare``.

    ``rows``: the window's issue rows when the caller already has them (else they are computed).
    """
    if rows is None:
        rows = window_issue_rows(run_table, window)
    return frontier_of_rows(rows, config)
