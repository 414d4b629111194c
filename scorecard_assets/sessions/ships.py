"""Ship attribution from commits (docs/sessions.md, "Ships").

Units are session cycles (top-level and child sessions alike). Edit paths and session directories
resolve to a repository by their longest worktree prefix (after the configured ``path_map``).

Whose commits count: lower-cased email (else name); the seeds, plus every identity with at least 3
commits that overlap a resolved edit made within 300 s of the commit, and such hits on at least 10 %
of its commits.

Per repository, your commits in time order, commits of the same second as one batch:

- file window ``[at - 72 h, at + 300 s]``: every not yet claimed edit of a committed file in the
  window touches its unit; the edits are claimed after the batch (so same-second commits share them);
- touched units get credit by the number of files they touched (basis ``files``) and are shipped
  at ``at``; otherwise units active in the time window ``[max(previous batch or at - 6 h,
  at - 72 h), at + 300 s]`` whose cycle has edits but no resolved path share by active time (basis
  ``window``, commit credit only); with no weight at all the commit is ``advised`` (units were
  active) or ``manual``; plan phases of active units without credit are listed as advisors.

A cycle is shipped when its first shipping commit at or after its start comes within 7 days; a child
session likewise from its own start; a tree when its cycle or any folded child shipped. ``tshipe``:
0 when shipped (or undated); 1 while ``start + 7 d`` is after "now" (default: the latest commit
scanned); 2 without any repository; 0 when one of the tree's repositories has one of your commits
in ``[start, start + 7 d]``; else 2.
"""

from __future__ import annotations

import posixpath
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.records import DataWarning
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions.cycles import Cut, Cycle, SessionCut, SessionKey, ShipState, Tree
from scorecard_assets.sessions.git_log import Repo
from scorecard_assets.sessions.warnings import CYCLES_ASSET, UNKNOWN_IDENTITY

FILE_WINDOW_MS = 72 * 3600 * 1000
TIME_FALLBACK_MS = 6 * 3600 * 1000
GRACE_MS = 300 * 1000
HIT_WINDOW_MS = 300 * 1000
LEARN_MIN_HITS = 3
LEARN_MIN_SHARE = 0.10
DAY_MS = 86_400_000

Unit = tuple[SessionKey, int]


class Resolver:
    """Absolute paths -> (repository key, repo-relative path) by the longest worktree prefix."""

    def __init__(self, repos: Sequence[Repo], path_map: Mapping[str, str] | None = None) -> None:
        self.worktrees: dict[str, str] = {}
        for repo in repos:
            for wt in repo.worktrees:
                self.worktrees.setdefault(posixpath.normpath(wt), repo.key)
        self.path_map = sorted(
            ((posixpath.normpath(k), str(v)) for k, v in (path_map or {}).items()), key=lambda kv: -len(kv[0])
        )
        self._cache: dict[str, tuple[str, str] | None] = {}

    def mapped(self, path: str) -> str:
        for prefix, target in self.path_map:
            if path == prefix or path.startswith(prefix.rstrip("/") + "/"):
                return posixpath.normpath(target + path[len(prefix) :])
        return path

    def resolve(self, path: str | None) -> tuple[str, str] | None:
        if not path or not posixpath.isabs(path):
            return None
        hit = self._cache.get(path, False)
        if hit is not False:
            return hit  # type: ignore[return-value]
        p = self.mapped(posixpath.normpath(path))
        probe = p
        found: tuple[str, str] | None = None
        while True:
            key = self.worktrees.get(probe)
            if key is not None:
                found = (key, posixpath.relpath(p, probe) if p != probe else "")
                break
            parent = posixpath.dirname(probe)
            if parent == probe:
                break
            probe = parent
        if len(self._cache) < 1_000_000:
            self._cache[path] = found
        return found

    def repo_of(self, directory: str | None) -> str | None:
        hit = self.resolve(directory)
        return hit[0] if hit else None


