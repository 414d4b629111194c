"""Writes a dispatch's log slice the way each agent CLI prints it (docs/sources.md "Agent logs").

Every slice starts with the scheduler's preamble ``{"type":"sched-dispatch","ts":...,"cmd":[...]}``;
then Claude Code ``stream-json`` (system init, assistant turns with ``tool_use``, user
``tool_result``s, a final ``result``), Claude Code ``json`` (one result object), opencode
``--format json`` (step_start / text / tool_use / step_finish with millisecond timestamps) or Codex
``exec --json`` (thread / turn / item events). Tool outputs are slices of one pre-built corpus, so
large logs cost no per-call text generation.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from typing import Any

from scorecard_assets.sample_fleet._catalog import MODELS
from scorecard_assets.sample_fleet._model import Dispatch, ToolCall, Turn, dumps, iso_millis
from scorecard_assets.sample_fleet._script import claude_totals, opencode_step_cost, reasoning_tokens, script

CLAUDE_TOOL = {"read": "Read", "grep": "Grep", "edit": "Edit", "write": "Write"}
OPENCODE_TOOL = {"read": "read", "grep": "grep", "edit": "edit", "write": "write"}
# A human stopping a call, in each CLI's words (Claude's text matches its interrupt wording).
CLAUDE_ABORT = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected; nothing was changed."
)
OPENCODE_ABORT = "Tool execution aborted"
CLAUDE_EDIT_ERROR = "<tool_use_error>String to replace not found in file.</tool_use_error>"
OPENCODE_EDIT_ERROR = "Error: oldString not found in content"
ID_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789"
# The out-of-range usage value one Claude result carries in the sample profile.
OVERFLOW_KEY = "cacheReadInputTokens"
OVERFLOW_TEXT = "1e400"


def _build_corpus() -> str:
    """About 300 kB of numbered code-like lines that tool outputs are cut from."""
    rng = random.Random("sample-fleet-corpus")
    words = (
        "request", "response", "session", "token", "cache", "retry", "limit", "handler",
        "export", "record", "field", "value", "config", "client", "server", "queue",
        "worker", "batch", "window", "index", "entry", "status", "error", "result",
    )  # fmt: skip
    lines: list[str] = []
    for i in range(1, 6001):
        indent = "    " * rng.randint(0, 3)
        a, b, c = rng.choice(words), rng.choice(words), rng.choice(words)
        shape = rng.randint(0, 5)
        if shape == 0:
            code = f"def {a}_{b}({c}: str, *, {a}: int = {rng.randint(0, 99)}) -> dict[str, object]:"
        elif shape == 1:
            code = f'{a}_{b} = {c}.get("{a}", {rng.randint(0, 9999)})  # {b} {c}'
        elif shape == 2:
            code = f"if {a} is None or {b}.{c} > {rng.randint(1, 500)}:"
        elif shape == 3:
            code = f'raise ValueError(f"{a} {b} failed: {{{c}!r}}")'
        elif shape == 4:
            code = f"PASSED tests/test_{a}.py::test_{b}_{c} [{rng.randint(1, 99)}%]"
        else:
            code = f"return {{'{a}': {b}, '{c}': {a}_{b}}}"
        lines.append(f"{i:>6}\t{indent}{code}")
    return "\n".join(lines)


CORPUS = _build_corpus()


def text_of(rng: random.Random, n: int) -> str:
    """``n`` characters of the corpus from a random offset."""
    n = max(16, min(n, len(CORPUS) - 1))
    start = rng.randrange(0, len(CORPUS) - n)
    return CORPUS[start : start + n]


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _id(rng: random.Random, prefix: str) -> str:
    return prefix + "".join(rng.choices(ID_ALPHABET, k=22))


def render_slice(d: Dispatch, rng: random.Random, is_last_in_file: bool) -> str:
    """The slice text: the scheduler's preamble line, then the agent's own output.

    A slice marked ``truncate_tail`` (a killed agent, or one still writing) loses the second half of
    its last line; inside a file the next preamble still starts on a new line.
    """
    preamble = {"type": "sched-dispatch", "ts": iso_millis(d.start_ms), "cmd": d.cmd.split(" ")}
    turns = script(d)
    lines = [dumps(preamble)]
    if d.fmt == "claude-stream":
        lines.extend(_claude_stream(d, turns, rng))
    elif d.fmt == "claude-json":
        if not d.killed and d.end_ms is not None:
            lines.append(_result_line(d, turns, rng))
    elif d.fmt == "opencode":
        lines.extend(_opencode(d, turns, rng))
    else:
        lines.extend(_codex(turns, rng))
    if d.truncate_tail and len(lines) > 1:
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
        return "\n".join(lines) + ("" if is_last_in_file else "\n")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------- Claude Code
def _claude_result(d: Dispatch, turns: list[Turn], rng: random.Random) -> dict[str, Any]:
    res = claude_totals(d, turns)
    inp, out, cache_write, cache_read = res["main"]
    assert d.end_ms is not None
    wall = d.end_ms - d.start_ms
    ok = d.end_subtype == "success"
    return {
        "type": "result",
        "subtype": d.end_subtype,
        "is_error": not ok,
        "duration_ms": max(1000, wall - rng.randint(500, 4000)),
        "duration_api_ms": int(wall * rng.uniform(0.55, 0.85)),
        "num_turns": max(1, len(turns)),
        "result": "Done: milestones posted." if ok else "Stopped: maximum number of turns reached.",
        "session_id": _uuid(rng),
        "total_cost_usd": res["total_cost_usd"],
        "usage": {
            "input_tokens": inp,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
            "output_tokens": out,
            "server_tool_use": {"web_search_requests": 0},
            "service_tier": "standard",
        },
        "modelUsage": res["model_usage"],
        "permission_denials": [],
        "uuid": _uuid(rng),
    }


def _result_line(d: Dispatch, turns: list[Turn], rng: random.Random) -> str:
    """The result record as one line; with ``overflow_usage`` the main model's ``modelUsage`` cache-read
    count is written as ``1e400``: valid JSON, but beyond any float (the json module cannot write it)."""
    record = _claude_result(d, turns, rng)
    line = dumps(record)
    if d.overflow_usage:
        entry = record["modelUsage"][d.log_model]
        written = f'"{OVERFLOW_KEY}":{entry[OVERFLOW_KEY]}'
        assert written in line
        line = line.replace(written, f'"{OVERFLOW_KEY}":{OVERFLOW_TEXT}', 1)
    return line


def _claude_input(c: ToolCall, rng: random.Random) -> dict[str, Any]:
    if c.kind == "read":
        return {"file_path": c.arg}
    if c.kind == "edit":
        old = text_of(rng, 24 + c.out_len // 20)
        return {"file_path": c.arg, "old_string": old, "new_string": old + "\n    # guard added"}
    if c.kind == "write":
        return {"file_path": c.arg, "content": text_of(rng, 240)}
    if c.kind == "grep":
        pattern = c.arg.split("'")[1] if "'" in c.arg else c.arg
        return {"pattern": pattern, "path": ".", "output_mode": "content"}
    return {"command": c.arg, "description": "run " + c.arg.split()[0]}


def _claude_output(c: ToolCall, rng: random.Random) -> tuple[str, bool]:
    """(tool_result content, is_error)."""
    if c.status == "abort":
        return CLAUDE_ABORT, True
    if c.status == "error":
        return CLAUDE_EDIT_ERROR, True
    if c.kind == "edit":
        head = f"The file {c.arg} has been updated. Here's the result of running `cat -n` on a snippet:\n"
        return head + text_of(rng, c.out_len), False
    if c.kind == "write":
        return f"File created successfully at: {c.arg}", False
    if c.kind == "verify":
        return text_of(
            rng, c.out_len
        ) + f"\n{rng.randint(3, 400)} passed in {rng.uniform(0.4, 60):.2f}s", False
    return text_of(rng, c.out_len), False


def _claude_stream(d: Dispatch, turns: list[Turn], rng: random.Random) -> Iterator[str]:
    session = _uuid(rng)
    init = {
        "type": "system",
        "subtype": "init",
        "cwd": d.cwd,
        "session_id": session,
        "tools": ["Bash", "Edit", "Glob", "Grep", "MultiEdit", "Read", "TodoWrite", "Write"],
        "mcp_servers": [],
        "model": d.log_model,
        "permissionMode": "bypassPermissions",
        "apiKeySource": "none",
        "claude_code_version": MODELS[d.model_key].hversion,
        "output_style": "default",
        "uuid": _uuid(rng),
    }
    yield dumps(init)
    for t in turns:
        content: list[dict[str, Any]] = [{"type": "text", "text": t.text}] if t.text else []
        ids = [_id(rng, "toolu_01") for _ in t.tools]
        for tid, c in zip(ids, t.tools, strict=True):
            name = CLAUDE_TOOL.get(c.kind, "Bash")
            content.append({"type": "tool_use", "id": tid, "name": name, "input": _claude_input(c, rng)})
        inp, out, cache_write, cache_read = t.usage
        usage = {
            "input_tokens": inp,
            "cache_creation_input_tokens": cache_write,
            "cache_read_input_tokens": cache_read,
            "output_tokens": out,
            "service_tier": "standard",
        }
        message = {
            "id": _id(rng, "msg_01"),
            "type": "message",
            "role": "assistant",
            "model": d.log_model,
            "content": content,
            "stop_reason": "tool_use" if t.tools else "end_turn",
            "stop_sequence": None,
            "usage": usage,
        }
        yield dumps(
            {
                "type": "assistant",
                "message": message,
                "parent_tool_use_id": None,
                "session_id": session,
                "uuid": _uuid(rng),
            }
        )
        if t.tools:
            results = []
            for tid, c in zip(ids, t.tools, strict=True):
                body, is_error = _claude_output(c, rng)
                results.append(
                    {"tool_use_id": tid, "type": "tool_result", "content": body, "is_error": is_error}
                )
            message = {"role": "user", "content": results}
            yield dumps(
                {
                    "type": "user",
                    "message": message,
                    "parent_tool_use_id": None,
                    "session_id": session,
                    "uuid": _uuid(rng),
                }
            )
    if not d.killed and d.end_ms is not None:
        yield _result_line(d, turns, rng)


# ---------------------------------------------------------------------------------------------- opencode
def _opencode_input(c: ToolCall, rng: random.Random) -> dict[str, Any]:
    if c.kind == "read":
        return {"filePath": c.arg}
    if c.kind == "edit":
        old = text_of(rng, 24 + c.out_len // 20)
        return {"filePath": c.arg, "oldString": old, "newString": old + "\n\t// guard added"}
    if c.kind == "write":
        return {"filePath": c.arg, "content": text_of(rng, 240)}
    if c.kind == "grep":
        return {"pattern": c.arg, "path": "."}
    return {"command": c.arg, "description": "Runs " + c.arg.split()[0]}


def _opencode_state(c: ToolCall, rng: random.Random) -> dict[str, Any]:
    state: dict[str, Any] = {
        "status": "completed" if c.status == "ok" else "error",
        "input": _opencode_input(c, rng),
    }
    if c.status == "ok":
        state["output"] = text_of(rng, c.out_len)
        state["title"] = c.arg.rsplit("/", 1)[-1] if c.kind in ("read", "edit", "write") else c.arg
        state["metadata"] = {} if c.kind in OPENCODE_TOOL else {"exit": 0}
    else:
        state["error"] = OPENCODE_ABORT if c.status == "abort" else OPENCODE_EDIT_ERROR
    state["time"] = {"start": c.t0, "end": c.t1}
    return state


def _opencode(d: Dispatch, turns: list[Turn], rng: random.Random) -> Iterator[str]:
    session = "ses_" + _id(rng, "")
    for t in turns:
        msg = "msg_" + _id(rng, "")

        def part(kind: str, msg: str = msg, **fields: Any) -> dict[str, Any]:
            return {"id": _id(rng, "prt_"), "sessionID": session, "messageID": msg, "type": kind, **fields}

        yield dumps(
            {"type": "step_start", "timestamp": t.t0, "sessionID": session, "part": part("step-start")}
        )
        if t.text:
            text = part("text", text=t.text, time={"start": t.t0 + 1, "end": t.t0 + 5})
            yield dumps({"type": "text", "timestamp": t.t0 + 5, "sessionID": session, "part": text})
        for c in t.tools:
            tool = part(
                "tool",
                callID=_id(rng, "call_"),
                tool=OPENCODE_TOOL.get(c.kind, "bash"),
                state=_opencode_state(c, rng),
            )
            yield dumps({"type": "tool_use", "timestamp": c.t1, "sessionID": session, "part": tool})
        inp, out, cache_write, cache_read = t.usage
        tokens = {
            "input": inp,
            "output": out,
            "reasoning": reasoning_tokens(d, t),
            "cache": {"write": cache_write, "read": cache_read},
        }
        finish = part(
            "step-finish",
            reason="tool-calls" if t.tools else "stop",
            tokens=tokens,
            cost=opencode_step_cost(d, t),
        )
        finished = max([t.t1, *(c.t1 + 3 for c in t.tools)])
        yield dumps({"type": "step_finish", "timestamp": finished, "sessionID": session, "part": finish})


# ---------------------------------------------------------------------------------------------- Codex
def _codex(turns: list[Turn], rng: random.Random) -> Iterator[str]:
    yield dumps({"type": "thread.started", "thread_id": _uuid(rng)})
    n = 0
    for t in turns:
        yield '{"type":"turn.started"}'
        if t.text:
            yield dumps(
                {
                    "type": "item.completed",
                    "item": {"id": f"item_{n}", "type": "reasoning", "text": "**Planning the next step**"},
                }
            )
            n += 1
        for c in t.tools:
            item_id = f"item_{n}"
            n += 1
            if c.kind in ("edit", "write"):
                change = {"path": c.arg, "kind": "add" if c.kind == "write" else "update"}
                status = "completed" if c.status == "ok" else "failed"
                item = {"id": item_id, "type": "file_change", "changes": [change], "status": status}
                yield dumps({"type": "item.completed", "item": item})
                continue
            cmd = f"bash -lc 'sed -n 1,200p {c.arg}'" if c.kind == "read" else f"bash -lc '{c.arg}'"
            running = {
                "id": item_id,
                "type": "command_execution",
                "command": cmd,
                "aggregated_output": "",
                "exit_code": None,
                "status": "in_progress",
            }
            yield dumps({"type": "item.started", "item": running})
            done = running | {
                "aggregated_output": text_of(rng, c.out_len),
                "exit_code": 0,
                "status": "completed",
            }
            yield dumps({"type": "item.completed", "item": done})
        if t.text and not t.tools:
            yield dumps(
                {
                    "type": "item.completed",
                    "item": {"id": f"item_{n}", "type": "agent_message", "text": t.text},
                }
            )
            n += 1
        inp, out, _, cache_read = t.usage
        usage = {"input_tokens": inp + cache_read, "cached_input_tokens": cache_read, "output_tokens": out}
        yield dumps({"type": "turn.completed", "usage": usage})
