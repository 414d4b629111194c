"""The decisions part of the report: markdown sections, the sidecar block and PNG charts
(docs/decisions.md "What the report shows").

Input: the dicts of the decisions modules' ``to_sidecar()`` (assembled by :func:`decisions_sidecar`),
so the same code renders a fresh result and a stored sidecar. Every model id, pairing label, gateway
and version is untrusted: it is shown inside a code span through ``formatters.code_cell`` (or as
text through ``formatters.text_cell``) and in charts through ``sanitize.scrub`` with a length cap.
Charts come back as PNG bytes keyed by file name, as in ``report/charts.py``; matplotlib is imported
inside the chart functions only.

Pure module: no Dagster.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from scorecard_assets.report.formatters import (
    EM_DASH,
    NA,
    as_number,
    code_cell,
    dict_rows,
    fmt_pct,
    js_to_fixed,
    text_cell,
)
from scorecard_assets.sanitize import cap, scrub
from scorecard_assets.scoring.sidecar.keys import DECISIONS_KEYS

Row = dict[str, Any]

SIDECAR_KEYS = DECISIONS_KEYS
FRONTIER_PNG = "decision-frontier.png"
TREND_PREFIX = "trend-"
MAX_TREND_CHARTS = 8
MIN_ALERT_WEEKS = 4  # as decisions.alerts.MIN_BINS
MAX_CELL_ROWS = 30
MAX_NAMES = 12
LABEL_CAP = 40
DPI = 100

AXIS_NAMES = {
    "shipr": "ship rate",
    "oneshot": "one-shot rate",
    "ttss": "turns per ship",
    "hps": "hours per ship",
    "dpss": "dollars per ship",
    "eerrp": "edit errors",
    "abortp": "interventions",
    "verp": "verified after last edit",
    "ept": "edits per turn",
    "lat": "step latency",
}
NOTE_TEXT = {
    "new_spelling": "new model spelling",
    "moving_tag": "moving `-latest` tag first used",
    "moving_tag_pin": "pinned version first seen behind the moving tag",
    "new_harness": "new harness",
    "new_harness_version": "new harness version",
    "new_gateway": "new gateway",
    "new_model": "new model behind the gateway",
    "tier_mix_shift": "tier mix shift",
    "risk_mix_shift": "risk-class mix shift",
}
COVARIATE_NAMES = {
    "repo": "repo",
    "risk_class": "risk class",
    "tier": "tier",
    "ac_total": "acceptance criteria",
    "files_changed": "files touched",
}
REFUSED_TEXT = {
    "too_few_runs": "too few runs",
    "no_cost": "no cost reported",
    "not_shown_non_inferior": "not shown within the margin",
    "cheaper_option_passed": "passed, but a cheaper option passed too",
}


# ------------------------------------------------------------------------------------------ sidecar


def _as_dict(value: object) -> Row | None:
    if value is None:
        return None
    if isinstance(value, Mapping):
        return dict(value)
    to_sidecar = getattr(value, "to_sidecar", None)
    return to_sidecar() if callable(to_sidecar) else None


def decisions_sidecar(
    *,
    frontier: object = None,
    routing: object = None,
    alerts: object = None,
    adjusted: object = None,
    pairing_comparison: object = None,
    harness: object = None,
) -> Row:
    """The sidecar's ``decisions`` block: each part as its ``to_sidecar()`` dict (results or dicts
    accepted), None when not computed; keys in the order of ``SIDECAR_KEYS``."""
    parts = (frontier, routing, alerts, adjusted, pairing_comparison, harness)
    return {key: _as_dict(part) for key, part in zip(SIDECAR_KEYS, parts, strict=True)}


# ----------------------------------------------------------------------------------------- helpers


def _code(value: object) -> str:
    text = value if isinstance(value, str) and value else "<missing>"
    return f"`{code_cell(text)}`"


def _row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _header(*cells: str) -> list[str]:
    return [_row(cells), _row(["---"] * len(cells))]


def _points(value: object, *, signed: bool = True) -> str:
    number = as_number(value)
    if number is None:
        return NA
    text = js_to_fixed(number * 100, 1)
    return f"+{text} pt" if signed and number >= 0 else f"{text} pt"


def _usd(value: object, digits: int = 3) -> str:
    number = as_number(value)
    if number is None:
        return NA
    sign = "-" if number < 0 else ""
    return f"{sign}${js_to_fixed(abs(number), digits)}"


def _pair(interval: object) -> tuple[float | None, float | None]:
    if isinstance(interval, list | tuple) and len(interval) == 2:
        return as_number(interval[0]), as_number(interval[1])
    return None, None


def _pct_interval(value: object, interval: object) -> str:
    low, high = _pair(interval)
    text = fmt_pct(value)
    if low is None or high is None:
        return text
    return f"{text} ({js_to_fixed(low * 100, 0)}–{js_to_fixed(high * 100, 0)}%)"


def _usd_interval(value: object, interval: object) -> str:
    low, high = _pair(interval)
    text = _usd(value)
    if low is None or high is None:
        return text
    return f"{text} ({_usd(low)}–{_usd(high)})"


def _names(items: Sequence[str]) -> str:
    shown = list(items[:MAX_NAMES])
    more = len(items) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")


def _level_pct(value: object) -> str:
    number = as_number(value)
    return NA if number is None else f"{js_to_fixed(number * 100, 0)} %"


# ------------------------------------------------------------------------------------ routing advice


def advice_section(decisions: Row) -> list[str]:
    """``## Routing advice``: the test, the whole window's advice and options per kind, then the cells."""
    routing = decisions.get("routing") if isinstance(decisions.get("routing"), dict) else None
    frontier = decisions.get("frontier") if isinstance(decisions.get("frontier"), dict) else None
    lines = ["## Routing advice", ""]
    if routing is None:
        return lines + ["Routing advice was not computed for this window."]
    entries = dict_rows(routing.get("entries"))
    test = entries[0].get("test") if entries and isinstance(entries[0].get("test"), dict) else {}
    margin, level = as_number(test.get("marginPoints")), as_number(test.get("level"))
    min_runs = as_number(test.get("minRuns"))
    lines += [
        "Which option to route to: the cheapest one that the data show to be no worse than the best. An "
        "option's *spend per delivered issue* is what all its issues cost, failed ones included, divided "
        "by the ones it delivered. The *best* is the option whose delivery rate has the highest one-sided "
        "lower bound, so a small option with a lucky streak cannot set the bar. A cheaper option is "
        f"advised when a one-sided bootstrap test at level {js_to_fixed(level or 0, 2)} shows its delivery "
        f"rate to be less than {js_to_fixed(margin or 0, 1)} points below the best's (Holm-corrected over "
        f"the cheaper options tried). Options with fewer than {js_to_fixed(min_runs or 0, 0)} issues in a "
        "segment are never advised. The saving compares this window's actual spend with what the same "
        "issues would have cost at the advised option's spend per issue. These are observed outcomes "
        "under the fleet's own routing, not an experiment: an option may have been given easier issues.",
        "",
    ]
    segments = {(s.get("segment"), s.get("kind")): s for s in dict_rows((frontier or {}).get("segments"))}
    for kind, title in (("model", "models"), ("pairing", "pairings (planner → builder)")):
        entry = next((e for e in entries if e.get("segment") == "overall" and e.get("kind") == kind), None)
        lines += [f"### Whole window — {title}", ""]
        if entry is None:
            lines += ["No entry.", ""]
            continue
        lines += [_advice_line(entry, test), ""]
        refused = _refused_line(entry)
        if refused:
            lines += [refused, ""]
        segment = segments.get(("overall", kind))
        if segment is not None:
            lines += _options_table(segment) + [""]
    lines += _cells_block(entries)
    return lines


