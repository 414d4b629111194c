"""Incremental refresh rules: when an asset's stored value is still its answer, and what it was
built from (docs/incremental.md).

Every table-shaped asset stores, in its manifest's ``extra``, a ``built_from`` record: what it was
computed from. For an ingest asset that is the fingerprints of the files its reader reads
(``storage/fingerprints.py``) and the configuration its reader uses; for a transform, the stored
*versions* of its inputs, the code version and the configuration digest. Keeping the record inside
the stored value (rather than beside it) means it can never describe another value than the one
stored: a failed write, a wiped store or a half-copied store simply makes the next run compute
afresh.

The rule is :func:`still_current`: the previous stored value is reused (the asset returns its
handle and the IO manager writes nothing, so its version stays the same and the assets downstream
see an unchanged input) exactly when its ``built_from`` equals the current one. Any difference
(a new line in a journal, an edited comment, a new code version, another config) means the asset is
computed as a from-scratch build computes it, so its value is the from-scratch value.

Also here: which files each ingest reader reads (the paths that are fingerprinted) and the
per-issue merge of run rows (:func:`merge_issue_rows`).

Pure module: no Dagster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import TableResult
from scorecard_assets.storage import fingerprints
from scorecard_assets.storage.codec import frame_to_arrow

BUILT_FROM = "built_from"
# bumped when the meaning of a built_from record changes (an old record then never matches)
RULE_VERSION = 1

RUNS_FILE_NAME = "runs.jsonl"
SCHED_DIR_NAME = "sched"
EVENTS_FILE_NAME = "events.jsonl"
ISSUES_FILE_NAME = "issues.json"
COMMENTS_FILE_NAME = "comments.json"


def digest(value: Any) -> str:
    """A short stable digest of a JSON-shaped value (sorted keys; paths and times as text)."""
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    return hashlib.sha256(data).hexdigest()[:32]


def result_digest(result: TableResult, *, ignore_extra: Iterable[str] = ()) -> str:
    """The digest of a whole table result: its frame (Arrow IPC bytes: values, types, order), its
    warnings, sources and extras (less ``ignore_extra``, counters that say how a value was read)."""
    h = hashlib.sha256()
    table = frame_to_arrow(result.frame)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    h.update(memoryview(sink.getvalue()))
    skipped = {*ignore_extra, BUILT_FROM}
    rest = {
        "warnings": [w.model_dump(mode="json") for w in result.warnings],
        "sources": [s.model_dump(mode="json") for s in result.sources],
        "extra": {k: v for k, v in result.extra.items() if k not in skipped},
    }
    h.update(digest(rest).encode())
    return h.hexdigest()[:32]


def config_digest(cfg: ScorecardConfig) -> str:
    """The digest of the whole configuration (any change to it recomputes what depends on it)."""
    return digest(cfg.model_dump(mode="json"))


def built_from(asset: str, code_version: str, **parts: Any) -> dict[str, Any]:
    """The ``built_from`` record of ``asset``: rule and code version plus ``parts`` (JSON-shaped)."""
    return _normalised({"rule": RULE_VERSION, "asset": asset, "code": code_version, **parts})


def previous_built_from(extra: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The ``built_from`` record stored in a previous value's ``extra`` (None when there is none)."""
    record = (extra or {}).get(BUILT_FROM)
    return record if isinstance(record, dict) else None


def still_current(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> bool:
    """True when the stored value built from ``previous`` is what ``current`` inputs give.

    Fingerprint books (the ``inputs`` part) are compared with ``fingerprints.same_inputs``, every
    other part by equality."""
    if not isinstance(previous, Mapping) or set(previous) != set(current):
        return False
    for key, now in current.items():
        before = previous[key]
        if key == "inputs":
            if not fingerprints.same_inputs(before, now):
                return False
        elif _normalised(before) != _normalised(now):
            return False
    return True


def _normalised(value: Any) -> Any:
    return orjson.loads(
        orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str)
    )


# ---------------------------------------------------------------------------------------------
# what each reader reads


def trail_export_paths(cfg: ScorecardConfig) -> list[Path]:
    """The recorded export's files: each repo's directory, ``issues.json`` and ``comments.json``."""
    if cfg.github.recorded_dir is None:
        return []
    out: list[Path] = []
    for repo in cfg.repo_names:
        repo_dir = cfg.recorded_repo_dir(repo)
        out.extend([repo_dir, repo_dir / ISSUES_FILE_NAME, repo_dir / COMMENTS_FILE_NAME])
    return out


def telemetry_paths(cfg: ScorecardConfig) -> list[Path]:
    """Each host's dossier home and its ``runs.jsonl``."""
    out: list[Path] = []
    for host in sorted(cfg.hosts, key=lambda h: h.name):
        out.extend([host.dossier_home, host.dossier_home / RUNS_FILE_NAME])
    return out


def journal_paths(cfg: ScorecardConfig, slug: Any) -> list[Path]:
    """Each host's dossier home, its ``sched/`` directory (whose listing is read) and the journal of
    every configured repo; ``slug`` maps a repo name to its directory name."""
    out: list[Path] = []
    for host in sorted(cfg.hosts, key=lambda h: h.name):
        sched = host.dossier_home / SCHED_DIR_NAME
        out.extend([host.dossier_home, sched])
        out.extend(sched / slug(repo) / EVENTS_FILE_NAME for repo in sorted(cfg.repo_names))
    return out


def reader_config(cfg: ScorecardConfig, *, hosts: bool = False, repos: bool = False) -> dict[str, Any]:
    """The part of the configuration a reader depends on (hosts, repos, the GitHub source)."""
    out: dict[str, Any] = {}
    if hosts:
        out["hosts"] = [h.model_dump(mode="json") for h in sorted(cfg.hosts, key=lambda h: h.name)]
    if repos:
        out["repos"] = list(cfg.repo_names)
    return out


def input_book(paths: Iterable[Path], previous: Mapping[str, Any] | None) -> fingerprints.Book:
    """Fingerprints of ``paths``, with content hashes where the previous record had them and the
    stat alone cannot decide (``fingerprints.refresh_hashes``)."""
    before = (previous or {}).get("inputs")
    return fingerprints.refresh_hashes(
        before if isinstance(before, Mapping) else None, fingerprints.book_of(paths)
    )


# ---------------------------------------------------------------------------------------------
# per-issue merge


ISSUE_KEY = ("repo", "issue")


def issue_keys(frame: pd.DataFrame) -> pd.MultiIndex:
    """The (repo, issue) pairs of ``frame``'s rows, as an index (one entry per row)."""
    return pd.MultiIndex.from_arrays([frame["repo"].astype(object), frame["issue"].astype("int64")])


def merge_issue_rows(
    stored: pd.DataFrame, fresh: pd.DataFrame, changed: pd.MultiIndex, order: list[str]
) -> pd.DataFrame:
    """``stored`` without the rows of the ``changed`` issues, plus ``fresh`` (the recomputed rows of
    exactly those issues), in the stable ``order`` a from-scratch build produces; dtypes of
    ``stored`` are kept (an empty side takes the other's)."""
    keep = stored[~issue_keys(stored).isin(changed)] if len(stored) else stored
    parts = [f for f in (keep, fresh) if len(f)]
    if not parts:
        return stored.iloc[0:0]
    merged = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
    merged = merged.sort_values(order, kind="stable").reset_index(drop=True)
    return merged.astype(stored.dtypes.to_dict()) if len(stored.columns) == len(merged.columns) else merged
