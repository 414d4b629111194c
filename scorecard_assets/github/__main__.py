"""Command line: ``python -m scorecard_assets.github {export,sync} …``.

- ``export --repo o/n [--repo …] --out DIR [--cache PATH]`` writes the cache as a recorded export
  (``DIR/<owner>/<name>/issues.json`` and ``comments.json``); without ``--repo``, every cached repo.
- ``sync --repo o/n [--repo …] [--cache PATH] [--config PATH] [--base-url URL] [--token-env NAME]
  [--full-refresh]`` runs the incremental sync outside Dagster (settings from ``--config``'s
  ``github`` section when given, repos from it when no ``--repo``).

``--cache`` defaults to ``$SCORECARD_STATE_DIR/cache/github-trails.sqlite`` (``./.dagster`` when
unset), the file the ``trail_comments`` asset uses. Exit status: 0 done, 1 every repo failed,
2 bad usage or input.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

from scorecard_assets.config import ConfigError, check_repo_name, load_config
from scorecard_assets.dotenv_file import load_dotenv_of_cwd
from scorecard_assets.github.cache import CacheError, TrailCache, default_cache_path
from scorecard_assets.github.client import ClientSettings, MissingTokenError, make_github, resolve_token
from scorecard_assets.github.export import ExportError, export_repo
from scorecard_assets.github.sync import sync_repos


def _repo_arg(value: str) -> str:
    try:
        return check_repo_name(value)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m scorecard_assets.github", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    exp = sub.add_parser("export", help="write the trail cache as a recorded export")
    exp.add_argument(
        "--repo",
        action="append",
        default=[],
        type=_repo_arg,
        help="owner/name (repeatable; default: all cached)",
    )
    exp.add_argument("--out", required=True, type=Path, help="export root directory")
    exp.add_argument("--cache", type=Path, default=None, help="trail cache file")

    syn = sub.add_parser("sync", help="sync repos from the GitHub API into the trail cache")
    syn.add_argument("--repo", action="append", default=[], type=_repo_arg, help="owner/name (repeatable)")
    syn.add_argument("--cache", type=Path, default=None, help="trail cache file")
    syn.add_argument("--config", type=Path, default=None, help="scorecard YAML (github settings, repos)")
    syn.add_argument("--base-url", default=None, help="API base URL (default https://api.github.com)")
    syn.add_argument("--token-env", default=None, help="variable holding the token (default GITHUB_TOKEN)")
    syn.add_argument("--per-page", type=int, default=None)
    syn.add_argument("--full-refresh", action="store_true", help="re-read everything, drop deleted comments")
    return parser


def _export(args: argparse.Namespace) -> int:
    cache_path = args.cache or default_cache_path()
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
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        with TrailCache(args.cache or default_cache_path()) as cache:
            reports = sync_repos(gh, cache, repos, full_refresh=args.full_refresh)
    finally:
        gh.close()
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
    load_dotenv_of_cwd()  # the token may live in ./.env, as for the dagster command
    args = _parser().parse_args(argv)
    try:
        return _export(args) if args.command == "export" else _sync(args)
    except (CacheError, ConfigError, ExportError, MissingTokenError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