def _advice_line(entry: Row, test: Row) -> str:
    margin = as_number(test.get("marginPoints")) or 0
    level = as_number(test.get("level")) or 0
    if entry.get("status") != "advice":
        reason = text_cell(entry.get("reasonText") or entry.get("reason") or "unknown")
        return f"**No advice**: {reason}."
    evidence = entry.get("evidence") if isinstance(entry.get("evidence"), dict) else {}
    saving = entry.get("saving") if isinstance(entry.get("saving"), dict) else {}
    advised, best = _code(entry.get("advised")), _code(entry.get("best"))
    rate = _pct_interval(evidence.get("deliveryRate"), evidence.get("deliveryRateInterval"))
    spend = _usd_interval(evidence.get("spendPerDeliveredUsd"), evidence.get("spendPerDeliveredInterval"))
    head = f"delivery rate {rate}, n = {evidence.get('n')}; spend per delivered issue {spend}"
    if entry.get("advisedIsBest"):
        reasons = {r.get("reason") for r in dict_rows(entry.get("refused"))}
        if "not_shown_non_inferior" in reasons:
            why = (
                f"No cheaper option was shown to be within {js_to_fixed(margin, 1)} points of it, so the "
                "cheapest option no worse than the best is the best itself."
            )
        elif "too_few_runs" in reasons:
            why = "The cheaper options have too few runs to be tested against it."
        else:
            why = "No option with enough runs is cheaper."
        text = f"**Best: {advised}** ({head}). {why}"
    else:
        best_rate = fmt_pct(evidence.get("bestDeliveryRate"))
        lower = _points(evidence.get("differenceLowerBound"))
        text = (
            f"**Route to {advised}**: {head}; the best, {best}, delivers {best_rate} "
            f"(n = {evidence.get('bestN')}). Difference {_points(evidence.get('difference'))}, one-sided "
            f"{js_to_fixed(100 * (1 - level), 0)} % lower bound {lower} "
            f"against a margin of -{js_to_fixed(margin, 1)} pt (bootstrap p = "
            f"{js_to_fixed(as_number(evidence.get('bootstrapP')) or 0, 3)}, Holm "
            f"{js_to_fixed(as_number(evidence.get('holmP')) or 0, 3)})."
        )
    return text + " " + _saving_text(saving)


