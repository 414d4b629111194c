"""Assembling a window's report inputs: which warnings apply to it, and the sidecar in its key order.

Pure (no Dagster). The scoring module builds the reference part of the sidecar; this module adds
our parts (pairings, sources, structured warnings) in the order of ``sidecar_keys``.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scorecard_assets.records import DataWarning, SourceStat, collapse_warnings, warning_line
from scorecard_assets.sidecar_keys import OUR_KEYS, REFERENCE_KEYS


def relative_to(warnings: Iterable[DataWarning], base: Path | None) -> list[DataWarning]:
    """Warnings whose file paths under ``base`` (the config's folder) are shown relative to it, so a
    published report does not spell out a machine's directory layout."""
    if base is None:
        return list(warnings)
    prefix = str(base).rstrip("/") + "/"
    out = []
    for w in warnings:
        if prefix in w.message or (w.path or "").startswith(prefix):
            w = w.model_copy(
                update={
                    "message": w.message.replace(prefix, ""),
                    "path": w.path[len(prefix) :] if w.path and w.path.startswith(prefix) else w.path,
                }
            )
        out.append(w)
    return out


def window_warnings(warnings: Iterable[DataWarning], issues: set[tuple[str, int]]) -> list[DataWarning]:
    """Warnings that concern the window: those about one of its issues, and every warning that is
    not about a single issue (sources, hosts, repo-wide counts). Identical ones are collapsed."""
    kept = [w for w in warnings if w.issue is None or (w.repo or "", w.issue) in issues]
    return collapse_warnings(kept)


def assemble_sidecar(
    scorecard: dict[str, Any],
    *,
    pairings: dict[str, Any] | None,
    warnings: list[DataWarning],
    sources: list[SourceStat],
) -> dict[str, Any]:
    """The full sidecar: reference keys in order, then ours (docs/architecture.md "Sidecar")."""
    collapsed = collapse_warnings(warnings)
    out: dict[str, Any] = {k: scorecard.get(k) for k in REFERENCE_KEYS}
    out["warnings"] = [warning_line(w) for w in collapsed]
    for k in OUR_KEYS:
        out[k] = scorecard.get(k)
    out["pairings"] = pairings or {"fleet": None, "imported": None}
    out["sources"] = [s.model_dump() for s in sources]
    out["warningRecords"] = [w.model_dump() for w in collapsed]
    return out
