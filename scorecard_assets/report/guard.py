"""The publish guard: a report already published for a window is never replaced by one that lost a
whole source or repo without saying so, and a window is never published empty over evidence.

The rules, their inputs and their messages live here, pure (no Dagster); docs/reliability.md
"The publish guard" describes them. ``model_scorecard`` stores the inputs under :data:`GUARD_KEY`
(never published: the sidecar copies only its listed keys); the blocking check
``window_not_silently_empty`` (``defs/report/checks.py``) and ``scorecard_report`` (before it writes
anything, with the published report re-read) both evaluate them with :func:`guard_failure`.

What blocks (an ERROR check naming what vanished), unless the run sets ``force``:

1. **An empty window over evidence**: no issue rows while the previous window had rows, or the
   report already published for the window had rows.
2. **A vanished repo**: a configured repo with issue rows in the published report and none now.
3. **A vanished source**: a source (per kind, host and repo, as the Sources table lists them) of a
   configured host or repo with rows in the published report and none now.
4. **A vanished column**: issue rows with a cost, a known tier, or event counts (escalations,
   stalls, unverified exits) in the published report and none now, while rows remain.
5. **A large drop**: fewer issue rows than the published report by more than
   ``guard.max_issue_row_drop`` (a fraction, default 0.3).
6. **Silent trails** (issue 16): a configured repo whose trails are empty while its journals or
   telemetry have rows for it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

GUARD_CHECK = "window_not_silently_empty"
GUARD_ASSET = "model_scorecard"
GUARD_KEY = "_guard"
"""Where ``model_scorecard`` stores the guard's inputs in its output dict (not a sidecar key)."""
DEFAULT_MAX_DROP = 0.3
GUARD_HINT = (
    "that trail_comments synced every repo (its repo_sync_failed check), the GitHub token and its scopes "
    "or the recorded export path, and the window mode; then re-materialize this partition."
)
FORCE_HINT = (
    "If the loss is real (a repo or host left the fleet), publish anyway with the run config "
    "`ops: {model_scorecard: {config: {force: true}}}` (CLI: `--force`)."
)
UNKNOWN = "<unknown>"
TRAILS = "trails"
# Sources that show activity of a repo without its trails (issue 16: silent trails)
ACTIVITY_SOURCES = ("events.jsonl", "runs.jsonl", "agent logs")
SIGNALS = {
    "cost": "issue rows with a cost",
    "tier": "issue rows with a known tier",
    "events": "event counts (escalations, stalls, unverified exits)",
}


