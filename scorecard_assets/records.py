"""Structured records shared by every pure module: data warnings, source statistics, table results.

A data warning is made once, by the pure logic where the condition arises. Asset checks (one per
warning code and asset) and the report's "Data warnings" section both read these records.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field

Scalar = str | int | float | bool | None


class DataWarning(BaseModel):
    """One data-quality fact: what, where, which value, and the consequence (in ``message``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str = Field(description="a key of WARNING_CODES")
    asset: str = Field(description="the asset where the condition arises")
    message: str = Field(description="our own sentence; raw values already passed through render_value")
    repo: str | None = None
    issue: int | None = None
    run_id: str | None = None
    host: str | None = None
    path: str | None = None
    line: int | None = None
    values: dict[str, Scalar] = Field(default_factory=dict)
    count: int = 1

    def key(self) -> tuple[str, str, str]:
        """Identity used to collapse repeats: same code, same asset, same message."""
        return (self.code, self.asset, self.message)

    def where(self) -> str:
        """A short location: repo#issue, run, host, file:line - whichever are known."""
        parts: list[str] = []
        if self.repo and self.issue is not None:
            parts.append(f"{self.repo}#{self.issue}")
        elif self.repo:
            parts.append(self.repo)
        if self.run_id:
            parts.append(f"run {self.run_id}")
        if self.host:
            parts.append(f"host {self.host}")
        if self.path:
            parts.append(f"{self.path}:{self.line}" if self.line is not None else self.path)
        return ", ".join(parts)


class SourceStat(BaseModel):
    """What one source contributed: per source kind, host and repo (and file when useful)."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(description="trails | runs.jsonl | events.jsonl | agent logs | cycles import")
    host: str | None = None
    repo: str | None = None
    path: str | None = None
    files: int = 0
    rows: int = 0
    malformed: int = 0
    bytes: int = 0
    cost_usd: float | None = None
    notes: str | None = None


@dataclass(frozen=True)
class TableResult:
    """A DataFrame plus the warnings and source statistics produced while building it."""

    frame: pd.DataFrame
    warnings: list[DataWarning] = field(default_factory=list)
    sources: list[SourceStat] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def collapse_warnings(warnings: Iterable[DataWarning]) -> list[DataWarning]:
    """Merge identical warnings (same code, asset, message) into one with a summed count.

    First-occurrence order is kept; the first record's location fields are kept.
    """
    merged: dict[tuple[str, str, str], DataWarning] = {}
    for w in warnings:
        k = w.key()
        if k in merged:
            merged[k] = merged[k].model_copy(update={"count": merged[k].count + w.count})
        else:
            merged[k] = w
    return list(merged.values())


@dataclass(frozen=True)
class WarningCode:
    """Catalogue entry: the assets a code may be raised on, the reference row it maps to, a title."""

    assets: tuple[str, ...]
    title: str
    reference: str = ""


# Every data warning code. ``reference``: the row of the reference's warning list it corresponds to
# (docs/architecture.md "Data warnings"); ours have none.
WARNING_CODES: dict[str, WarningCode] = {
    # ingest
    "telemetry_missing": WarningCode(("run_telemetry",), "runs.jsonl missing or empty on a host", "a"),
    "repo_sync_failed": WarningCode(("trail_comments",), "a repo's trails could not be read or synced", "f"),
    "listing_reread": WarningCode(
        ("trail_comments",), "a GitHub listing answered inconsistently; the page was read again"
    ),
    "agent_logs_missing": WarningCode(("agent_log_usage",), "no agent logs for a repo on a host", "d"),
    "events_missing": WarningCode(
        ("dispatch_events",), "events.jsonl missing or empty for a repo on a host", "e"
    ),
    "malformed_line": WarningCode(
        (
            "trail_comments",
            "run_telemetry",
            "dispatch_events",
            "agent_log_usage",
            "cycles",
            *("batch_journal", "batch_prep", "batch_pull_requests"),
        ),
        "a line or record that could not be parsed or has wrong types (counted, skipped)",
    ),
    "unreadable_file": WarningCode(
        (
            "trail_comments",
            "run_telemetry",
            "dispatch_events",
            "agent_log_usage",
            "cycles",
            *("batch_journal", "batch_logs", "batch_prep", "batch_pull_requests"),
        ),
        "a file or directory that could not be read",
    ),
    "agent_log_format_mismatch": WarningCode(
        ("agent_log_usage",), "a dispatch whose log records are another agent CLI's than its command names"
    ),
    "agent_log_cost_missing": WarningCode(
        ("agent_log_usage",), "a dispatch slice of a cost-recording CLI that yields no cost"
    ),
    "text_replaced": WarningCode(
        ("run_telemetry", "dispatch_events", "agent_log_usage", "cycles"),
        "valid JSON text holding a lone UTF-16 surrogate escape, replaced by U+FFFD (the line counts)",
    ),
    "unknown_event": WarningCode(("dispatch_events",), "an event name outside the scheduler vocabulary"),
    "out_of_range_value": WarningCode(
        ("run_telemetry", "agent_log_usage"),
        "a token or cost value that is negative, non-finite or too large",
    ),
    "batch_prs_unavailable": WarningCode(
        ("batch_pull_requests",),
        "a repo's merged batch pull requests could not be read (none counts as shipped)",
    ),
    # trail runs
    "run_id_missing": WarningCode(
        ("trail_runs",), "milestones with an empty run= pooled as unknown-run", "c1"
    ),
    "unusable_at": WarningCode(
        ("trail_runs",), "a milestone whose at= is unusable; timed by the server", "c2"
    ),
    "negative_span": WarningCode(("trail_runs",), "a negative span between milestones (clock skew)", "c3"),
    "review_counter_invalid": WarningCode(
        ("trail_runs",), "a review counter (or files=, tests_run=) that is not a valid integer", "c4"
    ),
    "ac_met_exceeds_total": WarningCode(("trail_runs",), "ac_met greater than ac_total", "c5"),
    "phase_negative_samples": WarningCode(
        ("trail_runs",), "a phase whose spans include negative samples", "c6"
    ),
    "classifier_only_runs": WarningCode(("trail_runs",), "runs holding only classify milestones", "c10"),
    "risk_unclassified": WarningCode(("trail_runs",), "cycle runs without a valid classifier risk=", "c11"),
    # join
    "model_missing": WarningCode(("run_table",), "runs without model= (bucketed as <unknown>)", "c7"),
    "model_routing_prefix": WarningCode(("run_table",), "one model possibly under two keys", "c8"),
    "moving_tag": WarningCode(("run_table",), "a -latest tag without a declared alias", "c9"),
    "telemetry_unattributed": WarningCode(("run_table",), "runs.jsonl rows attributed to no repo"),
    "issue_number_ambiguous": WarningCode(("run_table",), "an issue number present in several repos"),
    "tier_unknown": WarningCode(("run_table",), "runs with no work dispatch tier and no telemetry tier"),
    "cost_estimated": WarningCode(
        ("run_table",), "costs estimated from tokens with the configured price table"
    ),
    # cycles
    "cycle_import_invalid": WarningCode(("cycles",), "imported cycle rows failing validation"),
    # decisions (report group, weekly; docs/decisions.md "Warnings")
    "change_alert": WarningCode(
        ("change_alerts",),
        "a model's or gateway's delivery rate or cost per delivered issue changed (change-point test, "
        "false-alarm rate controlled)",
    ),
    "alert_history_short": WarningCode(
        ("change_alerts",), "too few weekly windows or issues to test a series for a change"
    ),
    "advice_withheld": WarningCode(
        ("routing_advice",), "the window's data cannot support routing advice (too few runs per option)"
    ),
    "adjusted_fallback": WarningCode(
        ("adjusted_effects",),
        "the plain regression separated, was singular or did not converge; a penalised or smaller fit "
        "was used",
    ),
    "adjusted_unavailable": WarningCode(
        ("adjusted_effects",), "no difficulty-adjusted effect could be estimated (too few issues or models)"
    ),
}


def warnings_for(asset: str) -> list[str]:
    """The warning codes that can be raised on ``asset`` (catalogue order)."""
    return [code for code, spec in WARNING_CODES.items() if asset in spec.assets]


def lineage_warnings(result: TableResult) -> list[DataWarning]:
    """The warnings of ``result`` and of every asset upstream of it (forwarded in ``extra``)."""
    return [*result.extra.get("upstream_warnings", []), *result.warnings]


def lineage_sources(result: TableResult) -> list[SourceStat]:
    """The source statistics of ``result`` and of every asset upstream of it."""
    return [*result.extra.get("upstream_sources", []), *result.sources]


def forward_lineage(result: TableResult, *inputs: TableResult) -> TableResult:
    """``result`` carrying its inputs' warnings and sources, so one downstream read sees them all."""
    warnings: list[DataWarning] = []
    sources: list[SourceStat] = []
    for r in inputs:
        warnings.extend(lineage_warnings(r))
        sources.extend(lineage_sources(r))
    extra = {**result.extra, "upstream_warnings": warnings, "upstream_sources": sources}
    return TableResult(frame=result.frame, warnings=result.warnings, sources=result.sources, extra=extra)


def warning_line(w: DataWarning) -> str:
    """The one-line form used in the report and the sidecar's ``warnings`` list."""
    return w.message + (f" (×{w.count})" if w.count > 1 else "")


# The sessions path's codes live with it (sessions/warnings.py); registered here, after everything
# above is defined, so either module can be imported first.
from scorecard_assets.sessions.warnings import SESSION_WARNING_CODES  # noqa: E402

WARNING_CODES.update(SESSION_WARNING_CODES)
