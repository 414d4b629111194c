"""Run-failure records: what failed, kept beside the incremental state so every host sees it.

The run-failure sensor (``defs/sensors.py``) writes one JSON document per failed run under
``<state location>/run-failures/<YYYY-MM-DD>/<run id>.json`` (the day the run failed, UTC): the job,
the partition or range, every failed step with the innermost error, and the run's tags. Each record
is its own object, written once (atomically), so concurrent writers never collide and an object store
needs no generation check. :func:`read_failures` lists them, newest first (docs/dagster.md
"Failure records").

Pure module: no Dagster (errors are read by duck typing: ``cause``, ``cls_name``, ``message``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import orjson
from upath import UPath

from scorecard_assets.storage.location import as_location, write_bytes

FAILURES_PREFIX = "run-failures"
MAX_ERROR_CHARS = 2000
_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$")


def root_cause(error: object) -> str:
    """The innermost error of a chain (Dagster wraps user errors in "Error occurred while executing
    op …"), as ``Type: message``."""
    while getattr(error, "cause", None) is not None:
        error = error.cause  # type: ignore[attr-defined]
    kind = getattr(error, "cls_name", None)
    message = str(getattr(error, "message", error)).strip()
    return message if not kind or message.startswith(kind) else f"{kind}: {message}"


def failure_record(
    *,
    run_id: str,
    job: str,
    failed_at: datetime,
    message: str,
    steps: Sequence[tuple[str, str]],
    tags: Mapping[str, str],
    location: str = "",
) -> dict[str, Any]:
    """The record of one failed run; ``steps`` are (step key, root cause) pairs."""
    partition = tags.get("dagster/partition")
    start = tags.get("dagster/asset_partition_range_start")
    end = tags.get("dagster/asset_partition_range_end")
    return {
        "run_id": run_id,
        "job": job,
        "code_location": location,
        "failed_at": failed_at.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "partition": partition,
        "partition_range": [start, end] if start and end else None,
        "message": message[:MAX_ERROR_CHARS],
        "failed_steps": [{"step": s, "error": e[:MAX_ERROR_CHARS]} for s, e in steps],
        "tags": {k: v for k, v in sorted(tags.items()) if not k.startswith(".dagster")},
    }


def record_failure(state_location: str | os.PathLike[str] | UPath, record: Mapping[str, Any]) -> UPath:
    """Write ``record`` under ``state_location`` (module doc); returns where it went."""
    run_id = str(record["run_id"])
    if not _RUN_ID_RE.match(run_id):
        raise ValueError(f"run id {run_id!r} cannot name a file")
    day = str(record["failed_at"])[:10]
    target = as_location(state_location) / FAILURES_PREFIX / day / f"{run_id}.json"
    write_bytes(target, orjson.dumps(record, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    return target


def read_failures(state_location: str | os.PathLike[str] | UPath) -> list[dict[str, Any]]:
    """Every readable failure record, newest first (unreadable files are skipped: they are ours)."""
    root = as_location(state_location) / FAILURES_PREFIX
    records = []
    try:
        days = [p for p in root.iterdir() if p.is_dir()]
    except (FileNotFoundError, NotADirectoryError):
        return []
    for day in days:
        for path in day.iterdir():
            if path.name.endswith(".json"):
                try:
                    value = orjson.loads(path.read_bytes())
                except (OSError, orjson.JSONDecodeError):
                    continue
                if isinstance(value, dict):
                    records.append(value)
    return sorted(records, key=lambda r: str(r.get("failed_at")), reverse=True)


def summary_line(record: Mapping[str, Any]) -> str:
    """One line for logs: job, partition, first failed step and its error."""
    where = record.get("partition") or "–".join(record.get("partition_range") or []) or "unpartitioned"
    steps = record.get("failed_steps") or []
    first = f"{steps[0]['step']}: {steps[0]['error']}" if steps else str(record.get("message"))
    more = f" (+{len(steps) - 1} more step(s))" if len(steps) > 1 else ""
    return f"run {record['run_id']} of {record['job']} [{where}] failed: {first.splitlines()[0][:300]}{more}"