# ------------------------------------------------------------------------------------ profiles


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _dicts(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def source_label(source: object, host: object = None, repo: object = None) -> str:
    """How a source is named in messages: ``runs.jsonl on host a`` / ``trails of acme/api``."""
    label = str(source)
    if host:
        label += f" on host {host}"
    if repo:
        label += f" of {repo}"
    return label


def profile_of(sidecar: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """What the guard compares, from a sidecar (ours, or one already published; any damaged part
    reads as nothing): issue rows, rows per repo, rows per source, and the column signals."""
    if not isinstance(sidecar, Mapping):
        return None
    grand = sidecar.get("grandTotal") if isinstance(sidecar.get("grandTotal"), Mapping) else {}
    repos: dict[str, int] = {}
    for row in _dicts(sidecar.get("repoTotals")):
        if isinstance(row.get("repo"), str):
            repos[row["repo"]] = repos.get(row["repo"], 0) + _count(row.get("n"))
    sources: dict[str, dict[str, Any]] = {}
    for s in _dicts(sidecar.get("sources")):
        if not isinstance(s.get("source"), str):
            continue
        label = source_label(s["source"], s.get("host"), s.get("repo"))
        entry = sources.setdefault(
            label, {"source": s["source"], "host": s.get("host"), "repo": s.get("repo"), "rows": 0}
        )
        entry["rows"] += _count(s.get("rows"))
    tier = sum(
        _count(b.get("n")) for b in _dicts(sidecar.get("buckets")) if b.get("tier") not in (None, UNKNOWN)
    )
    events = sum(_count(grand.get(k)) for k in ("escalations", "stalls", "unverifiedExits"))
    return {
        "rows": _count(grand.get("n")),
        "repos": repos,
        "sources": sources,
        "signals": {"cost": _count(grand.get("costSamples")), "tier": tier, "events": events},
    }


def guard_inputs(
    current: Mapping[str, Any],
    *,
    previous_rows: int,
    published: Mapping[str, Any] | None,
    window: str,
    repos: Sequence[str] = (),
    hosts: Sequence[str] = (),
    max_drop: float = DEFAULT_MAX_DROP,
    force: bool = False,
) -> dict[str, Any]:
    """What ``model_scorecard`` stores under :data:`GUARD_KEY`: the window's profile, the previous
    window's issue rows, the profile of the report already published for the window (None: none),
    the configured repos and hosts, the allowed drop and the ``force`` flag."""
    published_profile = profile_of(published)
    return {
        "window": window,
        "rows": int(current.get("rows") or 0),
        "previous_rows": int(previous_rows),
        "published_rows": None if published_profile is None else published_profile["rows"],
        "current": dict(current),
        "published": published_profile,
        "repos": list(repos),
        "hosts": list(hosts),
        "max_drop": float(max_drop),
        "force": bool(force),
    }


def with_published(inputs: Mapping[str, Any], published: Mapping[str, Any] | None) -> dict[str, Any]:
    """``inputs`` with the published report re-read now (``scorecard_report`` does, before writing)."""
    profile = profile_of(published)
    return {
        **inputs,
        "published": profile,
        "published_rows": None if profile is None else profile["rows"],
    }


def stored_guard_inputs(model_scorecard: Mapping[str, Any]) -> dict[str, Any]:
    """The guard's inputs from a stored ``model_scorecard`` value (a value stored before the guard
    inputs existed, or in their first shape: its own profile, no previous-window or published data)."""
    stored = model_scorecard.get(GUARD_KEY)
    if isinstance(stored, Mapping) and "current" in stored:
        return dict(stored)
    window = f"{model_scorecard.get('windowStart')} → {model_scorecard.get('windowEnd')}"
    current = profile_of(model_scorecard) or {"rows": 0}
    previous = int(stored.get("previous_rows") or 0) if isinstance(stored, Mapping) else 0
    if isinstance(stored, Mapping):
        window = str(stored.get("window") or window)
    return guard_inputs(current, previous_rows=previous, published=None, window=window)


# ------------------------------------------------------------------------------------ rules


def guard_refuses(rows: int, previous_rows: int, published_rows: int | None) -> bool:
    """Rule 1, the empty-window guard: refuse a window with no issue rows when the previous window
    has rows (same snapshot) or when a report with rows is already published for it (a source that
    failed silently empties both windows of the snapshot, so only the published file tells)."""
    return rows == 0 and (previous_rows > 0 or (published_rows or 0) > 0)


def vanished(inputs: Mapping[str, Any]) -> list[str]:
    """Rules 2-6: one line per thing the window lost against the published report (or, for silent
    trails, against its own journals and telemetry); empty when nothing vanished."""
    current: Mapping[str, Any] = inputs.get("current") or {}
    published: Mapping[str, Any] | None = inputs.get("published")
    repos = set(inputs.get("repos") or ())
    hosts = set(inputs.get("hosts") or ())
    lines = _silent_trails(current, repos)
    if not published:
        return lines
    rows, before = int(current.get("rows") or 0), int(published.get("rows") or 0)
    now_repos: Mapping[str, int] = current.get("repos") or {}
    for repo, n in sorted((published.get("repos") or {}).items()):
        if n > 0 and repo in repos and now_repos.get(repo, 0) == 0:
            lines.append(f"repo {repo} had {n} issue row(s) in the published report and has none now")
    now_sources: Mapping[str, Any] = current.get("sources") or {}
    kinds = {s.get("source") for s in now_sources.values()}
    for label, s in sorted((published.get("sources") or {}).items()):
        configured = (s.get("repo") is None or s["repo"] in repos) and (
            s.get("host") is None or s["host"] in hosts
        )
        now = int((now_sources.get(label) or {}).get("rows") or 0)
        if s.get("rows", 0) > 0 and configured and s.get("source") in kinds and now == 0:
            lines.append(f"source {label} had {s['rows']} row(s) in the published report and has none now")
    if rows > 0:
        now_signals: Mapping[str, int] = current.get("signals") or {}
        for key, what in SIGNALS.items():
            had = int((published.get("signals") or {}).get(key) or 0)
            if had > 0 and int(now_signals.get(key) or 0) == 0:
                lines.append(f"{what}: {had} in the published report, none now")
    limit = float(inputs.get("max_drop", DEFAULT_MAX_DROP))
    if before > 0 and rows > 0 and (before - rows) / before > limit:
        lines.append(
            f"issue rows dropped from {before} (published) to {rows}, by {(before - rows) / before:.0%}, "
            f"more than guard.max_issue_row_drop ({limit:.0%})"
        )
    return lines


def _silent_trails(current: Mapping[str, Any], repos: set[str]) -> list[str]:
    """Rule 6: a configured repo with no trail rows while journals or telemetry have rows for it."""
    sources: Mapping[str, Any] = current.get("sources") or {}
    lines: list[str] = []
    for repo in sorted(repos):
        trails = sum(
            int(s["rows"]) for s in sources.values() if s.get("source") == TRAILS and s.get("repo") == repo
        )
        active = {
            str(s["source"]): int(s["rows"])
            for s in sources.values()
            if s.get("source") in ACTIVITY_SOURCES and s.get("repo") == repo and int(s["rows"]) > 0
        }
        if trails == 0 and active:
            shown = ", ".join(f"{k} has {v} row(s)" for k, v in sorted(active.items()))
            lines.append(f"repo {repo} has no trail comments while {shown} for it")
    return lines


def guard_failure(inputs: Mapping[str, Any]) -> str | None:
    """Why a window must not be published (what vanished, that the last good report stays, what to
    check, how to force), or None when the guard lets it through (or ``force`` is set)."""
    if inputs.get("force"):
        return None
    return _explanation(inputs)


def _explanation(inputs: Mapping[str, Any]) -> str | None:
    rows, previous = int(inputs.get("rows") or 0), int(inputs.get("previous_rows") or 0)
    published_rows = inputs.get("published_rows")
    window = str(inputs.get("window"))
    lost = vanished(inputs)
    if guard_refuses(rows, previous, published_rows):
        had = [f"the previous window had {previous}"] if previous > 0 else []
        if published_rows:
            had.append(f"the report already published for it had {published_rows}")
        head = f"Window {window} has no issue rows while {' and '.join(had)}"
        if lost:
            head += "; it also lost: " + "; ".join(lost)
    elif lost:
        head = f"Window {window} lost what it had: " + "; ".join(lost)
    else:
        return None
    return (
        f"{head}; the report was not published so the last good one stays in place. Check: {GUARD_HINT} "
        f"{FORCE_HINT}"
    )


def guard_metadata(inputs: Mapping[str, Any]) -> dict[str, Any]:
    published_rows = inputs.get("published_rows")
    forced = bool(inputs.get("force")) and _explanation(inputs) is not None
    return {
        "issue_rows": int(inputs.get("rows") or 0),
        "previous_window_issue_rows": int(inputs.get("previous_rows") or 0),
        "published_issue_rows": -1 if published_rows is None else int(published_rows),
        "window": str(inputs.get("window")),
        "vanished": "; ".join(vanished(inputs)) or "nothing",
        "forced": forced,
    }


def forced_note(inputs: Mapping[str, Any]) -> str | None:
    """What a forced run published over (for the check's description and the run log)."""
    if not inputs.get("force"):
        return None
    why = _explanation(inputs)
    return None if why is None else "Published with force although: " + why.split("; the report was not")[0]
