"""The in-memory fleet: issues, milestones, dispatches, events and telemetry, before rendering.

Times are integer milliseconds since the Unix epoch (UTC) so that arithmetic is exact and fast;
the renderers turn them into the formats each source uses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scorecard_assets.sample_fleet._catalog import Spelling

RUNSTATE_MARKER = "<!-- runstate:v1 -->"


def iso_seconds(ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SSZ`` (GitHub timestamps and milestone ``at=``)."""
    return datetime.fromtimestamp(ms // 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_millis(ms: int) -> str:
    """``YYYY-MM-DDTHH:MM:SS.mmmZ`` (scheduler journal, runs.jsonl, dispatch preambles)."""
    base = datetime.fromtimestamp(ms // 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{ms % 1000:03d}Z"


def dumps(obj: Any) -> str:
    """One JSON line as the fleet's tools write it: compact separators, non-ASCII kept."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Milestone:
    """One runstate comment. ``at_ms`` is the writer's clock; ``posted_ms`` the server's creation time.

    ``lines`` are the key=value pairs after the header, in order. ``at_text`` replaces the ``at=``
    value as written (an unusable value, or a writer clock that disagrees with ``at_ms``).
    """

    phase: str
    status: str
    run: str
    at_ms: int
    posted_ms: int
    lines: list[tuple[str, str]] = field(default_factory=list)
    at_text: str | None = None
    one_liner: bool = False  # pairs without spaces go on the header line

    def key(self, name: str) -> str | None:
        return next((v for k, v in self.lines if k == name), None)

    def drop_key(self, name: str) -> None:
        self.lines = [(k, v) for k, v in self.lines if k != name]

    def set_key(self, name: str, value: str) -> None:
        """Replace the value of ``name`` in place, or append the pair."""
        for i, (k, _) in enumerate(self.lines):
            if k == name:
                self.lines[i] = (k, value)
                return
        self.lines.append((name, value))

    def body(self) -> str:
        """The comment text: the marker, the header line, then one pair per line (docs/sources.md
        "Runstate grammar")."""
        at = iso_seconds(self.at_ms) if self.at_text is None else self.at_text
        head = f"phase={self.phase} status={self.status} run={self.run} at={at}"
        lines = self.lines
        if self.one_liner:
            head = " ".join([head, *(f"{k}={v}" for k, v in lines if " " not in v)])
            lines = [(k, v) for k, v in lines if " " in v]
        return "\n".join([RUNSTATE_MARKER, head, *(f"{k}={v}" for k, v in lines)])


@dataclass
class Note:
    """A human (non-runstate) comment on an issue or pull request."""

    author: tuple[str, int, str]
    body: str
    posted_ms: int
    edited_ms: int | None = None


@dataclass
class ToolCall:
    """One tool call an agent made. ``kind`` is CLI-neutral; the log renderer names it per CLI."""

    kind: str  # read | grep | edit | write | bash | verify | post | pr
    arg: str  # file path or shell command
    status: str  # ok | error | abort
    out_len: int
    t0: int
    t1: int


@dataclass
class Turn:
    """One assistant step: optional text, tool calls, and the tokens the step used."""

    t0: int
    t1: int
    text: str
    tools: list[ToolCall]
    usage: tuple[int, int, int, int]  # uncached input, output, cache write, cache read


@dataclass
class Segment:
    """The work between two milestones of a dispatch; turns are synthesised from it."""

    phase: str
    t0: int
    t1: int
    files: int = 0  # files edited (implement)
    fixes: int = 0  # review findings fixed (review)
    edit_err: float = 0.0  # probability that one edit fails
    verify_last: bool = True  # a verify command runs after the segment's last edit
    ends_with_post: bool = True  # the segment ends with the agent posting a milestone


@dataclass
class Dispatch:
    """One agent process the scheduler spawned, with its log slice and its runs.jsonl row."""

    host: str
    repo: str
    issue: int
    unit: str
    role: str  # classify | work | report | batch
    model_key: str
    spelling: Spelling
    tier: str
    agent: str  # claude | opencode | codex
    fmt: str  # claude-stream | claude-json | opencode | codex
    cmd: str
    start_ms: int
    log_name: str
    cwd: str
    slot: int
    end_ms: int | None = None
    segments: list[Segment] = field(default_factory=list)
    lang: str = "python"  # the repo's language (file names, verify commands)
    output_scale: float = 1.0  # tool output sizes (the committed sample keeps its logs small)
    script_seed: int = 0  # the turns are re-synthesised from this seed when the log is written
    turn_count: int = 0
    usage: dict[str, Any] = field(default_factory=dict)  # what the scheduler records in runs.jsonl
    killed: bool = False  # stopped by the scheduler: no result record
    truncate_tail: bool = False  # the slice's last line is cut (killed, or still writing at the cutoff)
    abort: bool = False  # one tool call was stopped by a human
    overflow_usage: bool = False  # its Claude result writes one token count as 1e400 (out of range)
    step_s: float = 8.0  # median seconds per assistant step
    end_subtype: str = "success"  # Claude result subtype (error_max_turns for a continued build)
    log_model: str = ""  # the model id the agent log names
    side_model: bool = False  # a second (helper) model in Claude's modelUsage
    telemetry: dict[str, Any] | None = None  # its runs.jsonl row (anomalies may edit it)
    spawn_event: dict[str, Any] | None = None  # its spawned journal line (anomalies may edit it)


@dataclass
class Event:
    """One scheduler journal line: written on ``host`` into the ``repo``'s events.jsonl."""

    ts: int
    host: str
    repo: str
    fields: dict[str, Any]


@dataclass
class TeleRow:
    """One runs.jsonl line on ``host`` (``fields`` without the timestamp)."""

    ts: int
    host: str
    fields: dict[str, Any]


@dataclass
class Issue:
    """A GitHub issue with its trail (milestones) and human notes."""

    repo: str
    number: int
    title: str
    body: str
    created_ms: int
    labels: list[str]
    milestones: list[Milestone] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    closed_ms: int | None = None
    reopened: bool = False
    pr: int | None = None
    kind: str = "single"  # single | pairing | classify-only | batch-anchor | batch-member


@dataclass
class PullRequest:
    """A pull request as the issues endpoint lists it, with its own (skipped) comments."""

    repo: str
    number: int
    title: str
    created_ms: int
    merged_ms: int | None
    notes: list[Note] = field(default_factory=list)
    echoes: list[Milestone] = field(default_factory=list)


@dataclass
class Fleet:
    """Everything the renderers write."""

    size: str
    profile: str
    seed: int
    issues: list[Issue] = field(default_factory=list)
    prs: list[PullRequest] = field(default_factory=list)
    dispatches: list[Dispatch] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    tele: list[TeleRow] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
