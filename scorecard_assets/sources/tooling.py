"""Tool vocabularies shared by the agent-log reader and the cycle builder.

These sets and patterns decide which tool calls count as edits, which shell commands count as a
verification run, and which tool errors mean that a human stopped the call (docs/pairings.md
"Fleet cycles": the vocabularies of the Pragmatikos session plugin),
extended with Claude Code's tool names and its interrupt / rejection texts.

Contracts:

- ``EDIT_TOOLS`` is matched case-sensitively against the raw tool name: opencode names tools in
  lower case (``edit``), Claude Code in title case (``Edit``); both spellings are listed.
- ``VERIFY_RE`` is searched (not matched) in a shell command; every alternative is word-bounded,
  so ``pytest`` matches ``uv run pytest -q`` but not ``pytestx``.
- A failed tool call is classified by :func:`classify_tool_error`: a migration artefact is ignored,
  an abort is a human stop, anything else is a plain error.
"""

from __future__ import annotations

import re
from typing import Literal

# Pragmatikos' edit tools (opencode spelling) plus Claude Code's file-writing tools.
EDIT_TOOLS: frozenset[str] = frozenset(
    {
        "edit",
        "write",
        "apply_patch",
        "multiedit",
        "patch",
        "Edit",
        "Write",
        "MultiEdit",
        "NotebookEdit",
    }
)

# Tools whose input carries a shell command that may be a verification run.
SHELL_TOOLS: frozenset[str] = frozenset({"bash", "shell", "Bash"})

_VERIFY_ALTERNATIVES = (
    r"vitest",
    r"jest",
    r"pytest",
    r"playwright\s+test",
    r"go\s+(?:test|vet|build)",
    r"cargo\s+(?:test|build|check|clippy)",
    r"(?:npm|pnpm|bun|yarn)\s+(?:run\s+)?(?:test|check|verify|lint|build|typecheck)",
    r"(?:bunx|npx)\s+tsc",
    r"tsc",
    r"next\s+build",
    r"bun\s+build",
    r"eslint",
    r"biome",
    r"ruff",
    r"golangci",
    r"clippy",
    r"mypy",
    r"pyright",
    r"g?make",
    r"node\s+verify",
    r"verify\.mjs",
)

VERIFY_RE: re.Pattern[str] = re.compile(r"\b(?:" + "|".join(_VERIFY_ALTERNATIVES) + r")\b")

# A tool call stopped by a human (Pragmatikos' wording, any case).
ABORT_RE: re.Pattern[str] = re.compile(
    r"Tool execution aborted|Tool execution (?:was )?interrupted|Task cancelled"
    r"|The user (?:rejected|declined)",
    re.IGNORECASE,
)

# Claude Code's texts for an interrupted or rejected tool call.
CLAUDE_ABORT_RE: re.Pattern[str] = re.compile(
    r"\[Request interrupted by user"
    r"|The user doesn't want to (?:proceed|take this action)"
    r"|tool use was rejected",
    re.IGNORECASE,
)

# A tool error that is an artefact of a schema migration, not a failure of the agent.
MIGRATION_RE: re.Pattern[str] = re.compile(r"before .*migration")

ToolErrorKind = Literal["migration", "abort", "error"]


def is_edit_tool(name: object) -> bool:
    """True when ``name`` is one of ``EDIT_TOOLS`` (exact spelling)."""
    return isinstance(name, str) and name in EDIT_TOOLS


def is_verify_command(command: object) -> bool:
    """True when a shell command string runs a test, build, lint or type check."""
    return isinstance(command, str) and VERIFY_RE.search(command) is not None


def is_abort_text(text: str) -> bool:
    """True when an error text says a human stopped the call (Pragmatikos' or Claude Code's wording)."""
    return ABORT_RE.search(text) is not None or CLAUDE_ABORT_RE.search(text) is not None


def classify_tool_error(text: str) -> ToolErrorKind:
    """Classify the text of a failed tool call: migration artefact first, then abort, else error."""
    if MIGRATION_RE.search(text):
        return "migration"
    if is_abort_text(text):
        return "abort"
    return "error"
