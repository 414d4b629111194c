"""Readers of the batch inputs (docs/batches.md "Inputs"): the ``batch:<id>`` journal lines, the
batch dispatch logs under ``runs/``, ``batch-prep.jsonl`` with the operator's Claude Code
transcripts, and the merged batch pull requests of the recorded GitHub export.

Every reader returns a :class:`TableResult`; a missing optional input is no error (the batch cells
read ``N/A``), an unreadable one and a bad line are data warnings naming the file and line.
Pure module: no Dagster.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pandas as pd

from scorecard_assets.config import HostConfig, ScorecardConfig
from scorecard_assets.records import DataWarning, TableResult
from scorecard_assets.schemas import BATCH_JOURNAL, BATCH_LOGS, BATCH_PREP, BATCH_PULL_REQUESTS, typed_frame
from scorecard_assets.sources.agent_logs.slicing import _cmd_list, _cmd_option, parse_log_bytes
from scorecard_assets.sources.files import os_error_reason, read_regular_bytes, require_regular_file
from scorecard_assets.sources.jsonl import LineProblem, malformed_line_warnings, read_jsonl
from scorecard_assets.sources.slugs import sanitize_slug

LOG_TAIL_BYTES = 32 * 1024 * 1024  # a batch log is read from its last 32 MiB at most
PREP_FILE = "batch-prep.jsonl"
PULLS_FILE = "pulls.json"
SESSION_ID = re.compile(r"^[A-Za-z0-9._-]{8,128}$")
_LOG_NAME = re.compile(r"^batch-(?P<batch>.+?)-(?:m\d+-(?P<member>\d+)|fix-(?P<fix>\d+)|tail|report)\.log$")

TRANSCRIPT_COLUMNS = ["host", "session_id", "ts", "key", "total"]


def sched_dir(host: HostConfig, repo: str) -> Path:
    return host.dossier_home / "sched" / sanitize_slug(repo)


def _unreadable(
    asset: str, path: Path, exc: OSError, host: str | None, repo: str | None, what: str
) -> DataWarning:
    reason = os_error_reason(exc)
    return DataWarning(
        code="unreadable_file",
        asset=asset,
        message=f"{path} {reason}, so it cannot be read; {what}",
        host=host,
        repo=repo,
        path=str(path),
        values={"reason": reason},
    )


def _int_or_none(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ------------------------------------------------------------------------------------------ journal


def read_batch_journal(cfg: ScorecardConfig) -> TableResult:
    """The ``batch:<id>`` lines of every host's ``sched/<slug>/events.jsonl`` (the whole file)."""
    asset = "batch_journal"
    rows: list[dict[str, Any]] = []
    warnings: list[DataWarning] = []
    for host in cfg.hosts:
        for repo in cfg.repo_names:
            path = sched_dir(host, repo) / "events.jsonl"
            if not path.exists():
                continue  # dispatch_events reports a missing journal
            try:
                read = read_jsonl(path, ("ts", "event", "unit", "issue", "kind"), contains=[b'"batch:'])
            except OSError as exc:
                warnings.append(_unreadable(asset, path, exc, host.name, repo, "its batches have no journal"))
                continue
            c = read.columns
            for i, line in enumerate(read.line_nos):
                unit = c["unit"][i]
                if not isinstance(unit, str) or not unit.startswith("batch:") or len(unit) == len("batch:"):
                    continue
                event = c["event"][i]
                rows.append(
                    {
                        "host": host.name,
                        "repo": repo,
                        "line_no": line,
                        "ts": c["ts"][i] if isinstance(c["ts"][i], str) else None,
                        "batch": unit[len("batch:") :],
                        "event": event if isinstance(event, str) else None,
                        "issue": _int_or_none(c["issue"][i]),
                        "kind": c["kind"][i] if isinstance(c["kind"][i], str) else None,
                    }
                )
            warnings += malformed_line_warnings(str(path), read.bad, asset=asset, host=host.name, repo=repo)
    return TableResult(frame=typed_frame(rows, BATCH_JOURNAL), warnings=warnings)


# --------------------------------------------------------------------------------------------- logs


def log_name_parts(name: str) -> tuple[str, int | None] | None:
    """``(batch id, member issue)`` of a batch dispatch log name; None for any other file."""
    m = _LOG_NAME.match(name)
    if m is None:
        return None
    issue = m.group("member") or m.group("fix")
    return m.group("batch"), int(issue) if issue else None


def _tail(path: Path) -> bytes:
    require_regular_file(path)  # a FIFO would block the read
    with path.open("rb") as f:
        size = f.seek(0, 2)
        start = max(0, size - LOG_TAIL_BYTES)
        f.seek(start)
        data = f.read()
    if start:
        cut = data.find(b"\n")
        data = data[cut + 1 :] if cut >= 0 else b""
    return data


