"""Group ``report``: weekly partitions. The model scorecard, the pairing scores, the rendered report.

Each asset has ``BackfillPolicy.single_run()``: a range of weeks (a UI backfill, ``dg launch
--partition-range``) is one run, and each asset computes every week of the range in that run, with
metadata per week (``partition_values.py`` for how the values are passed). Every asset refuses a week
that ends after the config's ``as_of`` (``scoring/windows.py``), so no report is rendered from data
that stops inside its week. ``scorecard_report`` publishes in the ``report_publish`` pool and carries
the freshness policy of the Monday report (docs/dagster.md).
"""

import functools
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg
import pandas as pd

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.defs.metadata import family_ranking, preview_markdown
from scorecard_assets.defs.partition_values import each_week, values_by_partition
from scorecard_assets.defs.partitions import weekly_partitions
from scorecard_assets.defs.resources import ReportStoreResource, ScorecardResource, StateStoreResource
from scorecard_assets.pairings.window import score_window, window_rows_filter
from scorecard_assets.records import DataWarning, SourceStat, lineage_sources, lineage_warnings, warning_line
from scorecard_assets.report.charts import chart_data_uris, chart_pngs
from scorecard_assets.report.decisions import decisions_chart_pngs, decisions_sidecar
from scorecard_assets.report.digest import render_digest
from scorecard_assets.report.guard import (
    GUARD_KEY,
    forced_note,
    guard_failure,
    guard_inputs,
    guard_metadata,
    profile_of,
    stored_guard_inputs,
    with_published,
)
from scorecard_assets.report.markdown import render_markdown
from scorecard_assets.scoring.scorecard import scorecard_frames, scorecard_of_rows, window_issue_rows
from scorecard_assets.scoring.sidecar.assembly import assemble_sidecar
from scorecard_assets.scoring.sidecar.model import dump_sidecar, sidecar_problems
from scorecard_assets.scoring.window_warnings import relative_to, warnings_of_window
from scorecard_assets.scoring.windows import (
    Window,
    previous_window,
    rows_filter,
    select_runs,
    week_past_as_of,
    window_for_partition,
)
from scorecard_assets.storage.location import uri_of
from scorecard_assets.storage.reports import ReportStore
from scorecard_assets.storage.tables import StoredTable

GROUP = "report"


def now_iso() -> str:
    now = datetime.now(UTC)  # one reading: seconds and milliseconds from the same instant
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


PUBLISH_POOL = "report_publish"
# Monday's report is due by 09:00 UTC (the schedule runs at 06:00); it must have been materialized since
# the week ended (Monday 00:00 UTC), else the asset shows as failing its freshness policy.
REPORT_FRESHNESS = dg.FreshnessPolicy.cron(deadline_cron="0 9 * * 1", lower_bound_delta=timedelta(hours=9))
ONE_RUN_PER_RANGE = dg.BackfillPolicy.single_run()


def weekly_asset(**kwargs: Any) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """``@dg.asset`` of a weekly report asset: group ``report``, weekly partitions, and one run per
    range of weeks (docs/dagster.md "Backfills: one run per range"); ``kwargs`` add to these."""
    return dg.asset(
        group_name=GROUP, partitions_def=weekly_partitions, backfill_policy=ONE_RUN_PER_RANGE, **kwargs
    )


def _windows(keys: Sequence[str], cfg: ScorecardConfig) -> dict[str, Window]:
    """The window of every week ``keys`` names (the run's partitions, in order); a week past the
    config's ``as_of`` fails the run with one line (nothing is computed or written)."""
    refused = [m for m in (week_past_as_of(k, cfg.as_of) for k in keys) if m]
    if refused:
        more = f" (and {len(refused) - 1} more week(s) of the range)" if len(refused) > 1 else ""
        raise dg.Failure(description=refused[0] + more, allow_retries=False)
    return {k: window_for_partition(k, days=cfg.window.days, mode=cfg.window.mode) for k in keys}


# The trail's milestone list of each run is read only by the model scorecard's window warnings
# (phase times are in ``phase_seconds``), and decoding it is most of what reading a window's rows
# costs: the decisions and batch assets leave it out (docs/storage.md "Reading only what is needed").
UNREPORTED_COLUMNS = frozenset({"milestones"})


def window_rows(run_table: StoredTable, windows: Sequence[Window]) -> pd.DataFrame:
    """The run-table rows that any of ``windows`` can select (predicate pushdown), without
    ``UNREPORTED_COLUMNS``."""
    columns = [c for c in run_table.columns if c not in UNREPORTED_COLUMNS]
    return run_table.read(columns=columns, filter=rows_filter(list(windows)))


