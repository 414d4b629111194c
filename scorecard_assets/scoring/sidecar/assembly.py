"""The full sidecar of a window in its key order.

Pure (no Dagster). ``scoring/scorecard.py`` builds the reference part; this module adds our parts
(pairings, sources, structured warnings, the decisions block) in the order of ``keys.py``;
``model.py`` validates it.
"""

from __future__ import annotations

from typing import Any

from scorecard_assets.records import DataWarning, SourceStat, collapse_warnings, warning_line
from scorecard_assets.scoring.sidecar.keys import OUR_KEYS, REFERENCE_KEYS


def assemble_sidecar(
    scorecard: dict[str, Any],
    *,
    pairings: dict[str, Any] | None,
    warnings: list[DataWarning],
    sources: list[SourceStat],
    decisions: dict[str, Any] | None = None,
    batches: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The full sidecar: reference keys in order, then ours (docs/scoring.md "The sidecar")."""
    collapsed = collapse_warnings(warnings)
    out: dict[str, Any] = {k: scorecard.get(k) for k in REFERENCE_KEYS}
    out["warnings"] = [warning_line(w) for w in collapsed]
    for k in OUR_KEYS:
        out[k] = scorecard.get(k)
    out["batchAmortization"] = batches or {"summary": [], "batches": []}
    out["pairings"] = pairings or {"fleet": None, "imported": None}
    out["sources"] = [s.model_dump() for s in sources]
    out["warningRecords"] = [w.model_dump() for w in collapsed]
    out["decisions"] = decisions  # report/decisions.py decisions_sidecar; None when not computed
    return out