def _saving_text(saving: Row) -> str:
    value = as_number(saving.get("expectedSavingUsd"))
    if value is None:
        return "The window's spend is not known, so no saving is estimated."
    low, high = _pair(saving.get("expectedSavingInterval"))
    if value < 0 and low is not None and high is not None:
        low, high = -high, -low  # shown as an extra spend, positive
    band = (
        f" (90 % interval {_usd(low, 2)} to {_usd(high, 2)})" if low is not None and high is not None else ""
    )
    verb = "saving" if value >= 0 else "extra spend"
    change = _points(saving.get("deliveryRateChange"))
    return (
        f"Routed there, this window's {saving.get('issues')} issues would have meant an expected {verb} of "
        f"{_usd(abs(value), 2)}{band} against {_usd(saving.get('actualSpendUsd'), 2)} actually spent, and a "
        f"delivery-rate change of {change}."
    )


def _refused_line(entry: Row) -> str:
    refused = dict_rows(entry.get("refused"))
    if not refused:
        return ""
    parts = []
    for r in sorted(refused, key=lambda r: (-(as_number(r.get("n")) or 0), str(r.get("option")))):
        reason = REFUSED_TEXT.get(str(r.get("reason")), text_cell(r.get("reason")))
        p = as_number(r.get("holmP"))
        detail = f", Holm p = {js_to_fixed(p, 3)}" if p is not None else ""
        parts.append(f"{_code(r.get('option'))} (n = {r.get('n')}, {reason}{detail})")
    return "Not advised: " + _names(parts) + "."


def _options_table(segment: Row) -> list[str]:
    options = dict_rows(segment.get("options"))
    if not options:
        return ["No routable option in this segment."]
    lines = _header(
        "Option", "n", "Delivery rate (90 % interval)", "Spend per delivered (90 % interval)", "Frontier"
    )
    order = sorted(options, key=lambda o: (-(as_number(o.get("n")) or 0), str(o.get("option"))))
    for o in order:
        share = as_number(o.get("frontierShare"))
        mark = ("on" if o.get("onFrontier") else "off") + (
            f" ({js_to_fixed(share * 100, 0)}%)" if share is not None else ""
        )
        lines.append(
            _row(
                [
                    _code(o.get("option")),
                    str(o.get("n")),
                    _pct_interval(o.get("deliveryRate"), o.get("deliveryRateInterval")),
                    _usd_interval(o.get("spendPerDeliveredUsd"), o.get("spendPerDeliveredInterval")),
                    mark if share is not None else EM_DASH,
                ]
            )
        )
    unroutable = as_number(segment.get("unroutableIssues")) or 0
    lines += [
        "",
        "Frontier: on = no other option is both cheaper and better; the share is how often it stays on the "
        "frontier across bootstrap resamples (options with fewer than the frontier's minimum runs or no cost "
        "are not drawn)."
        + (f" {js_to_fixed(unroutable, 0)} issues of an unknown model are left out." if unroutable else ""),
    ]
    return lines


def _cells_block(entries: list[Row]) -> list[str]:
    cells = [e for e in entries if e.get("segment") != "overall"]
    if not cells:
        return []
    advised = [e for e in cells if e.get("status") == "advice"]
    withheld: dict[str, int] = {}
    for e in cells:
        if e.get("status") != "advice":
            key = str(e.get("reasonText") or e.get("reason"))
            withheld[key] = withheld.get(key, 0) + 1
    lines = ["### Risk class × tier cells", ""]
    if advised:
        lines += _header("Risk / tier", "Kind", "Advice", "Best", "Expected saving")
        for e in advised[:MAX_CELL_ROWS]:
            saving = e.get("saving") if isinstance(e.get("saving"), dict) else {}
            lines.append(
                _row(
                    [
                        text_cell(e.get("segment")),
                        text_cell(e.get("kind")),
                        _code(e.get("advised")),
                        _code(e.get("best")),
                        _usd(saving.get("expectedSavingUsd"), 2),
                    ]
                )
            )
        if len(advised) > MAX_CELL_ROWS:
            lines.append(f"\n{len(advised) - MAX_CELL_ROWS} more advised cells are in the sidecar.")
        lines.append("")
    else:
        lines += ["No risk class × tier cell has enough data for advice.", ""]
    if withheld:
        summary = "; ".join(f"{text_cell(reason)} ({count})" for reason, count in sorted(withheld.items()))
        lines += [f"Cells without advice: {summary}.", ""]
    return lines


