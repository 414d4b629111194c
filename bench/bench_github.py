"""Benchmark of the GitHub trail sync: request counts and time, cold and warm, per repo.

``run(fleet_dir)`` serves each repo of the fleet's recorded export
(``<fleet>/github/<owner>/<name>/{issues,comments}.json``) through the fake GitHub server of the
tests (real HTTP on 127.0.0.1, real PyGithub, ``Link`` pagination at 100 per page) and syncs it
into a fresh SQLite cache three times: cold (empty cache), warm (nothing changed), and a refresh
after ``k`` new milestone comments. Each row also carries the issue's request targets:

- cold ≤ ⌈I/100⌉ + ⌈C/100⌉ + 3 (I issues, C comments listed), warm ≤ 3, refresh ≤ 3 + ⌈k/100⌉;

and the time to build the ``trail_comments`` frame from the cache. Times include the fake
server's own work (same machine), so they are an upper bound of the client's cost.

``python -m bench.bench_github`` synthesises an export of ~5,000 issues / ~60,000 comments (about
one in ten is ordinary chatter) in a temporary directory and prints the rows; ``--fleet DIR``
measures an existing fleet instead.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from scorecard_assets.github.cache import TrailCache
from scorecard_assets.github.client import ClientSettings, make_github
from scorecard_assets.github.sync import SyncReport, build_trail_result, sync_repo
from scorecard_assets.sources.runstate import RUNSTATE_MARKER
from scorecard_tests.fakes.github import FakeGitHub, iter_export_repos, milestone

REFRESH_NEW_COMMENTS = 100
_PHASES = ("gate", "setup", "plan", "implement", "review", "ship", "report")


def _pages(n: int) -> int:
    return max(1, math.ceil(n / 100))


def _timed_sync(fake: FakeGitHub, cache: TrailCache, repo: str) -> tuple[SyncReport, float]:
    gh = make_github(ClientSettings(base_url=fake.base_url), fake.token)
    started = time.perf_counter()
    report = sync_repo(gh, cache, repo, full_refresh=False)
    seconds = time.perf_counter() - started
    gh.close()
    if not report.ok:
        raise RuntimeError(f"{repo}: sync failed in the benchmark: {report.error}")
    return report, seconds


def _bench_repo(fake: FakeGitHub, repo: str, cache_path: Path) -> dict[str, Any]:
    issues = fake.repo(repo).issues
    comments = fake.repo(repo).comments
    n_milestones = sum(1 for c in comments.values() if str(c.get("body", "")).startswith(RUNSTATE_MARKER))
    with TrailCache(cache_path) as cache:
        cold, cold_s = _timed_sync(fake, cache, repo)
        warm, warm_s = _timed_sync(fake, cache, repo)
        numbers = sorted(issues)[-10:]
        for k in range(REFRESH_NEW_COMMENTS):
            body = milestone("report", f"r-bench-{k}", "2027-01-01T00:00:00Z", "model=bench")
            fake.add_comment(repo, numbers[k % len(numbers)], body)
        refresh, refresh_s = _timed_sync(fake, cache, repo)
        started = time.perf_counter()
        rows = len(build_trail_result(cache, [repo]).frame)
        frame_s = time.perf_counter() - started
    return {
        "repo": repo,
        "issues": len(issues),
        "comments": len(comments),
        "milestones": n_milestones,
        "cold_s": round(cold_s, 3),
        "cold_requests": cold.requests,
        "cold_target": _pages(len(issues)) + _pages(len(comments)) + 3,
        "cold_comments_per_s": round(len(comments) / cold_s) if cold_s else None,
        "warm_s": round(warm_s, 3),
        "warm_requests": warm.requests,
        "warm_target": 3,
        "refresh_k": REFRESH_NEW_COMMENTS,
        "refresh_s": round(refresh_s, 3),
        "refresh_requests": refresh.requests,
        "refresh_target": 3 + _pages(REFRESH_NEW_COMMENTS),
        "frame_rows": rows,
        "frame_s": round(frame_s, 3),
    }


def export_problem(repo_dir: Path) -> str | None:
    """Why a repo's recorded export cannot be served (e.g. a saved error reply instead of the issue
    listing), or None when ``issues.json`` and ``comments.json`` are both JSON arrays."""
    for name in ("issues.json", "comments.json"):
        try:
            data = json.loads((repo_dir / name).read_bytes())
        except (OSError, ValueError) as exc:
            return f"{name}: {exc}"
        if not isinstance(data, list):
            return f"{name} holds a JSON {type(data).__name__}, not a list"
    return None


def run(fleet_dir: Path) -> list[dict[str, Any]]:
    """One row per repo of ``<fleet_dir>/github/`` (see the module docstring for the fields).

    A repo whose export cannot be served gets a row ``{"repo", "skipped": reason}`` instead.
    """
    export_root = fleet_dir / "github"
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-github-") as tmp:
        for repo, repo_dir in iter_export_repos(export_root):
            problem = export_problem(repo_dir)
            if problem is not None:
                rows.append({"repo": repo, "skipped": problem})
                continue
            with FakeGitHub() as fake:
                fake.load_export(repo, repo_dir)
                rows.append(_bench_repo(fake, repo, Path(tmp) / f"{repo.replace('/', '__')}.sqlite"))
    return rows


# ------------------------------------------------------------------------------------- synthesis


def synthesise_export(
    fleet_dir: Path, repo: str = "bench/fleet", *, issues: int = 5000, comments: int = 60000, seed: int = 7
) -> Path:
    """A recorded export of ``issues`` issues and about ``comments`` comments under ``fleet_dir/github``."""
    rng = random.Random(seed)
    api = f"https://api.github.com/repos/{repo}"
    start = datetime(2026, 3, 1, tzinfo=UTC)
    issue_objs: list[dict[str, Any]] = []
    comment_objs: list[dict[str, Any]] = []
    comment_id = 3_000_000_000
    per_issue = comments / issues
    for number in range(1, issues + 1):
        opened = start + timedelta(minutes=rng.randrange(0, 260_000))
        at = opened
        count = max(1, round(rng.gauss(per_issue, per_issue / 3)))
        for k in range(count):
            at += timedelta(seconds=rng.randrange(30, 5400))
            comment_id += 1
            chatter = rng.random() < 0.1
            body = "LGTM, merging after CI" if chatter else _milestone_body(number, k, at, rng)
            stamp = at.strftime("%Y-%m-%dT%H:%M:%SZ")
            comment_objs.append(
                {
                    "id": comment_id,
                    "url": f"{api}/issues/comments/{comment_id}",
                    "issue_url": f"{api}/issues/{number}",
                    "user": {"login": "human" if chatter else "sched-bot"},
                    "body": body,
                    "created_at": stamp,
                    "updated_at": stamp,
                }
            )
        issue_objs.append(
            {
                "url": f"{api}/issues/{number}",
                "number": number,
                "title": f"Task {number}",
                "state": "closed" if rng.random() < 0.8 else "open",
                "comments": count,
                "created_at": opened.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "updated_at": at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
    target = fleet_dir / "github" / repo
    target.mkdir(parents=True, exist_ok=True)
    (target / "issues.json").write_bytes(orjson.dumps(issue_objs))
    (target / "comments.json").write_bytes(orjson.dumps(comment_objs))
    return target


def _milestone_body(number: int, k: int, at: datetime, rng: random.Random) -> str:
    phase = _PHASES[k % len(_PHASES)]
    extra = (
        [f"model={rng.choice(('claude-sonnet-5', 'gpt-5.2-codex', 'glm-5.3'))}"] if phase == "gate" else []
    )
    return milestone(phase, f"r-{number}-{k // len(_PHASES):04x}", at.strftime("%Y-%m-%dT%H:%M:%SZ"), *extra)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--fleet", type=Path, default=None, help="a fleet directory with github/<owner>/<name>/"
    )
    parser.add_argument("--issues", type=int, default=5000)
    parser.add_argument("--comments", type=int, default=60000)
    args = parser.parse_args()
    if args.fleet is not None:
        rows = run(args.fleet)
    else:
        with tempfile.TemporaryDirectory(prefix="bench-github-fleet-") as tmp:
            started = time.perf_counter()
            synthesise_export(Path(tmp), issues=args.issues, comments=args.comments)
            print(f"synthesised the export in {time.perf_counter() - started:.1f} s")
            rows = run(Path(tmp))
    for row in rows:
        print(json.dumps(row))


if __name__ == "__main__":
    main()
