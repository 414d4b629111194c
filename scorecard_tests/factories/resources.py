"""The resources a materialization needs, every store under one temporary folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scorecard_assets.defs.io_manager import TableIOManager
from scorecard_assets.defs.resources import (
    GitHubResource,
    ReportStoreResource,
    ScorecardResource,
    StateStoreResource,
)


def local_resources(root: Path, config_path: Path, **overrides: Any) -> dict[str, Any]:
    """Config, GitHub, state store, report store (the config's output_dir) and IO manager, with the
    stores under ``root``; ``overrides`` replace any of them."""
    resources: dict[str, Any] = {
        "scorecard": ScorecardResource(config_path=str(config_path), state_dir=str(root / "work")),
        "github": GitHubResource(),
        "state": StateStoreResource(url=str(root / "store" / "state")),
        "reports": ReportStoreResource(),
        "io_manager": TableIOManager(url=str(root / "store")),
    }
    resources.update(overrides)
    return resources
