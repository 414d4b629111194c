"""Inputs for the readers of untrusted files, written where the readers look: agent logs, runs.jsonl,
events.jsonl, recorded trail exports, cycle imports and config files; and the hypothesis strategies
of the fuzz targets (scorecard_tests/fuzz/), which mutate well-formed lines of each kind."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from scorecard_assets.config import HostConfig, RepoConfig, ScorecardConfig

REPO = "acme/api"
SLUG = "acme-api"
CLAUDE_CMD = ["claude", "-p", "--output-format", "stream-json", "--verbose", "--model", "sonnet"]
OPENCODE_CMD = ["opencode", "run", "--format", "json", "-m", "zai/glm-5"]
CODEX_CMD = ["codex", "exec", "--json", "-m", "gpt-5"]


def jline(obj: Any) -> str:
    """Compact JSON, the way the agent CLIs and the scheduler write it."""
    return json.dumps(obj, separators=(",", ":"))


def lines_bytes(*records: Any, trailing_newline: bool = True) -> bytes:
    """JSON lines of ``records`` (a ``str`` is written as it is)."""
    text = "\n".join(r if isinstance(r, str) else jline(r) for r in records)
    return (text + ("\n" if trailing_newline and records else "")).encode("utf-8", "surrogatepass")


def preamble(cmd: list[str] | str | None = None, ts: str = "2026-09-01T10:00:00.000Z") -> dict[str, Any]:
    return {"type": "sched-dispatch", "ts": ts, "cmd": CLAUDE_CMD if cmd is None else cmd}


def claude_result(cost: float = 1.25, tokens: int = 100) -> dict[str, Any]:
    usage = {
        "input_tokens": tokens,
        "output_tokens": tokens // 2,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": tokens * 3,
    }
    return {
        "type": "result",
        "subtype": "success",
        "duration_ms": 900,
        "total_cost_usd": cost,
        "usage": usage,
    }


def config(tmp_path: Path, hosts: list[str] = ("h1",), repos: list[str] = (REPO,)) -> ScorecardConfig:  # type: ignore[assignment]
    return ScorecardConfig(
        repos=[RepoConfig(name=r) for r in repos],
        hosts=[HostConfig(name=h, dossier_home=tmp_path / h / ".dossier") for h in hosts],
    )


def write_log(tmp_path: Path, data: bytes, *, host: str = "h1", name: str = "issue-7.log") -> Path:
    path = tmp_path / host / ".dossier" / "sched" / SLUG / "runs" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def write_runs(tmp_path: Path, data: bytes, *, host: str = "h1") -> Path:
    path = tmp_path / host / ".dossier" / "runs.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def write_events(tmp_path: Path, data: bytes, *, host: str = "h1") -> Path:
    path = tmp_path / host / ".dossier" / "sched" / SLUG / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def physical_lines(data: bytes) -> int:
    """Lines as the readers number them: split on ``\\n``, no extra empty line after a final newline."""
    if not data:
        return 0
    return data.count(b"\n") + (0 if data.endswith(b"\n") else 1)


# --------------------------------------------------------------------------------------------------
# hypothesis strategies

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)

# Well-formed records of every agent-log shape, mutated below.
AGENT_RECORDS: list[dict[str, Any]] = [
    {"type": "system", "subtype": "init", "claude_code_version": "2.0.1", "model": "claude-sonnet-5"},
    {
        "type": "assistant",
        "parent_tool_use_id": None,
        "message": {
            "id": "m1",
            "model": "claude-sonnet-5",
            "usage": {"input_tokens": 3, "output_tokens": 4},
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}],
        },
    },
    {
        "type": "user",
        "message": {
            "content": [{"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "boom"}]
        },
    },
    claude_result(),
    {"type": "result", "modelUsage": {"claude-opus-5": {"inputTokens": 5, "costUSD": 0.5}}},
    {"type": "step_start", "timestamp": 1787999439396, "part": {"type": "step-start"}},
    {
        "type": "tool_use",
        "timestamp": 1787999439397,
        "part": {"tool": "edit", "callID": "c1", "state": {"status": "error", "error": "x"}},
    },
    {
        "type": "step_finish",
        "timestamp": 1787999439536,
        "part": {"tokens": {"input": 5, "output": 1, "cache": {"write": 0, "read": 0}}, "cost": 0.03},
    },
    {"type": "turn.started"},
    {
        "type": "item.completed",
        "item": {"id": "i1", "type": "command_execution", "status": "failed", "command": "make test"},
    },
    {"type": "turn.completed", "usage": {"input_tokens": 9, "cached_input_tokens": 2, "output_tokens": 1}},
    preamble(),
    preamble(OPENCODE_CMD),
    preamble(CODEX_CMD, ts="now"),
    preamble("/opt/bin/wrapper --x", ts="0001-01-01T00:00:00Z"),
]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every key path inside a JSON value (dict keys and list indices)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*prefix, key))
            found.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append((*prefix, index))
            found.extend(_paths(item, (*prefix, index)))
    return found


def _replaced(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    copy: Any = dict(value) if isinstance(value, dict) else list(value)
    copy[path[0]] = _replaced(copy[path[0]], path[1:], new)
    return copy


@st.composite
def mutated_record(draw: st.DrawFn, records: list[dict[str, Any]]) -> dict[str, Any]:
    """One of ``records`` with one value (at any depth) replaced by any JSON value, often of another
    type (a list where a string was, a dict where a status was)."""
    record = draw(st.sampled_from(records))
    paths = _paths(record)
    if not paths or draw(st.booleans()):
        return record
    return _replaced(record, draw(st.sampled_from(paths)), draw(json_values))


@st.composite
def mutated_line(draw: st.DrawFn, records: list[dict[str, Any]]) -> bytes:
    """A JSON line of a mutated record, or that line damaged: cut short, a byte flipped, a lone
    surrogate escape (in the first key, or at the start of any string value), invalid UTF-8, a blank
    line or plain text."""
    text = jline(draw(mutated_record(records))).encode()
    how = draw(
        st.sampled_from(["keep", "keep", "keep", "cut", "flip", "surrogate", "lone", "utf8", "blank", "text"])
    )
    if how == "lone":
        values = [i + 2 for i in range(len(text) - 1) if text.startswith(b':"', i)]
        if values:
            at = draw(st.sampled_from(values))
            escape = draw(st.sampled_from([b"\\ud800", b"\\udfff", b"\\udbff\\udbff"]))
            return text[:at] + escape + text[at:]
        return text
    if how == "cut" and len(text) > 1:
        return text[: draw(st.integers(1, len(text) - 1))]
    if how == "flip":
        at = draw(st.integers(0, len(text) - 1))
        return text[:at] + bytes([draw(st.integers(0x20, 0x7E))]) + text[at + 1 :]
    if how == "surrogate":
        return text.replace(b'"', b'"\\ud800', 1) if text.count(b'"') >= 2 else text
    if how == "utf8":
        at = draw(st.integers(0, len(text)))
        return text[:at] + b"\xff" + text[at:]
    if how == "blank":
        return draw(st.sampled_from([b"", b"  ", b"\t"]))
    if how == "text":
        return draw(st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=20)).encode(
            "utf-8", "surrogatepass"
        )
    return text


def mutated_file(records: list[dict[str, Any]], max_lines: int = 12) -> st.SearchStrategy[bytes]:
    """A file of mutated lines, with or without a final newline."""
    return st.builds(
        lambda lines, newline: b"\n".join(lines) + (b"\n" if newline and lines else b""),
        st.lists(mutated_line(records), max_size=max_lines),
        st.booleans(),
    )


RUNS_RECORDS: list[dict[str, Any]] = [
    {
        "timestamp": "2026-09-01T15:10:02.114Z",
        "dossier": "sched:cycle",
        "llm": "claude",
        "cwd": "/home/u/projects/api",
        "duration_ms": 600000,
        "spawned_command": "claude -p --output-format stream-json --model sonnet",
        "model": "claude-sonnet-5",
        "input_tokens": 262,
        "output_tokens": 48049,
        "cache_creation_tokens": 244886,
        "cache_read_tokens": 13378921,
        "total_cost_usd": 4.173,
        "unit": "issue:540",
        "tier": "mid",
    },
    {"timestamp": "today", "unit": "issue:3", "total_cost_usd": 1.0},
    {"timestamp": "9999-12-31T23:59:59Z", "unit": "issue:4", "model": "glm-5"},
]

EVENT_RECORDS: list[dict[str, Any]] = [
    {
        "ts": "2026-09-03T06:40:16.780Z",
        "event": "spawned",
        "unit": "issue:7",
        "issue": 7,
        "tier": "mid",
        "slot": 3,
        "cmd": "claude -p --output-format json --model haiku",
        "log": ".../runs/issue-7.log",
    },
    {"ts": "2026-09-03T06:41:00Z", "event": "stalled", "unit": "issue:7", "issue": 7, "detail": "x"},
    {"ts": "now", "event": "fence-written", "unit": "issue:7", "issue": 7, "detail": "r-7-1a2b gen=1"},
    {"ts": "2026-09-03T07:00:00Z", "event": "verify-incomplete", "issue": 7, "detail": "unverified-exit"},
]


def large_runs_journal(lines: int, *, seed: int = 7) -> bytes:
    """A ``runs.jsonl`` of ``lines`` lines shaped like the scheduler's, every 997th line damaged (not
    JSON, a list as the model, a lone surrogate escape, a time that is not one, a negative cost), for
    the bounded-memory tests (docs/reliability.md "Streaming")."""
    rng = random.Random(seed)
    models = ("claude-sonnet-5", "claude-opus-5", "glm-5.3", "haiku")
    out: list[bytes] = []
    for i in range(lines):
        issue = rng.randint(1, 5000)
        record: dict[str, Any] = {
            "timestamp": f"2026-09-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1000:03d}Z",
            "dossier": "sched:cycle",
            "cwd": f"/home/u/projects/api/wt-{issue}",
            "duration_ms": rng.randint(1000, 3_600_000),
            "spawned_command": "claude -p --output-format stream-json --model sonnet",
            "model": models[i % len(models)],
            "input_tokens": rng.randint(0, 10_000),
            "output_tokens": rng.randint(0, 100_000),
            "cache_read_tokens": rng.randint(0, 20_000_000),
            "total_cost_usd": round(rng.random() * 10, 4),
            "unit": f"issue:{issue}",
            "tier": ("mechanical", "mid", "strong")[i % 3],
        }
        damage = (i // 997) % 5 if i % 997 == 0 else -1
        if damage == 1:
            record["model"] = ["x"]
        elif damage == 3:
            record["timestamp"] = "now"
        elif damage == 4:
            record["total_cost_usd"] = -1
        line = jline(record).encode()
        if damage == 0:
            line = line[:-1]
        elif damage == 2:
            line = line.replace(b'"sched:cycle"', b'"sched:\\ud800"')
        out.append(line)
    return b"\n".join(out) + b"\n"
