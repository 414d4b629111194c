"""What a dispatch's agent did: turns, tool calls and token usage, synthesised from its segments.

A dispatch's work between milestones (its segments) becomes assistant turns with tool calls (reads,
edits that sometimes fail, verify runs before or after the last edit, a call stopped by a human) and
per-turn token usage. The script is a pure function of the dispatch and its ``script_seed``: it is
computed once when the dispatch ends (for the runs.jsonl row) and again when its log is written, so
the generator never holds every turn of a large fleet in memory.
"""

from __future__ import annotations

import random
from typing import Any

from scorecard_assets.sample_fleet._catalog import HELPER_MODEL, MODELS
from scorecard_assets.sample_fleet._model import Dispatch, Segment, ToolCall, Turn

MODULE_NAMES = (
    "billing",
    "session",
    "export",
    "webhooks",
    "auth",
    "search",
    "uploads",
    "audit",
    "flags",
    "health",
)

# Per repo language: source and test paths, verify commands (the verify pattern of docs/pairings.md
# "Fleet cycles", sources/tooling.py VERIFY_RE, matches each), the dependency install and a search.
LANGUAGES: dict[str, dict[str, Any]] = {
    "python": {
        "src": "src/app/{m}.py",
        "test": "tests/test_{m}.py",
        "verify": ("pytest -q", "uv run pytest -q tests/", "ruff check src tests", "mypy src"),
        "deps": "uv sync --frozen",
        "grep": "rg -n 'def {m}_' src",
    },
    "typescript": {
        "src": "src/{m}/index.ts",
        "test": "src/{m}/{m}.test.ts",
        "verify": ("npm test", "npx tsc --noEmit", "npm run lint", "npx vitest run"),
        "deps": "npm ci --no-audit",
        "grep": "rg -n 'export function' src/{m}",
    },
    "go": {
        "src": "internal/{m}/{m}.go",
        "test": "internal/{m}/{m}_test.go",
        "verify": ("go test ./...", "go vet ./...", "make lint", "golangci-lint run"),
        "deps": "go mod download",
        "grep": "rg -n 'func ' internal/{m}",
    },
}

PHASE_TEXT = {
    "gate": "Issue is actionable; recording the gate milestone.",
    "setup": "Worktree ready; dependencies installed.",
    "plan": "Plan: locate the handler, add the guard, cover it with a focused test, then run the suite.",
    "implement": "Implementing the change and the accompanying test.",
    "review": "Reviewing the diff against the acceptance criteria.",
    "ship": "Pushing the branch and opening the pull request.",
    "report": "Writing the post-merge report comment.",
    "classify": "Classifying the issue: size, risk and test scope.",
}

# Mean tool output sizes in bytes at scale 1 (the benchmark fleets); the sample scales them down.
OUTPUT_MEAN = {
    "read": 5200,
    "grep": 1400,
    "verify": 2600,
    "bash": 350,
    "edit": 700,
    "write": 160,
    "post": 90,
    "pr": 140,
}

Tool = tuple[str, str, str]  # (kind, argument, status)


# ---------------------------------------------------------------------------------------------- tools
def phase_tools(seg: Segment, rng: random.Random, lang: str, issue: int, cwd: str, lean: bool) -> list[Tool]:
    """The tool calls of one segment, in order.

    ``lean`` (the committed sample) keeps the same shape with fewer calls: one exploratory read, at
    most two edited files, no milestone-post calls.
    """
    spec = LANGUAGES[lang]
    mods = rng.sample(MODULE_NAMES, 3)
    tools: list[Tool] = []
    phase = seg.phase
    if phase in ("gate", "classify"):
        tools.append(("bash", f"gh issue view {issue} --json title,body,labels", "ok"))
    elif phase == "setup":
        if not lean:
            tools.append(("bash", "git fetch origin main && git status --short", "ok"))
        tools.append(("bash", spec["deps"], "ok"))
    elif phase == "plan":
        for m in mods[: 1 if lean else rng.randint(2, 3)]:
            tools.append(("read", f"{cwd}/{spec['src'].format(m=m)}", "ok"))
        if not lean:
            tools.append(("grep", spec["grep"].format(m=mods[0]), "ok"))
    elif phase in ("implement", "review", "batch-review"):
        tools.extend(edit_tools(seg, rng, spec, mods, cwd, lean))
    elif phase in ("ship", "batch-ship"):
        if not lean:
            tools.append(("bash", "git push -u origin HEAD", "ok"))
        tools.append(("pr", f"gh pr create --fill --base main --head sched/issue-{issue}", "ok"))
    elif phase == "report":
        if not lean:
            tools.append(("bash", f"gh pr view --json mergeCommit,files {issue}", "ok"))
        tools.append(("bash", f"gh issue comment {issue} --body-file report.md", "ok"))
    else:
        tools.append(("bash", f"sched batch status --issue {issue}", "ok"))
    if seg.ends_with_post and not lean:
        tools.append(("post", f"dossier runstate post --issue {issue} --phase {phase}", "ok"))
    return tools


