"""The code location ``scorecard``: everything under ``defs/`` (assets with their checks, jobs, the
schedule, the run-failure sensor, resources), loaded with ``load_from_defs_folder``, with the
catalog's owners, tags, code versions and column schemas on every asset, plus the executor.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg

from scorecard_assets.defs.catalog import with_catalog


def _catalogued_defs_folder() -> dg.Definitions:
    """Everything under ``defs/`` with owners, tags, code versions and column schemas on every asset
    (defs/catalog.py). ``Definitions.map_asset_specs`` is a "preview" API in Dagster 1.13: its warning
    would be printed by every process that loads the code location, so it is silenced for this call."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return dg.load_from_defs_folder(path_within_project=Path(__file__).parent).map_asset_specs(
            func=with_catalog
        )


defs = dg.Definitions.merge(
    _catalogued_defs_folder(),
    # one process per run: on small machines a subprocess per step only adds start-up cost
    dg.Definitions(executor=dg.in_process_executor),
)
