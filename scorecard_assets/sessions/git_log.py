"""Git facts for ship attribution (docs/sessions.md, "Git").

- Repositories: every folder with a ``.git`` under the configured roots (searched ``depth`` levels
  down, hidden folders skipped, not inside a found repository); linked worktrees share one
  repository, keyed by its absolute ``--git-common-dir``; each repository lists its worktrees.
- Commits: ``git log --no-merges --numstat`` over every ref (the ``--all`` set), author time in
  seconds; numstat lines of exactly three tab fields; renames resolved to the new path
  (``pre{old => new}post`` -> ``pre+new+post``, ``old => new`` -> ``new``, ``//`` collapsed);
  C-quoted paths unquoted; a commit without file lines is still a commit.
- Incremental: the ref tips read last time are kept per repository; the next read asks only for
  commits reachable from the current tips and not from those (``RepoState``). Unchanged tips
  mean nothing is read.
- Identity seeds: ``user.email`` / ``user.name`` from the global and each repository's local config.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scorecard_assets.records import DataWarning, SourceStat
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions.schema import GIT_COMMITS
from scorecard_assets.sessions.state import RepoState
from scorecard_assets.sessions.warnings import COMMITS_ASSET, GIT_LOG_MALFORMED, REPO_UNREADABLE

LOG_FORMAT = "--format=%x1e%H|%at|%an|%ae"
RECORD_SEP = "\x1e"
SKIP_DIRS = frozenset({"node_modules", "__pycache__", "venv", "target", "dist", "build"})
GIT_TIMEOUT_S = 600


@dataclass
class Repo:
    """One repository: its key (absolute common dir), main top level and every worktree path."""

    key: str
    top: str
    worktrees: list[str] = field(default_factory=list)
    seeds: set[str] = field(default_factory=set)


def _env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    env.update(extra or {})
    return env


def git(
    args: Sequence[str], cwd: str | Path, *, stdin: str | None = None, env: Mapping[str, str] | None = None
) -> str:
    """Run ``git -C cwd args`` and return its stdout (``subprocess.CalledProcessError`` on failure)."""
    done = subprocess.run(
        ["git", "-C", str(cwd), "-c", "core.quotepath=off", *args],
        input=stdin,
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",
        env=_env(env),
        timeout=GIT_TIMEOUT_S,
        check=True,
    )
    return done.stdout


def _candidates(root: Path, depth: int) -> Iterable[Path]:
    stack = [(root, 0)]
    while stack:
        folder, level = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        if any(e.name == ".git" for e in entries):
            yield folder
            continue
        if level >= depth:
            continue
        for e in sorted(entries, key=lambda e: e.name, reverse=True):
            if e.name.startswith(".") or e.name in SKIP_DIRS:
                continue
            try:
                if e.is_dir(follow_symlinks=False):
                    stack.append((Path(e.path), level + 1))
            except OSError:
                continue


def global_seeds(env: Mapping[str, str] | None = None) -> set[str]:
    """Lower-cased ``user.email`` and ``user.name`` of the global git config."""
    out: set[str] = set()
    for key in ("user.email", "user.name"):
        try:
            value = git(["config", "--global", "--get", key], Path.cwd(), env=env).strip()
        except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired):
            continue
        if value:
            out.add(value.lower())
    return out


def _identity(folder: Path, env: Mapping[str, str] | None) -> list[str]:
    """[absolute common dir, top level] of the repository at ``folder`` (older git: made absolute here)."""
    try:
        return git(
            ["rev-parse", "--path-format=absolute", "--git-common-dir", "--show-toplevel"], folder, env=env
        ).splitlines()
    except subprocess.CalledProcessError as exc:
        if "path-format" not in (exc.stderr or ""):
            raise
    out = git(["rev-parse", "--git-common-dir", "--show-toplevel"], folder, env=env).splitlines()
    if out and not os.path.isabs(out[0]):
        out[0] = str((folder / out[0]).resolve())
    return out


def find_repos(
    roots: Iterable[Path], *, depth: int = 4, env: Mapping[str, str] | None = None
) -> tuple[list[Repo], list[DataWarning]]:
    """Every repository under ``roots`` (module docstring), sorted by key."""
    repos: dict[str, Repo] = {}
    warnings: list[DataWarning] = []
    for root in roots:
        if not root.is_dir():
            continue
        for folder in _candidates(root, depth):
            try:
                out = _identity(folder, env)
            except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired) as exc:
                warnings.append(_repo_warning(str(folder), exc))
                continue
            if len(out) < 2:
                continue
            key = os.path.normpath(out[0])
            top = os.path.normpath(out[1])
            repo = repos.get(key)
            if repo is None:
                repo = repos[key] = Repo(key=key, top=top)
            if top not in repo.worktrees:
                repo.worktrees.append(top)
    for repo in repos.values():
        try:
            listing = git(["worktree", "list", "--porcelain"], repo.top, env=env)
        except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired):
            listing = ""
        for line in listing.splitlines():
            if line.startswith("worktree "):
                path = os.path.normpath(line[len("worktree ") :])
                if path not in repo.worktrees:
                    repo.worktrees.append(path)
        for key in ("user.email", "user.name"):
            try:
                value = git(["config", "--local", "--get", key], repo.top, env=env).strip()
            except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired):
                continue
            if value:
                repo.seeds.add(value.lower())
    return [repos[k] for k in sorted(repos)], warnings


def _repo_warning(where: str, exc: BaseException) -> DataWarning:
    detail = getattr(exc, "stderr", None) or str(exc)
    return DataWarning(
        code=REPO_UNREADABLE,
        asset=COMMITS_ASSET,
        message=(
            f"git could not read {render_value(where)} ({render_value(str(detail).strip())});"
            " its commits do not count"
        ),
        path=where,
    )


# ---------------------------------------------------------------------------------------------------
# Parsing


def unquote_path(path: str) -> str:
    """A path as git prints it with C quoting (``"a\\tb"``) made plain; other paths unchanged."""
    if len(path) < 2 or path[0] != '"' or path[-1] != '"':
        return path
    body = path[1:-1]
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, '"': 34, "\\": 92, "a": 7, "b": 8, "f": 12, "r": 13, "v": 11}
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in simple:
                out.append(simple[nxt])
                i += 2
                continue
            if nxt.isdigit() and i + 3 < len(body) + 1:
                digits = body[i + 1 : i + 4]
                try:
                    out.append(int(digits, 8) & 0xFF)
                    i += 4
                    continue
                except ValueError:
                    pass
        out.extend(ch.encode("utf-8", "surrogateescape"))
        i += 1
    return out.decode("utf-8", "replace")


def rename_target(path: str) -> str:
    """The new path of a numstat rename (``pre{old => new}post`` or ``old => new``)."""
    path = unquote_path(path)
    if " => " not in path:
        return path
    lo = path.find("{")
    hi = path.find("}", lo + 1) if lo >= 0 else -1
    if lo >= 0 and hi > lo and " => " in path[lo:hi]:
        new = path[lo + 1 : hi].split(" => ", 1)[1]
        joined = path[:lo] + new + path[hi + 1 :]
        while "//" in joined:
            joined = joined.replace("//", "/")
        return joined.lstrip("/") if not path[:lo] else joined
    return path.rsplit(" => ", 1)[1]


_AUTHOR_TIME_RE = re.compile(r"-?[0-9]{1,19}")
_INT64 = 2**63


def _author_time(text: str) -> int | None:
    """``%at`` (seconds, ASCII digits with an optional minus) when it fits int64, else None: the
    record is malformed (docs/reliability.md "Fuzz targets": ``--5``, ``²`` or 30 digits once
    raised)."""
    if _AUTHOR_TIME_RE.fullmatch(text) is None:
        return None
    value = int(text)
    return value if -_INT64 <= value < _INT64 else None


def _plain_text(text: str) -> str:
    """``text`` with every surrogate (an undecodable byte, or a lone one) replaced by U+FFFD."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            raw = text.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "replace")
    return text