def _config_dir(cfg: ScorecardConfig) -> Path | None:
    """Paths under the config's folder are shown relative to it in published reports."""
    return cfg.config_path.parent if cfg.config_path else None


class GuardRunConfig(dg.Config):
    """``force``: publish even though the guard found a vanished repo, source or column
    (docs/reliability.md "The publish guard"); the check then passes and says what was forced."""

    force: bool = False


@weekly_asset(kinds={"pandas"})
def model_scorecard(
    context: dg.AssetExecutionContext,
    config: GuardRunConfig,
    scorecard: ScorecardResource,
    reports: ReportStoreResource,
    state: StateStoreResource,
    run_table: StoredTable,
) -> Any:
    """Per model × repo × tier buckets, totals per model with gateway sub-rows, grand total, per-repo
    totals, phase medians, risk-class rollup and Δ delivery rate vs the window ending 7 days earlier.
    Its blocking check `window_not_silently_empty` refuses a silently empty window. The week's one
    warning count is `scorecard_report`'s `data_warnings` (the report gathers every part's warnings).

    A week is kept in the week memo; the publish guard's inputs (which compare with what is
    published now) are made afresh on every run (docs/incremental.md "Report weeks: the week memo")."""
    cfg = scorecard.load()
    windows = _windows(context.partition_keys, cfg)
    store = reports.store(cfg)
    baselines = {k: previous_window(w) for k, w in windows.items()}
    # only the rows these windows and their baselines can select are read (predicate pushdown), on
    # the first week the memo does not hold; every column: the window's warnings read the runs'
    # milestones (phase-order skew)
    candidates = functools.cache(
        lambda: run_table.read(filter=rows_filter([*windows.values(), *baselines.values()]))
    )
    warnings = lineage_warnings(run_table)
    sources = [s.model_dump() for s in lineage_sources(run_table)]

    # a week's baseline is the week before's window: in a range, its issue rows are made once
    rows_of = functools.cache(lambda w: window_issue_rows(candidates(), w))

    def week(key: str) -> tuple[dict[str, Any], dict[str, Any]]:
        return _model_scorecard_of(
            cfg, windows[key], baselines[key], candidates(), rows_of, warnings, sources
        )

    def guarded(_key: str, kept: dict[str, Any]) -> dict[str, Any]:
        sidecar = dict(kept[_SIDECAR])
        # what the guard check evaluates (a private key: the published sidecar copies only its listed keys)
        sidecar[GUARD_KEY] = guard_inputs(
            profile_of(sidecar) or {},
            previous_rows=int(kept[_BASELINE_ROWS]),
            published=store.published_sidecar(sidecar["windowEnd"]),
            window=f"{sidecar['windowStart']} → {sidecar['windowEnd']}",
            repos=cfg.repo_names,
            hosts=[h.name for h in cfg.hosts],
            max_drop=cfg.guard.max_issue_row_drop,
        )
        sidecar[GUARD_KEY]["force"] = config.force
        return sidecar

    memo = state.memo(context, cfg, {"run_table": run_table})
    return each_week(context, windows, week, memo, finish=guarded)


# what the week memo keeps of a model_scorecard week: the sidecar and its baseline's issue rows
_SIDECAR = "sidecar"
_BASELINE_ROWS = "baseline_issue_rows"


def _model_scorecard_of(
    cfg: ScorecardConfig,
    w: Window,
    baseline: Window,
    candidates: pd.DataFrame,
    rows_of: Callable[[Window], pd.DataFrame],
    warnings: list[DataWarning],
    sources: list[dict[str, Any]],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One week's sidecar (with its baseline's issue-row count, which the guard reads) and its
    materialization metadata; ``rows_of(window)`` gives a window's issue rows."""
    runs = select_runs(candidates, w)
    rows = rows_of(w)
    applicable = warnings_of_window(
        warnings, runs, config_dir=_config_dir(cfg), repos=[r.name for r in cfg.repos], issue_rows=rows
    )
    baseline_rows = rows_of(baseline)
    sidecar = scorecard_of_rows(
        rows,
        baseline_rows,
        w,
        generated_at=now_iso(),
        warnings=[warning_line(x) for x in applicable],
    )
    sidecar["sources"] = sources
    sidecar["warningRecords"] = [x.model_dump() for x in applicable]
    frames = scorecard_frames(sidecar)
    totals = frames.get("totals", pd.DataFrame())
    grand = sidecar.get("grandTotal") or {}
    meta = {
        "window": f"{sidecar['windowStart']} → {sidecar['windowEnd']} ({w.mode} mode)",
        "issue_rows": int(grand.get("n") or 0),
        "delivered": int(grand.get("delivered") or 0),
        "delivery_rate": float(grand.get("deliveryRate") or 0.0),
        "models": len(sidecar.get("totals") or []),
        "totals": dg.MetadataValue.md(preview_markdown(totals, rows=30)),
    }
    return {_SIDECAR: sidecar, _BASELINE_ROWS: len(baseline_rows)}, meta


