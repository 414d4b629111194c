"""Batch amortization: one row per batch of a window, and the summary rows per repo and kind
(docs/batches.md "The per-batch row" and "The summary rows").

Inputs are plain frames made by the ingest assets: the trail comments (anchor milestones), the
merged batch pull requests, the batch journal (``batch:<id>`` lines of events.jsonl), the batch
dispatch logs and the prep-token records; plus the window's scored issue rows for the full-cycle
row. The result is the sidecar's ``batchAmortization`` value ``{summary, batches}``, unrounded.

Pure module: no Dagster.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from scorecard_assets.sources.runstate import parse_milestone

# docs/batches.md "Batch ids"
_MEMBER_BRANCH = re.compile(r"^b-\d{8}-\d{2,}(-[a-z])*-m\d+-\d+$")
_DATE_SUFFIX = re.compile(r"-\d{8}$")
_SCHED_ID = re.compile(r"^b-\d{8}-\d{2,}(?:-[a-z])*$")
_ID_LIST = re.compile(r"^[\d,]+$")
_DIGITS = re.compile(r"^\d+$")

MEMBER_EVENTS = frozenset(
    {
        "spawned",
        "redispatched",
        "member-landed",
        "member-advanced",
        "member-evicted",
        "member-handed-back",
        "member-reprompted",
        "unit-failed",
        "run-log-recorded",
        "gate-skipped",
        "member-stop-requested",
        "kill-escalated",
        "member-advance-recovered",
    }
)
EVICTION_EVENTS = frozenset({"unit-failed", "member-evicted"})

KIND_LABELS = {
    "sched": "scheduler batches",
    "manual": "manual batch-cycle PRs",
    "full-cycle": "full-cycle (1 PR per issue)",
}


def batch_id_from_branch(branch: object) -> str | None:
    """The batch id of a ``batch/`` head branch; a member branch or an empty rest gives None."""
    if not isinstance(branch, str) or not branch.startswith("batch/"):
        return None
    rest = branch[len("batch/") :]
    if _MEMBER_BRANCH.match(rest):
        return None
    rest = _DATE_SUFFIX.sub("", rest, count=1)
    return rest or None


def _id_list(raw: object) -> list[int]:
    if not isinstance(raw, str) or not _ID_LIST.match(raw):
        return []
    return [int(x) for x in raw.split(",") if x]


def _digits(raw: object) -> int | None:
    return int(raw) if isinstance(raw, str) and _DIGITS.match(raw) else None


@dataclass
class Anchor:
    """What the anchor trail says about one batch (docs/batches.md "Anchor trails")."""

    repo: str
    batch: str
    issue: int
    setup_at: str | None = None
    members: set[int] = field(default_factory=set)
    requeued: set[int] = field(default_factory=set)
    dissolved: bool = False
    blocked_reason: str | None = None
    pr: int | None = None
    ci_fix_attempts: int | None = None
    has_setup: bool = False


Milestones = list[tuple[str, int, Any]]
"""(repo, issue, parsed milestone) of every milestone comment, in trail order."""


def ordered_milestones(trail_comments: pd.DataFrame) -> Milestones:
    """The milestones of ``trail_comments`` in trail order (repo, issue, time, comment id). Parsing
    every comment is the costly part of the batch tables: a weekly asset parses once for all its
    weeks and hands the result to :func:`batch_amortization`."""
    if trail_comments.empty:
        return []
    df = trail_comments.sort_values(["repo", "issue", "created_at", "comment_id"], kind="stable")
    out = []
    for repo, issue, body in zip(df["repo"], df["issue"], df["body"], strict=True):
        m = parse_milestone(body)
        if m is not None:
            out.append((str(repo), int(issue), m))
    return out


def batch_milestones(trail_comments: pd.DataFrame) -> Milestones:
    """:func:`ordered_milestones` of the comments that can be a ``batch-*`` or ``ship`` milestone, the
    only phases the batch tables read. A milestone's phase is the value of its first ``phase=`` key,
    so its body holds ``phase=batch-`` or ``phase=ship``: the other comments are skipped by one
    substring test instead of a parse (exact, and most of the comments of a long history)."""
    if trail_comments.empty:
        return []
    body = trail_comments["body"]
    wanted = body.str.contains("phase=batch-", regex=False, na=False) | body.str.contains(
        "phase=ship", regex=False, na=False
    )
    return ordered_milestones(trail_comments[wanted.to_numpy(dtype=bool)])


def _milestones(trail_comments: pd.DataFrame | Milestones) -> Milestones:
    return trail_comments if isinstance(trail_comments, list) else ordered_milestones(trail_comments)


def collect_anchors(trail_comments: pd.DataFrame | Milestones) -> dict[tuple[str, str], Anchor]:
    """Anchors by (repo, batch id) from the milestones with a ``batch-*`` phase."""
    groups: dict[tuple[str, int, str], list[Any]] = {}
    for repo, issue, m in _milestones(trail_comments):
        if m.phase.startswith("batch-"):
            run = m.keys.get("keys.run") or m.run
            groups.setdefault((repo, issue, run), []).append(m)
    anchors: dict[tuple[str, str], Anchor] = {}
    for (repo, issue, _run), stones in groups.items():
        bid = next((s.keys["batch"] for s in stones if s.keys.get("batch")), None)
        if bid is None:
            setup = next((s for s in stones if s.phase == "batch-setup" and s.keys.get("branch")), None)
            bid = batch_id_from_branch(setup.keys["branch"]) if setup else None
        if not bid:
            continue
        a = anchors.setdefault((repo, bid), Anchor(repo=repo, batch=bid, issue=issue))
        if any(x.phase == "batch-setup" for x in stones) and not a.has_setup:
            # the issue that set the batch up is its anchor, whatever the listing order of the trails
            a.issue, a.has_setup = issue, True
        for s in stones:
            _merge_stone(a, s)
    return anchors


def _merge_stone(a: Anchor, s: Any) -> None:
    keys = s.keys
    if s.phase == "batch-setup" and s.at and (a.setup_at is None or s.at < a.setup_at):
        a.setup_at = s.at
    if s.phase in ("batch-review", "batch-ship"):
        a.members.update(_id_list(keys.get("members")))
    a.requeued.update(_id_list(keys.get("requeued")))
    if keys.get("dissolved") == "true":
        a.dissolved = True
    if s.status == "blocked":
        a.blocked_reason = keys.get("reason") or "blocked"
    pr = _digits(keys.get("pr"))
    if pr is not None:
        a.pr = pr
    if s.phase == "batch-ship":
        fixes = _digits(keys.get("ci_fix_attempts"))
        if fixes is not None:
            a.ci_fix_attempts = fixes


def ship_ci_fixes(trail_comments: pd.DataFrame | Milestones) -> dict[tuple[str, int], int | None]:
    """Per (repo, issue): ``ci_fix_attempts=`` of the trail's last ``ship`` milestone (None if absent)."""
    out: dict[tuple[str, int], int | None] = {}
    for repo, issue, m in _milestones(trail_comments):
        if m.phase == "ship":
            out[(repo, issue)] = _digits(m.keys.get("ci_fix_attempts"))
    return out


