"""The minimal batch fixture of docs/batches.md "A worked example" as files: one host's dossier home
(journal, runs/ logs, batch-prep.jsonl), its Claude Code transcripts, the recorded export's
pulls.json, a config naming them, and the trail comments of the two anchors and #300 as a frame."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from scorecard_tests.factories.trails import comments, concat, ms

REPO = "acme/widgets"
SLUG = "acme-widgets"
SID = "11111111-2222-4333-8444-555555555555"
START = "2026-10-01T00:00:00Z"
END = "2026-10-31T00:00:00Z"
SHIPPED = "b-20261002-01"
DISSOLVED = "b-20261003-01"

# input / output / cache creation / cache read, cost
SONNET_SHIPPED = (100, 10_000, 100_000, 1_889_900, 2.0)
HAIKU_TAIL = (50, 1_000, 20_000, 479_950, 0.25)
SONNET_DISSOLVED = (50, 5_000, 50_000, 944_950, 1.0)


def trail_comments() -> pd.DataFrame:
    """The anchors #100 (shipped) and #200 (dissolved), and the full-cycle #300."""
    shipped = comments(
        ms("batch-setup", at="2026-10-02T08:00:00Z", batch=SHIPPED, created="2026-10-02T08:00:01Z"),
        ms("batch-review", members="101,102,103", batch=SHIPPED, created="2026-10-02T09:00:00Z"),
        ms(
            "batch-ship",
            "awaiting-merge",
            batch=SHIPPED,
            pr="110",
            ci_fix_attempts="0",
            created="2026-10-02T10:30:00Z",
        ),
        ms(
            "batch-ship",
            batch=SHIPPED,
            pr="110",
            members="101,102,103",
            ci_fix_attempts="1",
            created="2026-10-02T11:31:00Z",
        ),
        repo=REPO,
        issue=100,
        first_id=1000,
    )
    dissolved = comments(
        ms(
            "batch-setup",
            at="2026-10-03T09:00:00Z",
            batch=DISSOLVED,
            run="r-2",
            created="2026-10-03T09:00:01Z",
        ),
        ms(
            "batch-validate",
            "blocked",
            run="r-2",
            batch=DISSOLVED,
            reason="eviction-threshold",
            dissolved="true",
            requeued="201,202,203",
            created="2026-10-03T10:00:00Z",
        ),
        repo=REPO,
        issue=200,
        first_id=2000,
    )
    full = comments(
        ms("gate", at="2026-10-04T10:00:00Z", run="r-3", created="2026-10-04T10:00:01Z"),
        ms("ship", run="r-3", ci_fix_attempts="2", created="2026-10-04T11:00:00Z"),
        ms("report", at="2026-10-04T11:30:00Z", run="r-3", created="2026-10-04T11:30:01Z"),
        repo=REPO,
        issue=300,
        first_id=3000,
    )
    return concat(shipped, dissolved, full)


def issue_rows() -> pd.DataFrame:
    """The window's scored rows: #300 delivered in 90 min with its runs.jsonl figures; the anchors."""
    base = {"repo": REPO, "delivered": True, "wallClockMinutes": 90.0}
    return pd.DataFrame(
        [
            {
                **base,
                "issue": 300,
                "inputTokens": 100.0,
                "outputTokens": 20_000.0,
                "cacheCreationTokens": 179_900.0,
                "cacheReadTokens": 3_800_000.0,
                "costUsd": 3.0,
            },
            {
                **base,
                "issue": 100,
                "inputTokens": None,
                "outputTokens": None,
                "cacheCreationTokens": None,
                "cacheReadTokens": None,
                "costUsd": None,
            },
        ]
    )