@weekly_asset(kinds={"pandas"})
def pairing_scores(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    state: StateStoreResource,
    cycles: StoredTable,
) -> Any:
    """Pragmatikos scores of planner → builder pairings (six views) over the window's fleet cycles, and
    separately over imported cycles: evidence-weighted scores, tiers, 90 % bootstrap intervals, ties.
    A week is kept in the week memo (docs/incremental.md "Report weeks: the week memo")."""
    cfg = scorecard.load()
    windows = _windows(context.partition_keys, cfg)
    memo = state.memo(context, cfg, {"cycles": cycles})
    return each_week(context, windows, lambda key: _pairing_scores_of(windows[key], cycles), memo)


def _pairing_scores_of(w: Window, cycles: StoredTable) -> tuple[dict[str, Any], dict[str, Any]]:
    """One week's pairing scores and their materialization metadata."""
    inside = cycles.read(filter=window_rows_filter(w.start, w.end))
    result = score_window(inside, window_start=w.start, window_end=w.end, generated=now_iso())
    meta: dict[str, Any] = {"window": f"{w.window_start_date} → {w.window_end_date}"}
    for origin in ("fleet", "imported"):
        count, ranking = family_ranking(result.get(origin))
        meta[f"{origin}_family_pairings"] = count
        if ranking is not None:
            meta[f"{origin}_family_ranking"] = ranking
    result_with_warnings = {
        **result,
        "warnings": [x.model_dump() for x in cycles.warnings],
        "sources": [x.model_dump() for x in cycles.sources],
    }
    return result_with_warnings, meta


@weekly_asset(kinds={"markdown", "json"}, pool=PUBLISH_POOL, freshness_policy=REPORT_FRESHNESS)
def scorecard_report(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    reports: ReportStoreResource,
    model_scorecard: Any,
    pairing_scores: Any,
    session_pairing_scores: Any,
    routing_advice: Any,
    change_alerts: Any,
    adjusted_effects: Any,
    pairing_comparison: Any,
    batch_amortization: Any,
) -> dg.MaterializeResult:
    """Writes model-scorecard.md, model-scorecard.json (sidecar), digest.txt and PNG charts into
    `<output_dir>/<window end>/` and refreshes `<output_dir>/latest/`, with the decisions sections
    (routing advice, change alerts, adjusted effects, pairing comparisons) and their charts. The
    rendered report and its charts are shown in this materialization's metadata. Refuses (fails,
    writes nothing) a window the guard check refuses, also when materialized on its own."""
    cfg = scorecard.load()
    keys = list(_windows(context.partition_keys, cfg))
    store = reports.store(cfg)
    scorecards = values_by_partition(keys, model_scorecard)
    pairings = values_by_partition(keys, pairing_scores)
    sessions = values_by_partition(keys, session_pairing_scores)
    decisions = _decisions_by_week(keys, routing_advice, change_alerts, adjusted_effects, pairing_comparison)
    batches = values_by_partition(keys, batch_amortization)
    # every week of the range is checked before the first file is written
    for key in keys:
        forced = _refuse_a_silently_empty_window(scorecards[key], store)
        if forced:
            context.log.warning(forced)
    for key in keys:
        meta = _publish_week(
            context,
            cfg,
            store,
            key,
            scorecards[key],
            pairings[key],
            sessions[key],
            decisions[key],
            batches[key],
        )
        context.add_asset_metadata(meta, partition_key=key)
    return dg.MaterializeResult()


