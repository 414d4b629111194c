"""``scorecard github {sync,export} …`` (and its alias ``python -m scorecard_assets.github …``).

- ``export [--repo o/n …] --out DIR [--cache PATH]`` writes the cache as a recorded export
  (``DIR/<owner>/<name>/issues.json`` and ``comments.json``); without ``--repo``, every cached repo.
- ``sync [--repo o/n …] [--cache PATH] [--config PATH] [--base-url URL] [--token-env NAME]
  [--full-refresh]`` runs the incremental sync outside Dagster (settings from ``--config``'s
  ``github`` section when given, repos from it when no ``--repo``), with progress per repo and a
  summary with timings.

Without ``--cache`` both use the cache the ``trail_comments`` asset uses: ``github-trails.sqlite`` in
the state store's ``github`` workspace (``$SCORECARD_STORAGE_URL/state``, else
``<SCORECARD_STATE_DIR or ./.dagster>/state``; on an object store it is checked out and, after a sync,
committed as a new generation). Exit status: 0 done, 1 every repo failed, 2 bad usage or input.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from scorecard_assets.config import ConfigError, check_repo_name, load_config
from scorecard_assets.github.cache import CACHE_FILE_NAME, CacheError, TrailCache
from scorecard_assets.github.client import ClientSettings, MissingTokenError, make_github, resolve_token
from scorecard_assets.github.export import ExportError, export_repo
from scorecard_assets.github.sync import sync_repos
from scorecard_assets.progress import Progress
from scorecard_assets.storage.settings import state_location
from scorecard_assets.storage.state import state_store_at

GROUP = "github"
STATE_WORKSPACE = "github"  # the trail_comments asset's workspace (defs/ingest/assets.py GITHUB_STATE)


def _repo_arg(value: str) -> str:
    try:
        return check_repo_name(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add_commands(commands: argparse._SubParsersAction) -> None:
    """``scorecard github export|sync`` (registered in ``scorecard_assets/cli.py``)."""
    exp = commands.add_parser(
        "export",
        help="write the trail cache as a recorded export",
        description="Write the cached issues and runstate comments as a recorded export "
        "(<out>/<owner>/<name>/issues.json and comments.json, GitHub REST shapes), which "
        "`github.source: recorded` reads back to identical rows.",
    )
    exp.add_argument(
        "--repo",
        action="append",
        default=[],
        type=_repo_arg,
        help="owner/name (repeatable; default: all cached)",
    )
    exp.add_argument("--out", required=True, type=Path, help="export root directory")
    exp.add_argument("--cache", type=Path, default=None, help="trail cache file (default: the asset's)")
    exp.set_defaults(func=_guarded(_export))

    syn = commands.add_parser(
        "sync",
        help="sync repos from the GitHub API into the trail cache",
        description="Fetch new and changed issues and runstate comments of each repo into the trail "
        "cache (incremental; --full-refresh re-reads everything and drops deleted comments). One repo "
        "failing does not stop the others; exit 1 when every repo failed. The token is read from the "
        "variable --token-env names (./.env is read too) and never printed.",
    )
    syn.add_argument("--repo", action="append", default=[], type=_repo_arg, help="owner/name (repeatable)")
    syn.add_argument("--cache", type=Path, default=None, help="trail cache file (default: the asset's)")
    syn.add_argument("--config", type=Path, default=None, help="scorecard YAML (github settings, repos)")
    syn.add_argument("--base-url", default=None, help="API base URL (default https://api.github.com)")
    syn.add_argument("--token-env", default=None, help="variable holding the token (default GITHUB_TOKEN)")
    syn.add_argument("--per-page", type=int, default=None, help="page size (at most 100)")
    syn.add_argument("--full-refresh", action="store_true", help="re-read everything, drop deleted comments")
    syn.set_defaults(func=_guarded(_sync))


def _guarded(handler: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``handler`` with the input errors of this package as one line and exit status 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return int(handler(args))
        except (CacheError, ConfigError, ExportError, MissingTokenError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 2

    return run


class _Quiet:
    """The sync's per-repo log lines are left out: the progress line says the same."""

    def info(self, msg: str) -> None:
        return None

    def warning(self, msg: str) -> None:
        return None


_QUIET = _Quiet()


@contextlib.contextmanager
def _cache_file(given: Path | None) -> Iterator[Path]:
    """``given``, else the asset's cache file in the state store (checked out for this command)."""
    if given is not None:
        yield given
        return
    with state_store_at(state_location()).workspace(STATE_WORKSPACE) as folder:
        yield folder / CACHE_FILE_NAME


def _export(args: argparse.Namespace) -> int:
    with _cache_file(args.cache) as cache_path:
        if not cache_path.is_file():
            print(f"error: no trail cache at {cache_path} (sync first, or pass --cache)", file=sys.stderr)
            return 2
        with TrailCache(cache_path) as cache:
            repos = args.repo or cache.repos()
            for repo in repos:
                result = export_repo(cache, repo, args.out)
                print(f"{repo}: {result.issues} issue(s), {result.comments} comment(s) -> {result.directory}")
    return 0


def _sync(args: argparse.Namespace) -> int:
    settings, repos, token_env = _sync_settings(args)
    if not repos:
        print("error: name at least one --repo (or a --config with repos)", file=sys.stderr)
        return 2
    token = resolve_token(token_env)
    gh = make_github(settings, token)
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    progress = Progress(total=len(repos), unit="repo", what="github sync")
    reports = []
    try:
        with _cache_file(args.cache) as cache_path, TrailCache(cache_path) as cache:
            for repo in repos:
                progress.start(repo)
                report = sync_repos(gh, cache, [repo], full_refresh=args.full_refresh, log=_QUIET)[0]
                reports.append(report)
                note = (
                    f"{report.requests} request(s), {report.comments_upserted} comment(s) new or changed"
                    if report.ok
                    else str(report.error)
                )
                progress.finish(repo, ok=report.ok, note=note, seconds=report.seconds)
    finally:
        progress.close()
        gh.close()
    print(progress.summary(), file=sys.stderr)
    return 0 if any(r.ok for r in reports) else 1


def _sync_settings(args: argparse.Namespace) -> tuple[ClientSettings, list[str], str]:
    overrides = {"base_url": args.base_url, "per_page": args.per_page}
    if args.config is not None:
        cfg = load_config(args.config, check_paths=False)
        settings = ClientSettings.from_config(cfg.github, **overrides)
        return settings, list(args.repo) or cfg.repo_names, args.token_env or cfg.github.token_env
    base = ClientSettings()
    settings = ClientSettings(
        base_url=(args.base_url or base.base_url).rstrip("/"), per_page=args.per_page or base.per_page
    )
    return settings, list(args.repo), args.token_env or "GITHUB_TOKEN"


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scorecard_assets.github …`` = ``scorecard github …``."""
    from scorecard_assets.cli import main as scorecard_main

    return scorecard_main([GROUP, *(sys.argv[1:] if argv is None else argv)])


if __name__ == "__main__":
    sys.exit(main())