# -------------------------------------------------------------------------------------- change alerts


def alerts_section(decisions: Row) -> list[str]:
    """``## Change alerts``: the method in one paragraph, then each alert with what changed then."""
    alerts = decisions.get("alerts") if isinstance(decisions.get("alerts"), dict) else None
    lines = ["## Change alerts", ""]
    if alerts is None:
        return lines + ["Change alerts were not computed for this window."]
    method = alerts.get("method") if isinstance(alerts.get("method"), dict) else {}
    rate = as_number(method.get("falseAlarmRate")) or 0
    lines += [
        "Each model and each gateway is tested, week by week, for a single change in its delivery rate and "
        "in the cost of a delivered issue. The weeks do not overlap; the test compares every possible "
        f"before/after split of the last {method.get('lookbackWindows')} weeks with the best split found "
        f"in {method.get('permutations')} random reshuffles of the same issues, so it assumes nothing about "
        "how the weeks vary. Across all series of this report the Benjamini-Hochberg procedure keeps the "
        f"expected share of false ones among the flagged series at {_level_pct(rate)}; in a fleet where "
        f"nothing changed, a report raises an alert with probability at most {_level_pct(rate)}. A flagged "
        "series alerts only for a change "
        f"in the last {method.get('recentWindows')} weeks. This replaces the fixed '10 points down' rule.",
        "",
    ]
    series = dict_rows(alerts.get("series"))
    tested = [s for s in series if s.get("tested")]
    found = dict_rows(alerts.get("alerts"))
    week = text_cell(alerts.get("evaluatedWeek") or "?")
    weeks = alerts.get("weeks") if isinstance(alerts.get("weeks"), list) else []
    if not series and not found:
        if len(weeks) < MIN_ALERT_WEEKS:
            return lines + [f"Week of {week}: too few weekly windows ({len(weeks)}) to test anything yet."]
        return lines + [f"Week of {week}: no model or gateway had issues in the weeks read."]
    if not found:
        lines.append(
            f"Week of {week}: no change alert. {len(tested)} of {len(series)} series were tested; the others "
            f"have fewer than {method.get('minSeriesIssues')} issues in the lookback."
        )
        return lines
    lines += [f"Week of {week}: {len(found)} alert(s) over {len(tested)} tested series.", ""]
    for alert in found:
        lines.append("- " + _alert_line(alert))
    return lines


def _alert_line(alert: Row) -> str:
    metric = alert.get("metric")
    what = "delivery rate" if metric == "deliveryRate" else "cost per delivered issue (geometric mean)"
    if metric == "deliveryRate":
        before, after = fmt_pct(alert.get("before")), fmt_pct(alert.get("after"))
    else:
        before, after = _usd(alert.get("before")), _usd(alert.get("after"))
    verb = "worsened" if alert.get("direction") == "worse" else "improved"
    kind = "gateway" if alert.get("kind") == "gateway" else "model"
    q = as_number(alert.get("q"))
    head = (
        f"**{kind} {_code(alert.get('name'))}: {what} {verb} from {before} to {after} from the week of "
        f"{text_cell(alert.get('changeWeek'))}** (q = {js_to_fixed(q or 0, 3)}; {alert.get('beforeIssues')} "
        f"issues before, {alert.get('afterIssues')} after)."
    )
    notes = [_note_text(n) for n in dict_rows(alert.get("annotations"))]
    tail = " At that time: " + "; ".join(notes) + "." if notes else " Nothing else in the data changed then."
    return head + tail


def _note_text(note: Row) -> str:
    what = str(note.get("what"))
    label = NOTE_TEXT.get(what, text_cell(what))
    if what in ("tier_mix_shift", "risk_mix_shift") and isinstance(note.get("detail"), dict):
        detail = note["detail"]
        return f"{label} ({_shares(detail.get('before'))} → {_shares(detail.get('after'))})"
    value = f" {_code(note.get('value'))}" if note.get("value") is not None else ""
    return f"{label}{value} (week of {text_cell(note.get('week'))})"


def _shares(shares: object) -> str:
    if not isinstance(shares, dict) or not shares:
        return NA
    parts = [
        f"{_code(k)} {fmt_pct(v)}" for k, v in sorted(shares.items(), key=lambda kv: -(as_number(kv[1]) or 0))
    ]
    return ", ".join(parts[:5])


# ------------------------------------------------------------------------------------ adjusted effects


