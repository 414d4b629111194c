"""Which data warnings a window's report states, recounted for the window, in the order it lists them.

``trail_runs`` and ``run_table`` state each repo's aggregates over the whole snapshot (every run
read so far): phases with negative spans (c6), runs without ``model=`` (c7), one model under two
keys (c8), ``-latest`` tags (c9), classifier-only runs (c10), risk-class coverage (c11) and runs
without a tier. That is right for those assets' checks, but a window's report must state them for
its own runs: a ``-latest`` tag last used two months ago is not a problem of this week's report.
:func:`for_window` recounts them over the runs a window selected; :func:`in_report_order` puts a
report's warnings in the reference's order (docs/scoring.md "Window warnings"): the ``runs.jsonl`` warning
(a) first, then per repo its per-trail warnings (c1-c5, in trail order), phase skew (c6), model
warnings (c7-c9), classifier-only (c10), risk coverage (c11), agent logs (d) and events (e), then
ours.

Pure module: no Dagster.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import pandas as pd

from scorecard_assets.records import WARNING_CODES, DataWarning, collapse_warnings
from scorecard_assets.transform.join import cost_estimate_in_window, model_warnings, tier_warnings
from scorecard_assets.transform.trail_runs import coverage_warnings, phase_skew_warnings

# The snapshot-wide repo aggregates that :func:`for_window` recounts per window.
WINDOWED_CODES = frozenset(
    {
        "phase_negative_samples",
        "model_missing",
        "model_routing_prefix",
        "moving_tag",
        "classifier_only_runs",
        "risk_unclassified",
        "tier_unknown",
    }
)
_PER_TRAIL = frozenset({"c1", "c2", "c3", "c4", "c5"})


def window_repo_warnings(selected_runs: pd.DataFrame) -> list[DataWarning]:
    """The :data:`WINDOWED_CODES` warnings recounted over ``selected_runs`` (run-table rows), per
    repo in order of first appearance."""
    out: list[DataWarning] = []
    for repo, runs in selected_runs.groupby("repo", sort=False):
        name = str(repo)
        out += phase_skew_warnings(runs, name)
        out += model_warnings(runs)
        out += coverage_warnings(runs, name)
        out += tier_warnings(runs)
    return out


def for_window(warnings: Iterable[DataWarning], selected_runs: pd.DataFrame) -> list[DataWarning]:
    """``warnings`` with their snapshot-wide repo aggregates replaced by the window's own."""
    kept = [w for w in warnings if not (w.issue is None and w.code in WINDOWED_CODES)]
    return kept + window_repo_warnings(selected_runs)


def _rank(code: str) -> int:
    """Position of a code inside a repo's block: per-trail c1-c5 share one rank (their trail order
    is kept), then c6 … c11, d, e, f, then ours."""
    ref = WARNING_CODES[code].reference if code in WARNING_CODES else ""
    if ref in _PER_TRAIL:
        return 10
    if ref.startswith("c") and ref[1:].isdigit():
        return 10 + int(ref[1:])
    return {"d": 30, "e": 31, "f": 32}.get(ref, 40)


def in_report_order(warnings: Iterable[DataWarning], repos: Iterable[str] = ()) -> list[DataWarning]:
    """``warnings`` in the reference's report order (module doc); ties keep their given order.

    ``repos`` is the configured repo order; a repo not in it follows, in order of appearance. Warnings
    about no repo (hosts, source files) come after every repo's block.
    """
    listed = list(warnings)
    order = {name: i for i, name in enumerate(repos)}
    for w in listed:
        if w.repo is not None and w.repo not in order:
            order[w.repo] = len(order)

    def key(w: DataWarning) -> tuple[int, int, int]:
        if WARNING_CODES.get(w.code) is not None and WARNING_CODES[w.code].reference in ("a", "b"):
            return (0, 0, 0)
        if w.repo is None:
            return (2, 0, _rank(w.code))
        return (1, order[w.repo], _rank(w.code))

    return sorted(listed, key=key)


def relative_to(warnings: Iterable[DataWarning], base: Path | None) -> list[DataWarning]:
    """Warnings whose file paths under ``base`` (the config's folder) are shown relative to it, so a
    published report does not spell out a machine's directory layout."""
    if base is None:
        return list(warnings)
    prefix = str(base).rstrip("/") + "/"
    out = []
    for w in warnings:
        if prefix in w.message or (w.path or "").startswith(prefix):
            w = w.model_copy(
                update={
                    "message": w.message.replace(prefix, ""),
                    "path": w.path[len(prefix) :] if w.path and w.path.startswith(prefix) else w.path,
                }
            )
        out.append(w)
    return out


def concerning_window(warnings: Iterable[DataWarning], issues: set[tuple[str, int]]) -> list[DataWarning]:
    """Warnings that concern the window: those about one of its issues, and every warning that is
    not about a single issue (sources, hosts, repo-wide counts). Identical ones are collapsed."""
    kept = [w for w in warnings if w.issue is None or (w.repo or "", w.issue) in issues]
    return collapse_warnings(kept)


def issue_keys(runs: pd.DataFrame) -> set[tuple[str, int]]:
    """The (repo, issue) pairs of ``runs``."""
    if runs.empty:
        return set()
    return {(str(r), int(i)) for r, i in runs[["repo", "issue"]].drop_duplicates().itertuples(index=False)}


def estimated_repos(issue_rows: pd.DataFrame | None) -> set[str]:
    """Repos with a delivered issue whose cost is a price-table estimate (issue rows of a window)."""
    if issue_rows is None or issue_rows.empty or "costEstimated" not in issue_rows:
        return set()
    used = issue_rows[issue_rows["delivered"].astype(bool) & issue_rows["costEstimated"].astype(bool)]
    return {str(r) for r in used["repo"]}


def warnings_of_window(
    warnings: Iterable[DataWarning],
    selected_runs: pd.DataFrame,
    *,
    config_dir: Path | None,
    repos: Sequence[str],
    issue_rows: pd.DataFrame | None = None,
) -> list[DataWarning]:
    """What a window's report states: the snapshot's warnings with repo aggregates recounted over the
    window's runs (:func:`for_window`), only those about the window's issues or about no single issue
    (:func:`concerning_window`), paths relative to the config folder, in report order. With the
    window's ``issue_rows``, a warning states its consequence only when it happened in the window
    (``cost_estimated``: a delivered issue of the repo uses an estimate)."""
    recounted = for_window(warnings, selected_runs)
    kept = concerning_window(recounted, issue_keys(selected_runs))
    if issue_rows is not None:
        used = estimated_repos(issue_rows)
        kept = [cost_estimate_in_window(w, (w.repo or "") in used) for w in kept]
    return in_report_order(relative_to(kept, config_dir), repos)
