"""Materialization metadata for table-shaped assets: row count, a sanitised preview, sources;
and :func:`table_output`, what such an asset returns (its warning checks live in ``checks.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import dagster as dg
import pandas as pd

from scorecard_assets.records import TableResult
from scorecard_assets.sanitize import safe_cell
from scorecard_assets.storage.tables import StoredTable

PREVIEW_ROWS = 10


def _cell(v: Any) -> str:
    if isinstance(v, list | dict):
        text = f"{type(v).__name__}[{len(v)}]"
    elif v is None or (isinstance(v, float) and pd.isna(v)) or v is pd.NA or v is pd.NaT:
        text = ""
    else:
        text = str(v)
    return safe_cell(text.replace("\n", " "))[:60]


def preview_markdown(df: pd.DataFrame, columns: Sequence[str] | None = None, rows: int = PREVIEW_ROWS) -> str:
    """A small markdown table of the first rows (every cell sanitised and shortened)."""
    if df.empty:
        return "_no rows_"
    cols = [c for c in (columns or list(df.columns)) if c in df.columns]
    head = df[cols].head(rows)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for rec in head.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in rec) + " |")
    return "\n".join(lines)


def table_metadata(result: TableResult, preview_columns: Sequence[str] | None = None) -> dict[str, Any]:
    df = result.frame
    # the column schema (contract descriptions, stored types) is added by the IO manager (catalog.py)
    meta: dict[str, Any] = {
        "dagster/row_count": len(df),
        "preview": dg.MetadataValue.md(preview_markdown(df, preview_columns)),
        "warnings": sum(w.count for w in result.warnings),
    }
    if result.sources:
        meta["sources"] = dg.MetadataValue.md(sources_markdown(result))
    return meta


def sources_markdown(result: TableResult) -> str:
    lines = ["| source | host | repo | files | rows | malformed | MB |", "|---|---|---|---|---|---|---|"]
    for s in result.sources:
        lines.append(
            f"| {safe_cell(s.source)} | {safe_cell(s.host or '')} | {safe_cell(s.repo or '')} | {s.files} "
            f"| {s.rows} | {s.malformed} | {s.bytes / 1e6:.1f} |"
        )
    return "\n".join(lines)


def table_output(
    result: TableResult,
    preview_columns: Sequence[str] | None = None,
    extra: dict[str, Any] | None = None,
) -> dg.Output[TableResult]:
    """What a table-shaped asset returns: ``result`` with :func:`table_metadata` (then ``extra``'s
    entries). Its warning checks read ``result.warnings`` from the stored value (``checks.py``)."""
    return dg.Output(result, metadata={**table_metadata(result, preview_columns), **(extra or {})})


def unchanged_output(previous: StoredTable, extra: dict[str, Any] | None = None) -> dg.Output[StoredTable]:
    """What an asset returns when its stored value is still its answer: the handle of that value,
    which the IO manager keeps as it is (no write, same version). Metadata from the manifest alone
    (docs/incremental.md "When a stored value is reused")."""
    meta: dict[str, Any] = {
        "dagster/row_count": previous.num_rows,
        "warnings": sum(w.count for w in previous.warnings),
        "unchanged": True,
        "preview": dg.MetadataValue.md(f"_unchanged: stored version {previous.version} kept_"),
    }
    return dg.Output(previous, metadata={**meta, **(extra or {})})


def family_ranking(scored: dict[str, Any] | None) -> tuple[int, dg.MetadataValue | None]:
    """A scored pool's family pairings for the UI: how many, and their ranking as a table (None when
    there is none)."""
    groups = (scored or {}).get("views", {}).get("famCombo", {}).get("groups", [])
    if not groups:
        return 0, None
    rows = [
        {
            "rank": g.get("rank"),
            "pairing": g["label"],
            "scoreAdj": round(g["scoreAdj"], 1),
            "interval": "–".join(f"{x:.1f}" for x in g.get("interval") or []),
            "tie": "≈" if g.get("tie") else "",
            "judged": g["hjudged"],
        }
        for g in groups
    ]
    return len(groups), dg.MetadataValue.md(preview_markdown(pd.DataFrame(rows), rows=20))