def _publish_week(
    context: dg.AssetExecutionContext,
    cfg: ScorecardConfig,
    store: ReportStore,
    key: str,
    model_scorecard: dict[str, Any],
    pairing_scores: dict[str, Any],
    session_pairing_scores: dict[str, Any] | None,
    decisions: tuple[dict[str, Any], list[DataWarning]],
    batches: dict[str, Any],
) -> dict[str, Any]:
    """Render and publish one week's report; its materialization metadata."""
    sessions = session_pairing_scores or {}
    pairings = {"fleet": pairing_scores.get("fleet"), "imported": pairing_scores.get("imported")}
    if sessions.get("enabled"):  # the sessions pool (docs/sessions.md), only when sessions: is on
        pairings["sessions"] = sessions.get("pool")
    block, decision_warnings = decisions
    sidecar = assemble_sidecar(
        model_scorecard,
        pairings=pairings,
        warnings=[
            *_records(DataWarning, model_scorecard.get("warningRecords")),
            *relative_to(_records(DataWarning, pairing_scores.get("warnings")), _config_dir(cfg)),
            *_records(DataWarning, sessions.get("warnings")),
            *decision_warnings,
            *relative_to(_records(DataWarning, batches.get("warnings")), _config_dir(cfg)),
        ],
        batches={k: batches.get(k) for k in ("summary", "batches")},
        sources=[
            *_records(SourceStat, model_scorecard.get("sources")),
            *_records(SourceStat, pairing_scores.get("sources")),
            *_records(SourceStat, sessions.get("sources")),
        ],
        decisions=block,
    )
    regenerate = f"make week WEEK={key}"
    pngs = {**chart_pngs(sidecar), **decisions_chart_pngs(block)}
    # the file links the PNGs beside it; the UI's copy embeds them (each beside its section)
    markdown = render_markdown(sidecar, regenerate_cmd=regenerate, charts={name: name for name in pngs})
    in_ui = render_markdown(sidecar, regenerate_cmd=regenerate, charts=chart_data_uris(pngs))
    digest = render_digest(sidecar, report_link=store.uri(sidecar["windowEnd"], "model-scorecard.md"))
    problems = sidecar_problems(sidecar)
    if problems:
        context.log.warning("sidecar does not validate: " + "; ".join(problems[:5]))
    files: dict[str, bytes | str] = {
        "model-scorecard.md": markdown,
        "model-scorecard.json": dump_sidecar(sidecar),
        "digest.txt": "\n".join(digest) + "\n",
        **pngs,
    }
    written = store.publish(sidecar["windowEnd"], files)
    for line in digest:
        context.log.info(line)
    return {
        "report": dg.MetadataValue.md(in_ui),
        "digest": dg.MetadataValue.md("\n".join(f"    {x}" for x in digest)),
        "dagster/uri": uri_of(written["model-scorecard.md"].parent),
        "report_uri": dg.MetadataValue.url(uri_of(written["model-scorecard.md"])),
        "sidecar_uri": dg.MetadataValue.url(uri_of(written["model-scorecard.json"])),
        "window": f"{sidecar['windowStart']} → {sidecar['windowEnd']}",
        "data_warnings": len(sidecar["warnings"]),
        "sidecar_valid": not problems,
        "latest_window": store.latest_window() or "",
    }


def _decisions_by_week(
    keys: list[str], routing: Any, alerts: Any, adjusted: Any, comparison: Any
) -> dict[str, tuple[dict[str, Any], list[DataWarning]]]:
    """Per week: the sidecar's ``decisions`` block from the decisions assets' stored values, and their
    data warnings (docs/decisions.md "What the report shows")."""
    parts = [values_by_partition(keys, v) for v in (routing, alerts, adjusted, comparison)]
    out = {}
    for key in keys:
        r, a, d, p = (part[key] for part in parts)
        block = decisions_sidecar(
            frontier=r.get("frontier"),
            routing=r.get("routing"),
            alerts=a.get("alerts"),
            adjusted=d.get("adjusted"),
            pairing_comparison=p.get("pairingComparison"),
            harness=r.get("harness"),
        )
        found = [w for v in (r, a, d, p) for w in _records(DataWarning, v.get("warningRecords"))]
        out[key] = (block, found)
    return out


def _records(kind: type[DataWarning] | type[SourceStat], values: Any) -> list[Any]:
    """Stored record dicts validated back into their model (pydantic at the edges)."""
    return [kind.model_validate(v) for v in values or []]


def _refuse_a_silently_empty_window(model_scorecard: dict[str, Any], store: ReportStore) -> str | None:
    """The guard's rule again, with the published report re-read now: materializing this asset on its
    own (or in a backfill of only this asset) must not publish a window the guard check refused."""
    inputs = with_published(
        stored_guard_inputs(model_scorecard), store.published_sidecar(str(model_scorecard.get("windowEnd")))
    )
    failure = guard_failure(inputs)
    if failure is not None:
        raise dg.Failure(description=failure, metadata=guard_metadata(inputs), allow_retries=False)
    return forced_note(inputs)
