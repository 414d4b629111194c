"""Reader of Claude Code's session files: ``projects/**/*.jsonl`` (docs/sessions.md, "Claude Code").

Rows: one per human turn (a user line with text, not a tool result, not a meta or command line) and
one per model response (assistant lines sharing ``(message.id, requestId)`` are one response; the
``<synthetic>`` model is skipped). Tool results on later user lines settle the status of the tool
call they answer.

Plan vs build: a human turn with ``permissionMode: "plan"`` (or a ``permission-mode`` line) enters
plan mode, an approved ``ExitPlanMode`` leaves it, a rejected one stays; in files that never record
a permission mode, the responses of a turn up to an ``ExitPlanMode`` call are plan. Everything
else is build.

Step latency: from the line that triggered the request (the human turn or tool result before it) to
the last line of the response. Cost: ``costUSD`` on the line when present, else tokens x the price
table (``cost_is_estimate``). Subagent files (``<session>/subagents/agent-<id>.jsonl`` and older
``agent-<id>.jsonl``) and in-file sidechains are child sessions ``<session>/agent-<id>``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from scorecard_assets.config import PriceConfig
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions._common import (
    ROLE_BUILD,
    ROLE_NONE,
    ROLE_PLAN,
    LineStats,
    Msg,
    Problems,
    SessionInfo,
    Tool,
    canon_model,
    classify_status,
    fast_iso_ms,
    json_lines,
    make_tool,
    price_for,
    text_or_none,
    token_cost,
    token_value,
)
from scorecard_assets.sessions._jsonl_store import read_jsonl_store
from scorecard_assets.sessions._store import StoreRead
from scorecard_assets.sessions.state import StoreState
from scorecard_assets.sessions.warnings import SCHEMA_UNRECOGNISED

KIND = "claude-code"
SOURCE = "sessions: claude code"
PROVIDER = "anthropic"
SYNTHETIC_MODEL = "<synthetic>"
PLAN_EXIT_TOOL = "ExitPlanMode"
APPROVED_RE = re.compile(r"approved your plan|User has approved", re.IGNORECASE)
# Denials and rejections are a human stopping the call (an abort), not a tool failure.
DENIAL_RE = re.compile(
    r"Permission to use .{0,80} has been denied|requested permissions to use .{0,80} you haven't granted"
    r"|The user doesn't want to (?:proceed|take this action)"
    r"|\[Request interrupted by user|tool use was rejected",
    re.IGNORECASE | re.DOTALL,
)
NOT_HUMAN_PREFIXES = (
    "<command-name>",
    "<command-message>",
    "<local-command-",
    "[Request interrupted by user",
)
SHELL_NAMES = frozenset({"Bash"})
# Record types of the format we know (read or deliberately ignored); a file with none is not recognised.
KNOWN_TYPES = frozenset(
    {
        "user",
        "assistant",
        "permission-mode",
        "summary",
        "system",
        "file-history-snapshot",
        "attachment",
        "queue-operation",
        "ai-title",
        "progress",
    }
)
_ERROR_TAG = re.compile(r"</?tool_use_error>")


def session_files(root: Path) -> Iterable[Path]:
    return (p for p in root.rglob("*.jsonl") if p.is_file())


def _result_text(block: dict[str, Any], record: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)
        )
    else:
        text = ""
    if not text and isinstance(record.get("toolUseResult"), str):
        text = record["toolUseResult"]
    return _ERROR_TAG.sub("", text).strip()


def _human_text(content: object) -> bool:
    """True when a user line's content is a human turn (text or image, not only tool results)."""
    if isinstance(content, str):
        return bool(content.strip()) and not content.lstrip().startswith(NOT_HUMAN_PREFIXES)
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict):
                continue
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                text = block["text"].lstrip()
                if text and not text.startswith(NOT_HUMAN_PREFIXES):
                    return True
            elif kind == "image":
                return True
    return False


class _Thread:
    """One session (or subagent) of a file while it is read."""

    __slots__ = (
        "info",
        "msgs",
        "pending",
        "exits",
        "responses",
        "plan",
        "saw_mode",
        "effort",
        "trigger",
        "turn_start",
        "last_role",
        "usage",
    )

    def __init__(self, info: SessionInfo) -> None:
        self.info = info
        self.msgs: list[Msg] = []
        self.pending: dict[str, Tool] = {}
        self.exits: set[str] = set()
        self.responses: dict[str, Msg] = {}
        self.plan = False
        self.saw_mode = False
        self.effort: str | None = None
        self.trigger: int | None = None
        self.turn_start = 0
        self.last_role = ROLE_NONE
        self.usage: dict[int, dict[str, Any]] = {}

    def mode_role(self) -> int:
        return ROLE_PLAN if self.plan else ROLE_BUILD


