"""What every asset definition declares besides its computation: owners, tags, a code version and,
for the table-shaped assets, the column schema of their contract in ``schemas.py``.

One place for all of it: ``definitions.py`` applies :func:`with_catalog` to every asset spec of the
code location, so the UI shows owners, tags and column descriptions before anything is materialized,
and a new asset gets the defaults without an edit here. The IO manager adds the same column schema,
with the types actually stored, to each materialization (:func:`column_schema`), so the descriptions
stay after the first run.

Code versions: bump an asset's entry in :data:`CODE_VERSIONS` when a change makes it compute a
different value from the same inputs (a rule, a formula, a new column); Dagster then marks it and
what depends on it as changed code. Refactors that keep every value leave it alone
(docs/dagster.md "Definitions: the catalog").
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from scorecard_assets.schemas import (
    AGENT_LOG_USAGE,
    BATCH_JOURNAL,
    BATCH_LOGS,
    BATCH_PREP,
    BATCH_PULL_REQUESTS,
    CYCLES,
    DISPATCH_EVENTS,
    RUN_TABLE,
    RUN_TELEMETRY,
    TRAIL_COMMENTS,
    TRAIL_RUNS,
    Contract,
)
from scorecard_assets.sessions.schema import GIT_COMMITS, SESSION_CYCLES, SESSION_FACTS

# Who answers for the assets (Dagster owners: a team or an e-mail address). Change it for your team.
OWNERS: tuple[str, ...] = ("team:scorecard",)

DEFAULT_CODE_VERSION = "1"
CODE_VERSIONS: dict[str, str] = {
    "trail_comments": "2",
    "run_telemetry": "2",
    "dispatch_events": "2",
    "agent_log_usage": "2",
    "batch_journal": "1",
    "batch_logs": "1",
    "batch_prep": "1",
    "batch_pull_requests": "1",
    "trail_runs": "1",
    "run_table": "1",
    "cycles": "2",
    "model_scorecard": "3",
    "pairing_scores": "1",
    "routing_advice": "1",
    "change_alerts": "1",
    "adjusted_effects": "1",
    "pairing_comparison": "1",
    "batch_amortization": "1",
    "scorecard_report": "3",
    "report_pull_request": "1",
    "session_records": "1",
    "git_commits": "1",
    "session_cycles": "1",
    "session_pairing_scores": "1",
}

# Where each ingest asset's rows come from (the `source` tag).
SOURCES: dict[str, str] = {
    "trail_comments": "github",
    "run_telemetry": "runs-jsonl",
    "dispatch_events": "scheduler-journal",
    "agent_log_usage": "agent-logs",
    "session_records": "session-stores",
    "git_commits": "git",
    "batch_journal": "scheduler-journal",
    "batch_logs": "agent-logs",
    "batch_prep": "claude-transcripts",
    "batch_pull_requests": "github",
}

# The frame contract of each table-shaped asset (the others hold JSON documents).
CONTRACTS: dict[str, Contract] = {
    "trail_comments": TRAIL_COMMENTS,
    "run_telemetry": RUN_TELEMETRY,
    "dispatch_events": DISPATCH_EVENTS,
    "agent_log_usage": AGENT_LOG_USAGE,
    "batch_journal": BATCH_JOURNAL,
    "batch_logs": BATCH_LOGS,
    "batch_prep": BATCH_PREP,
    "batch_pull_requests": BATCH_PULL_REQUESTS,
    "trail_runs": TRAIL_RUNS,
    "run_table": RUN_TABLE,
    "cycles": CYCLES,
    "session_records": SESSION_FACTS,
    "git_commits": GIT_COMMITS,
    "session_cycles": SESSION_CYCLES,
}

# How a contract kind reads in the UI, and whether the kind admits missing values.
_KIND_TYPES: dict[str, tuple[str, bool]] = {
    "str": ("string", True),
    "int": ("int64", False),
    "Int": ("Int64", True),
    "float": ("float64", True),
    "bool": ("bool", False),
    "boolean": ("boolean", True),
    "datetime": ("timestamp[UTC]", True),
    "object": ("list/dict", True),
}


def column_schema(asset: str, stored_types: Mapping[str, str] | None = None) -> dg.TableSchema | None:
    """The column schema of ``asset``'s contract (None when it has none): every column with its
    meaning from ``schemas.py``; with ``stored_types``, the types as stored, and the stored columns the
    contract does not name (no description) after the contract's."""
    contract = CONTRACTS.get(asset)
    if contract is None:
        return None
    columns = []
    for name, (kind, meaning) in contract.items():
        shown, nullable = _KIND_TYPES[kind]
        if stored_types is not None and name in stored_types:
            shown = stored_types[name]
        columns.append(
            dg.TableColumn(
                name=name,
                type=shown,
                description=meaning or None,
                constraints=dg.TableColumnConstraints(nullable=nullable),
            )
        )
    columns += [dg.TableColumn(name=n, type=t) for n, t in (stored_types or {}).items() if n not in contract]
    return dg.TableSchema(columns=columns)


def with_catalog(spec: dg.AssetSpec) -> dg.AssetSpec:
    """``spec`` with the catalog's owners, tags, code version and column schema (kept where the
    asset's own definition already sets them)."""
    name = spec.key.to_user_string()
    tags = {"domain": "agent-fleet", "layer": spec.group_name or "default"}
    if name in SOURCES:
        tags["source"] = SOURCES[name]
    tags["partitioning"] = "weekly" if spec.partitions_def is not None else "snapshot"
    metadata = dict(spec.metadata)
    schema = column_schema(name)
    if schema is not None and "dagster/column_schema" not in metadata:
        metadata["dagster/column_schema"] = schema
    return spec.replace_attributes(
        owners=list(spec.owners) or list(OWNERS),
        tags={**tags, **spec.tags},
        code_version=spec.code_version or CODE_VERSIONS.get(name, DEFAULT_CODE_VERSION),
        metadata=metadata,
    )
