"""Routing advice: the cheapest option statistically no worse than the best (docs/decisions.md
"Routing advice").

Per segment (``overall`` and each risk class × tier cell) and kind (model, pairing), from the
frontier's bootstrap draws (:mod:`frontier`):

1. *Eligible* options have at least ``min_runs`` issues in the segment and a spend figure. Fewer than
   two eligible options: no advice, with the reason.
2. The *best* (the reference) is the eligible option with the highest one-sided ``1 - level``
   Wilson lower bound of its delivery rate (ties: higher rate, then cheaper), so that a small
   option with a lucky rate cannot become the reference everything else is measured against.
3. Each eligible option cheaper than the best (spend per delivered issue) is tested for
   non-inferiority: H0 "its delivery rate is at least ``margin_points`` below the best's" against
   H1 "it is less than the margin below". The test is a one-sided bootstrap test of the rate
   difference (candidate − best, independent resamples of both): the bootstrap fraction
   ``p = P*(difference <= -margin)`` is its p-value, and H0 is rejected when the Holm-adjusted p
   (over the segment's candidates, so that trying several cheaper options does not inflate the
   chance of advising an inferior one) is at most ``level``. Equivalently, the one-sided
   ``1 - level`` lower bound of the difference lies above ``-margin``.
4. The advice is the cheapest option among the best and the candidates that passed.
5. Expected saving over the window's actual routing: the segment's issues times (actual spend per
   issue − the advised option's spend per issue), with a bootstrap interval over the advised option's
   draws; and the change in delivery rate that routing would bring (advised rate − actual rate).

Cheaper options that were not advised are listed with the reason (too few runs, no cost, test not
passed) and their evidence. The test compares outcomes that were observed under the fleet's own
routing: it is observational, and an option's issues may differ from the segment's.

Pure module: no Dagster.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.decisions._common import OVERALL, adjusted_p_values, interval, number, ordered
from scorecard_assets.decisions.config import DecisionsConfig
from scorecard_assets.decisions.frontier import FrontierResult, OptionSample, SegmentSamples, build_frontier
from scorecard_assets.decisions.warnings import ROUTING_ASSET
from scorecard_assets.records import DataWarning
from scorecard_assets.sanitize import render_value
from scorecard_assets.scoring.windows import Window

ADVICE = "advice"
NO_ADVICE = "no_advice"
TEST_NAME = "one-sided bootstrap non-inferiority test of the delivery-rate difference, Holm over candidates"

# Why a segment gets no advice.
NO_ISSUES = "no_issues"
TOO_FEW_RUNS = "too_few_runs"
SINGLE_OPTION = "single_option"
NO_COST = "no_cost"
REASON_TEXT = {
    NO_ISSUES: "no routable issue in this segment",
    TOO_FEW_RUNS: "no option has enough issues to compare",
    SINGLE_OPTION: "only one option has enough issues; there is nothing to compare it with",
    NO_COST: "the options with enough issues report no cost",
}
# Why a cheaper option was not advised.
REFUSED_FEW_RUNS = "too_few_runs"
REFUSED_NO_COST = "no_cost"
REFUSED_TEST = "not_shown_non_inferior"
REFUSED_DEARER = "cheaper_option_passed"

ENTRY_KEYS = (
    "segment",
    "riskClass",
    "tier",
    "kind",
    "status",
    "reason",
    "reasonText",
    "advised",
    "best",
    "advisedIsBest",
    "test",
    "evidence",
    "saving",
    "refused",
)
EVIDENCE_KEYS = (
    "n",
    "deliveryRate",
    "deliveryRateInterval",
    "spendPerDeliveredUsd",
    "spendPerDeliveredInterval",
    "bestN",
    "bestDeliveryRate",
    "difference",
    "differenceLowerBound",
    "differenceInterval",
    "bootstrapP",
    "holmP",
)
TEST_KEYS = ("name", "marginPoints", "level", "resamples", "minRuns")
SAVING_KEYS = (
    "issues",
    "actualSpendUsd",
    "actualSpendPerIssueUsd",
    "advisedSpendPerIssueUsd",
    "expectedSpendUsd",
    "expectedSavingUsd",
    "expectedSavingInterval",
    "actualDeliveryRate",
    "advisedDeliveryRate",
    "deliveryRateChange",
)
REFUSED_KEYS = (
    "option",
    "n",
    "reason",
    "deliveryRate",
    "spendPerDeliveredUsd",
    "difference",
    "bootstrapP",
    "holmP",
)


@dataclass(frozen=True)
class RoutingResult:
    """One entry per segment and kind (``overall`` first), plus warnings."""

    entries: list[dict[str, Any]]
    warnings: list[DataWarning] = field(default_factory=list)

    def to_sidecar(self) -> dict[str, Any]:
        return {"test": TEST_NAME, "entries": self.entries}

    def overall(self, kind: str) -> dict[str, Any] | None:
        return next((e for e in self.entries if e["segment"] == OVERALL and e["kind"] == kind), None)


@dataclass(frozen=True, eq=False)
class _Test:
    option: OptionSample
    difference: float
    lower: float
    band: list[float | int | None]
    p: float
    holm: float = 1.0


def _holm(p_values: list[float]) -> list[float]:
    return adjusted_p_values(p_values, "holm")


def _non_inferiority(candidate: OptionSample, best: OptionSample, config: DecisionsConfig) -> _Test:
    diff = candidate.rate_draws - best.rate_draws
    margin = config.margin_points / 100
    # ``p`` counts resamples at or below the margin; a +1 correction keeps it away from exactly 0.
    p = (1 + float(np.sum(diff <= -margin))) / (1 + diff.size)
    return _Test(
        option=candidate,
        difference=candidate.rate - best.rate,
        lower=float(np.quantile(diff, config.level)),
        band=interval(diff, config.interval_level),
        p=p,
    )


def _test_block(config: DecisionsConfig) -> dict[str, Any]:
    return ordered(
        TEST_KEYS,
        {
            "name": TEST_NAME,
            "marginPoints": number(config.margin_points),
            "level": number(config.level),
            "resamples": config.resamples,
            "minRuns": config.min_runs,
        },
    )


def _refused(option: OptionSample, reason: str, test: _Test | None = None) -> dict[str, Any]:
    return ordered(
        REFUSED_KEYS,
        {
            "option": option.option,
            "n": option.n,
            "reason": reason,
            "deliveryRate": number(option.rate),
            "spendPerDeliveredUsd": number(option.spend_per_delivered),
            "difference": number(test.difference) if test else None,
            "bootstrapP": number(test.p) if test else None,
            "holmP": number(test.holm) if test else None,
        },
    )


def _base(seg: SegmentSamples, config: DecisionsConfig) -> dict[str, Any]:
    return {
        "segment": seg.segment.key,
        "riskClass": seg.segment.risk,
        "tier": seg.segment.tier,
        "kind": seg.kind,
        "test": _test_block(config),
        "advised": None,
        "best": None,
        "advisedIsBest": None,
        "evidence": None,
        "saving": None,
        "refused": [],
    }


def _no_advice(seg: SegmentSamples, config: DecisionsConfig, reason: str, refused: list) -> dict[str, Any]:
    entry = {**_base(seg, config), "status": NO_ADVICE, "reason": reason, "reasonText": REASON_TEXT[reason]}
    entry["refused"] = refused
    return ordered(ENTRY_KEYS, entry)


def _saving(seg: SegmentSamples, advised: OptionSample, config: DecisionsConfig) -> dict[str, Any]:
    actual_per_issue = seg.spend / seg.costed if seg.costed else float("nan")
    expected = seg.n * advised.spend_per_issue
    saving_draws = seg.n * (actual_per_issue - advised.spend_per_issue_draws)
    actual_rate = seg.delivered / seg.n if seg.n else float("nan")
    return ordered(
        SAVING_KEYS,
        {
            "issues": seg.n,
            "actualSpendUsd": number(seg.n * actual_per_issue),
            "actualSpendPerIssueUsd": number(actual_per_issue),
            "advisedSpendPerIssueUsd": number(advised.spend_per_issue),
            "expectedSpendUsd": number(expected),
            "expectedSavingUsd": number(seg.n * (actual_per_issue - advised.spend_per_issue)),
            "expectedSavingInterval": interval(saving_draws, config.interval_level),
            "actualDeliveryRate": number(actual_rate),
            "advisedDeliveryRate": number(advised.rate),
            "deliveryRateChange": number(advised.rate - actual_rate),
        },
    )


def _evidence(advised: OptionSample, best: OptionSample, test: _Test | None, config: DecisionsConfig) -> dict:
    return ordered(
        EVIDENCE_KEYS,
        {
            "n": advised.n,
            "deliveryRate": number(advised.rate),
            "deliveryRateInterval": interval(advised.rate_draws, config.interval_level),
            "spendPerDeliveredUsd": number(advised.spend_per_delivered),
            "spendPerDeliveredInterval": interval(advised.spend_per_delivered_draws, config.interval_level),
            "bestN": best.n,
            "bestDeliveryRate": number(best.rate),
            "difference": number(test.difference) if test else None,
            "differenceLowerBound": number(test.lower) if test else None,
            "differenceInterval": test.band if test else None,
            "bootstrapP": number(test.p) if test else None,
            "holmP": number(test.holm) if test else None,
        },
    )


def advise_segment(seg: SegmentSamples, config: DecisionsConfig) -> dict[str, Any]:
    """The advice entry of one segment and kind (module doc, steps 1-5)."""
    if not seg.options:
        return _no_advice(seg, config, NO_ISSUES, [])
    enough = [o for o in seg.options if o.n >= config.min_runs]
    eligible = [o for o in enough if o.has_cost and np.isfinite(o.spend_per_delivered)]
    if not enough:
        refused = [_refused(o, REFUSED_FEW_RUNS) for o in seg.options]
        return _no_advice(seg, config, TOO_FEW_RUNS, refused)
    if not eligible:
        return _no_advice(seg, config, NO_COST, [_refused(o, REFUSED_NO_COST) for o in enough])
    best = max(eligible, key=lambda o: (_lower_bound(o, config), o.rate, -o.spend_per_delivered))
    cheaper = [o for o in seg.options if o is not best and _cheaper(o, best)]
    refused = [_refused(o, REFUSED_FEW_RUNS) for o in cheaper if o.n < config.min_runs]
    refused += [_refused(o, REFUSED_NO_COST) for o in enough if not o.has_cost]
    if len(eligible) < 2:
        return _no_advice(seg, config, SINGLE_OPTION, refused)
    tests = [_non_inferiority(o, best, config) for o in eligible if o is not best and _cheaper(o, best)]
    tests = [replace(t, holm=h) for t, h in zip(tests, _holm([t.p for t in tests]), strict=True)]
    passed = [t for t in tests if t.holm <= config.level]
    chosen = min(passed, key=lambda t: (t.option.spend_per_delivered, t.option.option)) if passed else None
    for t in tests:
        if t.holm > config.level:
            refused.append(_refused(t.option, REFUSED_TEST, t))
        elif t is not chosen:
            refused.append(_refused(t.option, REFUSED_DEARER, t))
    advised = chosen.option if chosen else best
    entry = {
        **_base(seg, config),
        "status": ADVICE,
        "reason": None,
        "reasonText": None,
        "advised": advised.option,
        "best": best.option,
        "advisedIsBest": chosen is None,
        "evidence": _evidence(advised, best, chosen, config),
        "saving": _saving(seg, advised, config),
        "refused": sorted(refused, key=lambda r: (r["spendPerDeliveredUsd"] is None, r["option"])),
    }
    return ordered(ENTRY_KEYS, entry)


def _lower_bound(option: OptionSample, config: DecisionsConfig) -> float:
    """The one-sided ``1 - level`` Wilson lower bound of the option's delivery rate (deterministic given
    its counts, so two options with the same counts tie exactly)."""
    from statsmodels.stats.proportion import proportion_confint

    low, _ = proportion_confint(option.delivered, option.n, alpha=2 * config.level, method="wilson")
    return float(low)


def _cheaper(option: OptionSample, best: OptionSample) -> bool:
    spend = option.spend_per_delivered
    return bool(option.has_cost and np.isfinite(spend) and spend < best.spend_per_delivered)


def _withheld_warnings(entries: list[dict[str, Any]], asset: str) -> list[DataWarning]:
    out = []
    for entry in entries:
        if entry["segment"] != OVERALL or entry["status"] != NO_ADVICE:
            continue
        out.append(
            DataWarning(
                code="advice_withheld",
                asset=asset,
                message=f"no {entry['kind']} routing advice for the whole window: "
                f"{render_value(entry['reasonText'])}",
                values={"kind": entry["kind"], "reason": entry["reason"]},
            )
        )
    return out


def advice_of_frontier(
    frontier: FrontierResult, config: DecisionsConfig, *, asset: str = ROUTING_ASSET
) -> RoutingResult:
    """Advice for every segment and kind of ``frontier`` (its bootstrap draws are reused)."""
    entries = [advise_segment(seg, config) for seg in frontier.samples]
    return RoutingResult(entries=entries, warnings=_withheld_warnings(entries, asset))


def routing_advice(
    run_table: pd.DataFrame,
    window: Window,
    config: DecisionsConfig,
    *,
    rows: pd.DataFrame | None = None,
    frontier: FrontierResult | None = None,
    asset: str = ROUTING_ASSET,
) -> RoutingResult:
    """Routing advice for ``window`` (module doc). Pass ``frontier`` (from :func:`build_frontier` on the
    same window and config) to reuse its draws, or ``rows`` to reuse the window's issue rows."""
    if frontier is None:
        frontier = build_frontier(run_table, window, config, rows=rows)
    return advice_of_frontier(frontier, config, asset=asset)
