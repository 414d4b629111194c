"""Reader of Codex CLI rollouts: ``sessions/**/rollout-*.jsonl`` and ``archived_sessions/``
(docs/sessions.md, "Codex").

Rows: one per human turn (``event_msg`` ``user_message``; in files without those events, a
``response_item`` user message that is not injected context) and one per model step: the
assistant-side items (messages, reasoning, tool calls) between two boundaries (a user message, a
tool output, a ``token_count``, a turn start or end). Role per turn from ``collaboration_mode``
(``plan`` -> plan, anything else or absent -> build). Model and effort per turn from
``turn_context``; provider from ``session_meta.model_provider``. Tool status from
``exec_command_end`` / ``patch_apply_end`` when present, else from the output text. Tokens from
``last_token_usage`` (else the growth of ``total_token_usage``), priced with the price table
(always an estimate: Codex records no cost).

Subagent rollouts (``source.subagent``) begin with a replay of the parent's history: every line
before the subagent's own first turn is skipped (counted, not read). Legacy rollouts (a bare header
object, then items without the ``{timestamp, type, payload}`` envelope) are read with the header's
time for items that carry none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from scorecard_assets.config import PriceConfig
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions._common import (
    ROLE_BUILD,
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
    patch_paths,
    price_for,
    text_or_none,
    token_cost,
    token_value,
)
from scorecard_assets.sessions._jsonl_store import read_jsonl_store
from scorecard_assets.sessions._store import StoreRead
from scorecard_assets.sessions.state import StoreState
from scorecard_assets.sessions.warnings import SCHEMA_UNRECOGNISED
from scorecard_assets.sources.tooling import is_abort_text

KIND = "codex"
SOURCE = "sessions: codex"
FALLBACK_MODEL = "gpt-5"
ASSISTANT_ITEMS = frozenset(
    {"message", "reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
)
OUTPUT_ITEMS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
SHELL_NAMES = frozenset({"shell", "exec_command", "shell_command", "local_shell", "container.exec"})
PATCH_NAMES = frozenset({"apply_patch"})
INJECTED_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<INSTRUCTIONS>",
    "<permissions",
)
EXIT_RE = re.compile(r"(?:Process exited with code|Exit code:)\s*(-?\d+)")
PATCH_FAILED_RE = re.compile(r"apply_patch verification failed|Failed to apply patch|patch rejected", re.I)
ROLLOUT_UUID_RE = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
ARCHIVE_DIR = "archived_sessions"
KNOWN_KINDS = frozenset({"session_meta", "turn_context", "event_msg", "response_item", "compacted"})


def rollout_files(root: Path) -> Iterable[Path]:
    """Rollouts under ``root`` and, beside it, the flat ``archived_sessions`` folder."""
    yield from (p for p in root.rglob("rollout-*.jsonl") if p.is_file())
    archive = root.parent / ARCHIVE_DIR
    if archive.is_dir():
        yield from (p for p in archive.glob("rollout-*.jsonl") if p.is_file())


def _argv_command(argv: object) -> str | None:
    if isinstance(argv, str):
        return argv
    if isinstance(argv, list) and argv and all(isinstance(x, str) for x in argv):
        if (
            len(argv) >= 3
            and argv[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh")
            and argv[1] in ("-lc", "-c")
        ):
            return argv[2]
        return " ".join(argv)
    return None


class _File:
    __slots__ = (
        "info",
        "msgs",
        "calls",
        "settled",
        "step",
        "trigger",
        "role",
        "model",
        "effort",
        "cwd",
        "last_total",
        "own_id",
        "subagent",
        "replaying",
        "meta_ts",
        "last_ts",
        "user_events",
        "provider",
    )

    def __init__(self, info: SessionInfo) -> None:
        self.info = info
        self.msgs: list[Msg] = []
        self.calls: dict[str, Tool] = {}
        self.settled: set[str] = set()
        self.step: Msg | None = None
        self.trigger: int | None = None
        self.role = ROLE_BUILD
        self.model: str | None = None
        self.effort: str | None = None
        self.cwd: str | None = None
        self.last_total: dict[str, float] | None = None
        self.own_id: str | None = None
        self.subagent = False
        self.replaying = False
        self.meta_ts: int | None = None
        self.last_ts: int | None = None
        self.user_events = False
        self.provider: str | None = None

    def boundary(self, ts: int) -> None:
        if self.step is not None:
            self.step = None
        self.trigger = ts


def _mode_role(mode: object) -> int:
    return ROLE_PLAN if mode == "plan" else ROLE_BUILD


def _payload_of(record: dict[str, Any]) -> tuple[str | None, Any, bool]:
    """(type, payload, legacy) of a line in either layout."""
    if "payload" in record and isinstance(record.get("type"), str):
        return record["type"], record["payload"], False
    kind = record.get("type")
    if isinstance(kind, str) and (kind in ASSISTANT_ITEMS or kind in OUTPUT_ITEMS):
        return "response_item", record, True
    if "id" in record and "timestamp" in record and "type" not in record:
        return "session_meta", record, True
    return None, None, True


def parse_file(
    path: Path,
    data: bytes,
    stats: LineStats,
    problems: Problems,
    prices: Mapping[str, PriceConfig] | None = None,
) -> list[tuple[SessionInfo, list[Msg]]]:
    match = ROLLOUT_UUID_RE.search(path.stem)
    info = SessionInfo(session_id=match.group(1) if match else path.stem, source=str(path), store=KIND)
    f = _File(info)
    f.user_events = b'"user_message"' in data
    known = 0
    for line, record in json_lines(data, stats, problems):
        kind, payload, legacy = _payload_of(record)
        known += kind in KNOWN_KINDS
        if kind is None:
            stats.ignored += 1
            continue
        if not isinstance(payload, dict):
            problems.bad_field(line, "payload", payload, "an object", "the line was skipped")
            stats.malformed += 1
            continue
        ptype = payload.get("type")
        if ptype is not None and not isinstance(ptype, str):  # a list or an object: a malformed line
            problems.bad_field(line, "payload.type", ptype, "a string", "the line was skipped")
            stats.malformed += 1
            continue
        raw_ts = record.get("timestamp")
        ts = fast_iso_ms(raw_ts) if raw_ts is not None else None
        if ts is None:
            if raw_ts is None and legacy and f.last_ts is not None:
                ts = f.last_ts  # legacy items carry no time: the last one seen
            elif not (raw_ts is None and kind == "session_meta"):
                problems.bad_field(line, "timestamp", raw_ts, "an ISO time", "the line was skipped")
                stats.malformed += 1
                continue
        if kind == "session_meta":
            _meta(f, payload, ts)
            if ts is not None:
                f.last_ts = ts
            stats.used += 1
            continue
        assert ts is not None
        own_turn = kind == "turn_context" or (kind == "event_msg" and payload.get("type") == "task_started")
        if f.replaying and own_turn and (f.meta_ts is None or ts >= f.meta_ts):
            f.replaying = False
        if f.replaying:
            stats.skipped += 1
            continue
        f.last_ts = ts
        if kind == "turn_context":
            _turn_context(f, payload, ts)
            stats.used += 1
        elif kind == "event_msg":
            if _event(f, payload, ts, line, problems, prices or {}):
                stats.used += 1
            else:
                stats.ignored += 1
        elif kind == "response_item":
            if _item(f, payload, ts, line, problems):
                stats.used += 1
            else:
                stats.ignored += 1
        else:
            stats.ignored += 1
    if known == 0 and stats.lines > stats.blank + stats.malformed:
        problems.add(
            SCHEMA_UNRECOGNISED,
            None,
            f"{render_value(str(path))}: none of its {stats.lines} lines is a known Codex record;"
            " nothing was read",
        )
    for m in f.msgs:
        if m.kind == "assistant":
            _price(m, prices or {})
            if m.end_ms is not None and not math.isnan(m.latency_ms):
                m.latency_ms = float(m.end_ms - m.latency_ms)
            else:
                m.latency_ms = math.nan
    return [(info, f.msgs)] if f.msgs else []


def _meta(f: _File, payload: dict[str, Any], ts: int | None) -> None:
    sid = payload.get("id")
    if f.own_id is None:
        if isinstance(sid, str) and sid:
            f.own_id = sid
            f.info.session_id = sid
        f.meta_ts = fast_iso_ms(payload.get("timestamp")) or ts
        f.cwd = text_or_none(payload.get("cwd"))
        f.info.directory = f.cwd
        f.info.cli_version = text_or_none(payload.get("cli_version"))
        f.info.agent = None
        f.provider = text_or_none(payload.get("model_provider"))
        source = payload.get("source")
        spawn = source.get("subagent") if isinstance(source, dict) else None
        spawn = spawn.get("thread_spawn") if isinstance(spawn, dict) else None
        if isinstance(spawn, dict) and isinstance(spawn.get("parent_thread_id"), str):
            f.info.parent_id = spawn["parent_thread_id"]
            f.subagent = True
            f.replaying = True
        elif isinstance(source, dict) and "subagent" in source:
            f.subagent = True
            f.replaying = True
    elif isinstance(sid, str) and sid != f.own_id and f.subagent:
        f.replaying = True


def _turn_context(f: _File, payload: dict[str, Any], ts: int) -> None:
    f.boundary(ts)
    if isinstance(payload.get("cwd"), str) and payload["cwd"]:
        f.cwd = payload["cwd"]
        if f.info.directory is None:
            f.info.directory = f.cwd
    mode = payload.get("collaboration_mode")
    settings = mode.get("settings") if isinstance(mode, dict) else None
    f.role = _mode_role(mode.get("mode") if isinstance(mode, dict) else None)
    model = payload.get("model")
    if not text_or_none(model) and isinstance(settings, dict):
        model = settings.get("model")
    f.model = text_or_none(model)
    effort = payload.get("effort")
    if not text_or_none(effort) and isinstance(settings, dict):
        effort = settings.get("reasoning_effort")
    f.effort = text_or_none(effort)


def _open_step(f: _File, ts: int, line: int) -> Msg:
    if f.step is None:
        m = Msg(kind="assistant", t_ms=ts, line=line)
        m.role = f.role
        m.agent = "plan" if f.role == ROLE_PLAN else "build"
        m.model = canon_model(f.model) if f.model else None
        m.provider = f.provider
        m.effort = f.effort
        m.latency_ms = float(f.trigger) if f.trigger is not None else math.nan
        f.msgs.append(m)
        f.step = m
    f.step.end_ms = ts
    return f.step


def _usage_numbers(usage: dict[str, Any], line: int, problems: Problems, where: str) -> dict[str, float]:
    return {
        k: token_value(usage.get(k), line, f"{where}.{k}", problems)
        for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")
    }


def _event(
    f: _File, p: dict[str, Any], ts: int, line: int, problems: Problems, prices: Mapping[str, PriceConfig]
) -> bool:
    kind = p.get("type")
    if kind == "user_message":
        f.boundary(ts)
        m = Msg(kind="user", t_ms=ts, line=line)
        m.role = f.role
        f.msgs.append(m)
        return True
    if kind == "task_started":
        f.boundary(ts)
        if "collaboration_mode_kind" in p:
            f.role = _mode_role(p.get("collaboration_mode_kind"))
        return True
    if kind in ("task_complete", "turn_complete"):
        f.boundary(ts)
        return True
    if kind == "turn_aborted":
        for cid, tool in f.calls.items():
            if cid not in f.settled and tool.status == "pending":
                tool.status, tool.error = "abort", "Tool execution aborted (turn interrupted)"
                f.settled.add(cid)
        f.boundary(ts)
        return True
    if kind == "token_count":
        info = p.get("info")
        if info is None:
            return True
        if not isinstance(info, dict):
            problems.bad_field(line, "payload.info", info, "an object")
            return True
        last = info.get("last_token_usage")
        total = info.get("total_token_usage")
        numbers: dict[str, float] | None = None
        if isinstance(total, dict):
            tot = _usage_numbers(total, line, problems, "total_token_usage")
            if f.last_total is not None and all(
                (tot[k] == f.last_total[k]) or (math.isnan(tot[k]) and math.isnan(f.last_total[k]))
                for k in tot
            ):
                f.boundary(ts)
                return True  # a repeated total: nothing new was used
            if isinstance(last, dict):
                numbers = _usage_numbers(last, line, problems, "last_token_usage")
            elif f.last_total is not None:
                numbers = {k: tot[k] - (0.0 if math.isnan(f.last_total[k]) else f.last_total[k]) for k in tot}
            else:
                numbers = tot
            f.last_total = tot
        elif isinstance(last, dict):
            numbers = _usage_numbers(last, line, problems, "last_token_usage")
        if numbers is not None:
            target = f.step
            if target is None:
                target = next((m for m in reversed(f.msgs) if m.kind == "assistant"), None)
            if target is not None:
                _add_tokens(target, numbers)
                if target is f.step:
                    target.end_ms = ts
        f.boundary(ts)
        return True
    if kind == "exec_command_end":
        cid = p.get("call_id")
        tool = f.calls.get(cid) if isinstance(cid, str) else None
        if tool is not None:
            code = p.get("exit_code")
            tool.status = "ok" if code == 0 else "error"
            tool.error = "" if code == 0 else f"exit code {code}"
            f.settled.add(cid)
        f.boundary(ts)
        return True
    if kind == "patch_apply_end":
        cid = p.get("call_id")
        tool = f.calls.get(cid) if isinstance(cid, str) else None
        if tool is not None:
            ok = p.get("success") is True
            tool.status = "ok" if ok else classify_status("error", str(p.get("stderr") or "patch failed"))
            tool.error = "" if ok else str(p.get("stderr") or "patch failed")[:300]
            f.settled.add(cid)
        f.boundary(ts)
        return True
    return kind in ("agent_message", "agent_reasoning", "exec_command_begin", "patch_apply_begin")


def _add_tokens(m: Msg, numbers: dict[str, float]) -> None:
    def add(a: float, b: float) -> float:
        if math.isnan(b):
            return a
        return b if math.isnan(a) else a + b

    total_in = numbers["input_tokens"]
    cached = numbers["cached_input_tokens"]
    uncached = total_in - (0.0 if math.isnan(cached) else cached) if not math.isnan(total_in) else math.nan
    m.input_tokens = add(m.input_tokens, max(uncached, 0.0) if not math.isnan(uncached) else uncached)
    m.cache_read_tokens = add(m.cache_read_tokens, cached)
    m.output_tokens = add(m.output_tokens, numbers["output_tokens"])
    m.reasoning_tokens = add(m.reasoning_tokens, numbers["reasoning_output_tokens"])


def _arguments(raw: object) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {}
        return value if isinstance(value, dict) else {}
    return {}


def _item(f: _File, p: dict[str, Any], ts: int, line: int, problems: Problems) -> bool:
    kind = p.get("type")
    if kind == "message":
        role = p.get("role")
        if role == "assistant":
            _open_step(f, ts, line)
            return True
        if role == "user" and not f.user_events and _human_content(p.get("content")):
            f.boundary(ts)
            m = Msg(kind="user", t_ms=ts, line=line)
            m.role = f.role
            f.msgs.append(m)
            return True
        return False
    if kind == "reasoning" or kind == "web_search_call":
        m = _open_step(f, ts, line)
        if kind == "web_search_call":
            m.tools.append(Tool(name="web_search", status="ok"))
        return True
    if kind in ("function_call", "custom_tool_call", "local_shell_call"):
        m = _open_step(f, ts, line)
        name = (
            p.get("name")
            if isinstance(p.get("name"), str)
            else ("local_shell" if kind == "local_shell_call" else "(unnamed)")
        )
        cid = p.get("call_id") if isinstance(p.get("call_id"), str) else p.get("id")
        command: str | None = None
        paths: list[str] = []
        if kind == "custom_tool_call":
            if name in PATCH_NAMES:
                paths = patch_paths(p.get("input"))
        elif kind == "local_shell_call":
            action = p.get("action")
            command = _argv_command(action.get("command")) if isinstance(action, dict) else None
        else:
            args = _arguments(p.get("arguments"))
            if name in PATCH_NAMES:
                paths = patch_paths(args.get("input") or args.get("patch"))
            elif name in SHELL_NAMES:
                argv = args.get("command") if "command" in args else args.get("cmd")
                command = _argv_command(argv)
                if command is not None and command.startswith("apply_patch"):
                    name, paths = "apply_patch", patch_paths(command)
                    command = None
                elif isinstance(argv, list) and argv[:1] == ["apply_patch"] and len(argv) > 1:
                    name, paths, command = "apply_patch", patch_paths(argv[1]), None
        tool = make_tool(name, "pending", "", paths, f.cwd)
        if command is not None:
            tool.command = command
        m.tools.append(tool)
        if isinstance(cid, str):
            f.calls[cid] = tool
        return True
    if kind in OUTPUT_ITEMS:
        cid = p.get("call_id")
        tool = f.calls.get(cid) if isinstance(cid, str) else None
        if tool is not None and cid not in f.settled:
            _settle(tool, p.get("output"))
            f.settled.add(cid)
        f.boundary(ts)
        return True
    return False


def _output_text(output: object) -> tuple[str, int | None]:
    if isinstance(output, dict):
        text = output.get("content") if isinstance(output.get("content"), str) else ""
        return text, None
    if not isinstance(output, str):
        return "", None
    if output.startswith("{"):
        try:
            value = orjson.loads(output)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            meta = value.get("metadata")
            code = meta.get("exit_code") if isinstance(meta, dict) else None
            text = value.get("output") if isinstance(value.get("output"), str) else ""
            return text, code if isinstance(code, int) and not isinstance(code, bool) else None
    match = EXIT_RE.search(output[:200])
    return output, int(match.group(1)) if match else None


def _settle(tool: Tool, output: object) -> None:
    text, code = _output_text(output)
    if tool.name in PATCH_NAMES:
        failed = bool(PATCH_FAILED_RE.search(text[:500])) or (code is not None and code != 0)
    else:
        failed = code is not None and code != 0
    if failed:
        tool.status = classify_status("error", text[:500])
        tool.error = text[:300]
    else:
        tool.status = classify_status("error", text[:200]) if _looks_aborted(text) else "ok"
        if tool.status != "ok":
            tool.error = text[:300]


def _looks_aborted(text: str) -> bool:
    return text.startswith(("aborted", "Tool execution")) and is_abort_text(text[:200])


def _human_content(content: object) -> bool:
    texts: list[str] = []
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [c.get("text", "") for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)]
    return any(t.strip() and not t.lstrip().startswith(INJECTED_PREFIXES) for t in texts)


def _price(m: Msg, prices: Mapping[str, PriceConfig]) -> None:
    if math.isnan(m.input_tokens) and math.isnan(m.output_tokens) and math.isnan(m.cache_read_tokens):
        return
    price = price_for(m.model or FALLBACK_MODEL, prices)
    if price is None:
        return
    m.cost_usd = token_cost(
        price,
        input_tokens=m.input_tokens,
        output_tokens=m.output_tokens,
        cache_read_tokens=m.cache_read_tokens,
        cache_write_tokens=math.nan,
    )
    m.cost_is_estimate = True


def read_codex(
    sessions: Path,
    *,
    state: StoreState | None = None,
    prices: Mapping[str, PriceConfig] | None = None,
    configured: bool = True,
) -> StoreRead:
    """The facts of every new or changed rollout under one Codex ``sessions`` folder (and its archive)."""
    table = dict(prices or {})
    return read_jsonl_store(
        kind=KIND,
        source=SOURCE,
        root=sessions,
        files=rollout_files,
        parse=lambda path, data, stats, problems: parse_file(path, data, stats, problems, table),
        state=state,
        configured=configured,
    )