def _thread_key(record: dict[str, Any], path: Path) -> tuple[str, str | None]:
    sid = record.get("sessionId")
    sid = sid if isinstance(sid, str) and sid else path.stem
    agent = record.get("agentId")
    stem_agent = path.stem[len("agent-") :] if path.stem.startswith("agent-") else None
    if isinstance(agent, str) and agent and (record.get("isSidechain") is True or stem_agent):
        return sid, agent
    if stem_agent:
        return sid, stem_agent
    if record.get("isSidechain") is True:
        return sid, "sidechain"
    return sid, None


def _tool_use(block: dict[str, Any], directory: str | None) -> Tool:
    name = block.get("name") if isinstance(block.get("name"), str) else "(unnamed)"
    inp = block.get("input") if isinstance(block.get("input"), dict) else {}
    paths = [p for p in (inp.get("file_path"), inp.get("notebook_path")) if isinstance(p, str) and p]
    tool = make_tool(name, "pending", "", paths, directory)
    if name in SHELL_NAMES and isinstance(inp.get("command"), str):
        tool.command = inp["command"]
    return tool


def parse_file(
    path: Path,
    data: bytes,
    stats: LineStats,
    problems: Problems,
    prices: Mapping[str, PriceConfig] | None = None,
) -> list[tuple[SessionInfo, list[Msg]]]:
    threads: dict[tuple[str, str | None], _Thread] = {}
    order: list[tuple[str, str | None]] = []
    source = str(path)
    known = 0
    for line, record in json_lines(data, stats, problems):
        kind = record.get("type")
        if kind is not None and not isinstance(kind, str):  # a list or an object: a malformed line
            problems.bad_field(line, "type", kind, "a string", "the line was skipped")
            stats.malformed += 1
            continue
        known += kind in KNOWN_TYPES
        if kind not in ("user", "assistant", "permission-mode"):
            stats.ignored += 1
            continue
        key = _thread_key(record, path)
        thread = threads.get(key)
        if thread is None:
            sid, agent = key
            info = SessionInfo(
                session_id=sid if agent is None else f"{sid}/agent-{agent}",
                source=source,
                store=KIND,
                parent_id=None if agent is None else sid,
            )
            thread = threads[key] = _Thread(info)
            order.append(key)
        if thread.info.directory is None and isinstance(record.get("cwd"), str):
            thread.info.directory = record["cwd"] or None
        if thread.info.cli_version is None and isinstance(record.get("version"), str):
            thread.info.cli_version = record["version"] or None
        if kind == "permission-mode":
            mode = record.get("permissionMode")
            if isinstance(mode, str):
                thread.saw_mode = True
                thread.plan = mode == "plan"
                stats.used += 1
            else:
                problems.bad_field(line, "permissionMode", mode, "a mode name")
                stats.malformed += 1
            continue
        ts = fast_iso_ms(record.get("timestamp"))
        if ts is None:
            problems.bad_field(
                line, "timestamp", record.get("timestamp"), "an ISO time", "the line was skipped"
            )
            stats.malformed += 1
            continue
        message = record.get("message")
        if not isinstance(message, dict):
            problems.bad_field(line, "message", message, "an object", "the line was skipped")
            stats.malformed += 1
            continue
        if kind == "assistant":
            if _assistant(thread, record, message, ts, line, problems):
                stats.used += 1
            else:
                stats.skipped += 1
        else:
            _user(thread, record, message, ts, line, problems)
            stats.used += 1
    if known == 0 and stats.lines > stats.blank + stats.malformed:
        problems.add(
            SCHEMA_UNRECOGNISED,
            None,
            f"{render_value(source)}: none of its {stats.lines} lines is a known Claude Code record;"
            " nothing was read",
        )
    out: list[tuple[SessionInfo, list[Msg]]] = []
    for key in order:
        thread = threads[key]
        for m in thread.msgs:
            _finish_cost(m, thread, prices or {}, problems)
            if m.kind == "assistant" and m.end_ms is not None:
                start = m.latency_ms if not math.isnan(m.latency_ms) else m.t_ms
                m.latency_ms = float(m.end_ms - start)
        if thread.msgs:
            out.append((thread.info, thread.msgs))
    return out