@dataclass
class Journal:
    members: set[int] = field(default_factory=set)
    evicted: set[int] = field(default_factory=set)


def summarize_journal(journal: pd.DataFrame) -> dict[tuple[str, str], Journal]:
    """Members and evicted members per (repo, batch) from the ``batch:<id>`` journal lines."""
    out: dict[tuple[str, str], Journal] = {}
    if journal.empty:
        return out
    for repo, bid, event, issue, kind in zip(
        journal["repo"], journal["batch"], journal["event"], journal["issue"], journal["kind"], strict=True
    ):
        j = out.setdefault((str(repo), str(bid)), Journal())
        if pd.isna(issue) or event not in MEMBER_EVENTS:
            continue
        n = int(issue)
        j.members.add(n)
        if event in EVICTION_EVENTS or (event == "member-advance-recovered" and kind != "handed-back"):
            j.evicted.add(n)
    return out


def _finite(value: object) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


TOKEN_COLUMNS = ("input_tokens", "cache_creation_tokens", "cache_read_tokens", "output_tokens")


def tokens_by_model(logs: pd.DataFrame) -> list[dict[str, Any]] | None:
    """Per raw model: billable tokens and cost of a batch's dispatch logs; None with no log."""
    if logs.empty:
        return None
    groups: dict[str | None, dict[str, Any]] = {}
    for row in logs.to_dict("records"):
        model = row.get("model")
        key = model if isinstance(model, str) and model else None
        g = groups.setdefault(key, {"model": key, "tokens": None, "costUsd": None})
        parts = [v for v in (_finite(row.get(c)) for c in TOKEN_COLUMNS) if v is not None]
        if parts:
            g["tokens"] = (g["tokens"] or 0.0) + sum(parts)
        cost = _finite(row.get("cost_usd"))
        if cost is not None:
            g["costUsd"] = (g["costUsd"] or 0.0) + cost
    entries = list(groups.values())
    entries.sort(key=lambda g: -1 if g["tokens"] is None else g["tokens"], reverse=True)
    return entries