def _lines(path: Path, records: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _log(path: Path, model: str, figures: tuple[float, ...], session: str = "9999aaaa-other") -> None:
    inp, out, cw, cr, cost = figures
    preamble = {
        "type": "sched-dispatch",
        "ts": "2026-10-02T08:10:00.000Z",
        "cmd": ["claude", "-p", "--model", model],
    }
    init = {"type": "system", "subtype": "init", "model": model, "session_id": session}
    result = {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 1000,
        "session_id": session,
        "total_cost_usd": cost,
        "usage": {
            "input_tokens": inp,
            "output_tokens": out,
            "cache_creation_input_tokens": cw,
            "cache_read_input_tokens": cr,
        },
    }
    _lines(path, [preamble, init, result])


def _assistant(msg_id: str, ts: str, usage: dict[str, int], **extra: object) -> dict[str, object]:
    return {
        "type": "assistant",
        "timestamp": ts,
        "requestId": f"req-{msg_id}",
        "sessionId": SID,
        "message": {"id": msg_id, "model": "claude-opus-5", "usage": usage},
        **extra,
    }


PARTITION = "2026-10-26"  # its window: 2026-10-01 .. 2026-11-01 (32 days)


def _recorded_trails(folder: Path) -> None:
    """The trail comments as the recorded export's issues.json and comments.json."""
    frame = trail_comments()
    issues = [
        {
            "number": int(n),
            "state": "closed",
            "title": f"issue {n}",
            "created_at": "2026-10-01T00:00:00Z",
            "updated_at": "2026-10-05T00:00:00Z",
        }
        for n in sorted(set(frame["issue"]))
    ]
    notes = [
        {
            "issue_url": f"https://api.github.com/repos/{REPO}/issues/{int(r.issue)}",
            "id": int(r.comment_id),
            "created_at": r.created_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "updated_at": r.updated_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
            "user": {"login": "fleet-bot"},
            "body": r.body,
        }
        for r in frame.itertuples(index=False)
    ]
    (folder / "issues.json").write_text(json.dumps(issues))
    (folder / "comments.json").write_text(json.dumps(notes))


def write_fixture(root: Path, *, with_runs: bool = True) -> Path:
    """The fixture's files under ``root``; returns the config file (one host ``h1``)."""
    home = root / "h1" / ".dossier"
    sched = home / "sched" / SLUG
    journal = [
        *(
            {"ts": "2026-10-02T08:05:00.000Z", "event": e, "unit": f"batch:{SHIPPED}", "issue": n}
            for n in (101, 102, 103)
            for e in ("spawned", "member-landed")
        ),
        {"ts": "2026-10-03T09:05:00.000Z", "event": "spawned", "unit": f"batch:{DISSOLVED}", "issue": 201},
        {
            "ts": "2026-10-03T09:06:00.000Z",
            "event": "member-evicted",
            "unit": f"batch:{DISSOLVED}",
            "issue": 201,
        },
        {"ts": "2026-10-03T09:07:00.000Z", "event": "spawned", "unit": f"batch:{DISSOLVED}", "issue": 202},
        {
            "ts": "2026-10-03T09:08:00.000Z",
            "event": "unit-failed",
            "unit": f"batch:{DISSOLVED}",
            "issue": 202,
        },
        {"ts": "2026-10-03T09:09:00.000Z", "event": "spawned", "unit": f"batch:{DISSOLVED}", "issue": 203},
        {"ts": "2026-10-03T09:10:00.000Z", "event": "batch-dissolved", "unit": f"batch:{DISSOLVED}"},
        {"ts": "2026-10-04T10:00:00.000Z", "event": "spawned", "unit": "issue:300", "issue": 300},
    ]
    _lines(sched / "events.jsonl", journal)
    (sched / "runs").mkdir(parents=True, exist_ok=True)
    if with_runs:
        for k, n in enumerate((101, 102, 103), start=1):
            _log(sched / "runs" / f"batch-{SHIPPED}-m{k}-{n}.log", "claude-sonnet-5", SONNET_SHIPPED)
        _log(sched / "runs" / f"batch-{SHIPPED}-tail.log", "claude-haiku-4-5-20251001", HAIKU_TAIL)
        for k, n in enumerate((201, 202, 203), start=1):
            _log(sched / "runs" / f"batch-{DISSOLVED}-m{k}-{n}.log", "claude-sonnet-5", SONNET_DISSOLVED)
        _log(
            sched / "runs" / f"batch-{SHIPPED}-gate.log", "claude-sonnet-5", SONNET_SHIPPED
        )  # not a batch log
    _lines(
        sched / "batch-prep.jsonl",
        [
            {"ts": "2026-10-02T06:00:00.000Z", "batch": "b-20261001-09", "session_id": SID, "source": "env"},
            {
                "ts": "2026-10-02T07:55:00.000Z",
                "batch": SHIPPED,
                "session_id": SID,
                "source": "env",
                "members": 3,
            },
        ],
    )
    project = root / "h1" / ".claude" / "projects" / "-home-op-src-widgets"
    _lines(
        project / f"{SID}.jsonl",
        [
            _assistant("msg_1", "2026-10-02T07:00:00.000Z", {"output_tokens": 500}),
            _assistant(
                "msg_1",
                "2026-10-02T07:00:00.500Z",
                {
                    "input_tokens": 10,
                    "output_tokens": 1_990,
                    "cache_creation_input_tokens": 28_000,
                    "cache_read_input_tokens": 270_000,
                },
            ),
            _assistant("msg_3", "2026-10-02T08:10:00.000Z", {"output_tokens": 50_000}),
            {"type": "user", "timestamp": "2026-10-02T07:01:00.000Z", "message": {"content": "assistant"}},
        ],
    )
    _lines(
        project / SID / "subagents" / "agent-a1.jsonl",
        [
            _assistant(
                "msg_2",
                "2026-10-02T07:30:00.000Z",
                {"output_tokens": 1_000, "cache_read_input_tokens": 299_000},
                agentId="a1",
            )
        ],
    )
    pulls = [
        {
            "number": 110,
            "headRefName": f"batch/{SHIPPED}-20261002",
            "createdAt": "2026-10-02T10:30:00Z",
            "mergedAt": "2026-10-02T11:30:00Z",
            "closingIssuesReferences": [{"number": 101}, {"number": 102}, {"number": 103}],
        }
    ]
    gh = root / "github" / "acme" / "widgets"
    gh.mkdir(parents=True, exist_ok=True)
    (gh / "pulls.json").write_text(json.dumps(pulls))
    _recorded_trails(gh)
    _lines(
        home / "runs.jsonl",
        [
            {
                "timestamp": "2026-10-04T11:20:00.000Z",
                "dossier": "sched:cycle",
                "cwd": "/src/widgets",
                "model": "claude-sonnet-5",
                "duration_ms": 600_000,
                "input_tokens": 100,
                "output_tokens": 20_000,
                "cache_creation_tokens": 179_900,
                "cache_read_tokens": 3_800_000,
                "total_cost_usd": 3.0,
                "unit": "issue:300",
            }
        ],
    )
    cfg = root / "scorecard.yaml"
    cfg.write_text(
        "as_of: 2026-11-02\n"
        f"repos:\n  - name: {REPO}\n    checkouts: [/src/widgets]\n"
        "window:\n  days: 32\n"
        "hosts:\n  - name: h1\n    dossier_home: h1/.dossier\n"
        "github:\n  source: recorded\n  recorded_dir: github\n"
        "output_dir: reports\n"
    )
    return cfg
