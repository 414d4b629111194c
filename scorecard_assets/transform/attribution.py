"""Attribution of telemetry, events and agent-log slices to a repo, an issue and one of its runs.

Two steps (docs/join.md "Attribution"):

1. ``attribute_telemetry_to_issues``: a ``runs.jsonl`` row has no repo field. It belongs to the
   first configured repo (config order) one of whose ``checkouts`` glob patterns matches its
   ``cwd`` (``fnmatch``, case-sensitive); otherwise to the one configured repo whose trails hold
   its issue number; otherwise to nothing (warning ``telemetry_unattributed``, and
   ``issue_number_ambiguous`` when several repos hold the number). No issue ever shares another
   repo's cost. Events and agent-log slices need no such step: their ``sched/<slug>`` directory
   names the repo.
2. ``attribute_to_runs``: an item of a (repo, issue) goes to the run whose ``[started_at,
   ended_at]`` interval is nearest to the item's time (distance 0 inside, ``started - t`` before,
   ``t - ended`` after); ties go to the later-starting run, then to the later run in trail order.
   Classifier-only runs are candidates only when the issue has no other run. Items without a time
   go to the issue's latest-started run.

Both are vectorised (one merge per call, no per-row DataFrame work). Pure module: no Dagster.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fnmatch import fnmatchcase

import numpy as np
import pandas as pd

from scorecard_assets.config import RepoConfig
from scorecard_assets.records import DataWarning
from scorecard_assets.sanitize import render_value

ASSET = "run_table"
NO_RUN = -1
EXAMPLES = 3

TrailIssueIndex = Mapping[int, Sequence[str]]


def trail_issue_index(trail_runs: pd.DataFrame) -> dict[int, tuple[str, ...]]:
    """Issue number -> the repos (sorted) whose trails hold at least one run of that issue."""
    if not len(trail_runs):
        return {}
    pairs = trail_runs[["issue", "repo"]].drop_duplicates()
    out: dict[int, list[str]] = {}
    for issue, repo in zip(pairs["issue"].tolist(), pairs["repo"].tolist(), strict=True):
        out.setdefault(int(issue), []).append(str(repo))
    return {k: tuple(sorted(v)) for k, v in out.items()}


def repo_for_cwd(cwd: object, repos: Iterable[RepoConfig]) -> str | None:
    """The first repo (config order) with a checkout pattern matching ``cwd``, else None."""
    if not isinstance(cwd, str) or not cwd:
        return None
    for repo in repos:
        for pattern in repo.checkouts:
            if fnmatchcase(cwd, pattern):
                return repo.name
    return None


def _example(host: object, path: object, line: object) -> str:
    where = f"{render_value(path)}:{line}"
    return f"{render_value(host)} {where}" if isinstance(host, str) and host else where


def _examples(rows: pd.DataFrame) -> str:
    head = rows.head(EXAMPLES)
    shown = [
        _example(h, p, ln)
        for h, p, ln in zip(
            head["host"].tolist(), head["source_file"].tolist(), head["line_no"].tolist(), strict=True
        )
    ]
    more = len(rows) - len(shown)
    return ", ".join(shown) + (f" (+{more} more)" if more > 0 else "")


def _issue_list(issues: Iterable[int]) -> str:
    distinct = sorted(set(int(i) for i in issues))
    shown = ", ".join(f"#{i}" for i in distinct[:EXAMPLES])
    more = len(distinct) - min(len(distinct), EXAMPLES)
    return shown + (f" (+{more} more)" if more > 0 else "")


def _location(rows: pd.DataFrame) -> dict[str, object]:
    first = rows.iloc[0]
    return {
        "host": str(first["host"]) if isinstance(first["host"], str) else None,
        "path": str(first["source_file"]) if isinstance(first["source_file"], str) else None,
        "line": int(first["line_no"]),
    }


def _unattributed_warning(rows: pd.DataFrame) -> DataWarning:
    k = len(rows)
    return DataWarning(
        code="telemetry_unattributed",
        asset=ASSET,
        message=f"{k} runs.jsonl row(s) could not be attributed to a configured repo: no checkout pattern "
        f"matches their cwd and no single repo's trails hold their issue number (e.g. {_examples(rows)}); "
        "their cost and tokens are counted in no run",
        values={"rows": k},
        count=1,
        **_location(rows),
    )


def _ambiguous_warnings(rows: pd.DataFrame, repos_of: pd.Series) -> list[DataWarning]:
    out: list[DataWarning] = []
    for repo_set, group in rows.groupby(repos_of.loc[rows.index], sort=True):
        k = len(group)
        out.append(
            DataWarning(
                code="issue_number_ambiguous",
                asset=ASSET,
                message=f"{k} runs.jsonl row(s) name issue numbers present in the trails of several repos "
                f"({repo_set}): {_issue_list(group['issue'])}; their cwd matches no checkout pattern, so "
                "they are attributed to none (declare the repos' checkouts to attribute them)",
                values={"rows": k, "repos": str(repo_set)},
                **_location(group),
            )
        )
    return out


def _trail_less_warnings(rows: pd.DataFrame) -> list[DataWarning]:
    out: list[DataWarning] = []
    for repo, group in rows.groupby("repo", sort=True):
        k = len(group)
        out.append(
            DataWarning(
                code="telemetry_unattributed",
                asset=ASSET,
                repo=str(repo),
                message=f"{repo}: {k} runs.jsonl row(s) match this repo's checkouts but name issues without "
                f"a runstate trail here ({_issue_list(group['issue'])}); their cost and tokens are counted "
                "in no run",
                values={"rows": k},
                **_location(group),
            )
        )
    return out


def attribute_telemetry_to_issues(
    run_telemetry: pd.DataFrame, trail_issue_index: TrailIssueIndex, repos_cfg: Sequence[RepoConfig]
) -> tuple[pd.DataFrame, list[DataWarning]]:
    """``runs.jsonl`` issue rows with ``repo`` and ``attributed_by`` (``cwd`` | ``issue``) added.

    Input follows ``schemas.RUN_TELEMETRY``; rows without an issue (``batch:`` or absent units) are
    not issue rows and are left out. Returned: the rows attributed to a (repo, issue) whose trails
    hold at least one run, with the original index, and the warnings for every other issue row.
    """
    if not len(run_telemetry):
        out = run_telemetry.iloc[0:0].copy()
        out["repo"] = pd.Series(dtype="str")
        out["attributed_by"] = pd.Series(dtype="str")
        return out, []
    rows = run_telemetry[run_telemetry["issue"].notna()].copy()
    rows["issue"] = rows["issue"].astype("int64")
    repos = list(repos_cfg)
    cwd_repo = {cwd: repo_for_cwd(cwd, repos) for cwd in rows["cwd"].dropna().unique().tolist()}
    by_cwd = rows["cwd"].map(lambda c: cwd_repo.get(c) if isinstance(c, str) else None)
    holders = rows["issue"].map(lambda n: tuple(trail_issue_index.get(int(n), ())))
    by_issue = holders.map(lambda h: h[0] if len(h) == 1 else None)
    repo = by_cwd.where(by_cwd.notna(), by_issue)
    rows["repo"] = repo.astype("str")
    rows["attributed_by"] = np.where(by_cwd.notna(), "cwd", np.where(by_issue.notna(), "issue", None))
    rows["attributed_by"] = rows["attributed_by"].astype("str")

    warnings: list[DataWarning] = []
    unattributed = rows[repo.isna()]
    if len(unattributed):
        warnings.append(_unattributed_warning(unattributed))
        several = holders.loc[unattributed.index].map(len) > 1
        if several.any():
            joined = holders.map(", ".join)
            warnings.extend(_ambiguous_warnings(unattributed[several.to_numpy()], joined))
    attributed = rows[repo.notna()]
    in_trails = [
        r in trail_issue_index.get(int(n), ())
        for r, n in zip(attributed["repo"].tolist(), attributed["issue"].tolist(), strict=True)
    ]
    trail_less = attributed[[not x for x in in_trails]]
    if len(trail_less):
        warnings.extend(_trail_less_warnings(trail_less))
    return attributed[in_trails], warnings


# --------------------------------------------------------------------------------------------
# items -> runs


def epoch_seconds(series: pd.Series) -> np.ndarray:
    """Float epoch seconds of a datetime column (NaN for NaT), whatever its unit."""
    if len(series) == 0:
        return np.array([], dtype=float)
    values = pd.to_datetime(series, utc=True).dt.as_unit("ns").array.asi8
    out = values.astype(float) / 1e9
    out[values == np.iinfo(np.int64).min] = np.nan
    return out


def _candidates(runs: pd.DataFrame) -> pd.DataFrame:
    """Runs eligible for attribution: classifier-only runs only where the issue has no other run."""
    cand = pd.DataFrame(
        {
            "repo": runs["repo"].astype("str").to_numpy(),
            "issue": runs["issue"].astype("int64").to_numpy(),
            "_run": np.arange(len(runs), dtype=np.int64),
            "_start": epoch_seconds(runs["started_at"]),
            "_end": epoch_seconds(runs["ended_at"]),
            "_order": runs["run_order"].astype("int64").to_numpy(),
            "_cls": runs["classifier_only"].astype(bool).to_numpy(),
        }
    )
    has_work = (~cand["_cls"]).groupby([cand["repo"], cand["issue"]]).transform("any")
    return cand[~cand["_cls"] | ~has_work]


def attribute_to_runs(items: pd.DataFrame, runs: pd.DataFrame, time_col: str) -> pd.Series:
    """For each item, the position (0-based row number) in ``runs`` of the run it belongs to.

    ``items`` needs ``repo``, ``issue`` and ``time_col``; ``runs`` needs ``repo``, ``issue``,
    ``started_at``, ``ended_at``, ``run_order``, ``classifier_only`` (``schemas.TRAIL_RUNS``).
    Result: int64 Series on ``items.index``; ``NO_RUN`` (-1) where the issue has no run.
    """
    result = np.full(len(items), NO_RUN, dtype=np.int64)
    if not len(items) or not len(runs):
        return pd.Series(result, index=items.index, dtype="int64")
    probe = pd.DataFrame(
        {
            "repo": items["repo"].astype("str").to_numpy(),
            "issue": pd.to_numeric(items["issue"], errors="coerce").fillna(-1).astype("int64").to_numpy(),
            "_item": np.arange(len(items), dtype=np.int64),
            "_t": epoch_seconds(items[time_col]),
        }
    )
    pairs = probe.merge(_candidates(runs), on=["repo", "issue"], how="inner")
    if len(pairs):
        t = pairs["_t"].to_numpy()
        start = pairs["_start"].to_numpy()
        end = pairs["_end"].to_numpy()
        with np.errstate(invalid="ignore"):
            distance = np.where(t < start, start - t, np.where(t > end, t - end, 0.0))
        distance[np.isnan(start) | np.isnan(end)] = np.inf
        distance[np.isnan(t)] = 0.0  # no time: every candidate is equally near; latest start decides
        later_first = np.where(np.isnan(start), np.inf, -start)
        pairs = pairs.assign(_dist=distance, _later=later_first, _rev_order=-pairs["_order"])
        pairs = pairs.sort_values(["_item", "_dist", "_later", "_rev_order"], kind="stable")
        best = pairs.drop_duplicates("_item", keep="first")
        result[best["_item"].to_numpy()] = best["_run"].to_numpy()
    return pd.Series(result, index=items.index, dtype="int64")