def _sum_or_none(values: Iterable[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return sum(kept) if kept else None


def _minutes(start: object, end: object) -> float | None:
    if not isinstance(start, str) or not isinstance(end, str):
        return None
    try:
        a, b = pd.Timestamp(start), pd.Timestamp(end)
    except (ValueError, TypeError):
        return None
    if a.tzinfo is None or b.tzinfo is None:
        return None
    minutes = (b - a).total_seconds() / 60
    return None if math.isnan(minutes) or minutes < 0 else minutes


def _pr_keys(prs: pd.DataFrame) -> dict[tuple[str, str], dict[str, Any]]:
    """Merged batch PRs by (repo, key): the id, or the head without ``batch/`` when the id recurs."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    if prs.empty:
        return out
    records = prs.to_dict("records")
    counts: dict[tuple[str, str], int] = {}
    for pr in records:
        bid = batch_id_from_branch(pr.get("head"))
        if bid is not None:
            counts[(pr["repo"], bid)] = counts.get((pr["repo"], bid), 0) + 1
    for pr in records:
        bid = batch_id_from_branch(pr.get("head"))
        if bid is None or not isinstance(pr.get("merged_at"), str):
            continue
        key = bid if counts[(pr["repo"], bid)] == 1 else str(pr["head"])[len("batch/") :]
        out.setdefault((str(pr["repo"]), key), {**pr, "batch": bid})
    return out


def _closing(pr: dict[str, Any] | None) -> set[int]:
    if pr is None:
        return set()
    raw = pr.get("closing")
    return {int(x) for x in str(raw).split(",") if x.strip().isdigit()} if raw else set()


def build_batch_rows(
    *,
    start: str,
    end: str,
    anchors: dict[tuple[str, str], Anchor],
    prs: pd.DataFrame,
    journals: dict[tuple[str, str], Journal],
    logs: pd.DataFrame,
    prep: dict[tuple[str, str], float],
) -> list[dict[str, Any]]:
    """One row per batch of the window ``[start, end)`` (ISO ``YYYY-MM-DDT00:00:00Z`` strings)."""
    pr_of = {k: v for k, v in _pr_keys(prs).items() if start <= _iso_z(v["merged_at"]) < end}
    keys = [
        k
        for k, a in anchors.items()
        if ((a.setup_at is None or a.setup_at >= start) and (a.setup_at or "") < end) or k in pr_of
    ]
    keys += [k for k in pr_of if k not in anchors]
    rows = [_row(k, anchors.get(k), pr_of.get(k), journals, logs, prep) for k in keys]
    rows.sort(key=lambda r: (r["repo"], r["batch"]))
    return rows


def _iso_z(value: str) -> str:
    try:
        return pd.Timestamp(value).tz_convert("UTC").strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    except (ValueError, TypeError):
        return value


def _row(
    key: tuple[str, str],
    anchor: Anchor | None,
    pr: dict[str, Any] | None,
    journals: dict[tuple[str, str], Journal],
    logs: pd.DataFrame,
    prep: dict[tuple[str, str], float],
) -> dict[str, Any]:
    repo, bid = key
    journal = journals.get((repo, pr["batch"] if pr else bid)) or Journal()
    closing = _closing(pr)
    enqueued = set(journal.members) | closing
    if anchor is not None:
        enqueued |= anchor.members | anchor.requeued
    dissolved = anchor is not None and anchor.dissolved
    evicted = set(journal.evicted) | (anchor.requeued if dissolved and anchor else set())
    if pr is not None:
        outcome = "shipped"
    elif dissolved:
        outcome = "dissolved"
    elif anchor is not None and anchor.blocked_reason is not None:
        outcome = "blocked"
    else:
        outcome = "open"
    shipped = len(closing) if outcome == "shipped" else 0
    fixes = anchor.ci_fix_attempts if anchor else None
    batch_logs = logs[(logs["repo"] == repo) & (logs["batch"] == bid)] if not logs.empty else logs
    models = tokens_by_model(batch_logs)
    created = pr.get("created_at") if pr else None
    merged = pr.get("merged_at") if pr else None
    setup = anchor.setup_at if anchor else None
    return {
        "batch": bid,
        "repo": repo,
        "kind": "sched" if _SCHED_ID.match(bid) or anchor is not None else "manual",
        "anchor": anchor.issue if anchor else None,
        "enqueued": len(enqueued) or None,
        "members": sorted(enqueued),
        "evictions": len(evicted),
        "outcome": outcome,
        "blockedReason": anchor.blocked_reason if anchor else None,
        "pr": int(pr["number"]) if pr else (anchor.pr if anchor else None),
        "shipped": shipped,
        "ciFixAttempts": fixes,
        "gateRuns": 1 + (fixes or 0) if outcome == "shipped" else 0,
        "gateMinutes": _minutes(created, merged),
        "wallMinutes": _minutes(setup or created, merged),
        "tokensByModel": models,
        "tokens": _sum_or_none(e["tokens"] for e in models or []),
        "costUsd": _sum_or_none(e["costUsd"] for e in models or []),
        "prepTokens": prep.get((repo, bid)),
    }


def _per_shipped(rows: list[dict[str, Any]], field_name: str) -> tuple[float | None, int]:
    kept = [r for r in rows if r[field_name] is not None and r["shipped"] > 0]
    shipped = sum(r["shipped"] for r in kept)
    if shipped == 0:
        return None, len(kept)
    return sum(r[field_name] for r in kept) / shipped, len(kept)


def _median(values: list[float]) -> float | None:
    if not values:
        return None
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2


def batch_summary(repo: str, kind: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The summary row of one repo's batches of one kind."""
    shipped_rows = [r for r in rows if r["outcome"] == "shipped"]
    sized = [r for r in rows if r["enqueued"] is not None]
    single = sum(1 for r in sized if r["enqueued"] == 1)
    shipped = sum(r["shipped"] for r in rows)
    gate_runs = sum(r["gateRuns"] for r in rows)
    wall, wall_n = _per_shipped(shipped_rows, "wallMinutes")
    tokens, tokens_n = _per_shipped(shipped_rows, "tokens")
    prep, prep_n = _per_shipped(shipped_rows, "prepTokens")
    cost, cost_n = _per_shipped(shipped_rows, "costUsd")
    return {
        "repo": repo,
        "kind": kind,
        "batches": len(rows),
        "singleMember": single if sized else None,
        "singleMemberRate": single / len(sized) if sized else None,
        "shippedBatches": len(shipped_rows),
        "dissolvedBatches": sum(1 for r in rows if r["outcome"] == "dissolved"),
        "blockedBatches": sum(1 for r in rows if r["outcome"] == "blocked"),
        "enqueued": sum(r["enqueued"] for r in sized) if sized else None,
        "shippedIssues": shipped,
        "evictions": sum(r["evictions"] for r in rows),
        "gateRuns": gate_runs,
        "issuesPerGateRun": shipped / gate_runs if gate_runs else None,
        "medianGateMinutes": _median(
            [r["gateMinutes"] for r in shipped_rows if r["gateMinutes"] is not None]
        ),
        "wallMinutesPerShipped": wall,
        "wallSamples": wall_n,
        "tokensPerShipped": tokens,
        "tokenSamples": tokens_n,
        "prepTokensPerShipped": prep,
        "prepSamples": prep_n,
        "costPerShippedUsd": cost,
        "costSamples": cost_n,
    }


def _mean(values: list[float]) -> tuple[float | None, int]:
    return (sum(values) / len(values) if values else None), len(values)


def full_cycle_summary(
    repo: str, issues: pd.DataFrame, ci_fixes: dict[tuple[str, int], int | None]
) -> dict[str, Any]:
    """The full-cycle row of one repo: its scored issue rows outside every batch."""
    records = issues.to_dict("records")
    delivered = [r for r in records if bool(r.get("delivered"))]
    gate_runs = sum(1 + (ci_fixes.get((repo, int(r["issue"]))) or 0) for r in delivered)
    wall, wall_n = _mean(
        [w for w in (_finite(r.get("wallClockMinutes")) for r in delivered) if w is not None]
    )
    token_values = []
    for r in delivered:
        if _finite(r.get("inputTokens")) is None or _finite(r.get("outputTokens")) is None:
            continue
        token_values.append(
            sum(
                _finite(r.get(c)) or 0.0
                for c in ("inputTokens", "outputTokens", "cacheCreationTokens", "cacheReadTokens")
            )
        )
    tokens, tokens_n = _mean(token_values)
    cost, cost_n = _mean([c for c in (_finite(r.get("costUsd")) for r in delivered) if c is not None])
    return {
        "repo": repo,
        "kind": "full-cycle",
        "batches": None,
        "singleMember": None,
        "singleMemberRate": None,
        "shippedBatches": None,
        "dissolvedBatches": None,
        "blockedBatches": None,
        "enqueued": len(records),
        "shippedIssues": len(delivered),
        "evictions": None,
        "gateRuns": gate_runs,
        "issuesPerGateRun": len(delivered) / gate_runs if gate_runs else None,
        "medianGateMinutes": None,
        "wallMinutesPerShipped": wall,
        "wallSamples": wall_n,
        "tokensPerShipped": tokens,
        "tokenSamples": tokens_n,
        "prepTokensPerShipped": None,
        "prepSamples": 0,
        "costPerShippedUsd": cost,
        "costSamples": cost_n,
    }


def batch_amortization(
    *,
    start: str,
    end: str,
    trail_comments: pd.DataFrame | Milestones,
    prs: pd.DataFrame,
    journal: pd.DataFrame,
    logs: pd.DataFrame,
    prep: pd.DataFrame,
    issue_rows: pd.DataFrame,
) -> dict[str, Any]:
    """The sidecar's ``batchAmortization``: summary rows (repos sorted; sched, manual, full-cycle)
    and per-batch rows (by repo, batch). ``trail_comments`` may be given already parsed
    (:func:`ordered_milestones`)."""
    stones = _milestones(trail_comments)
    anchors = collect_anchors(stones)
    prep_map: dict[tuple[str, str], float] = {}
    if not prep.empty:
        for repo, bid, tokens in zip(prep["repo"], prep["batch"], prep["prep_tokens"], strict=True):
            if pd.notna(tokens):
                prep_map[(str(repo), str(bid))] = prep_map.get((str(repo), str(bid)), 0.0) + float(tokens)
    rows = build_batch_rows(
        start=start,
        end=end,
        anchors=anchors,
        prs=prs,
        journals=summarize_journal(journal),
        logs=logs,
        prep=prep_map,
    )
    in_batches: set[tuple[str, int]] = set()
    for r in rows:
        in_batches.update((r["repo"], m) for m in r["members"])
        if r["anchor"] is not None:
            in_batches.add((r["repo"], r["anchor"]))
    ci_fixes = ship_ci_fixes(stones)
    repos = sorted({r["repo"] for r in rows} | set(issue_rows["repo"].astype(str)))
    summary: list[dict[str, Any]] = []
    for repo in repos:
        for kind in ("sched", "manual"):
            mine = [r for r in rows if r["repo"] == repo and r["kind"] == kind]
            if mine:
                summary.append(batch_summary(repo, kind, mine))
        if len(issue_rows):
            own = issue_rows[issue_rows["repo"].astype(str) == repo]
            keep = [(repo, int(i)) not in in_batches for i in own["issue"]]
            summary.append(full_cycle_summary(repo, own[keep], ci_fixes))
        else:
            summary.append(full_cycle_summary(repo, issue_rows, ci_fixes))
    return {"summary": summary, "batches": rows}


# ------------------------------------------------------------------------------- prep attribution

PREP_LOOKBACK_MS = 6 * 3600 * 1000


def attribute_prep(records: pd.DataFrame, transcripts: pd.DataFrame) -> pd.DataFrame:
    """``records`` (batch-prep.jsonl rows) with ``from_ms`` and ``prep_tokens``: the tokens of the
    record's session after its previous enqueue (at most 6 h back) up to the enqueue, per host
    (docs/batches.md "Prep tokens"). Identical windows share their rows by member count."""
    out = records.copy()
    out["from_ms"] = pd.Series(dtype="int64")
    out["prep_tokens"] = pd.Series(dtype="float64")
    if records.empty:
        return out
    out = out.sort_values(["host", "ts", "batch"], kind="stable").reset_index(drop=True)
    from_ms: list[int] = []
    for i, r in enumerate(out.itertuples(index=False)):
        earlier = out.iloc[:i]
        same = earlier[
            (earlier["host"] == r.host) & (earlier["session_id"] == r.session_id) & (earlier["ts"] < r.ts)
        ]
        prev = int(same["ts"].max()) if len(same) else None
        low = r.ts - PREP_LOOKBACK_MS
        from_ms.append(prev if prev is not None and prev > low else low)
    out["from_ms"] = from_ms
    tokens = [0.0] * len(out)
    windows: dict[tuple[str, str, int, int], list[int]] = {}
    for i, r in enumerate(out.itertuples(index=False)):
        windows.setdefault((r.host, r.session_id, r.from_ms, r.ts), []).append(i)
    if not transcripts.empty:
        base = transcripts["session_id"].astype(str).str.split("/", n=1).str[0]
        for (host, sid, lo, hi), idx in windows.items():
            mine = transcripts[(transcripts["host"] == host) & (base == sid)]
            mine = mine[(mine["ts"] > lo) & (mine["ts"] <= hi)].sort_values("ts", kind="stable")
            _share(idx, [float(t) for t in mine["total"]], out, tokens)
    out["prep_tokens"] = tokens
    return out


def _share(idx: list[int], totals: list[float], out: pd.DataFrame, tokens: list[float]) -> None:
    """Rows of one window to its records: whole rows, in time order, to the largest deficit by weight."""
    weights = [float(out.at[i, "members"]) if pd.notna(out.at[i, "members"]) else 1.0 for i in idx]
    whole = sum(weights)
    given = [0] * len(idx)
    for n, total in enumerate(totals, start=1):
        deficits = [w / whole * n - g for w, g in zip(weights, given, strict=True)]
        k = deficits.index(max(deficits))
        given[k] += 1
        tokens[idx[k]] += total
