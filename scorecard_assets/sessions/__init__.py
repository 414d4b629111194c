"""Pragmatikos on your own sessions: OpenCode, Claude Code and Codex stores, ship credit from git,
and the contribution export (docs/sessions.md). Pure: nothing here imports Dagster.

The Dagster layer calls, in order:

- :func:`read_sessions` (``session_records``) -> facts frame (``schema.SESSION_FACTS``);
- :func:`read_commits` (``git_commits``) -> commits frame (``schema.GIT_COMMITS``);
- :func:`session_cycles` (``session_cycles``) -> cycle rows (``schema.SESSION_CYCLES``) and the pooled
  ``schemas.CYCLES`` frame (origin ``sessions``) for the Pragmatikos engine;
- :func:`make_export` / :func:`preview_text` / :func:`write_export` for ``scorecard sessions export``.

Import the submodules themselves (``sessions.pipeline``, ``sessions.export``, ...): the package
imports nothing, so ``records`` can register the sessions' warning codes without an import cycle.

State between runs: one :class:`SessionsState` (``to_json`` / ``from_json``) plus the previous facts
and commits frames. Warning codes: :data:`SESSION_WARNING_CODES`.
"""
