"""Data-warning codes raised by the sessions path (docs/sessions.md, "Warnings").

Each entry has the shape of ``records.WARNING_CODES``: the assets a code may be raised on and a title.
They live here until the Dagster layer registers them in ``records.WARNING_CODES`` (the entries of
``SESSION_WARNING_CODES`` are meant to be appended there as they are).
"""

from __future__ import annotations

from typing import Final

from scorecard_assets.records import WarningCode

# Asset names of the sessions path (the Dagster layer names its assets so).
RECORDS_ASSET: Final = "session_records"
COMMITS_ASSET: Final = "git_commits"
CYCLES_ASSET: Final = "session_cycles"

STORE_UNREADABLE: Final = "session_store_unreadable"
SCHEMA_UNRECOGNISED: Final = "session_schema_unrecognised"
LINE_MALFORMED: Final = "session_line_malformed"
COST_ESTIMATED: Final = "session_cost_estimated"
COST_UNPRICED: Final = "session_cost_unpriced"
NO_EDIT_PATHS: Final = "session_without_edit_paths"
REPO_UNREADABLE: Final = "git_repo_unreadable"
GIT_LOG_MALFORMED: Final = "git_log_malformed"
UNKNOWN_IDENTITY: Final = "git_unknown_identity"
CYCLES_PENDING: Final = "session_cycles_pending"

SESSION_WARNING_CODES: Final[dict[str, WarningCode]] = {
    STORE_UNREADABLE: WarningCode(
        (RECORDS_ASSET,),
        "a session store (OpenCode DB, Claude Code or Codex folder or file) that could not be read",
    ),
    SCHEMA_UNRECOGNISED: WarningCode(
        (RECORDS_ASSET,), "a session store whose tables or record layout are not a known version"
    ),
    LINE_MALFORMED: WarningCode(
        (RECORDS_ASSET,),
        "a session line or record that is not JSON, not an object, too large, cut short or of wrong types",
    ),
    COST_ESTIMATED: WarningCode(
        (RECORDS_ASSET,), "session costs estimated from tokens with the configured price table"
    ),
    COST_UNPRICED: WarningCode(
        (RECORDS_ASSET,), "session tokens of a model the price table does not know (cost counted as 0)"
    ),
    NO_EDIT_PATHS: WarningCode(
        (CYCLES_ASSET,), "sessions with edits but no recorded edit path (their cycles are never judged)"
    ),
    REPO_UNREADABLE: WarningCode((COMMITS_ASSET,), "a git repository whose history could not be read"),
    GIT_LOG_MALFORMED: WarningCode((COMMITS_ASSET,), "a git log record that could not be parsed (skipped)"),
    UNKNOWN_IDENTITY: WarningCode(
        (CYCLES_ASSET,), "commits by identities that are neither seeds nor learned (they credit no cycle)"
    ),
    CYCLES_PENDING: WarningCode(
        (CYCLES_ASSET,), "cycles whose 7-day ship window is still open (pending, not ship-judged)"
    ),
}
