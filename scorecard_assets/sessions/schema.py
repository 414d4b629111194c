"""Frame contracts of the sessions path, in the style of ``schemas.py`` (column -> (kind, meaning)).

``SESSION_FACTS``: one row per message (OpenCode), response (Claude Code) or model step (Codex) of
every session read, user turns included. Tool calls are summarised per row (counts plus the tuples
of names, statuses, error texts, edit paths and shell commands, in call order). Session-level facts
(parent, directory, CLI version, stored agent, session cost) are repeated on each of its rows so
that one frame carries everything the cycle cutter needs (docs/sessions.md, "Facts frame").

``GIT_COMMITS``: one row per commit of a repository found under the configured roots.

``SESSION_CYCLES``: one row per cycle of a top-level session: the 25 pooled fields plus the private
keys the export needs (session id, cycle index) and the provenance the report shows. Only
``export.contributed_rows`` turns it into what may leave the machine.
"""

from __future__ import annotations

from scorecard_assets.schemas import CYCLES, Contract

STORE_KINDS = ("opencode", "claude-code", "codex")

SESSION_FACTS: Contract = {
    "store": ("str", "opencode | claude-code | codex"),
    "source": ("str", "the DB or JSONL file the row came from"),
    "line": ("Int", "1-based line in source (JSONL stores); NA for DB rows"),
    "session_id": ("str", "session id (Claude Code subagents: '<session>/agent-<id>')"),
    "parent_id": ("str", "parent session id, or NA for a top-level session"),
    "seq": ("int", "0-based order of the row within its session"),
    "kind": ("str", "user | assistant"),
    "t_ms": ("int", "start of the row, ms since the epoch (OpenCode time.created)"),
    "end_ms": ("Int", "completion of the step, ms; NA when unknown"),
    "latency_ms": ("float", "step latency in ms (NaN when unknown)"),
    "agent": ("str", "agent or mode that produced the row (NA for user rows without a mode)"),
    "role": ("int", "role signal of the row: 2 build, 1 plan, 0 other, -1 none"),
    "model": ("str", "canonical model id (pragmatikos canon); NA for user rows"),
    "provider": ("str", "provider id; NA when not recorded"),
    "effort": ("str", "effort / variant; NA when not recorded"),
    "tools": ("int", "tool calls in the row"),
    "edits": ("int", "edit-tool calls"),
    "edit_errors": ("int", "failed edit-tool calls (not aborts, not migration artefacts)"),
    "tool_errors": ("int", "failed tool calls of any tool (not aborts, not migration artefacts)"),
    "aborts": ("int", "tool calls stopped by the human (abort, interrupt, rejection)"),
    "reads": ("int", "read-tool calls"),
    "verifies": ("int", "shell calls whose command is a verification run"),
    "last_edit_seq": ("int", "position of the last edit call within the row, -1 none"),
    "last_verify_seq": ("int", "position of the last verification call within the row, -1 none"),
    "recorded_paths": ("int", "edit paths relative to or under the session directory"),
    "edit_paths": ("object", "tuple of absolute paths edited by successful edit calls"),
    "failed_paths": ("object", "tuple of absolute paths of failed edit calls"),
    "tool_names": ("object", "tuple of tool names in call order"),
    "tool_status": ("object", "tuple: ok | error | abort | migration | pending, per call"),
    "error_texts": ("object", "tuple of the error texts of failed calls (capped)"),
    "commands": ("object", "tuple of shell commands"),
    "cost_usd": ("float", "cost of the row in USD (NaN = none recorded and none estimated)"),
    "cost_is_estimate": ("bool", "True when cost_usd is tokens x the price table"),
    "input_tokens": ("float", "uncached input tokens (NaN = not reported)"),
    "output_tokens": ("float", "output tokens incl. reasoning (NaN = not reported)"),
    "reasoning_tokens": ("float", "reasoning tokens (NaN = not reported)"),
    "cache_read_tokens": ("float", "cached input read (NaN = not reported)"),
    "cache_write_tokens": ("float", "cache creation (NaN = not reported)"),
    "directory": ("str", "session working directory (NA when unknown)"),
    "project_dir": ("str", "the store's project root (OpenCode project.worktree), NA when unknown"),
    "cli_version": ("str", "version of the CLI that wrote the session, NA when unknown"),
    "session_agent": ("str", "the session's stored (last) agent, NA when unknown"),
    "session_cost_usd": ("float", "session-level cost recorded by the store (NaN = none)"),
    "dedupe_key": ("str", "key of a row that may repeat across files (Claude Code), else NA"),
    "duplicate": ("bool", "a repeat of another file's row (resumed copy, archived rollout): kept, never cut"),
}

GIT_COMMITS: Contract = {
    "repo_key": ("str", "the repository's absolute git common dir (worktrees share it)"),
    "hash": ("str", "commit hash"),
    "at": ("int", "author time, s since the epoch"),
    "author_name": ("str", ""),
    "author_email": ("str", ""),
    "identity": ("str", "lower-cased email, else lower-cased name"),
    "files": ("object", "tuple of repo-relative paths (renames resolved to the new path)"),
}

# Pooled fields first (same order as the pooled contract), then the private and provenance columns.
SESSION_CYCLES: Contract = {
    # the 25 pooled fields of schemas.CYCLES, in its order (docs/pairings.md "Cycles"), two described
    # for sessions
    **{key: CYCLES[key] for key in list(CYCLES)[: list(CYCLES).index("day") + 1]},
    "harness": ("str", "opencode | claude-code | codex"),
    "day": ("str", "YYYY-MM-DD (UTC day of the session's first message)"),
    "store": ("str", "private: store kind"),
    "session_id": ("str", "private: top-level session id"),
    "cycle_index": ("int", "private: 0-based cycle index within the session"),
    "first_ms": ("int", "private: time of the cycle's first message, ms"),
    "last_ms": ("int", "private: time of the cycle tree's last message, ms"),
    "cost_is_estimate": ("bool", "some of tcost is a token x price estimate"),
    "children": ("int", "descendant sessions folded into this cycle"),
}