@dataclass
class ParsedLog:
    hashes: list[str] = field(default_factory=list)
    at: list[int] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    emails: list[str] = field(default_factory=list)
    files: list[tuple[str, ...]] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)


def parse_log(text: str) -> ParsedLog:
    """Commits of ``git log --format=%x1e%H|%at|%an|%ae --numstat`` output.

    Bytes that are not UTF-8 (``git`` decodes them as surrogate escapes: a Latin-1 author name, a
    path) become U+FFFD first, so that names, emails and paths fit the frame's text columns
    (docs/reliability.md "Fuzz targets")."""
    text = _plain_text(text)
    out = ParsedLog()
    for record in text.split(RECORD_SEP):
        if not record.strip():
            continue
        head, _, rest = record.partition("\n")
        parts = head.split("|")
        at = _author_time(parts[1]) if len(parts) >= 4 and parts[0] else None
        if at is None:
            out.malformed.append(head[:80])
            continue
        files: list[str] = []
        for line in rest.split("\n"):
            if line.count("\t") < 2:
                continue
            fields = line.split("\t", 2)
            if len(fields) == 3 and fields[2]:
                p = fields[2]
                target = rename_target(p) if " => " in p or p.startswith('"') else p
                if target:  # ``{ => }`` names no path
                    files.append(target)
        out.hashes.append(parts[0])
        out.at.append(at)
        out.names.append("|".join(parts[2:-1]))
        out.emails.append(parts[-1])
        out.files.append(tuple(dict.fromkeys(files)))
    return out