@dataclass
class ShipResult:
    """Ship states per top-level cycle, shipped times per unit, the commit credits, learned identities."""

    states: dict[Unit, ShipState]
    shipped: dict[Unit, list[int]]
    credits: pd.DataFrame
    identities: set[str]
    warnings: list[DataWarning] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=dict)
    now_ms: int | None = None


class _UnitInfo:
    __slots__ = ("cycle", "session", "times", "cum", "resolved", "repos")

    def __init__(self, session: SessionCut, cycle: Cycle) -> None:
        self.session = session
        self.cycle = cycle
        order = np.argsort(np.asarray(cycle.events_t, dtype="int64"), kind="stable")
        self.times = np.asarray(cycle.events_t, dtype="int64")[order]
        self.cum = np.concatenate([[0], np.cumsum(np.asarray(cycle.events_ms, dtype="int64")[order])])
        self.resolved = False
        self.repos: set[str] = set()

    def active(self, lo: int, hi: int) -> int:
        a = int(np.searchsorted(self.times, lo, side="left"))
        b = int(np.searchsorted(self.times, hi, side="right"))
        return int(self.cum[b] - self.cum[a])


def attribute(
    cut: Cut,
    trees: Iterable[Tree],
    commits: pd.DataFrame,
    repos: Sequence[Repo],
    *,
    seeds: Iterable[str] = (),
    path_map: Mapping[str, str] | None = None,
    now_ms: int | None = None,
    pending_days: int = 7,
) -> ShipResult:
    """Ship attribution of every unit and the ship state of every tree (module docstring)."""
    resolver = Resolver(repos, path_map)
    window_ms = pending_days * DAY_MS
    units: dict[Unit, _UnitInfo] = {}
    session_repo: dict[SessionKey, str | None] = {}
    # edits[repo][file] -> sorted [(t, unit)]
    edits: dict[str, dict[str, list[tuple[int, Unit]]]] = {}
    repo_units: dict[str, set[Unit]] = {}
    for key, s in cut.sessions.items():
        srepo = resolver.repo_of(s.directory) or resolver.repo_of(s.project_dir)
        session_repo[key] = srepo
        for c in s.cycles:
            unit = (key, c.index)
            info = units[unit] = _UnitInfo(s, c)
            if srepo is not None:
                repo_units.setdefault(srepo, set()).add(unit)
            for t, path in c.edit_events:
                hit = resolver.resolve(path)
                if hit is None or not hit[1]:
                    continue
                info.resolved = True
                info.repos.add(hit[0])
                edits.setdefault(hit[0], {}).setdefault(hit[1], []).append((t, unit))
                repo_units.setdefault(hit[0], set()).add(unit)
    for files in edits.values():
        for lst in files.values():
            lst.sort(key=lambda e: e[0])
    edit_times = {repo: {f: [e[0] for e in lst] for f, lst in files.items()} for repo, files in edits.items()}

    repo_keys = {r.key for r in repos}
    frame = commits[commits["repo_key"].isin(repo_keys)] if len(commits) else commits
    c_repo = frame["repo_key"].tolist() if len(frame) else []
    c_hash = frame["hash"].tolist() if len(frame) else []
    c_at = [int(a) * 1000 for a in frame["at"].tolist()] if len(frame) else []
    c_id = frame["identity"].tolist() if len(frame) else []
    c_files = frame["files"].tolist() if len(frame) else []
    if cut.sessions and c_at:
        # commits before the first day of session data cannot hold any of it
        first_day = min(s.first_ms for s in cut.sessions.values()) // DAY_MS * DAY_MS
        keep = [i for i in range(len(c_at)) if c_at[i] >= first_day]
        if len(keep) < len(c_at):
            c_repo, c_hash, c_at, c_id, c_files = (
                [col[i] for i in keep] for col in (c_repo, c_hash, c_at, c_id, c_files)
            )

    # learned identities
    all_seeds = {s.strip().lower() for s in seeds if s and s.strip()}
    for r in repos:
        all_seeds |= r.seeds
    commits_by: dict[str, int] = {}
    hits_by: dict[str, int] = {}
    for i in range(len(c_hash)):
        ident = c_id[i]
        commits_by[ident] = commits_by.get(ident, 0) + 1
        times = edit_times.get(c_repo[i])
        if not times:
            continue
        lo, hi = c_at[i] - HIT_WINDOW_MS, c_at[i] + HIT_WINDOW_MS
        for f in c_files[i]:
            ts = times.get(f)
            if ts and bisect_left(ts, lo) < bisect_right(ts, hi):
                hits_by[ident] = hits_by.get(ident, 0) + 1
                break
    learned = set(all_seeds)
    for ident, n in commits_by.items():
        h = hits_by.get(ident, 0)
        if h >= LEARN_MIN_HITS and h / n >= LEARN_MIN_SHARE:
            learned.add(ident)

    # attribution, per repo
    shipped: dict[Unit, list[int]] = {}
    credit_cols: dict[str, list[Any]] = {
        k: []
        for k in (
            "repo_key",
            "hash",
            "at",
            "basis",
            "store",
            "session_id",
            "cycle_index",
            "share",
            "plan_share",
            "build_share",
            "other_share",
            "advisor",
        )
    }
    yours_by_repo: dict[str, list[int]] = {}
    by_repo: dict[str, list[int]] = {}
    for i in range(len(c_hash)):
        if c_id[i] in learned:
            by_repo.setdefault(c_repo[i], []).append(i)
    unknown: dict[str, int] = {}
    for i in range(len(c_hash)):
        if c_id[i] not in learned:
            unknown[c_id[i]] = unknown.get(c_id[i], 0) + 1
    for repo_key, idx in by_repo.items():
        idx.sort(key=lambda i: (c_at[i], c_hash[i]))
        yours_by_repo[repo_key] = [c_at[i] for i in idx]
        files_index = edits.get(repo_key, {})
        times_index = edit_times.get(repo_key, {})
        claimed: set[tuple[str, int]] = set()
        members = sorted(repo_units.get(repo_key, set()), key=lambda u: (u[0], u[1]))
        prev_at: int | None = None
        pos = 0
        while pos < len(idx):
            at = c_at[idx[pos]]
            end = pos
            while end < len(idx) and c_at[idx[end]] == at:
                end += 1
            file_lo, file_hi = at - FILE_WINDOW_MS, at + GRACE_MS
            time_lo = max(prev_at if prev_at is not None else at - TIME_FALLBACK_MS, at - FILE_WINDOW_MS)
            time_hi = at + GRACE_MS
            active = {u: a for u in members if (a := units[u].active(time_lo, time_hi)) > 0}
            to_claim: list[tuple[str, int]] = []
            for ci in idx[pos:end]:
                touched: dict[Unit, set[str]] = {}
                for f in c_files[ci]:
                    lst = files_index.get(f)
                    if not lst:
                        continue
                    ts = times_index[f]
                    for j in range(bisect_left(ts, file_lo), bisect_right(ts, file_hi)):
                        if (f, j) in claimed:
                            continue
                        touched.setdefault(lst[j][1], set()).add(f)
                        to_claim.append((f, j))
                if touched:
                    weights = {u: float(len(fs)) for u, fs in touched.items()}
                    basis = "files"
                    for u in touched:
                        shipped.setdefault(u, []).append(at)
                else:
                    weights = {
                        u: float(a)
                        for u, a in active.items()
                        if units[u].cycle.edits > 0 and not units[u].resolved
                    }
                    basis = "window"
                total = sum(weights.values())
                if total <= 0:
                    basis = "advised" if active else "manual"
                    weights = {}
                for u, w in weights.items():
                    _credit(credit_cols, repo_key, c_hash[ci], at, basis, u, units[u].cycle, w / total, False)
                for u in active:
                    if u not in weights and units[u].cycle.phases[1].ms > 0:
                        _credit(credit_cols, repo_key, c_hash[ci], at, basis, u, units[u].cycle, 0.0, True)
                if not weights and not active:
                    _credit(credit_cols, repo_key, c_hash[ci], at, basis, None, None, 0.0, False)
            claimed.update(to_claim)
            prev_at = at
            pos = end
    for lst in shipped.values():
        lst.sort()

    latest = now_ms if now_ms is not None else (max(c_at) if c_at else None)
    states: dict[Unit, ShipState] = {}
    session_ship_cache: dict[SessionKey, bool] = {}

    def session_shipped(s: SessionCut) -> bool:
        hit = session_ship_cache.get(s.key)
        if hit is None:
            times = sorted(t for c in s.cycles for t in shipped.get((s.key, c.index), []) if t >= s.first_ms)
            hit = bool(times) and times[0] - s.first_ms <= window_ms
            session_ship_cache[s.key] = hit
        return hit

    for tree in trees:
        s, c = tree.session, tree.cycle
        unit = (s.key, c.index)
        own = [t for t in shipped.get(unit, []) if t >= c.first_ms]
        tship = bool(own) and own[0] - c.first_ms <= window_ms
        tship = tship or any(session_shipped(d) for d in tree.children)
        first = c.first_ms
        if tship:
            state = 0
        elif latest is not None and first + window_ms > latest:
            state = 1
        else:
            tree_repos = set(units[unit].repos)
            if session_repo.get(s.key):
                tree_repos.add(session_repo[s.key])  # type: ignore[arg-type]
            for d in tree.children:
                for dc in d.cycles:
                    tree_repos |= units[(d.key, dc.index)].repos
            if not tree_repos:
                state = 2
            else:
                state = 2
                for rk in tree_repos:
                    ts = yours_by_repo.get(rk, [])
                    if bisect_left(ts, first) < bisect_right(ts, first + window_ms):
                        state = 0
                        break
        states[unit] = ShipState(1 if tship else 0, state)

    warnings: list[DataWarning] = []
    unknown_commits = sum(unknown.values())
    if unknown_commits:
        shown = ", ".join(render_value(k) for k in sorted(unknown, key=lambda k: -unknown[k])[:3])
        word = "identity" if len(unknown) == 1 else "identities"
        warnings.append(
            DataWarning(
                code=UNKNOWN_IDENTITY,
                asset=CYCLES_ASSET,
                message=(
                    f"{unknown_commits} commit(s) by {len(unknown)} {word}"
                    f" that are neither seeds nor learned ({shown}{', ...' if len(unknown) > 3 else ''})"
                    " credit no cycle; add yours to sessions.identities if they are"
                ),
                values={"commits": unknown_commits, "identities": len(unknown)},
                count=1,
            )
        )
    credits = pd.DataFrame(credit_cols)
    counters = {
        "commits": len(c_hash),
        "your_commits": sum(len(v) for v in by_repo.values()),
        "unknown_commits": unknown_commits,
        "learned": len(learned - all_seeds),
        "units": len(units),
        "shipped_units": len(shipped),
    }
    return ShipResult(states, shipped, credits, learned, warnings, counters, latest)


def _credit(
    cols: dict[str, list[Any]],
    repo_key: str,
    commit: str,
    at: int,
    basis: str,
    unit: Unit | None,
    cycle: Cycle | None,
    share: float,
    advisor: bool,
) -> None:
    cols["repo_key"].append(repo_key)
    cols["hash"].append(commit)
    cols["at"].append(at // 1000)
    cols["basis"].append(basis)
    cols["store"].append(unit[0][0] if unit else None)
    cols["session_id"].append(unit[0][1] if unit else None)
    cols["cycle_index"].append(unit[1] if unit else -1)
    if cycle is not None and cycle.ms > 0 and not advisor:
        ms = cycle.ms
        cols["plan_share"].append(share * cycle.phases[1].ms / ms)
        cols["build_share"].append(share * cycle.phases[2].ms / ms)
        cols["other_share"].append(share * cycle.phases[0].ms / ms)
    else:
        cols["plan_share"].append(0.0)
        cols["build_share"].append(0.0)
        cols["other_share"].append(0.0)
    cols["share"].append(share)
    cols["advisor"].append(advisor)
