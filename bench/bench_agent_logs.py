"""Benchmark of the agent-log reader: a read with an empty cache, then a read of unchanged logs.

``run(fleet_dir, cache_dir)`` reads the fleet described by ``<fleet_dir>/scorecard.yaml`` twice and
returns one row per read: ``{reader, files, bytes, seconds, mb_per_s, peak_mb}``. ``peak_mb`` is the
process's peak resident set size after that read (a high-water mark: it never decreases). The
bytes are those of the log files; the OS page cache is warm in both reads, so the cold row measures
parsing, not disk speed.

``python -m bench.bench_agent_logs [--mb 300] [--keep DIR]`` synthesises realistic Claude Code
stream-json logs (assistant turns with Edit/Read/Bash tool calls, large tool results, occasional
errors and interrupts, one result record per dispatch slice) in a temporary directory, runs the
benchmark and prints the rows, the cold throughput and the second-read ratio.
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson
import yaml

from scorecard_assets.config import load_config
from scorecard_assets.sources.agent_logs import read_agent_logs
from scorecard_assets.sources.agent_logs.cache import CACHE_FILE_NAME

MB = 1024 * 1024
_REPOS = ("acme/api", "acme/web")
_HOSTS = ("host-a", "host-b")
_MODELS = ("claude-sonnet-5", "claude-opus-5", "claude-haiku-4-5")


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _log_files(fleet_dir: Path) -> list[Path]:
    return sorted(p for p in fleet_dir.rglob("*.log") if p.parent.name == "runs" and p.is_file())


def _timed_read(label: str, fleet_dir: Path, cache_dir: Path | None, files: int, size: int) -> dict[str, Any]:
    cfg = load_config(fleet_dir / "scorecard.yaml", check_paths=False)
    started = time.perf_counter()
    result = read_agent_logs(cfg, cache_dir)
    seconds = time.perf_counter() - started
    if result.frame.empty:
        raise RuntimeError(f"benchmark fleet {fleet_dir} yielded no agent-log rows")
    return {
        "reader": label,
        "files": files,
        "bytes": size,
        "seconds": round(seconds, 4),
        "mb_per_s": round(size / MB / seconds, 1) if seconds > 0 else float("inf"),
        "peak_mb": round(_peak_mb(), 1),
    }


def run(fleet_dir: Path, cache_dir: Path) -> list[dict[str, Any]]:
    """Time a read with an empty cache and a second read of the unchanged logs."""
    files = _log_files(fleet_dir)
    size = sum(p.stat().st_size for p in files)
    (cache_dir / CACHE_FILE_NAME).unlink(missing_ok=True)
    cold = _timed_read("agent_logs cold (empty cache)", fleet_dir, cache_dir, len(files), size)
    warm = _timed_read("agent_logs unchanged (cached)", fleet_dir, cache_dir, len(files), size)
    return [cold, warm]


# --------------------------------------------------------------------------------------------------
# Synthetic fleet


class _Text:
    """Pre-built code-like text; slices of it make tool inputs and outputs without per-call cost."""

    def __init__(self, rng: random.Random) -> None:
        words = ["def", "return", "self", "value", "config", "result", "if", "else", "for", "in", "None"]
        lines = []
        for i in range(4000):
            body = " ".join(rng.choice(words) for _ in range(rng.randint(3, 12)))
            lines.append(f'    {body}  # line {i} "quoted" \t tab → ünïcode')
        self.text = "\n".join(lines)

    def take(self, rng: random.Random, size: int) -> str:
        start = rng.randrange(0, max(1, len(self.text) - size))
        return self.text[start : start + size]


def _assistant(message_id: str, model: str, content: list[dict[str, Any]]) -> dict[str, Any]:
    usage = {
        "input_tokens": 4,
        "output_tokens": 120,
        "cache_creation_input_tokens": 900,
        "cache_read_input_tokens": 30000,
    }
    message = {"id": message_id, "type": "message", "role": "assistant", "model": model, "content": content}
    message["stop_reason"] = None
    message["usage"] = usage
    return {"type": "assistant", "message": message, "parent_tool_use_id": None, "session_id": "s-1"}


def _tool_result(tool_id: str, content: str, is_error: bool) -> dict[str, Any]:
    item = {"tool_use_id": tool_id, "type": "tool_result", "content": content, "is_error": is_error}
    return {"type": "user", "message": {"role": "user", "content": [item]}, "session_id": "s-1"}


def _tool_turn(rng: random.Random, text: _Text, turn: int, model: str) -> list[dict[str, Any]]:
    tool_id = f"toolu_{turn:06d}"
    kind = rng.random()
    if kind < 0.35:
        call = {"name": "Read", "input": {"file_path": f"src/module_{turn % 40}.py"}}
        output = text.take(rng, rng.randint(8_000, 60_000))
    elif kind < 0.65:
        old = text.take(rng, rng.randint(200, 2_000))
        call = {
            "name": "Edit",
            "input": {"file_path": f"src/m{turn}.py", "old_string": old, "new_string": old[::-1]},
        }
        output = "The file has been updated."
    else:
        command = rng.choice(["pytest -q", "ls -la src", "npm run build", "git status", "ruff check ."])
        call = {"name": "Bash", "input": {"command": command, "description": "run"}}
        output = text.take(rng, rng.randint(1_000, 30_000))
    is_error = rng.random() < 0.03
    if is_error:
        output = rng.choice(
            ["[Request interrupted by user for tool use]", "Error: String to replace not found"]
        )
    thinking = {"type": "text", "text": text.take(rng, rng.randint(100, 800))}
    return [
        _assistant(f"msg_{turn:06d}", model, [thinking]),
        _assistant(f"msg_{turn:06d}", model, [{"type": "tool_use", "id": tool_id, **call}]),
        _tool_result(tool_id, output, is_error),
    ]


def _result(rng: random.Random, model: str, turns: int) -> dict[str, Any]:
    cost = round(rng.uniform(0.5, 12.0), 4)
    usage = {"inputTokens": 300 + turns, "outputTokens": 150 * turns, "cacheCreationInputTokens": 900 * turns}
    usage.update({"cacheReadInputTokens": 30000 * turns, "costUSD": cost})
    snake = {"input_tokens": 300, "output_tokens": 150 * turns, "cache_read_input_tokens": 30000 * turns}
    return {
        "type": "result",
        "subtype": "success",
        "is_error": False,
        "duration_ms": 1000 * turns,
        "num_turns": turns,
        "result": "done",
        "total_cost_usd": cost,
        "usage": snake,
        "modelUsage": {model: usage},
    }


def _slice_lines(rng: random.Random, text: _Text, day: int, model: str, turns: int) -> list[bytes]:
    cmd = ["claude", "-p", "--output-format", "stream-json", "--verbose", "--model", model.split("-")[1]]
    preamble = {"type": "sched-dispatch", "ts": f"2026-09-{day:02d}T10:00:00.000Z", "cmd": cmd}
    init = {"type": "system", "subtype": "init", "claude_code_version": "2.1.0", "model": model}
    init["tools"] = [f"Tool{i}" for i in range(40)]
    records: list[dict[str, Any]] = [preamble, init]
    for turn in range(turns):
        records.extend(_tool_turn(rng, text, turn, model))
    records.append(_result(rng, model, turns))
    return [orjson.dumps(r) + b"\n" for r in records]


def synthesise_fleet(fleet_dir: Path, target_mb: float, seed: int = 7) -> int:
    """Write ~``target_mb`` MB of Claude stream-json logs and a ``scorecard.yaml``; returns bytes written."""
    rng = random.Random(seed)
    text = _Text(rng)
    target = int(target_mb * MB)
    written = 0
    issue = 100
    homes = {host: fleet_dir / host / "dossier" for host in _HOSTS}
    while written < target:
        host = _HOSTS[issue % len(_HOSTS)]
        repo = _REPOS[(issue // 2) % len(_REPOS)]
        runs_dir = homes[host] / "sched" / repo.replace("/", "-") / "runs"
        runs_dir.mkdir(parents=True, exist_ok=True)
        with open(runs_dir / f"issue-{issue}.log", "wb") as fh:
            for k in range(rng.randint(1, 3)):
                model = rng.choice(_MODELS)
                for line in _slice_lines(rng, text, 1 + k, model, rng.randint(20, 90)):
                    fh.write(line)
                    written += len(line)
        issue += 1
    config = {
        "repos": [{"name": r} for r in _REPOS],
        "hosts": [{"name": h, "dossier_home": str(home)} for h, home in homes.items()],
        "github": {"source": "recorded", "recorded_dir": "github"},
    }
    (fleet_dir / "scorecard.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=300.0, help="size of the synthetic logs (MB)")
    parser.add_argument("--keep", type=Path, default=None, help="write the fleet here and keep it")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-agent-logs-"))
    try:
        fleet_dir, cache_dir = work / "fleet", work / "cache"
        fleet_dir.mkdir(parents=True, exist_ok=True)
        if not (fleet_dir / "scorecard.yaml").exists():
            started = time.perf_counter()
            size = synthesise_fleet(fleet_dir, args.mb)
            print(f"synthesised {size / MB:.1f} MB in {time.perf_counter() - started:.1f} s", file=sys.stderr)
        rows = run(fleet_dir, cache_dir)
        for row in rows:
            print(orjson.dumps(row).decode())
        ratio = rows[1]["seconds"] / rows[0]["seconds"] if rows[0]["seconds"] else float("nan")
        print(f"cold: {rows[0]['mb_per_s']} MB/s; second read: {ratio:.1%} of the first")
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
