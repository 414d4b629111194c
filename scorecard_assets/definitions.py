"""The code location ``scorecard``: everything under ``defs/`` (assets with their checks, jobs, the
schedule, the run-failure sensor, resources), loaded as a ``dg`` project's defs folder, with the
catalog's owners, tags, code versions and column schemas on every asset, plus the executor.

``dg.load_from_defs_folder`` would also import every Dagster integration installed beside us that
registers component types (here ``dagster_aws``, for the deployment's S3 storage) only to list
them in the UI's component catalogue; that costs 2–3 CPU-seconds in every process that loads the
location — the CLI, the code server, each run worker. We build the same component tree for the
project and its ``defs/`` folder without that listing (docs/dagster.md "Start-up cost").
"""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg

from scorecard_assets.defs.catalog import with_catalog


def load_defs_folder(path_within_project: Path) -> dg.Definitions:
    """The definitions of the project's ``defs/`` folder, as ``load_from_defs_folder`` loads them
    (same component tree, attached for the UI), without the catalogue of installed plugins' component
    types. Dagster's beta/preview notices about its own loaders are not ours to print in every
    process, so they are silenced for this call."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        warnings.simplefilter("ignore", dg.BetaWarning)
        tree = dg.ComponentTree.for_project(path_within_project=path_within_project)
        return dg.Definitions.merge(
            tree.build_defs(tree.defs_module_path), dg.Definitions(component_tree=tree)
        )


def _catalogued_defs_folder() -> dg.Definitions:
    """Everything under ``defs/`` with owners, tags, code versions and column schemas on every asset
    (defs/catalog.py). ``Definitions.map_asset_specs`` is a "preview" API in Dagster 1.13: its warning
    would be printed by every process that loads the code location, so it is silenced for this call."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return load_defs_folder(Path(__file__).parent).map_asset_specs(func=with_catalog)


defs = dg.Definitions.merge(
    _catalogued_defs_folder(),
    # one process per run: on small machines a subprocess per step only adds start-up cost
    dg.Definitions(executor=dg.in_process_executor),
)