def _nan_to_none(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def read_batch_logs(cfg: ScorecardConfig) -> TableResult:
    """One row per batch dispatch log (its last dispatch): model, billable token parts and cost."""
    asset = "batch_logs"
    rows: list[dict[str, Any]] = []
    warnings: list[DataWarning] = []
    for host in cfg.hosts:
        for repo in cfg.repo_names:
            runs = sched_dir(host, repo) / "runs"
            if not runs.is_dir():
                continue
            for path in sorted(runs.iterdir()):
                parts = log_name_parts(path.name)
                if parts is None:
                    continue
                try:
                    slices = parse_log_bytes(_tail(path))
                except OSError as exc:
                    warnings.append(
                        _unreadable(asset, path, exc, host.name, repo, "its tokens are not counted")
                    )
                    continue
                if not slices:
                    continue
                last = slices[-1]
                cmd = _cmd_list(last.cmd) or []
                model = last.models or _cmd_option(cmd, "-m", "--model")
                rows.append(
                    {
                        "host": host.name,
                        "repo": repo,
                        "batch": parts[0],
                        "file": path.name,
                        "issue": parts[1],
                        "model": model,
                        "input_tokens": _nan_to_none(last.input_tokens),
                        "output_tokens": _nan_to_none(last.output_tokens),
                        "cache_creation_tokens": _nan_to_none(last.cache_creation_tokens),
                        "cache_read_tokens": _nan_to_none(last.cache_read_tokens),
                        "cost_usd": _nan_to_none(last.cost_usd),
                    }
                )
    return TableResult(frame=typed_frame(rows, BATCH_LOGS), warnings=warnings)


# --------------------------------------------------------------------------------------------- prep


def _ms(value: object) -> int | None:
    if not isinstance(value, str):
        return None
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        return None
    if ts.tzinfo is None or pd.isna(ts):
        return None
    return int(ts.value // 1_000_000)


def read_prep_records(cfg: ScorecardConfig) -> TableResult:
    """Every host's ``sched/<slug>/batch-prep.jsonl`` records (kept when batch, session and ts are usable)."""
    asset = "batch_prep"
    rows: list[dict[str, Any]] = []
    warnings: list[DataWarning] = []
    for host in cfg.hosts:
        for repo in cfg.repo_names:
            path = sched_dir(host, repo) / PREP_FILE
            if not path.exists():
                continue
            try:
                read = read_jsonl(path, ("ts", "batch", "session_id", "members"))
            except OSError as exc:
                warnings.append(_unreadable(asset, path, exc, host.name, repo, "its prep tokens read N/A"))
                continue
            bad = list(read.bad)
            c = read.columns
            for i, line in enumerate(read.line_nos):
                ts, batch, sid = _ms(c["ts"][i]), c["batch"][i], c["session_id"][i]
                if ts is None or not isinstance(batch, str) or not isinstance(sid, str):
                    bad.append(LineProblem(line, "no usable ts, batch or session_id"))
                    continue
                members = _int_or_none(c["members"][i])
                rows.append(
                    {
                        "host": host.name,
                        "repo": repo,
                        "line_no": line,
                        "ts": ts,
                        "batch": batch,
                        "session_id": sid,
                        "members": members if members and members > 0 else None,
                    }
                )
            warnings += malformed_line_warnings(str(path), bad, asset=asset, host=host.name, repo=repo)
    prep_records = {k: v for k, v in BATCH_PREP.items() if k not in ("from_ms", "prep_tokens")}
    return TableResult(frame=typed_frame(rows, prep_records), warnings=warnings)


def claude_projects(host: HostConfig) -> Path:
    """The host's Claude Code projects folder: configured, else ``.claude/projects`` beside the home."""
    return host.claude_projects or host.dossier_home.parent / ".claude" / "projects"


def _number(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0.0
    return float(value) if math.isfinite(value) and value > 0 else 0.0


def _transcript_rows(host: str, path: Path, session: str, subagent: str | None) -> list[dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    with path.open("rb") as f:
        for raw in f:
            if b'"assistant"' not in raw:
                continue
            try:
                rec = json.loads(raw)
            except ValueError:
                continue
            if not isinstance(rec, dict) or rec.get("type") != "assistant" or rec.get("isApiErrorMessage"):
                continue
            msg = rec.get("message")
            if not isinstance(msg, dict) or not isinstance(msg.get("usage"), dict):
                continue
            if msg.get("model") == "<synthetic>":
                continue
            ts = _ms(rec.get("timestamp"))
            if ts is None:
                continue
            u = msg["usage"]
            parts = [
                _number(u.get(k))
                for k in (
                    "input_tokens",
                    "output_tokens",
                    "cache_read_input_tokens",
                    "cache_creation_input_tokens",
                )
            ]
            if msg.get("id") is not None and rec.get("requestId") is not None:
                key = f"{msg['id']}:{rec['requestId']}"
            else:
                key = f"uuid:{rec.get('uuid')}"
            sid = rec.get("sessionId") if isinstance(rec.get("sessionId"), str) else session
            if subagent is not None:
                sid = f"{session}/{rec.get('agentId') or subagent}"
            old = rows.get(key)
            if old is not None:
                parts = [max(a, b) for a, b in zip(old["parts"], parts, strict=True)]
                ts = old["ts"]
            rows[key] = {"host": host, "session_id": sid, "ts": ts, "key": key, "parts": parts}
    return [{**r, "total": sum(r.pop("parts"))} for r in rows.values()]


def read_prep_transcripts(cfg: ScorecardConfig, sessions: dict[str, set[str]]) -> TableResult:
    """The usage rows of the named sessions' transcripts (subagents included), per host."""
    asset = "batch_prep"
    rows: list[dict[str, Any]] = []
    warnings: list[DataWarning] = []
    for host in cfg.hosts:
        wanted = {s for s in sessions.get(host.name, set()) if SESSION_ID.match(s)}
        root = claude_projects(host)
        if not wanted or not root.is_dir():
            continue
        for project in sorted(p for p in root.iterdir() if p.is_dir()):
            for sid in sorted(wanted):
                files = [(project / f"{sid}.jsonl", None)]
                sub = project / sid / "subagents"
                if sub.is_dir():
                    files += [(p, p.stem.removeprefix("agent-")) for p in sorted(sub.glob("agent-*.jsonl"))]
                for path, agent in files:
                    if not path.is_file():
                        continue
                    try:
                        rows += _transcript_rows(host.name, path, sid, agent)
                    except OSError as exc:
                        warnings.append(
                            _unreadable(
                                asset, path, exc, host.name, None, "its tokens are not counted as prep"
                            )
                        )
    return TableResult(frame=pd.DataFrame(rows, columns=TRANSCRIPT_COLUMNS), warnings=warnings)


# ---------------------------------------------------------------------------------------------- PRs


def _pr_row(repo: str, obj: object) -> dict[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    number = _int_or_none(obj.get("number"))
    head = obj.get("headRefName")
    if number is None or not isinstance(head, str):
        return None
    refs = obj.get("closingIssuesReferences")
    closing = (
        [r["number"] for r in refs or [] if isinstance(r, dict) and _int_or_none(r.get("number")) is not None]
        if isinstance(refs, list)
        else []
    )
    return {
        "repo": repo,
        "number": number,
        "head": head,
        "created_at": obj.get("createdAt") if isinstance(obj.get("createdAt"), str) else None,
        "merged_at": obj.get("mergedAt") if isinstance(obj.get("mergedAt"), str) else None,
        "closing": ",".join(str(n) for n in closing),
    }


def read_batch_prs(cfg: ScorecardConfig) -> TableResult:
    """The merged pull requests of the recorded export (``<owner>/<name>/pulls.json``, the JSON list
    ``gh pr list --json number,headRefName,createdAt,mergedAt,closingIssuesReferences`` prints)."""
    asset = "batch_pull_requests"
    rows: list[dict[str, Any]] = []
    warnings: list[DataWarning] = []
    for repo in cfg.repo_names:
        if cfg.github.source != "recorded":
            warnings.append(
                _prs_unavailable(repo, "the pull-request query of the API source is not implemented")
            )
            continue
        path = cfg.recorded_repo_dir(repo) / PULLS_FILE
        if not path.parent.exists():
            continue  # no export of the repo at all: trail_comments names it
        if not path.exists():
            warnings.append(_prs_unavailable(repo, f"the recorded export has no {_shown(cfg, path)}"))
            continue
        try:
            data = json.loads(read_regular_bytes(path))
        except OSError as exc:
            warnings.append(
                _unreadable(asset, path, exc, None, repo, "no batch of the repo counts as shipped")
            )
            continue
        except ValueError:
            data = None
        if not isinstance(data, list):
            warnings.append(_prs_unavailable(repo, f"{path} is not a JSON list"))
            continue
        bad = []
        for i, obj in enumerate(data, start=1):
            row = _pr_row(repo, obj)
            if row is None:
                bad.append(LineProblem(i, "not a pull request with a number and a head branch"))
            else:
                rows.append(row)
        warnings += malformed_line_warnings(str(path), bad, asset=asset, repo=repo, unit="entry")
    return TableResult(frame=typed_frame(rows, BATCH_PULL_REQUESTS), warnings=warnings)


def _shown(cfg: ScorecardConfig, path: Path) -> str:
    """``path`` relative to the config's folder when it lies inside it (as the other readers show it)."""
    if cfg.config_path is not None:
        try:
            return str(path.relative_to(cfg.config_path.parent))
        except ValueError:
            pass
    return str(path)


def _prs_unavailable(repo: str, why: str) -> DataWarning:
    return DataWarning(
        code="batch_prs_unavailable",
        asset="batch_pull_requests",
        message=f"{repo}: merged batch pull requests unavailable ({why}), so no batch counts as shipped",
        repo=repo,
    )
