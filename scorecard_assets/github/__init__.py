"""GitHub trails: live PyGithub sync into an incremental SQLite cache, and the recorded-export writer.

Pure modules (no Dagster): ``client`` (PyGithub client, bounded retries, request counting,
redaction), ``cache`` (``TrailCache``), ``sync`` (``sync_repo``, ``build_trail_result``), ``export``
(``export_repo``). ``resource`` holds the Dagster ``GitHubResource`` and is imported explicitly.
CLI: ``scorecard github export|sync`` (alias ``python -m scorecard_assets.github``).
"""

from __future__ import annotations

from scorecard_assets.github.cache import CacheError, RepoCursor, TrailCache, default_cache_path
from scorecard_assets.github.client import (
    ClientSettings,
    MissingTokenError,
    RequestCounter,
    client_context,
    make_github,
    resolve_token,
)
from scorecard_assets.github.export import ExportError, export_repo
from scorecard_assets.github.sync import (
    SyncOptions,
    SyncReport,
    TrailSyncError,
    build_trail_result,
    sync_repo,
    sync_repos,
)

__all__ = [
    "CacheError",
    "ClientSettings",
    "ExportError",
    "MissingTokenError",
    "RepoCursor",
    "RequestCounter",
    "SyncOptions",
    "SyncReport",
    "TrailCache",
    "TrailSyncError",
    "build_trail_result",
    "client_context",
    "default_cache_path",
    "export_repo",
    "make_github",
    "resolve_token",
    "sync_repo",
    "sync_repos",
]