def identity_of(name: str, email: str) -> str:
    email = (email or "").strip().lower()
    return email if email else (name or "").strip().lower()


def commits_frame(repo_key: str, parsed: ParsedLog) -> pd.DataFrame:
    n = len(parsed.hashes)
    files = np.empty(n, dtype=object)
    files[:] = parsed.files
    return pd.DataFrame(
        {
            "repo_key": pd.Series([repo_key] * n, dtype="str"),
            "hash": pd.Series(parsed.hashes, dtype="str"),
            "at": np.asarray(parsed.at, dtype="int64"),
            "author_name": pd.Series(parsed.names, dtype="str"),
            "author_email": pd.Series(parsed.emails, dtype="str"),
            "identity": pd.Series(
                [identity_of(a, b) for a, b in zip(parsed.names, parsed.emails, strict=True)], dtype="str"
            ),
            "files": files,
        }
    )[list(GIT_COMMITS)]


def empty_commits() -> pd.DataFrame:
    return commits_frame("", ParsedLog())


# ---------------------------------------------------------------------------------------------------
# Reading, incrementally


@dataclass
class RepoRead:
    repo: Repo
    commits: pd.DataFrame
    mode: str  # "same" | "incremental" | "full" | "failed"
    state: RepoState
    warnings: list[DataWarning] = field(default_factory=list)
    seconds: float = 0.0


def _tips(repo: Repo, env: Mapping[str, str] | None) -> list[str]:
    out = git(["for-each-ref", "--format=%(objectname)"], repo.top, env=env).split()
    try:
        head = git(["rev-parse", "--verify", "-q", "HEAD"], repo.top, env=env).strip()
    except subprocess.CalledProcessError:
        head = ""
    return sorted(set(out) | ({head} if head else set()))


def _existing(repo: Repo, hashes: Iterable[str], env: Mapping[str, str] | None) -> list[str]:
    wanted = list(hashes)
    if not wanted:
        return []
    listing = git(["cat-file", "--batch-check"], repo.top, stdin="\n".join(wanted) + "\n", env=env)
    return [h for h, line in zip(wanted, listing.splitlines(), strict=False) if not line.endswith("missing")]


