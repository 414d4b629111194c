"""Resources: where the config, the state directory (caches) and the GitHub client come from."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg
from pydantic import Field

from scorecard_assets.config import ScorecardConfig, config_path_from_env, load_config
from scorecard_assets.github.resource import GitHubResource

__all__ = ["GitHubResource", "ScorecardResource"]


class ScorecardResource(dg.ConfigurableResource):
    """The scorecard configuration file and the state directory holding incremental caches."""

    config_path: str = Field(
        default="",
        description="YAML config; empty = $SCORECARD_CONFIG, else the bundled sample fleet",
    )
    state_dir: str = Field(
        default="",
        description="caches (GitHub trails, agent-log offsets); empty = $SCORECARD_STATE_DIR or ./.dagster",
    )

    def load(self) -> ScorecardConfig:
        return load_config(self.config_path or config_path_from_env())

    def cache_dir(self) -> Path:
        base = self.state_dir or os.environ.get("SCORECARD_STATE_DIR", "") or ".dagster"
        d = Path(base).expanduser().resolve() / "cache"
        d.mkdir(parents=True, exist_ok=True)
        return d
