"""Group ``report``: the week's report files as a pull request, when the config names a repo
(README "Publishing as a pull request"). Runs after ``scorecard_report`` in the weekly job.

No ``from __future__ import annotations``: Dagster reads the real annotations.
"""

import dagster as dg

from scorecard_assets.defs.report.assets import PUBLISH_POOL, _windows, weekly_asset
from scorecard_assets.defs.resources import GitHubResource, ReportStoreResource, ScorecardResource


@weekly_asset(kinds={"github"}, deps=["scorecard_report"], pool=PUBLISH_POOL)
def report_pull_request(
    context: dg.AssetExecutionContext,
    scorecard: ScorecardResource,
    reports: ReportStoreResource,
    github: GitHubResource,
) -> dg.MaterializeResult:
    """Commits the published week's files (report, sidecar, digest, charts) to the configured branch
    under `<path>/<window end>/` and `<path>/latest/`, and opens the pull request into the base
    branch, or updates the one already open. Does nothing unless the config has `pull_request`."""
    cfg = scorecard.load()
    windows = _windows(context.partition_keys, cfg)
    target = cfg.pull_request
    if target is None:
        for key in windows:
            context.add_asset_metadata(
                {"published": False, "why": "no pull_request in the config"}, partition_key=key
            )
        return dg.MaterializeResult()
    # PyGithub is imported on first use: loading the code location should not pay for it
    # (docs/dagster.md "Start-up cost")
    from github import GithubException

    from scorecard_assets.github.client import Redactor, describe_error, make_github, resolve_token
    from scorecard_assets.github.publish import publish_pull_request

    store = reports.store(cfg)
    token = resolve_token(github.token_env or cfg.github.token_env)
    gh = make_github(github.settings(cfg), token)
    try:
        for key, w in windows.items():
            folder = store.window_location(w.window_end_date)
            if not folder.exists():
                raise dg.Failure(
                    f"week {key}: no published report at {folder}; materialize scorecard_report first"
                )
            files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
            digest = files.get("digest.txt", b"").decode("utf-8", "replace")
            body = "Weekly model scorecard.\n\n```\n" + digest + "```\n"
            try:
                result = publish_pull_request(
                    gh,
                    repo_name=target.repo,
                    branch=target.branch,
                    base=target.base,
                    folder=target.path,
                    window_end=w.window_end_date,
                    files=files,
                    body=body,
                )
            except GithubException as exc:
                why = describe_error(exc, Redactor([token]))
                raise dg.Failure(
                    f"{target.repo}: publishing week {key} as a pull request failed: {why}"
                ) from None
            context.add_asset_metadata(
                {
                    "published": True,
                    "pull_request": dg.MetadataValue.url(result.url),
                    "opened": result.created,
                    "files_changed": result.files_changed,
                },
                partition_key=key,
            )
    finally:
        gh.close()
    return dg.MaterializeResult()