def adjusted_section(decisions: Row) -> list[str]:
    """``## Difficulty-adjusted model effects``: raw beside adjusted, with the fit's diagnostics."""
    adjusted = decisions.get("adjusted") if isinstance(decisions.get("adjusted"), dict) else None
    lines = [
        "## Difficulty-adjusted model effects",
        "",
        "Hard issues tend to go to strong models, so raw rates mix a model's skill with the issues it was "
        "given. Two regressions (statsmodels GLMs) put every model on the same footing: whether an issue "
        "was delivered (logistic) and what a delivered issue cost (gamma, log link), each on the model plus "
        "the repo, risk class, tier and two size proxies (acceptance criteria, files touched). The adjusted "
        "figure is what the model would deliver, or cost, on this window's whole mix of issues. It removes "
        "the part of the gap that those recorded features explain; difficulty the data do not record stays, "
        "and files touched partly reflect the model's own work. Read it as a better-matched comparison, "
        "not as an experiment.",
        "",
    ]
    if adjusted is None:
        return lines + ["Adjusted effects were not computed for this window."]
    for key, title in (("delivered", "Delivery rate"), ("cost", "Cost per delivered issue")):
        outcome = adjusted.get(key)
        lines += [f"### {title}", ""]
        if not isinstance(outcome, dict):
            lines += ["Not estimated: too few issues or models for a fit (see the data warnings).", ""]
            continue
        lines += _effects_table(outcome) + ["", _diagnostics_line(outcome), ""]
    return lines


def _effects_table(outcome: Row) -> list[str]:
    rate = outcome.get("outcome") == "delivered"
    reference = _code(outcome.get("reference"))
    contrast = f"vs {reference} ({'difference' if rate else 'ratio'}, 90 % interval)"
    lines = _header("Model", "n", "Raw", "Adjusted (90 % interval)", "Moved", contrast)
    skipped = []
    for e in dict_rows(outcome.get("effects")):
        if not e.get("estimated"):
            skipped.append(f"{_code(e.get('model'))} (n = {e.get('n')})")
            continue
        if rate:
            adjusted = _pct_interval(e.get("adjusted"), e.get("adjustedInterval"))
            raw, moved = fmt_pct(e.get("raw")), _points(e.get("moved"))
            low, high = _pair(e.get("contrastInterval"))
            versus = _points(e.get("contrast")) + (
                f" ({_points(low)} to {_points(high)})" if low is not None else ""
            )
        else:
            adjusted = _usd_interval(e.get("adjusted"), e.get("adjustedInterval"))
            raw, moved = _usd(e.get("raw")), _usd(e.get("moved"))
            low, high = _pair(e.get("contrastInterval"))
            value = as_number(e.get("contrast"))
            versus = f"×{js_to_fixed(value, 2)}" if value is not None else EM_DASH
            if low is not None and high is not None:
                versus += f" (×{js_to_fixed(low, 2)} to ×{js_to_fixed(high, 2)})"
        if e.get("contrast") is None:
            versus = "reference"
        lines.append(_row([_code(e.get("model")), str(e.get("n")), raw, adjusted, moved, versus]))
    if skipped:
        lines += ["", "Not estimated (too few issues, or an unknown model): " + _names(skipped) + "."]
    return lines


def _diagnostics_line(outcome: Row) -> str:
    d = outcome.get("diagnostics") if isinstance(outcome.get("diagnostics"), dict) else {}
    rate = outcome.get("outcome") == "delivered"
    covariates = [COVARIATE_NAMES.get(str(c), text_cell(c)) for c in d.get("covariates") or []]
    text = f"Fit: {text_cell(d.get('family'))}, n = {d.get('n')} issues"
    excluded = as_number(d.get("excludedIssues")) or 0
    if excluded:
        text += f" ({js_to_fixed(excluded, 0)} left out with their model)"
    text += f", {d.get('parameters')} parameters; covariates: {text_cell(', '.join(covariates) or 'none')}"
    dropped = d.get("droppedColumns") or []
    if dropped:
        text += f"; columns dropped as constant or redundant: {_names([_code(c) for c in dropped])}"
    if d.get("method") == "glm":
        iterations = d.get("iterations")
        text += (
            f". Plain maximum-likelihood fit, converged{f' in {iterations} iterations' if iterations else ''}"
        )
        explained = as_number(d.get("devianceExplained"))
        if explained is not None:
            text += f"; it explains {js_to_fixed(100 * explained, 0)} % of the null model's deviance"
    else:
        text += (
            f". The plain fit was not usable ({text_cell(d.get('fallbackReason'))}); a ridge-penalised fit "
            "was used instead and its intervals are approximate"
        )
    moved = d.get("maxAbsMoved")
    if moved is not None:
        most = _points(moved, signed=False) if rate else _usd(moved)
        text += f". The adjustment moved a model by at most {most}"
    return text + "."


# ----------------------------------------------------------------------------------- pairing comparisons


