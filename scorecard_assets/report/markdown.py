"""The Markdown report (``model-scorecard.md``) rendered from the sidecar-shaped dict.

Contract: :func:`render_markdown` reads the sidecar dict the scoring code builds (reference keys plus
ours, docs/scoring.md "The sidecar") and returns the whole file:
lines joined with ``\\n``, ending with exactly one ``\\n``. The tables of the reference keep its
exact headers and cell formats (docs/report.md); the prose is ours.

Every value that came from a trail, log, event or imported file goes through
``sanitize.safe_cell`` (via ``formatters.text_cell`` / ``code_cell``) or ``sanitize.safe_warning``.
The renderer never raises on odd input: a missing key renders ``N/A`` / ``—``, and entries that are
not objects are left out with a note saying how many. Pure module, no Dagster.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scorecard_assets.report.batches import batch_section
from scorecard_assets.report.decisions import FRONTIER_PNG, TREND_PREFIX, decisions_markdown
from scorecard_assets.report.formatters import (
    EM_DASH,
    NA,
    as_number,
    code_cell,
    fmt_agent_clis,
    fmt_count,
    fmt_delta,
    fmt_min,
    fmt_pct,
    fmt_per_issue,
    fmt_ratio,
    fmt_seconds,
    fmt_tokens,
    fmt_usd,
    js_number_str,
    js_to_fixed,
    text_cell,
)
from scorecard_assets.report.sessions import sessions_part
from scorecard_assets.sanitize import safe_warning, scrub

Row = dict[str, Any]

BUCKET_HEADER = (
    "| Model | Repo | Tier | Agent CLI | n | Delivered | Delivery rate | AC met | Cost/delivered "
    "| Median API-min | Median wall-clock-min | Review fixed/issue | Stalls | Escalations "
    "| Unverified exits |"
)
TOTALS_HEADER = (
    "| Model | Provider | Agent CLI | n | Delivered | Delivery rate | Δ vs prev | AC met | Cost/delivered "
    "| Billable tokens/delivered | Median API-min | Median wall-clock-min | Review fixed/issue | Stalls "
    "| Escalations | Unverified exits |"
)
RISK_HEADER = (
    "| Risk class | Agent CLI | n | Delivered | Delivery rate | AC met | Cost/delivered | Median API-min "
    "| Median wall-clock-min | Review fixed/issue | Stalls | Escalations | Unverified exits |"
)
# Ours, after the reference's last column, in a sidecar that records it (``unverifiedExitEvents``);
# a reference sidecar renders the reference's tables unchanged.
JOURNAL_EXITS_HEADER = " Unverified (journal) |"
JOURNAL_EXITS_KEY = "unverifiedExitEvents"
PAIRING_HEADER = (
    "| Rank | Pairing | Score | 90 % interval | Tie | Judged cycles | Outcome | Cost | Precision "
    "| Discipline | Efficiency | Latency |"
)
PHASE_HEADER = "| Phase | n | Median |"

TIER_NAMES = ("Outcome", "Cost", "Precision", "Discipline", "Efficiency", "Latency")
PAIRING_VIEWS = (("famCombo", "Family pairings"), ("modelCombo", "Model pairings"))
DEFAULT_MIN_JUDGED = 10
IMPUTED_MARK = "†"
TIE_MARK = "≈"

DEFAULT_LIMITATIONS: list[tuple[str, str]] = [
    (
        "No cost per phase.",
        "One agent session usually runs through several phases, so its cost and API time are known "
        "per dispatch only; the phase table shows wall-clock time, which the milestones do stamp.",
    ),
    (
        "Runs mode places a run by its start.",
        "A run belongs to the window in which its first milestone falls. A run that started late in "
        "the window may still be in flight and counts as not delivered until a later window.",
    ),
    (
        "Issues mode is for the latest window only.",
        "It selects issues by their last update and takes each whole trail, as the reference does; "
        "for a past window that selection has already moved on, so compare past windows in runs mode.",
    ),
    (
        "Only configured hosts are read.",
        "Telemetry, events and agent logs come from the dossier homes listed in the configuration. A "
        "dispatch from any other machine has no cost and counts zero stalls, escalations and "
        "unverified exits here.",
    ),
    (
        "N/A cost is missing data, not free work.",
        "Cost comes from runs.jsonl first, then from the dispatch's agent log, then (marked as an "
        "estimate) from the configured price table. A row with none of them shows N/A because the "
        "figure lives elsewhere.",
    ),
    (
        "Cost/delivered counts delivered issues only.",
        "Blocked, evicted or abandoned work is in neither the sum nor the count; compare `n` with "
        "Delivered to see how much a row leaves out.",
    ),
    (
        "Moving tags fold only when declared.",
        "A `-latest` tag joins its pinned version only through a configured alias; an undeclared one "
        "keeps its own row and is named in Data warnings. A guessed alias would misattribute "
        "silently, a missing one only splits a row.",
    ),
    (
        "Context-window variants stay apart.",
        "`claude-opus-5[1m]` and `claude-opus-5` are separate rows because they are billed "
        "differently; judge quality across both, cost per row.",
    ),
    (
        "Pairing scores are observational.",
        "They compare what pairings shipped on the work they happened to get, not a controlled "
        "experiment: harder issues may go to stronger models. Pools are small, so scores and ranks "
        "move as cycles arrive; the intervals show by how much.",
    ),
    (
        "Two unverified-exit counts.",
        "Unverified exits is the reference's figure: `fence-written` events, the fence a takeover "
        "writes before it redispatches over a run that stopped answering. Unverified (journal) counts "
        "the scheduler's own `verify-incomplete` events with detail `unverified-exit`: an agent that "
        "exited without its work being verified. Real journals carry the second far more often, so the "
        "first can read 0 where the second does not; one exit may appear in both.",
    ),
    (
        "Families follow the Pragmatikos rule.",
        "A model id is folded into a family only when it starts with a known family prefix "
        "(claude-opus, grok, gpt, ...); any other model is its own family under its full id.",
    ),
]


DELIVERY_CHART = "delivery-vs-cost.png"
PAIRING_CHART = "pairing-scores.png"
CHART_ALT = {
    DELIVERY_CHART: "Delivery rate against cost per delivered issue, one point per model",
    PAIRING_CHART: "Pairing scores with their 90 % intervals",
}


def render_markdown(
    sidecar: dict,
    *,
    report_title: str = "Model Scorecard",
    regenerate_cmd: str,
    limitations: list[tuple[str, str]] | None = None,
    charts: dict[str, str] | None = None,
) -> str:
    """The report text for ``sidecar``; ``limitations`` = ``(bold lead, body)`` pairs (default: ours);
    ``charts`` = chart file name -> image target (the file name beside the report, or a data URI for
    the UI), each shown right after the section it illustrates (none when omitted)."""
    charts = charts or {}
    sections: list[list[str]] = [
        _title_block(sidecar, report_title),
        _reading_guide(sidecar, regenerate_cmd),
        _bucket_section(sidecar),
        _totals_section(sidecar) + _chart_block(charts, DELIVERY_CHART),
        batch_section(sidecar),  # docs/batches.md "The report section"
        _risk_section(sidecar),
        _pairings_section(sidecar) + _chart_block(charts, PAIRING_CHART),
        _decisions_section(sidecar, charts),
        _phase_section(sidecar),
        _sources_section(sidecar),
        _limitations_section(DEFAULT_LIMITATIONS if limitations is None else limitations),
        _warnings_section(sidecar),
    ]
    lines: list[str] = []
    for block in sections:
        if block:
            if lines:
                lines.append("")
            lines.extend(block)
    return "\n".join(lines).rstrip("\n") + "\n"


# ---------------------------------------------------------------------------------------- helpers


def _rows(value: object) -> tuple[list[Row], int]:
    """The dict entries of a list, and how many entries were not dicts (left out, then noted)."""
    if not isinstance(value, list):
        return [], 0
    rows = [v for v in value if isinstance(v, dict)]
    return rows, len(value) - len(rows)


def _skipped_note(skipped: int, what: str) -> list[str]:
    if not skipped:
        return []
    verb = "is" if skipped == 1 else "are"
    return ["", f"_{skipped} {what} in the sidecar {verb} not an object; not shown._"]


def _table_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _separator(header: str) -> str:
    return "|" + "---|" * (header.count("|") - 1)


def _count_cell(value: object) -> str:
    number = as_number(value)
    return NA if number is None else js_number_str(value if isinstance(value, int) else number)


def _per_issue(row: Row, total_key: str, rate_key: str) -> object:
    """The per-issue rate; sidecars older than the rate fields get ``total / n`` (null when n = 0)."""
    if rate_key in row:
        return row[rate_key]
    total, n = as_number(row.get(total_key)), as_number(row.get("n"))
    return total / n if total is not None and n else None


def _outcome_cells(row: Row, journal: bool = False) -> list[str]:
    """AC met .. Unverified exits, shared by the bucket and risk-class tables (no tokens, no delta)."""
    return [
        fmt_ratio(row.get("conformanceRate"), row.get("conformanceSamples")),
        fmt_usd(row.get("costPerDeliveredUsd"), row.get("costSamples")),
        fmt_min(row.get("medianApiMinutes")),
        fmt_min(row.get("medianWallClockMinutes")),
        *_tail_cells(row, journal),
    ]


def _journal_exits(sidecar: dict) -> bool:
    """Whether the sidecar records our Unverified (journal) count (ours always do)."""
    grand = sidecar.get("grandTotal")
    return isinstance(grand, dict) and JOURNAL_EXITS_KEY in grand


def _header(header: str, journal: bool) -> str:
    return header + JOURNAL_EXITS_HEADER if journal else header


def _tail_cells(row: Row, journal: bool = False) -> list[str]:
    """Review fixed/issue, Stalls, Escalations, Unverified exits (the reference's: fence-written),
    and with ``journal`` Unverified (journal) (ours: verify-incomplete / unverified-exit events)."""
    cells = [
        fmt_per_issue(row.get("reviewFixedPerIssue"), row.get("reviewSamples")),
        fmt_count(row.get("stalls"), _per_issue(row, "stalls", "stallsPerIssue")),
        fmt_count(row.get("escalations"), _per_issue(row, "escalations", "escalationsPerIssue")),
        fmt_count(row.get("unverifiedExits"), _per_issue(row, "unverifiedExits", "unverifiedExitsPerIssue")),
    ]
    if journal:
        cells.append(fmt_count(row.get(JOURNAL_EXITS_KEY), _per_issue(row, JOURNAL_EXITS_KEY, "-")))
    return cells


def _head_cells(row: Row) -> list[str]:
    """Agent CLI, n, Delivered, Delivery rate."""
    return [
        fmt_agent_clis(row.get("agentClis")),
        _count_cell(row.get("n")),
        _count_cell(row.get("delivered")),
        fmt_pct(row.get("deliveryRate")),
    ]


def _totals_cells(row: Row, delta: object, journal: bool = False) -> list[str]:
    """The 14 cells after Model and Provider in the totals table."""
    return [
        *_head_cells(row),
        fmt_delta(delta),
        fmt_ratio(row.get("conformanceRate"), row.get("conformanceSamples")),
        fmt_usd(row.get("costPerDeliveredUsd"), row.get("costSamples")),
        fmt_tokens(row.get("billableTokensPerDeliveredIssue"), row.get("tokenSamples")),
        fmt_min(row.get("medianApiMinutes")),
        fmt_min(row.get("medianWallClockMinutes")),
        *_tail_cells(row, journal),
    ]


def _model_code(value: object) -> str:
    name = value if isinstance(value, str) and value else "<missing>"
    return f"`{code_cell(name)}`"


def _chart_block(charts: dict[str, str], name: str) -> list[str]:
    """The image of chart ``name`` after its section, when ``charts`` has a target for it."""
    target = charts.get(name)
    if not target:
        return []
    return ["", f"![{CHART_ALT.get(name, 'chart')}]({target})"]


def _pairing_label_cell(label: object) -> str:
    """``planner → builder`` with each model id in a code span (a label without an arrow: one span)."""
    text = label if isinstance(label, str) and label else "<missing>"
    return " → ".join(f"`{code_cell(part)}`" for part in text.split(" → "))


def _int_or_zero(value: object) -> int:
    number = as_number(value)
    return int(number) if number is not None else 0


# ---------------------------------------------------------------------------------------- sections


def _title_block(sidecar: dict, report_title: str) -> list[str]:
    title = scrub(report_title).strip() or "Model Scorecard"
    generated = text_cell(sidecar.get("generatedAt", "?"))
    start, end = text_cell(sidecar.get("windowStart", "?")), text_cell(sidecar.get("windowEnd", "?"))
    mode = _mode_label(sidecar)
    return [f"# {title}", "", f"Generated: {generated} | Window: {start} → {end} | Mode: {mode}"]


def _mode_label(sidecar: dict) -> str:
    mode = sidecar.get("windowMode")
    if mode == "issues":
        return "issues (the reference's selection; meaningful for the latest window only)"
    if mode == "runs":
        return "runs (runs that started in the window)"
    return text_cell(mode) if mode is not None else "not recorded"


def _reading_guide(sidecar: dict, regenerate_cmd: str) -> list[str]:
    days = sidecar.get("windowDays")
    span = f"the {js_number_str(days)}-day window" if as_number(days) is not None else "the window"
    if sidecar.get("windowMode") == "issues":
        selection = (
            f"Issues updated in {span} are counted, each with its whole trail. Past windows see a "
            "selection that has since moved on, so this mode only suits the latest window."
        )
    else:
        selection = f"A run counts in {span} when its first milestone falls inside it."
    return [
        "What each LLM costs per delivered issue, how often its work is delivered, and how fast. The "
        "figures join four sources from every configured host: the GitHub runstate trails (phases, "
        "model and outcome of each run), `runs.jsonl` (tokens and cost per dispatch), `events.jsonl` "
        "(dispatch tier, agent CLI, stalls, escalations, unverified exits) and the agents' own logs "
        f"(cost and tokens where `runs.jsonl` has none). {selection} "
        f"Regenerate with `{code_cell(regenerate_cmd)}`.",
        "",
        "**Read `n` as confidence, not as a result.** It counts issues: a row with n = 1 is a single "
        "data point, not a trend, so read Cost/delivered and Delivery rate only together with `n`.",
    ]


def _bucket_section(sidecar: dict) -> list[str]:
    rows, skipped = _rows(sidecar.get("buckets"))
    lines = ["## Per model × repo × tier", ""]
    if not rows and not skipped:
        return [*lines, "No issue had a run in this window."]
    journal = _journal_exits(sidecar)
    header = _header(BUCKET_HEADER, journal)
    lines += [header, _separator(header)]
    for row in rows:
        lines.append(
            _table_row(
                [
                    _model_code(row.get("model")),
                    text_cell(row.get("repo", "")),
                    text_cell(row.get("tier", "")),
                    *_head_cells(row),
                    *_outcome_cells(row, journal),
                ]
            )
        )
    return lines + _skipped_note(skipped, "bucket row(s)")


def _totals_section(sidecar: dict) -> list[str]:
    baseline = sidecar.get("baselineWindowEnd")
    baseline_text = f"the window that ended on {text_cell(baseline)}" if baseline else "the previous window"
    lines = [
        "## Totals per model (all repos/tiers)",
        "",
        "One row per model over every repo and tier. When a model was served through more than one "
        "provider or gateway, a `↳` row per provider follows it, so a gateway that costs more or "
        "delivers less than the same weights elsewhere stays visible. Δ vs prev is the change in "
        f"delivery rate against {baseline_text}, computed from the same data; `—` when that window "
        "has no data for the model.",
        "",
        "Billable tokens add up uncached input, cache-creation, cache-read and output tokens. Cache "
        "reads are billed and are usually the largest term on an agent fleet (the reference's check "
        "case, issue #540: 262 uncached input tokens against 13.4M cache-read); this is the total "
        "that `batch-pilot-2-execution.md` §13 publishes.",
        "",
    ]
    rows, skipped = _rows(sidecar.get("totals"))
    journal = _journal_exits(sidecar)
    header = _header(TOTALS_HEADER, journal)
    lines += [header, _separator(header)]
    for row in rows:
        lines += _model_rows(row, journal)
    grand = sidecar.get("grandTotal")
    grand = grand if isinstance(grand, dict) else {}
    lines.append(_table_row(["**TOTAL**", EM_DASH, *_totals_cells(grand, None, journal)]))
    lines += _skipped_note(skipped, "total row(s)")
    return lines + _cost_disclosure(grand)


def _model_rows(row: Row, journal: bool = False) -> list[str]:
    """The model row, then one ``↳`` row per provider when there is more than one."""
    providers, _ = _rows(row.get("providers"))
    if len(providers) == 1:
        provider_cell = text_cell(providers[0].get("provider", ""))
    elif providers:
        provider_cell = f"{len(providers)} providers ↓"
    else:
        provider_cell = EM_DASH
    cells = _totals_cells(row, row.get("deliveryRateDelta"), journal)
    lines = [_table_row([_model_code(row.get("model")), provider_cell, *cells])]
    if len(providers) > 1:
        for sub in providers:
            sub_cells = _totals_cells(sub, None, journal)
            lines.append(_table_row(["↳", text_cell(sub.get("provider", "")), *sub_cells]))
    return lines


def _cost_disclosure(grand: Row) -> list[str]:
    costed = _int_or_zero(grand.get("costSamples"))
    from_log = _int_or_zero(grand.get("costFromRunLogSamples"))
    estimated = _int_or_zero(grand.get("costEstimateSamples"))
    if from_log <= 0 and estimated <= 0:
        return []
    parts = []
    if from_log > 0:
        parts.append(
            f"{from_log} took it from the dispatch's agent log because `runs.jsonl` recorded none for them"
        )
    if estimated > 0:
        parts.append(
            f"{estimated} are estimates priced from their logged tokens with the configured price table"
        )
    return [
        "",
        f"Of the {costed} delivered issues that have a cost figure, {' and '.join(parts)}; "
        "see Sources and Limitations.",
    ]


def _risk_section(sidecar: dict) -> list[str]:
    lines = [
        "## By risk class",
        "",
        "Issues grouped by the risk class the classifier gave them (`risk=` on the classify "
        "milestone); `<unclassified>` holds issues without a valid one.",
        "",
    ]
    rows, skipped = _rows(sidecar.get("riskClasses"))
    if not rows and not skipped:
        return [*lines, "No risk-class figures for this window."]
    journal = _journal_exits(sidecar)
    header = _header(RISK_HEADER, journal)
    lines += [header, _separator(header)]
    for row in rows:
        cells = [text_cell(row.get("riskClass", "")), *_head_cells(row), *_outcome_cells(row, journal)]
        lines.append(_table_row(cells))
    return lines + _skipped_note(skipped, "risk-class row(s)")


def _pairings_section(sidecar: dict) -> list[str]:
    pairings = sidecar.get("pairings")
    pairings = pairings if isinstance(pairings, dict) else {}
    lines = [
        "## Pairings ranked by what ships",
        "",
        "Each planner → builder pairing gets an evidence-weighted Pragmatikos score from 0 to 100, where "
        "50 is the pool of all pairings in the same table. Ten axes (ship rate, one-shot rate, turns, "
        "hours and dollars per ship, edit errors, interventions, verification, edits per turn, step "
        "latency) form six weighted tiers: Outcome 30, Cost 20, Precision 15, Discipline 15, "
        "Efficiency 10, Latency 10. Each axis is pulled towards the pool in proportion to how little "
        "evidence the pairing has (10 pseudo-cycles), so a small pairing cannot top the table by luck. "
        "The 90 % interval comes from a bootstrap over the pairing's cycles; "
        f"`{TIE_MARK}` in the Tie column marks a rank whose interval overlaps a neighbour's, so the "
        "two cannot be told apart. The tier columns show the evidence-weighted tier scores; "
        f"`{IMPUTED_MARK}` marks a tier with no data for the pairing, counted as 50.",
        "",
        "### Fleet cycles",
        "",
    ]
    fleet = pairings.get("fleet")
    if isinstance(fleet, dict):
        lines += _pool_block(fleet)
    else:
        lines.append("No fleet cycles were scored for this window.")
    imported = pairings.get("imported")
    if isinstance(imported, dict):
        lines += ["", "### Imported cycles", "", *_pool_block(imported)]
    if "sessions" in pairings:  # your own sessions, when the config's sessions: section is on
        lines += ["", *sessions_part(pairings["sessions"], _pool_block)]
    return lines


def _pool_block(pool: Row) -> list[str]:
    meta = pool.get("meta") if isinstance(pool.get("meta"), dict) else {}
    views = pool.get("views") if isinstance(pool.get("views"), dict) else {}
    min_judged = _int_or_zero(meta.get("minJudged")) or DEFAULT_MIN_JUDGED
    lines = [_pool_summary(meta)]
    for view, title in PAIRING_VIEWS:
        view_body = views.get(view)
        groups, skipped = _rows(view_body.get("groups") if isinstance(view_body, dict) else None)
        lines += ["", f"#### {title}", "", *_pairing_table(groups, min_judged, title.lower())]
        lines += _skipped_note(skipped, "pairing group(s)")
    return lines


def _pool_summary(meta: Row) -> str:
    judged = as_number(meta.get("judged"))
    if judged is None:
        return "Pool summary not recorded."
    text = f"{js_number_str(judged)} judged cycles"
    shipped = as_number(meta.get("shipped"))
    if shipped is not None:
        text += f", {js_number_str(shipped)} shipped"
    start, end = meta.get("start"), meta.get("end")
    if start and end:
        text += f", from {text_cell(start)} to {text_cell(end)}"
    return text + "."


def _pairing_table(groups: list[Row], min_judged: int, kind: str) -> list[str]:
    ranked = [g for g in groups if (as_number(g.get("hjudged")) or 0) >= min_judged]
    below = len(groups) - len(ranked)
    if not ranked:
        return [f"No {kind[:-1]} reaches {min_judged} judged cycles yet, so none is ranked."]
    order = sorted(range(len(ranked)), key=lambda i: _rank_sort_key(ranked[i], i))
    lines = [PAIRING_HEADER, _separator(PAIRING_HEADER)]
    lines += [_pairing_row(ranked[i]) for i in order]
    if below:
        lines += ["", f"{below} {kind} with fewer than {min_judged} judged cycles are not ranked."]
    return lines


def _rank_sort_key(group: Row, index: int) -> tuple[bool, float, int]:
    rank = as_number(group.get("rank"))
    return (rank is None, rank if rank is not None else 0.0, index)


def _pairing_row(group: Row) -> str:
    rank = as_number(group.get("rank"))
    score = as_number(group.get("scoreAdj"))
    return _table_row(
        [
            js_number_str(int(rank)) if rank is not None else EM_DASH,
            _pairing_label_cell(group.get("label", "")),
            js_to_fixed(score, 0) if score is not None else NA,
            _interval_cell(group.get("interval")),
            TIE_MARK if group.get("tie") is True else EM_DASH,
            _count_cell(group.get("hjudged")),
            *_tier_cells(group),
        ]
    )


def _interval_cell(interval: object) -> str:
    if not isinstance(interval, list | tuple) or len(interval) != 2:
        return NA
    low, high = as_number(interval[0]), as_number(interval[1])
    if low is None or high is None:
        return NA
    return f"{js_to_fixed(low, 1)}–{js_to_fixed(high, 1)}"


def _tier_cells(group: Row) -> list[str]:
    tiers = group.get("tiersAdj") if isinstance(group.get("tiersAdj"), dict) else {}
    imputed = group.get("imputed") if isinstance(group.get("imputed"), list) else []
    cells = []
    for tier in TIER_NAMES:
        value = as_number(tiers.get(tier))
        cell = js_to_fixed(value, 1) if value is not None else NA
        cells.append(cell + IMPUTED_MARK if tier in imputed else cell)
    return cells


def _phase_section(sidecar: dict) -> list[str]:
    lines = [
        "## Wall-clock per phase (all models)",
        "",
        "For each phase, the median time from the previous milestone to that phase's milestone, "
        "measured on the trails' `at=` stamps (the comment's server time where a stamp is unusable). "
        "Cost and API time cannot be split this way: one agent session usually covers several phases.",
        "",
    ]
    rows, skipped = _rows(sidecar.get("phases"))
    if not rows and not skipped:
        return [*lines, "No phase timings in this window."]
    lines += [PHASE_HEADER, _separator(PHASE_HEADER)]
    for row in rows:
        median = fmt_seconds(row.get("medianSeconds"))
        cells = [text_cell(row.get("phase", "")), _count_cell(row.get("n")), median]
        lines.append(_table_row(cells))
    return lines + _skipped_note(skipped, "phase row(s)")


SOURCES_HEADER = "| Source | Host | Repo | Files | Rows | Malformed | Cost | Notes |"


def _sources_section(sidecar: dict) -> list[str]:
    lines = [
        "## Sources",
        "",
        "What each source contributed, per host and repo: files read, rows kept, malformed lines or "
        "records (counted and skipped; each is named in Data warnings), the cost it reported and the "
        "reader's notes (e.g. how many other scheduler events it ignored).",
        "",
    ]
    rows, skipped = _rows(sidecar.get("sources"))
    shown, empty = _source_rows(rows)
    if shown:
        lines += [SOURCES_HEADER, _separator(SOURCES_HEADER)]
        lines += [_table_row(cells) for cells in shown]
    else:
        lines.append("No source statistics were recorded.")
    if empty:
        lines += ["", _empty_sources_note(empty)]
    lines += _skipped_note(skipped, "source record(s)")
    grand = sidecar.get("grandTotal")
    return [*lines, "", _cost_provenance(grand if isinstance(grand, dict) else {})]


def _source_rows(rows: list[Row]) -> tuple[list[list[str]], list[tuple[str, str, str]]]:
    """One table row per (source, host, repo), per-file records of the same triple summed; and the
    triples that read nothing at all (no file, row, malformed line or cost), which are not shown."""
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        key = tuple(_optional_text(row.get(k)) for k in ("source", "host", "repo"))
        acc = merged.setdefault(key, {"files": 0.0, "rows": 0.0, "malformed": 0.0, "cost": None, "notes": []})
        for field in ("files", "rows", "malformed"):
            acc[field] += as_number(row.get(field)) or 0.0
        cost = as_number(row.get("cost_usd"))
        if cost is not None:
            acc["cost"] = (acc["cost"] or 0.0) + cost
        note = row.get("notes")
        if isinstance(note, str) and note and note not in acc["notes"]:
            acc["notes"].append(note)
    shown: list[list[str]] = []
    empty: list[tuple[str, str, str]] = []
    for key, acc in merged.items():
        if not (acc["files"] or acc["rows"] or acc["malformed"] or acc["cost"]):
            empty.append(key)  # type: ignore[arg-type]
            continue
        counts = (js_number_str(acc[f]) for f in ("files", "rows", "malformed"))
        notes = text_cell("; ".join(acc["notes"])) if acc["notes"] else EM_DASH
        shown.append([*key, *counts, fmt_usd(acc["cost"]), notes])
    return shown, empty


def _empty_sources_note(empty: list[tuple[str, str, str]]) -> str:
    names = ", ".join(" / ".join(part for part in key if part != EM_DASH) for key in empty[:8])
    more = f" and {len(empty) - 8} more" if len(empty) > 8 else ""
    return f"{len(empty)} source(s) read nothing (no file, row or cost) and are left out: {names}{more}."


def _optional_text(value: object) -> str:
    return EM_DASH if value is None or value == "" else text_cell(value)


def _cost_provenance(grand: Row) -> str:
    costed = _int_or_zero(grand.get("costSamples"))
    if costed == 0:
        return "No delivered issue has a cost figure in this window."
    if "costFromRunLogSamples" not in grand:
        return f"{costed} delivered issues have a cost; this sidecar does not record which source gave it."
    from_log = _int_or_zero(grand.get("costFromRunLogSamples"))
    if "costEstimateSamples" not in grand:
        return (
            f"Of the {costed} delivered issues with a cost, {costed - from_log} took it from `runs.jsonl` "
            f"and {from_log} from agent logs (estimates from the price table not reported separately)."
        )
    estimated = _int_or_zero(grand.get("costEstimateSamples"))
    from_runs = costed - from_log - estimated
    return (
        f"Of the {costed} delivered issues with a cost, {from_runs} took it from `runs.jsonl`, {from_log} "
        f"from agent logs and {estimated} from price-table estimates."
    )


def _limitations_section(limitations: Sequence[tuple[str, str]]) -> list[str]:
    lines = ["## Limitations", ""]
    if not limitations:
        return [*lines, "None recorded."]
    return lines + [f"- **{scrub(lead)}** {scrub(body)}" for lead, body in limitations]


def warning_count_text(count: int) -> str:
    """The one phrasing of the warning count (report, digest, CLI): lines of Data warnings, worded
    as the reference's digest words it (``3 data warning(s)``)."""
    return f"{count} data warning(s)"


def _decisions_section(sidecar: dict, charts: dict[str, str]) -> list[str]:
    """Routing advice, change alerts, adjusted effects, pairing comparisons (report/decisions.py),
    followed by the frontier and trend charts; nothing for a sidecar without a ``decisions`` block."""
    block = sidecar.get("decisions")
    if not isinstance(block, dict):
        return []
    lines = decisions_markdown(block).rstrip("\n").split("\n")
    for name in charts:
        if name == FRONTIER_PNG or name.startswith(TREND_PREFIX):
            lines += _chart_block(charts, name)
    return lines


def _warnings_section(sidecar: dict) -> list[str]:
    warnings = sidecar.get("warnings")
    if not isinstance(warnings, list) or not warnings:
        return []
    intro = (
        f"{warning_count_text(len(warnings))}: one line per problem found in the inputs of this "
        "window (identical ones merged, with ×k); the same count is in the digest, the CLI and the "
        "`data_warnings` metadata of `scorecard_report`."
    )
    return ["## Data warnings", "", intro, "", *(f"- {safe_warning(w)}" for w in warnings), ""]
