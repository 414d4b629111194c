"""Resources: the scorecard config, the state store (incremental caches and the week memo), the
report store, the GitHub client and the IO manager (``io_manager.py``).

Each store has a local and an object-store implementation, chosen by its location: a directory or
an fsspec URL (docs/storage.md). Defaults come from the environment at run time, never at import.

``GitHubResource`` syncs trails from the GitHub API into the cache. Every field is an optional
override of the config's ``github`` section (``None`` = take it from the config). The token is never
a field: it is read from the environment variable named by ``token_env`` (else ``github.token_env``)
when ``fetch_trails`` runs, and never stored, logged or put in metadata.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg
from pydantic import Field

from scorecard_assets.config import ScorecardConfig, config_path_from_env, load_config
from scorecard_assets.defs.io_manager import TableIOManager
from scorecard_assets.defs.partition_values import Memo
from scorecard_assets.records import TableResult
from scorecard_assets.storage.location import is_local
from scorecard_assets.storage.memo import WeekMemo, memo_location
from scorecard_assets.storage.reports import ReportStore
from scorecard_assets.storage.settings import state_dir, state_location, storage_root
from scorecard_assets.storage.state import StateStore, state_store_at
from scorecard_assets.storage.tables import StoredTable
from scorecard_assets.transform.incremental import SNAPSHOT_FIELD, config_digest

if TYPE_CHECKING:  # PyGithub is imported when a sync runs, not when the code location loads
    from scorecard_assets.github.client import ClientSettings
    from scorecard_assets.github.sync import LogLike

__all__ = ["GitHubResource", "ReportStoreResource", "ScorecardResource", "StateStoreResource"]


class ScorecardResource(dg.ConfigurableResource):
    """The scorecard configuration file."""

    config_path: str = Field(
        default="",
        description="YAML config; empty = $SCORECARD_CONFIG, else the bundled sample fleet",
    )
    state_dir: str = Field(
        default="",
        description="local working folder; empty = $SCORECARD_STATE_DIR or ./.dagster",
    )

    def load(self) -> ScorecardConfig:
        return load_config(self.config_path or config_path_from_env())

    def working_dir(self) -> Path:
        """The local working folder of this process (temporary material such as a restored git
        history): the state dir on one machine; under the process's temporary directory when the
        state lives in an object store, since no disk may outlive the run there (docs/storage.md)."""
        if is_local(state_location()):
            d = state_dir(self.state_dir)
        else:
            d = Path(tempfile.gettempdir()) / "scorecard-work"
        d.mkdir(parents=True, exist_ok=True)
        return d


class StateStoreResource(dg.ConfigurableResource):
    """Where incremental state lives: the GitHub cache, agent-log and JSONL offsets, fingerprints."""

    url: str = Field(
        default="",
        description="a directory or an object-store URL; empty = $SCORECARD_STORAGE_URL/state, "
        "else <state dir>/state",
    )

    def store(self) -> StateStore:
        return state_store_at(state_location(self.url) if self.url else state_location())

    def memo(
        self, context: dg.AssetExecutionContext, cfg: ScorecardConfig, inputs: Mapping[str, StoredTable]
    ) -> Memo:
        """The week memo of the running asset, whose weeks are made of ``inputs`` (their stored
        versions) and ``cfg`` (docs/incremental.md "Report weeks: the week memo")."""
        return Memo(
            store=WeekMemo(memo_location(storage_root(self.url))),
            asset=context.asset_key.to_user_string(),
            inputs={name: table.version for name, table in inputs.items()},
            config=config_digest(cfg, without=(SNAPSHOT_FIELD,)),
        )


class ReportStoreResource(dg.ConfigurableResource):
    """Where reports are published: ``<location>/<window end>/`` and ``latest/``."""

    url: str = Field(
        default="",
        description="a directory or an object-store URL; empty = the config's output_dir "
        "($SCORECARD_OUTPUT_DIR overrides it)",
    )

    def store(self, cfg: ScorecardConfig) -> ReportStore:
        return ReportStore(self.url or cfg.output_dir)


class GitHubResource(dg.ConfigurableResource):
    """GitHub (github.com or Enterprise) through PyGithub, with bounded retries and an incremental cache."""

    base_url: str | None = Field(default=None, description="API base URL; None = github.base_url")
    token_env: str | None = Field(
        default=None,
        description="name of the environment variable holding the token; None = github.token_env",
    )
    per_page: int | None = Field(default=None, ge=1, le=100, description="page size (≤ 100)")
    timeout_s: float | None = Field(default=None, gt=0, description="HTTP timeout per request, seconds")
    max_retries: int | None = Field(default=None, ge=0, le=20, description="retries per request")
    max_retry_wait_s: float | None = Field(
        default=None, ge=0, description="longest single wait GitHub may ask for before the repo is given up"
    )
    seconds_between_requests: float | None = Field(
        default=None, ge=0, description="throttle between requests (PyGithub), seconds"
    )

    def settings(self, cfg: ScorecardConfig) -> ClientSettings:
        """The effective client settings: these fields over the config's ``github`` section."""
        from scorecard_assets.github.client import ClientSettings

        return ClientSettings.from_config(
            cfg.github,
            base_url=self.base_url,
            per_page=self.per_page,
            timeout_s=self.timeout_s,
            max_retries=self.max_retries,
            max_retry_wait_s=self.max_retry_wait_s,
            seconds_between_requests=self.seconds_between_requests,
        )

    def fetch_trails(
        self,
        cfg: ScorecardConfig,
        cache_path: Path,
        *,
        full_refresh: bool,
        log: logging.Logger | LogLike | None = None,
    ) -> TableResult:
        """Sync every configured repo into ``cache_path``, then return ``trail_comments`` from the cache.

        A repo that fails keeps its cached rows and gets a ``repo_sync_failed`` warning; when every
        repo fails, ``TrailSyncError`` is raised. A missing token raises ``MissingTokenError``
        naming the variable. ``extra["sync"]`` holds each repo's ``SyncReport`` as a dict.
        """
        from scorecard_assets.github.cache import TrailCache
        from scorecard_assets.github.client import resolve_token
        from scorecard_assets.github.sync import (
            SyncOptions,
            build_trail_result,
            raise_if_all_failed,
            sync_repos,
        )

        token = resolve_token(self.token_env or cfg.github.token_env)
        gh = make_github(self.settings(cfg), token)
        try:
            with TrailCache(cache_path) as cache:
                reports = sync_repos(
                    gh, cache, cfg.repo_names, full_refresh=full_refresh, options=SyncOptions(), log=log
                )
                raise_if_all_failed(reports)
                return build_trail_result(cache, cfg.repo_names, reports)
        finally:
            gh.close()


def make_github(*args: Any, **kwargs: Any) -> Any:
    """``github.client.make_github``, imported on first use (PyGithub costs start-up time)."""
    from scorecard_assets.github.client import make_github as make

    return make(*args, **kwargs)


@dg.definitions
def resources() -> dg.Definitions:
    return dg.Definitions(
        resources={
            "scorecard": ScorecardResource(),
            "github": GitHubResource(),
            "state": StateStoreResource(),
            "reports": ReportStoreResource(),
            "io_manager": TableIOManager(),
        }
    )