def pairing_section(decisions: Row) -> list[str]:
    """``## Pairing comparisons``: per pool and view, what separates the top pairs and how much the
    top 3 depends on the tier weights."""
    block = (
        decisions.get("pairingComparison") if isinstance(decisions.get("pairingComparison"), dict) else None
    )
    lines = ["## Pairing comparisons", ""]
    comparisons = dict_rows((block or {}).get("comparisons"))
    if not comparisons:
        return lines + ["No pairing view has two ranked pairs to compare in this window."]
    separation = as_number((block or {}).get("separation")) or 0
    lines += [
        "For the top pairs of each view: the axes on which they differ by at least "
        f"{js_to_fixed(separation, 3)} on the score's 0–1 axis scale (about a factor 1.4), which tiers make "
        "up the first pair's lead, and whether the top 3 holds when any tier's weight moves by -50 % or "
        "+50 %.",
        "",
    ]
    for c in comparisons:
        pool = "Fleet" if c.get("pool") == "fleet" else "Imported"
        lines += [f"### {pool} — {text_cell(c.get('title'))}", ""]
        top = dict_rows(c.get("top"))
        lines.append("Top: " + "; ".join(_top_text(t) for t in top) + ".")
        separating = [a for a in dict_rows(c.get("axes")) if a.get("separating")]
        if separating:
            parts = [f"{_axis_name(a.get('axis'))} (best: {_code(a.get('leader'))})" for a in separating]
            lines.append("Axes that separate them: " + ", ".join(parts) + ".")
        else:
            lines.append("No axis separates them by that much: they differ only slightly everywhere.")
        gap = c.get("gap") if isinstance(c.get("gap"), dict) else None
        if gap is not None:
            parts = [
                f"{text_cell(t.get('tier'))} {_signed(t.get('contribution'))}"
                for t in dict_rows(gap.get("tiers"))
            ]
            between = gap.get("between") or ["?", "?"]
            lead = f"Lead of {_code(between[0])} over {_code(between[1])}: {_signed(gap.get('scoreGap'))}"
            lines.append(f"{lead} points = " + ", ".join(parts) + ".")
        lines += [_sensitivity_text(c.get("sensitivity")), ""]
    return lines


def _axis_name(axis: object) -> str:
    return AXIS_NAMES.get(str(axis), text_cell(axis))


def _signed(value: object) -> str:
    number = as_number(value)
    if number is None:
        return NA
    return ("+" if number >= 0 else "") + js_to_fixed(number, 1)


def _top_text(top: Row) -> str:
    score = as_number(top.get("scoreAdj"))
    low, high = _pair(top.get("interval"))
    band = f" ({js_to_fixed(low, 0)}–{js_to_fixed(high, 0)})" if low is not None and high is not None else ""
    tie = ", tied with a neighbour" if top.get("tie") is True else ""
    score_text = js_to_fixed(score, 0) if score is not None else NA
    return f"{top.get('rank')}. {_code(top.get('label'))} {score_text}{band}{tie}"


def _sensitivity_text(sensitivity: object) -> str:
    if not isinstance(sensitivity, dict):
        return ""
    if sensitivity.get("stable"):
        return "Weight sensitivity: the top 3 stays the same when any tier weight moves by ±50 %."
    changes = []
    for p in dict_rows(sensitivity.get("perturbations")):
        if p.get("changed"):
            factor = as_number(p.get("factor")) or 0
            order = ", ".join(_code(x) for x in p.get("top") or [])
            changes.append(f"{text_cell(p.get('tier'))} ×{js_to_fixed(factor, 1)} → {order}")
    return "Weight sensitivity: the top 3 changes with " + "; ".join(changes) + "."


# ---------------------------------------------------------------------------------------- harness view


def harness_section(decisions: Row) -> list[str]:
    """``## Harness versions``: delivery and spend per agent CLI and version (nothing when not computed)."""
    block = decisions.get("harness") if isinstance(decisions.get("harness"), dict) else None
    if block is None:
        return []
    lines = [
        "## Harness versions",
        "",
        "Delivery rate (90 % Wilson interval) and spend per delivered issue per agent CLI and the version "
        "its log names. Versions meet different issues and models, so read a gap as a lead, not a verdict.",
        "",
    ]
    rows = dict_rows(block.get("rows"))
    if not rows:
        return lines + ["No issue in this window."]
    lines += _header("Harness", "Version", "n", "Delivery rate", "Spend per delivered")
    for r in rows[:MAX_CELL_ROWS]:
        lines.append(
            _row(
                [
                    _code(r.get("harness")),
                    _code(r.get("version")),
                    str(r.get("n")),
                    _pct_interval(r.get("deliveryRate"), r.get("deliveryRateInterval")),
                    _usd(r.get("spendPerDeliveredUsd")),
                ]
            )
        )
    if len(rows) > MAX_CELL_ROWS:
        lines += ["", f"{len(rows) - MAX_CELL_ROWS} more rows are in the sidecar."]
    return lines


# --------------------------------------------------------------------------------------------- report


