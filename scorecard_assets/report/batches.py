"""The report's ``## Batch amortization`` section from the sidecar's ``batchAmortization``
(docs/batches.md "The report section"): intro, summary table, ``### Per batch`` table, six notes.

Pure module, no Dagster.
"""

from __future__ import annotations

from typing import Any

from scorecard_assets.report.formatters import (
    EM_DASH,
    NA,
    as_number,
    code_cell,
    dict_rows,
    fmt_pct,
    fmt_usd,
    js_number_str,
    js_round,
    js_to_fixed,
    text_cell,
)
from scorecard_assets.scoring.batches import KIND_LABELS

SUMMARY_HEADER = (
    "| Repo | Kind | Batches | Single-member | Shipped / dissolved / blocked | Enqueued | Shipped issues "
    "| Evictions | Gate runs | **Issues/gate run** | Median gate wall-clock | Wall-clock/shipped issue "
    "| Billable tokens/shipped issue (excl. prep) | Prep tokens/shipped issue (separate) "
    "| Cost/shipped issue |"
)
BATCH_HEADER = (
    "| Batch | Repo | Kind | Anchor | Outcome | Enqueued | Shipped | Evictions | Gate runs | PR "
    "| Gate wall-clock | Tokens by model | Prep tokens (separate) |"
)
NOT_ON_THIS_HOST = "N/A (not on this host)"

INTRO = (
    "A batch pays one CI gate for several issues, so the headline figure is issues shipped per gate "
    "run. A merged batch PR counts 1 gate run plus its recorded CI fix attempts; an unmerged batch "
    "counts none. The shipped members of a batch are the issues its merged PR closes (a batch "
    "recovered by hand after a block never posts `batch-ship`, so the trail alone would miss them)."
)
NOTES = (
    "Tokens per shipped issue leave out prep, which has its own column. Prep runs in the operator's "
    "session: `sched enqueue` records that session per batch in `batch-prep.jsonl`, and the session's "
    "tokens (subagents included) since its previous enqueue, at most 6 h back, count as the batch's "
    "prep - an upper bound. `N/A` means no record on the hosts we read.",
    "A dissolved batch counts every requeued member as evicted.",
    "A PR recovered by hand carries no `ci_fix_attempts`, so it counts as 1 gate run.",
    "Batch wall-clock per shipped issue is total wall-clock over total shipped issues (throughput); "
    "the full-cycle figure is the mean per delivered issue (latency). Batch spend includes the "
    "members that were evicted.",
    "Tokens by model come from the batch's dispatch logs (`runs/`) on the hosts we read; a "
    "subscription model has tokens but no cost.",
    "Batch wall-clock runs from `batch-setup` to the merge; gate wall-clock from PR open to the merge.",
)


def fmt_batch_tokens(value: object, n: object = None) -> str:
    """Tokens as ``6.0M`` / ``501k`` / ``999``, with `` (n=K)`` when ``n`` is given; N/A if missing."""
    number = as_number(value)
    if number is None:
        return NA
    if number >= 1e6:
        text = f"{js_to_fixed(number / 1e6, 1)}M"
    elif number >= 1e3:
        text = f"{js_to_fixed(number / 1e3, 0)}k"
    else:
        text = str(js_round(number))
    return text if n is None else f"{text} (n={js_number_str(n)})"


def _minutes(value: object) -> str:
    number = as_number(value)
    return NA if number is None else f"{js_to_fixed(number, 0)} min"


def _ratio(value: object) -> str:
    number = as_number(value)
    return NA if number is None else f"**{js_to_fixed(number, 2)}**"


def _count(value: object) -> str:
    number = as_number(value)
    return EM_DASH if number is None else js_number_str(value)


def _issue_ref(value: object) -> str:
    return EM_DASH if as_number(value) is None else f"#{js_number_str(value)}"


def _summary_cells(row: dict[str, Any]) -> list[str]:
    kind = str(row.get("kind"))
    label = KIND_LABELS.get(kind, kind)
    tokens = fmt_batch_tokens(row.get("tokensPerShipped"), row.get("tokenSamples"))
    cost = fmt_usd(row.get("costPerShippedUsd"), row.get("costSamples"))
    wall = _minutes(row.get("wallMinutesPerShipped"))
    ratio = _ratio(row.get("issuesPerGateRun"))
    head = [text_cell(row.get("repo")), label]
    if kind == "full-cycle":
        return [
            *head,
            EM_DASH,
            EM_DASH,
            EM_DASH,
            _count(row.get("enqueued")),
            _count(row.get("shippedIssues")),
            EM_DASH,
            _count(row.get("gateRuns")),
            ratio,
            NA,
            wall,
            tokens,
            NA,
            cost,
        ]
    single = row.get("singleMember")
    single_cell = (
        EM_DASH if single is None else f"{js_number_str(single)} ({fmt_pct(row.get('singleMemberRate'))})"
    )
    outcomes = " / ".join(
        js_number_str(row.get(k) or 0) for k in ("shippedBatches", "dissolvedBatches", "blockedBatches")
    )
    return [
        *head,
        _count(row.get("batches")),
        single_cell,
        outcomes,
        _count(row.get("enqueued")),
        _count(row.get("shippedIssues")),
        _count(row.get("evictions")),
        _count(row.get("gateRuns")),
        ratio,
        _minutes(row.get("medianGateMinutes")),
        wall,
        tokens,
        fmt_batch_tokens(row.get("prepTokensPerShipped"), row.get("prepSamples")),
        cost,
    ]


def _models_cell(models: object) -> str:
    entries = dict_rows(models)
    if not isinstance(models, list):
        return NOT_ON_THIS_HOST
    parts = [
        f"`{code_cell(e.get('model') or '<unknown>')}` {fmt_batch_tokens(e.get('tokens'))}" for e in entries
    ]
    return ", ".join(parts) if parts else NOT_ON_THIS_HOST


def _batch_cells(row: dict[str, Any]) -> list[str]:
    outcome = text_cell(row.get("outcome"))
    if row.get("blockedReason"):
        outcome += f" ({text_cell(row.get('blockedReason'))})"
    return [
        f"`{code_cell(row.get('batch'))}`",
        text_cell(row.get("repo")),
        text_cell(row.get("kind")),
        _issue_ref(row.get("anchor")),
        outcome,
        _count(row.get("enqueued")),
        _count(row.get("shipped")),
        _count(row.get("evictions")),
        _count(row.get("gateRuns")),
        _issue_ref(row.get("pr")),
        _minutes(row.get("gateMinutes")),
        _models_cell(row.get("tokensByModel")),
        fmt_batch_tokens(row.get("prepTokens")),
    ]


def _table(header: str, rows: list[list[str]]) -> list[str]:
    return [header, "|" + "---|" * (header.count("|") - 1), *("| " + " | ".join(r) + " |" for r in rows)]


def batch_section(sidecar: dict) -> list[str]:
    """The section's lines; none when the sidecar has no summary row."""
    value = sidecar.get("batchAmortization")
    summary = dict_rows(value.get("summary")) if isinstance(value, dict) else []
    if not summary:
        return []
    batches = dict_rows(value.get("batches")) if isinstance(value, dict) else []
    lines = [
        "## Batch amortization",
        "",
        INTRO,
        "",
        *_table(SUMMARY_HEADER, [_summary_cells(r) for r in summary]),
    ]
    lines += ["", "### Per batch", ""]
    if batches:
        lines += _table(BATCH_HEADER, [_batch_cells(r) for r in batches])
    else:
        lines.append("No batch in this window.")
    lines += ["", *(f"- {note}" for note in NOTES)]
    return lines