def read_repo(
    repo: Repo,
    *,
    state: RepoState | None = None,
    since: date | None = None,
    env: Mapping[str, str] | None = None,
) -> RepoRead:
    """The commits of ``repo`` new since ``state`` (all of them without a state)."""
    import time

    started = time.perf_counter()
    old = state if state is not None and state.repo_key == repo.key else None
    try:
        tips = _tips(repo, env)
        if old is not None and old.tips == tips:
            return RepoRead(repo, empty_commits(), "same", old, seconds=time.perf_counter() - started)
        revs = list(tips)
        mode = "full"
        if old is not None and old.tips:
            known = _existing(repo, old.tips, env)
            if known:
                revs += ["^" + h for h in known]
                mode = "incremental"
        args = ["log", "--no-merges", LOG_FORMAT, "--numstat", "--stdin"]
        if since is not None:
            args.insert(2, f"--since={datetime(since.year, since.month, since.day, tzinfo=UTC).isoformat()}")
        text = git(args, repo.top, stdin="\n".join(revs) + "\n", env=env) if tips else ""
    except (subprocess.CalledProcessError, OSError, subprocess.TimeoutExpired) as exc:
        return RepoRead(
            repo,
            empty_commits(),
            "failed",
            old or RepoState(repo_key=repo.key),
            [_repo_warning(repo.top, exc)],
        )
    parsed = parse_log(text)
    frame = commits_frame(repo.key, parsed)
    warnings = [
        DataWarning(
            code=GIT_LOG_MALFORMED,
            asset=COMMITS_ASSET,
            message=(
                f"{render_value(repo.top)}: a git log record could not be parsed"
                f" ({render_value(head)}); skipped"
            ),
            path=repo.top,
        )
        for head in parsed.malformed[:20]
    ]
    newest = ""
    if len(frame):
        newest = str(frame["hash"].iloc[int(np.argmax(frame["at"].to_numpy()))])
    count = (old.commits if (old is not None and mode == "incremental") else 0) + len(frame)
    new_state = RepoState(
        repo_key=repo.key,
        tips=tips,
        last_commit=newest or (old.last_commit if old is not None and mode == "incremental" else ""),
        commits=count,
    )
    return RepoRead(repo, frame, mode, new_state, warnings, seconds=time.perf_counter() - started)


def merge_commits(previous: pd.DataFrame | None, reads: Sequence[RepoRead]) -> pd.DataFrame:
    """The commits of every repository now present: unchanged repos keep their previous rows,
    re-read ones get the new rows (appended when incremental); hashes de-duplicated across repos."""
    keys = {r.repo.key for r in reads}
    parts: list[pd.DataFrame] = []
    prev = previous if previous is not None and len(previous) else empty_commits()
    for r in reads:
        if r.mode in ("same", "failed", "incremental"):
            parts.append(prev[prev["repo_key"] == r.repo.key])
        if r.mode in ("incremental", "full"):
            parts.append(r.commits)
    del keys
    frames = [p for p in parts if len(p)]
    if not frames:
        return empty_commits()
    out = pd.concat(frames, ignore_index=True)
    out = out.drop_duplicates(subset=["hash"], keep="first")
    return out.sort_values(["repo_key", "at", "hash"], kind="stable").reset_index(drop=True)


def read_git(
    roots: Iterable[Path],
    *,
    states: Mapping[str, RepoState] | None = None,
    previous: pd.DataFrame | None = None,
    since: date | None = None,
    depth: int = 4,
    env: Mapping[str, str] | None = None,
) -> tuple[
    list[Repo], pd.DataFrame, dict[str, RepoState], list[DataWarning], list[SourceStat], dict[str, Any]
]:
    """Find the repositories under ``roots`` and read their commits incrementally.

    Returns (repos, commits frame, new states by repo key, warnings, one SourceStat per repo, counters).
    """
    repos, warnings = find_repos(roots, depth=depth, env=env)
    reads = [read_repo(repo, state=(states or {}).get(repo.key), since=since, env=env) for repo in repos]
    commits = merge_commits(previous, reads)
    stats = []
    counters = {"repos": len(repos), "same": 0, "incremental": 0, "full": 0, "failed": 0, "commits_read": 0}
    for r in reads:
        warnings.extend(r.warnings)
        counters[r.mode] += 1
        counters["commits_read"] += len(r.commits)
        stats.append(
            SourceStat(
                source="sessions: git",
                path=r.repo.top,
                files=len(r.repo.worktrees),
                rows=int((commits["repo_key"] == r.repo.key).sum()) if len(commits) else 0,
                notes=r.mode,
            )
        )
    return repos, commits, {r.repo.key: r.state for r in reads}, warnings, stats, counters
