"""The code location ``scorecard``: everything under ``defs/`` (assets with their checks, jobs, the
schedule, resources), loaded with ``load_from_defs_folder``, plus the executor. Nothing else.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg

defs = dg.Definitions.merge(
    dg.load_from_defs_folder(path_within_project=Path(__file__).parent),
    # one process per run: on small machines a subprocess per step only adds start-up cost
    dg.Definitions(executor=dg.in_process_executor),
)
