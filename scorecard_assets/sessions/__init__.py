"""Pragmatikos on your own sessions: OpenCode, Claude Code and Codex stores, ship credit from git,
and the contribution export (docs/sessions.md). Pure: nothing here imports Dagster.

The Dagster layer calls, in order:

- :func:`read_sessions` (``session_records``) -> facts frame (``schema.SESSION_FACTS``);
- :func:`read_commits` (``git_commits``) -> commits frame (``schema.GIT_COMMITS``);
- :func:`session_cycles` (``session_cycles``) -> cycle rows (``schema.SESSION_CYCLES``) and the pooled
  ``schemas.CYCLES`` frame (origin ``sessions``) for the Pragmatikos engine;
- :func:`make_export` / :func:`preview_text` / :func:`write_export` for ``scorecard sessions export``.

State between runs: one :class:`SessionsState` (``to_json`` / ``from_json``) plus the previous facts
and commits frames. Warning codes: :data:`SESSION_WARNING_CODES`.
"""

from __future__ import annotations

from scorecard_assets.sessions.config import SessionsConfig, StoreSpec, effective_prices, resolve_stores
from scorecard_assets.sessions.export import (
    CONTRIB_COLS,
    Export,
    PrivacyError,
    contributed_rows,
    load_install,
    make_export,
    preview,
    preview_text,
    private_strings,
    write_export,
)
from scorecard_assets.sessions.pipeline import (
    CommitsRead,
    CyclesResult,
    SessionsRead,
    read_commits,
    read_sessions,
    session_cycles,
)
from scorecard_assets.sessions.schema import GIT_COMMITS, SESSION_CYCLES, SESSION_FACTS
from scorecard_assets.sessions.state import SessionsState
from scorecard_assets.sessions.warnings import (
    COMMITS_ASSET,
    CYCLES_ASSET,
    RECORDS_ASSET,
    SESSION_WARNING_CODES,
)

__all__ = [
    "COMMITS_ASSET",
    "CONTRIB_COLS",
    "CYCLES_ASSET",
    "GIT_COMMITS",
    "RECORDS_ASSET",
    "SESSION_CYCLES",
    "SESSION_FACTS",
    "SESSION_WARNING_CODES",
    "CommitsRead",
    "CyclesResult",
    "Export",
    "PrivacyError",
    "SessionsConfig",
    "SessionsRead",
    "SessionsState",
    "StoreSpec",
    "contributed_rows",
    "effective_prices",
    "load_install",
    "make_export",
    "preview",
    "preview_text",
    "private_strings",
    "read_commits",
    "read_sessions",
    "resolve_stores",
    "session_cycles",
    "write_export",
]
