"""Runstate milestone comments as a ``trail_comments`` frame (schemas.TRAIL_COMMENTS), for the
trail_runs, join and attribution tests; and finding one run's row in a result."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from scorecard_assets.schemas import TRAIL_COMMENTS, empty_frame
from scorecard_assets.sources.runstate import RUNSTATE_MARKER

REPO = "imboard-ai/ai-dossier"
BASE_CREATED = pd.Timestamp("2026-08-20T00:00:00Z")


@dataclass
class Ms:
    """One milestone comment: header fields, extra keys (one per line), optional server times."""

    phase: str
    status: str = "done"
    at: str = ""
    run: str = "r-1-aaaa"
    created: str | None = None
    updated: str | None = None
    keys: dict[str, str] = field(default_factory=dict)
    header_extra: str = ""

    def body(self) -> str:
        header = f"phase={self.phase} status={self.status} run={self.run} at={self.at}"
        if self.header_extra:
            header += " " + self.header_extra
        lines = [RUNSTATE_MARKER, header] + [f"{k}={v}" for k, v in self.keys.items()]
        return "\n".join(lines)


def ms(phase: str, status: str = "done", at: str = "", run: str = "r-1-aaaa", **keys: str) -> Ms:
    created = keys.pop("created", None)
    updated = keys.pop("updated", None)
    return Ms(phase, status, at, run, created, updated, dict(keys))


def at(hms: str, day: str = "2026-08-24") -> str:
    return f"{day}T{hms}Z"


def comments(
    *stones: Ms | str,
    repo: str = REPO,
    issue: int = 1,
    issue_updated: str | None = "2026-09-01T00:00:00Z",
    first_id: int = 1,
) -> pd.DataFrame:
    """A TRAIL_COMMENTS frame for one issue; comment order = argument order.

    Server creation times default to BASE_CREATED + i seconds (monotonic, independent of at=), so
    clock-skew cases keep their comment order. A plain string is a raw comment body.
    """
    rows = []
    for i, s in enumerate(stones):
        body = s if isinstance(s, str) else s.body()
        created = (
            pd.Timestamp(s.created)
            if isinstance(s, Ms) and s.created
            else BASE_CREATED + pd.Timedelta(seconds=i)
        )
        updated = pd.Timestamp(s.updated) if isinstance(s, Ms) and s.updated else created
        rows.append(
            {
                "repo": repo,
                "issue": issue,
                "comment_id": first_id + i,
                "created_at": created,
                "updated_at": updated,
                "author": "bot",
                "body": body,
                "issue_state": "closed",
                "issue_updated_at": pd.Timestamp(issue_updated) if issue_updated else pd.NaT,
            }
        )
    return frame_of(rows)


def frame_of(rows: list[dict[str, object]]) -> pd.DataFrame:
    df = empty_frame(TRAIL_COMMENTS) if not rows else pd.DataFrame(rows, columns=list(TRAIL_COMMENTS))
    for col in ("created_at", "updated_at", "issue_updated_at"):
        df[col] = pd.to_datetime(df[col], utc=True)
    for col in ("issue", "comment_id"):
        df[col] = df[col].astype("int64")
    return df


def concat(*frames: pd.DataFrame) -> pd.DataFrame:
    return pd.concat(frames, ignore_index=True)


def run_row(result_frame: pd.DataFrame, run_id: str, issue: int | None = None) -> pd.Series:
    sel = result_frame[result_frame["run_id"] == run_id]
    if issue is not None:
        sel = sel[sel["issue"] == issue]
    assert len(sel) == 1, f"expected one row for {run_id}"
    return sel.iloc[0]