def decisions_markdown(decisions: Row) -> str:
    """The decisions sections as one markdown string (for the report)."""
    lines: list[str] = []
    for section in (advice_section, alerts_section, adjusted_section, pairing_section, harness_section):
        lines += section(decisions) + [""]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------------------------- charts

_RC: dict[str, Any] = {
    "font.family": "DejaVu Sans",
    "font.size": 9.0,
    "text.usetex": False,
    "text.parse_math": False,
    "figure.dpi": DPI,
    "savefig.dpi": DPI,
}
_COLOURS = {"frontier": "#2b6cb0", "other": "#a0aec0", "advised": "#dd6b20", "change": "#c53030"}


def _label(value: object) -> str:
    return cap(scrub(value), LABEL_CAP)


def _png(fig: Any) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def decisions_chart_pngs(decisions: Row) -> dict[str, bytes]:
    """PNG bytes by file name: the whole window's frontier (models and pairings), then one trend chart
    per alert (at most ``MAX_TREND_CHARTS``), named ``trend-<n>-<slug>.png``."""
    return {**frontier_chart_png(decisions), **trend_chart_pngs(decisions)}


def frontier_chart_png(decisions: Row) -> dict[str, bytes]:
    """``{FRONTIER_PNG: bytes}``: the whole window's frontier chart alone (the routing asset's UI);
    nothing when no option of either kind can be plotted (a chart of two empty panels says nothing,
    and drawing it is most of an empty week's report cost)."""
    if not any(_plottable(s) for s in _overall_segments(decisions).values()):
        return {}
    with _chart_context():
        return {FRONTIER_PNG: _png(frontier_figure(decisions))}


def trend_chart_pngs(decisions: Row) -> dict[str, bytes]:
    """One trend chart per alert (at most ``MAX_TREND_CHARTS``), named ``trend-<n>-<slug>.png``."""
    alerts = decisions.get("alerts") if isinstance(decisions.get("alerts"), dict) else {}
    found = dict_rows(alerts.get("alerts"))[:MAX_TREND_CHARTS]
    if not found:
        return {}
    with _chart_context():
        return {trend_file_name(i, a): _png(trend_figure(a)) for i, a in enumerate(found, start=1)}


@contextlib.contextmanager
def _chart_context() -> Iterator[None]:
    import warnings

    import matplotlib as mpl

    with mpl.rc_context(_RC), warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        yield


def trend_file_name(index: int, alert: Row) -> str:
    """A safe file name for an alert's trend chart: only ``[a-z0-9-]`` from the untrusted name."""
    slug = re.sub(
        r"[^a-z0-9]+", "-", f"{alert.get('kind')}-{alert.get('name')}-{alert.get('metric')}".lower()
    )
    return f"{TREND_PREFIX}{index:02d}-{slug.strip('-')[:60] or 'series'}.png"


def frontier_figure(decisions: Row) -> Any:
    """Spend per delivered issue vs delivery rate for the whole window, one panel per kind: intervals as
    error bars, the frontier drawn as a step line, the advised option ringed, points numbered and named
    in each panel's legend box."""
    from matplotlib.figure import Figure

    routing = decisions.get("routing") if isinstance(decisions.get("routing"), dict) else {}
    advised = {
        e.get("kind"): e.get("advised")
        for e in dict_rows(routing.get("entries"))
        if e.get("segment") == "overall" and e.get("status") == "advice"
    }
    fig = Figure(figsize=(13.0, 5.8), dpi=DPI, layout="constrained")
    fig.suptitle("Spend per delivered issue vs delivery rate, whole window (90 % intervals)")
    axes = fig.subplots(1, 2, squeeze=False)[0]
    segments = _overall_segments(decisions)
    for ax, (kind, title) in zip(axes, (("model", "Models"), ("pairing", "Pairings")), strict=True):
        _frontier_panel(ax, title, segments.get(kind), advised.get(kind))
    return fig


def _overall_segments(decisions: Row) -> dict[object, Row]:
    """The whole-window frontier segment of each kind (model, pairing)."""
    frontier = decisions.get("frontier") if isinstance(decisions.get("frontier"), dict) else {}
    return {s.get("kind"): s for s in dict_rows(frontier.get("segments")) if s.get("segment") == "overall"}


def _plottable(segment: Row | None) -> list[Row]:
    """The options of a segment that have a frontier share and a spend per delivered issue."""
    return [
        o
        for o in dict_rows((segment or {}).get("options"))
        if as_number(o.get("frontierShare")) is not None
        and as_number(o.get("spendPerDeliveredUsd")) is not None
    ]


