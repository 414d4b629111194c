"""Materializing the definitions in a test instance: the unpartitioned ``ingest`` and ``transform``
groups first, then a selection for one week on the stored values (docs/testing.md "Rules")."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from scorecard_assets.definitions import defs

ALL_DEFS = [*(defs.assets or []), *(defs.asset_checks or [])]
BASE = dg.AssetSelection.groups("ingest", "transform")


@dataclass(frozen=True)
class WeekRun:
    """The instance (open while the ``with`` lasts) and the two runs' results."""

    instance: dg.DagsterInstance
    base: dg.ExecuteInProcessResult
    week: dg.ExecuteInProcessResult


@contextmanager
def base_then_week(
    root: Path, resources: dict[str, Any], week: dg.AssetSelection, partition_key: str
) -> Iterator[WeekRun]:
    """A test instance under ``root / "home"``: ``ingest`` and ``transform``, then ``week`` for the
    weekly partition ``partition_key``."""
    (root / "home").mkdir()
    with dg.instance_for_test(temp_dir=str(root / "home")) as instance:
        base = dg.materialize(ALL_DEFS, instance=instance, resources=resources, selection=BASE)
        report = dg.materialize(
            ALL_DEFS, instance=instance, resources=resources, selection=week, partition_key=partition_key
        )
        yield WeekRun(instance, base, report)
