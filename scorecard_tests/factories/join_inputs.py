"""The four inputs of the join (``trail_runs``, ``run_telemetry``, ``dispatch_events`` with its
unverified exits, ``agent_log_usage``) read from a fleet, and the edits the incremental run-table
tests apply to them: an earlier cut of every input, edited or deleted trails, a truncated journal."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pandas as pd

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import TableResult
from scorecard_assets.sources.agent_logs import read_agent_logs
from scorecard_assets.sources.events import UNVERIFIED_EXITS_EXTRA, read_dispatch_events
from scorecard_assets.sources.runs_jsonl import read_run_telemetry
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_assets.transform.join import build_run_table
from scorecard_assets.transform.trail_runs import build_trail_runs

RUNSTATE_MARKER = "<!-- runstate:v1 -->"


@dataclass(frozen=True)
class JoinInputs:
    cfg: ScorecardConfig
    comments: pd.DataFrame
    trail_runs: pd.DataFrame
    telemetry: pd.DataFrame
    events: pd.DataFrame
    unverified: list[dict[str, Any]] | None
    slices: pd.DataFrame

    def build(self) -> TableResult:
        """``build_run_table`` from scratch on these inputs."""
        return build_run_table(self.trail_runs, self.telemetry, self.events, self.slices, self.cfg,
                               unverified_exit_events=self.unverified)  # fmt: skip

    def args(self) -> tuple[Any, ...]:
        """The positional inputs of ``refresh_run_table`` before ``stored`` and ``state``."""
        return (self.trail_runs, self.telemetry, self.events, self.slices, self.cfg, self.unverified)


def read_join_inputs(cfg: ScorecardConfig, cache_dir: Path) -> JoinInputs:
    """Every input of the join as the readers give it for ``cfg`` (agent logs with an empty cache)."""
    comments = read_recorded_trails(cfg).frame
    events = read_dispatch_events(cfg)
    return JoinInputs(
        cfg=cfg,
        comments=comments,
        trail_runs=build_trail_runs(comments).frame,
        telemetry=read_run_telemetry(list(cfg.hosts)).frame,
        events=events.frame,
        unverified=events.extra.get(UNVERIFIED_EXITS_EXTRA),
        slices=read_agent_logs(cfg, cache_dir).frame,
    )


def with_comments(inputs: JoinInputs, comments: pd.DataFrame) -> JoinInputs:
    """``inputs`` with another trail (``trail_runs`` rebuilt from ``comments``)."""
    comments = comments.reset_index(drop=True)
    return replace(inputs, comments=comments, trail_runs=build_trail_runs(comments).frame)


def cut_before(inputs: JoinInputs, cutoff: pd.Timestamp) -> JoinInputs:
    """What the fleet's inputs held at ``cutoff``: comments, telemetry rows, events, unverified exits
    and slices stamped before it (items without a time are kept)."""

    def before(frame: pd.DataFrame, col: str) -> pd.DataFrame:
        times = pd.to_datetime(frame[col], utc=True)
        return frame[(times < cutoff) | times.isna()].reset_index(drop=True)

    unverified = [e for e in inputs.unverified or [] if pd.Timestamp(e.get("ts") or cutoff) < cutoff]
    cut = with_comments(inputs, before(inputs.comments, "created_at"))
    return replace(
        cut,
        telemetry=before(inputs.telemetry, "timestamp"),
        events=before(inputs.events, "ts"),
        unverified=unverified if inputs.unverified is not None else None,
        slices=before(inputs.slices, "slice_start"),
    )


def edited_trails(inputs: JoinInputs, count: int) -> JoinInputs:
    """``inputs`` with one milestone comment of ``count`` distinct issues edited (done -> blocked)."""
    out = inputs.comments.copy()
    milestones = out[out["body"].str.startswith(RUNSTATE_MARKER)].drop_duplicates(["repo", "issue"])
    picked = milestones.index[:: max(1, len(milestones) // count)][:count]
    out.loc[picked, "body"] = out.loc[picked, "body"].str.replace(
        "status=done", "status=blocked", regex=False
    )
    out.loc[picked, "updated_at"] = out.loc[picked, "updated_at"] + pd.Timedelta(seconds=1)
    return with_comments(inputs, out)


def without_issue(inputs: JoinInputs, repo: str, issue: int) -> JoinInputs:
    """``inputs`` where the issue's trail was deleted (its telemetry, events and logs remain)."""
    c = inputs.comments
    return with_comments(inputs, c[~((c["repo"] == repo) & (c["issue"] == issue))])


def truncated_telemetry(inputs: JoinInputs) -> JoinInputs:
    """``inputs`` with the largest ``runs.jsonl`` cut to its first half (a rotation)."""
    t = inputs.telemetry
    biggest = t["source_file"].value_counts().index[0]
    half = t.loc[t["source_file"] == biggest, "line_no"].max() // 2
    keep = (t["source_file"] != biggest) | (t["line_no"] <= half)
    return replace(inputs, telemetry=t[keep].reset_index(drop=True))