def _frontier_panel(ax: Any, title: str, segment: Row | None, advised: object) -> None:
    ax.set_title(title)
    options = _plottable(segment)
    if not options:
        ax.set_axis_off()
        ax.text(0.5, 0.5, "no option with enough runs and a cost", ha="center", va="center", color="#555555")
        return
    legend = []
    for i, o in enumerate(
        sorted(options, key=lambda o: as_number(o.get("spendPerDeliveredUsd")) or 0), start=1
    ):
        x = float(as_number(o.get("spendPerDeliveredUsd")) or 0)
        y = 100 * float(as_number(o.get("deliveryRate")) or 0)
        colour = _COLOURS["frontier"] if o.get("onFrontier") else _COLOURS["other"]
        xl, xh = _pair(o.get("spendPerDeliveredInterval"))
        yl, yh = _pair(o.get("deliveryRateInterval"))
        xerr = [[max(x - xl, 0)], [max(xh - x, 0)]] if xl is not None and xh is not None else None
        yerr = [[max(y - 100 * yl, 0)], [max(100 * yh - y, 0)]] if yl is not None and yh is not None else None
        ax.errorbar(
            [x], [y], xerr=xerr, yerr=yerr, fmt="o", color=colour, ecolor=colour, elinewidth=1, capsize=2
        )
        if o.get("option") == advised:
            ax.scatter(
                [x], [y], s=220, facecolors="none", edgecolors=_COLOURS["advised"], linewidths=2, zorder=4
            )
        ax.annotate(str(i), (x, y), xytext=(5, 5), textcoords="offset points", fontsize=8)
        mark = " (advised)" if o.get("option") == advised else ""
        legend.append(f"{i}. {_label(o.get('option'))} n={o.get('n')}{mark}")
    on = sorted(
        (o for o in options if o.get("onFrontier")),
        key=lambda o: as_number(o.get("spendPerDeliveredUsd")) or 0,
    )
    if on:
        xs = [float(as_number(o.get("spendPerDeliveredUsd")) or 0) for o in on]
        ys = [100 * float(as_number(o.get("deliveryRate")) or 0) for o in on]
        ax.step(xs, ys, where="post", color=_COLOURS["frontier"], linewidth=1.2, alpha=0.7, label="frontier")
    ax.set_xlabel("Spend per delivered issue (USD)")
    ax.set_ylabel("Delivery rate (%)")
    lows = [100 * (_pair(o.get("deliveryRateInterval"))[0] or 0) for o in options]
    ax.set_xlim(left=0)
    ax.set_ylim(max(-2.0, min(lows) - 8), 104)
    ax.grid(True, color="#eeeeee", linewidth=0.6)
    shown = legend[:MAX_NAMES] + ([f"(+{len(legend) - MAX_NAMES} more)"] if len(legend) > MAX_NAMES else [])
    ax.text(
        0.99,
        0.02,
        "\n".join(shown),
        transform=ax.transAxes,
        ha="right",
        va="bottom",
        fontsize=7.5,
        bbox={"facecolor": "white", "edgecolor": "#cccccc", "alpha": 0.9},
    )


def trend_figure(alert: Row) -> Any:
    """One alerted series, week by week: the metric (points sized by n), the change week and the
    before / after levels."""
    from matplotlib.figure import Figure

    rate = alert.get("metric") == "deliveryRate"
    trend = dict_rows(alert.get("trend"))
    fig = Figure(figsize=(7.5, 3.4), dpi=DPI, layout="constrained")
    ax = fig.add_subplot()
    what = "delivery rate (%)" if rate else "cost per delivered issue (USD)"
    ax.set_title(f"{_label(alert.get('kind'))} {_label(alert.get('name'))}: {what}", fontsize=9)
    weeks = [str(t.get("week")) for t in trend]
    scale = 100.0 if rate else 1.0
    points = [
        (i, scale * float(v)) for i, t in enumerate(trend) if (v := as_number(t.get("value"))) is not None
    ]
    sizes = [min(160.0, 10 + 2 * (as_number(trend[i].get("n")) or 0)) for i, _ in points]
    if points:
        ax.plot([p[0] for p in points], [p[1] for p in points], color=_COLOURS["frontier"], linewidth=1)
        ax.scatter(
            [p[0] for p in points], [p[1] for p in points], s=sizes, color=_COLOURS["frontier"], zorder=3
        )
    change = str(alert.get("changeWeek"))
    if change in weeks:
        at = weeks.index(change)
        ax.axvline(at - 0.5, color=_COLOURS["change"], linestyle="--", linewidth=1, label="change")
        for level, span in (
            (alert.get("before"), (-0.5, at - 0.5)),
            (alert.get("after"), (at - 0.5, len(weeks) - 0.5)),
        ):
            value = as_number(level)
            if value is not None:
                ax.hlines(scale * value, *span, colors=_COLOURS["change"], linewidth=1.5, alpha=0.6)
    ax.set_xticks(range(len(weeks)), [_label(w[5:]) for w in weeks], rotation=45, fontsize=7)
    ax.set_ylabel("%" if rate else "USD")
    ax.grid(True, color="#eeeeee", linewidth=0.6)
    return fig