def edit_tools(
    seg: Segment, rng: random.Random, spec: dict[str, Any], mods: list[str], cwd: str, lean: bool
) -> list[Tool]:
    """Reads, edits (a failed edit is retried) and verify runs of an implement or review segment.

    ``seg.verify_last`` decides whether a verify command runs after the last edit; otherwise the
    verify run sits between the edits.
    """
    implement = seg.phase == "implement"
    tools: list[Tool] = []
    if not implement and not lean:
        tools.append(("bash", "git diff --stat origin/main...HEAD", "ok"))
    n_files = seg.files if implement else seg.fixes
    if lean:
        n_files = min(n_files, 2 if implement else 1)
    targets = [spec["src"].format(m=mods[i % 3]) for i in range(n_files)]
    if implement and n_files:
        targets[-1] = spec["test"].format(m=mods[0])
    edits: list[Tool] = []
    for k, path in enumerate(targets):
        if implement and not lean and k < 2:
            tools.append(("read", f"{cwd}/{path}", "ok"))
        kind = "write" if (implement and k == len(targets) - 1 and rng.random() < 0.5) else "edit"
        if rng.random() < seg.edit_err:
            edits.append((kind, f"{cwd}/{path}", "error"))
        edits.append((kind, f"{cwd}/{path}", "ok"))
        if not lean and rng.random() < 0.25:
            edits.append(("edit", f"{cwd}/{path}", "ok"))
    verify = rng.choice(spec["verify"])
    if not edits:
        if seg.verify_last and not lean:
            tools.append(("verify", verify, "ok"))
    elif seg.verify_last:
        tools.extend(edits)
        tools.append(("verify", verify, "ok"))
        if not lean and rng.random() < 0.4:
            tools.append(("verify", rng.choice(spec["verify"]), "ok"))
    else:
        half = max(1, len(edits) // 2)
        tools.extend(edits[:half])
        tools.append(("verify", verify, "ok"))
        tools.extend(edits[half:] or [edits[-1]])
    return tools


def _output_size(rng: random.Random, kind: str, scale: float) -> int:
    return int(OUTPUT_MEAN[kind] * scale * rng.lognormvariate(0, 0.6) / 1.2) + 20


def _group(tools: list[Tool], lean: bool) -> list[list[Tool]]:
    """Tool calls per assistant step: parallel reads pair up; the lean sample packs up to four."""
    groups: list[list[Tool]] = []
    i = 0
    while i < len(tools):
        if lean:
            take = 4
        else:
            take = 2 if (tools[i][0] == "read" and i + 1 < len(tools) and tools[i + 1][0] == "read") else 1
        groups.append(tools[i : i + take])
        i += take
    return groups


# ---------------------------------------------------------------------------------------------- script
def script(d: Dispatch) -> list[Turn]:
    """The dispatch's turns: a pure function of the dispatch (and its ``script_seed``)."""
    rng = random.Random(d.script_seed)
    lean = d.output_scale < 0.5
    ctx = rng.randint(18_000, 36_000)  # system prompt, tools and the issue, cached after the first step
    weight = 3 if lean else 1  # a lean step stands for several real ones
    turns: list[Turn] = []
    for s_index, seg in enumerate(d.segments):
        groups = _group(phase_tools(seg, rng, d.lang, d.issue, d.cwd, lean), lean)
        if not lean or s_index == len(d.segments) - 1 or not groups:
            groups.append([])  # a closing text-only step
        width = max(1_000, (seg.t1 - seg.t0) // len(groups))
        for g, group in enumerate(groups):
            t0 = seg.t0 + g * width + rng.randint(0, max(1, width // 10))
            latency = max(400, min(int(width * 0.6), int(d.step_s * 1000 * rng.lognormvariate(0, 0.35))))
            calls: list[ToolCall] = []
            tt = t0 + latency
            for kind, arg, status in group:
                dur = min(
                    rng.randint(200, 60_000) if kind == "verify" else rng.randint(20, 900),
                    max(20, width // 3),
                )
                calls.append(
                    ToolCall(kind, arg, status, _output_size(rng, kind, d.output_scale), tt, tt + dur)
                )
                tt += dur
            edits = sum(1 for c in calls if c.kind in ("edit", "write"))
            out = weight * (rng.randint(120, 1800) + 350 * edits)
            cache_write = weight * (rng.randint(600, 5000) + sum(c.out_len for c in calls) // 4)
            usage = (rng.randint(2, 40), out, cache_write, ctx)
            ctx += cache_write
            chatty = not calls or (not lean and rng.random() < 0.3)
            text = PHASE_TEXT.get(seg.phase, "Working on the batch step.") if chatty else ""
            turns.append(Turn(t0, t0 + latency, text, calls, usage))
    if d.abort:
        candidates = [c for t in turns for c in t.tools if c.kind in ("edit", "bash", "verify")]
        if candidates:
            rng.choice(candidates).status = "abort"
    if d.agent == "opencode":  # opencode sends most of the context uncached
        return [
            Turn(t.t0, t.t1, t.text, t.tools, (t.usage[0] * 300 + 800, t.usage[1], 0, t.usage[3]))
            for t in turns
        ]
    if d.agent == "codex":
        return [
            Turn(t.t0, t.t1, t.text, t.tools, (t.usage[0] * 200 + t.usage[2], t.usage[1], 0, t.usage[3]))
            for t in turns
        ]
    return turns


# ---------------------------------------------------------------------------------------------- usage
def totals(turns: list[Turn]) -> tuple[int, int, int, int]:
    """(uncached input, output, cache write, cache read) summed over the turns."""
    return (
        sum(t.usage[0] for t in turns),
        sum(t.usage[1] for t in turns),
        sum(t.usage[2] for t in turns),
        sum(t.usage[3] for t in turns),
    )


def helper_usage(d: Dispatch) -> tuple[int, int, int, int]:
    rng = random.Random(f"helper:{d.issue}:{d.start_ms}")
    return (rng.randint(300, 3000), rng.randint(50, 600), 0, rng.randint(0, 8000))


def model_usage_entry(u: tuple[int, int, int, int], cost: float, model: str) -> dict[str, Any]:
    """One ``modelUsage`` entry of a Claude result record (camelCase, with ``costUSD``)."""
    return {
        "inputTokens": u[0],
        "outputTokens": u[1],
        "cacheReadInputTokens": u[3],
        "cacheCreationInputTokens": u[2],
        "webSearchRequests": 0,
        "costUSD": cost,
        "contextWindow": 1_000_000 if model.endswith("[1m]") else 200_000,
    }


def claude_totals(d: Dispatch, turns: list[Turn]) -> dict[str, Any]:
    """A Claude result's totals: ``usage`` (the main model) and ``modelUsage`` (all models).

    With a helper model the two disagree, as they do in real logs; the parity fleet has none.
    """
    main = totals(turns)
    main_cost = round(MODELS[d.model_key].price.cost(*main), 6)
    usage = {d.log_model: model_usage_entry(main, main_cost, d.log_model)}
    cost = main_cost
    if d.side_model:
        side = helper_usage(d)
        side_cost = round(MODELS[HELPER_MODEL].price.cost(*side), 6)
        usage[HELPER_MODEL] = model_usage_entry(side, side_cost, HELPER_MODEL)
        cost = round(cost + side_cost, 6)
    return {"main": main, "model_usage": usage, "total_cost_usd": cost}


def opencode_step_cost(d: Dispatch, t: Turn) -> float:
    """``part.cost`` of an opencode step: 0 on a subscription plan."""
    if d.spelling.subscription:
        return 0
    return round(MODELS[d.model_key].price.cost(*t.usage), 8)


def reasoning_tokens(d: Dispatch, t: Turn) -> int:
    return t.usage[1] // 3 if d.tier == "strong" else t.usage[1] // 8


def scheduler_usage(d: Dispatch, turns: list[Turn]) -> dict[str, Any]:
    """What the scheduler's log parser records in runs.jsonl for this slice (docs/sources.md
    "What the reference reads, and what we read").

    Claude: ``modelUsage`` sums and their cost (a killed stream: per-turn usage, no cost); opencode:
    step sums; Codex: nothing (the scheduler's Claude parser finds no result in a thread stream).
    """
    none: dict[str, Any] = {
        "model": d.spelling.cli_model,
        "input_tokens": None,
        "output_tokens": None,
        "cache_creation_tokens": None,
        "cache_read_tokens": None,
        "total_cost_usd": None,
        "reasoning_tokens": None,
        "steps": None,
    }
    names = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")
    if d.agent == "claude":
        if d.killed:
            if d.fmt == "claude-json" or not turns:
                return none
            return none | {"model": d.log_model} | dict(zip(names, totals(turns), strict=True))
        res = claude_totals(d, turns)
        entries = res["model_usage"].values()
        keys = ("inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens")
        sums = [sum(e[k] for e in entries) for k in keys]
        return (
            none
            | {"model": ",".join(res["model_usage"]), "total_cost_usd": res["total_cost_usd"]}
            | dict(zip(names, sums, strict=True))
        )
    if d.agent == "opencode":
        return (
            none
            | dict(zip(names, totals(turns), strict=True))
            | {
                "total_cost_usd": round(sum(opencode_step_cost(d, t) for t in turns), 6),
                "reasoning_tokens": sum(reasoning_tokens(d, t) for t in turns),
                "steps": len(turns),
            }
        )
    return none
