"""The publish guard: a report already published for a window (or a window whose predecessor had
rows) is never replaced by an empty one because a source failed silently.

The rule, its inputs and its message live here, pure (no Dagster). ``model_scorecard`` stores the
inputs under :data:`GUARD_KEY` (never published: the sidecar copies only its listed keys); the
blocking check ``window_not_silently_empty`` (``defs/report/checks.py``) and ``scorecard_report``
(before it writes anything) both evaluate them with :func:`guard_failure`. See docs/report.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

GUARD_CHECK = "window_not_silently_empty"
GUARD_ASSET = "model_scorecard"
GUARD_KEY = "_guard"
"""Where ``model_scorecard`` stores the guard's inputs in its output dict (not a sidecar key)."""
GUARD_HINT = (
    "that trail_comments synced every repo (its repo_sync_failed check), the GitHub token and its scopes "
    "or the recorded export path, and the window mode; then re-materialize this partition."
)


def guard_refuses(rows: int, previous_rows: int, published_rows: int | None) -> bool:
    """The empty-window guard: refuse to publish a window with no issue rows when the previous
    window has rows (same snapshot) or when a report with rows is already published for it (a source
    that failed silently empties both windows of the snapshot, so only the published file tells)."""
    return rows == 0 and (previous_rows > 0 or (published_rows or 0) > 0)


def guard_inputs(rows: int, previous_rows: int, published_rows: int | None, window: str) -> dict[str, Any]:
    """What ``model_scorecard`` stores under :data:`GUARD_KEY` for the guard to evaluate."""
    return {"rows": rows, "previous_rows": previous_rows, "published_rows": published_rows, "window": window}


def stored_guard_inputs(model_scorecard: Mapping[str, Any]) -> dict[str, Any]:
    """The guard's inputs from a stored ``model_scorecard`` value (a value stored before the guard
    inputs existed: its own grand total, no previous-window or published count)."""
    stored = model_scorecard.get(GUARD_KEY)
    if isinstance(stored, Mapping):
        return dict(stored)
    grand = model_scorecard.get("grandTotal") or {}
    window = f"{model_scorecard.get('windowStart')} → {model_scorecard.get('windowEnd')}"
    return guard_inputs(int(grand.get("n") or 0), 0, None, window)


def guard_failure(rows: int, previous_rows: int, published_rows: int | None, window: str) -> str | None:
    """Why a window must not be published (what happened, that the last good report stays, what to
    check), or None when the guard lets it through. Shared by the check and ``scorecard_report``."""
    if not guard_refuses(rows, previous_rows, published_rows):
        return None
    had = [f"the previous window had {previous_rows}"] if previous_rows > 0 else []
    if published_rows:
        had.append(f"the report already published for it had {published_rows}")
    return (
        f"Window {window} has no issue rows while {' and '.join(had)}; the report was not "
        f"published so the last good one stays in place. Check: {GUARD_HINT}"
    )


def guard_metadata(rows: int, previous_rows: int, published_rows: int | None, window: str) -> dict[str, Any]:
    return {
        "issue_rows": rows,
        "previous_window_issue_rows": previous_rows,
        "published_issue_rows": -1 if published_rows is None else published_rows,
        "window": window,
    }