def _assistant(
    thread: _Thread, record: dict[str, Any], message: dict[str, Any], ts: int, line: int, problems: Problems
) -> bool:
    model = message.get("model")
    if model == SYNTHETIC_MODEL:
        return False
    mid = message.get("id")
    rid = record.get("requestId")
    key = f"a:{mid}:{rid}" if isinstance(mid, str) else f"a:line{line}"
    m = thread.responses.get(key)
    if m is None:
        m = Msg(kind="assistant", t_ms=ts, line=line)
        m.dedupe_key = key if isinstance(mid, str) else None
        m.role = thread.mode_role()
        m.agent = "plan" if m.role == ROLE_PLAN else "build"
        m.model = canon_model(model) if text_or_none(model) else None
        m.provider = PROVIDER
        m.effort = thread.effort
        # latency_ms holds the trigger time until the file is finished
        m.latency_ms = float(thread.trigger) if thread.trigger is not None else math.nan
        thread.responses[key] = m
        thread.msgs.append(m)
    m.end_ms = max(ts, m.end_ms or ts)
    usage = message.get("usage")
    if usage is not None:
        if isinstance(usage, dict):
            thread.usage[id(m)] = {"usage": usage, "line": line}
        else:
            problems.bad_field(line, "message.usage", usage, "an object")
    cost = record.get("costUSD")
    if cost is not None:
        if (
            isinstance(cost, int | float)
            and not isinstance(cost, bool)
            and math.isfinite(cost)
            and 0 <= cost < 1e6
        ):
            if math.isnan(m.cost_usd):
                m.cost_usd = float(cost)
        else:
            problems.bad_field(line, "costUSD", cost, "a cost in USD")
    content = message.get("content")
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool = _tool_use(block, thread.info.directory)
                m.tools.append(tool)
                tid = block.get("id")
                if isinstance(tid, str):
                    thread.pending[tid] = tool
                    if tool.name == PLAN_EXIT_TOOL:
                        thread.exits.add(tid)
                if tool.name == PLAN_EXIT_TOOL and not thread.saw_mode:
                    for earlier in thread.msgs[thread.turn_start :]:
                        if earlier.kind == "assistant":
                            earlier.role, earlier.agent = ROLE_PLAN, "plan"
    elif content is not None and not isinstance(content, str):
        problems.bad_field(line, "message.content", content, "a list of blocks")
    thread.last_role = m.role
    return True


def _user(
    thread: _Thread, record: dict[str, Any], message: dict[str, Any], ts: int, line: int, problems: Problems
) -> None:
    content = message.get("content")
    thread.trigger = ts
    if isinstance(content, list):
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            tid = block.get("tool_use_id")
            tool = thread.pending.pop(tid, None) if isinstance(tid, str) else None
            if tool is None:
                continue
            text = _result_text(block, record)
            failed = block.get("is_error") is True
            if failed or DENIAL_RE.search(text):
                tool.status = "abort" if DENIAL_RE.search(text) else classify_status("error", text)
                tool.error = text[:300]
            else:
                tool.status = "ok"
            if tid in thread.exits:
                thread.exits.discard(tid)
                if not failed and APPROVED_RE.search(text):
                    thread.plan = False
    elif content is not None and not isinstance(content, str):
        problems.bad_field(line, "message.content", content, "text or a list of blocks")
        return
    if record.get("isMeta") is True or not _human_text(content):
        return
    mode = record.get("permissionMode")
    if isinstance(mode, str):
        thread.saw_mode = True
        thread.plan = mode == "plan"
    meta = record.get("thinkingMetadata")
    if isinstance(meta, dict) and isinstance(meta.get("level"), str):
        thread.effort = meta["level"] or None
    m = Msg(kind="user", t_ms=ts, line=line)
    m.role = thread.mode_role() if thread.saw_mode else ROLE_NONE
    uuid = record.get("uuid")
    m.dedupe_key = f"u:{uuid}" if isinstance(uuid, str) and uuid else None
    thread.turn_start = len(thread.msgs)
    thread.msgs.append(m)


def _finish_cost(m: Msg, thread: _Thread, prices: Mapping[str, PriceConfig], problems: Problems) -> None:
    held = thread.usage.pop(id(m), None)
    if held is None:
        return
    usage, line = held["usage"], held["line"]
    m.input_tokens = token_value(usage.get("input_tokens"), line, "usage.input_tokens", problems)
    m.output_tokens = token_value(usage.get("output_tokens"), line, "usage.output_tokens", problems)
    m.cache_write_tokens = token_value(
        usage.get("cache_creation_input_tokens"), line, "usage.cache_creation_input_tokens", problems
    )
    m.cache_read_tokens = token_value(
        usage.get("cache_read_input_tokens"), line, "usage.cache_read_input_tokens", problems
    )
    if not math.isnan(m.cost_usd):
        return
    price = price_for(m.model, prices)
    if price is not None:
        m.cost_usd = token_cost(
            price,
            input_tokens=m.input_tokens,
            output_tokens=m.output_tokens,
            cache_read_tokens=m.cache_read_tokens,
            cache_write_tokens=m.cache_write_tokens,
        )
        m.cost_is_estimate = True


def read_claude_code(
    projects: Path,
    *,
    state: StoreState | None = None,
    prices: Mapping[str, PriceConfig] | None = None,
    configured: bool = True,
) -> StoreRead:
    """The facts of every new or changed session file under one Claude Code ``projects`` folder."""
    table = dict(prices or {})
    return read_jsonl_store(
        kind=KIND,
        source=SOURCE,
        root=projects,
        files=session_files,
        parse=lambda path, data, stats, problems: parse_file(path, data, stats, problems, table),
        state=state,
        configured=configured,
    )
