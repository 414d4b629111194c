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
issue-by-issue refresh of ``trail_runs`` (:func:`refresh_trail_runs`).

Pure module: no Dagster.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import DataWarning, TableResult
from scorecard_assets.storage import fingerprints
from scorecard_assets.storage.codec import frame_to_arrow
from scorecard_assets.transform.trail_runs import trail_runs_by_issue, trail_runs_warnings

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


# The configuration fields the run table's join reads (``join.join_parts``: attribution by repo,
# the model namer and the price table); nothing else in the config changes a run_table row.
JOIN_CONFIG = ("repos", "models")
# The field that only says how far the data goes: a report week's value does not depend on it
# (a week past it is refused before anything is computed), so it is no part of a week's memo.
SNAPSHOT_FIELD = "as_of"


def config_digest(
    cfg: ScorecardConfig, *, only: Sequence[str] | None = None, without: Sequence[str] = ()
) -> str:
    """The digest of the configuration (any change to it recomputes what depends on it): the whole
    config, or only the fields ``only`` names, less ``without``; an asset digests just the fields
    it reads, so moving ``as_of`` a week does not throw away a join that never reads it."""
    dumped = cfg.model_dump(mode="json")
    fields = [k for k in (dumped if only is None else only) if k not in set(without)]
    return digest({k: dumped.get(k) for k in fields})


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
# trail_runs, issue by issue (docs/incremental.md "Recomputing changed issues")

ISSUE_STATE_FILE = "issues.parquet"
TOKEN_KEY = "incremental_token"
RUN_ORDER = ["repo", "issue", "run_order"]
_HASH_KEYS = ("scorecard-issue-0", "scorecard-issue-1")


def issue_digests(comments: pd.DataFrame) -> pd.DataFrame:
    """One row per (repo, issue) of ``comments``: two 64-bit digests of its comment rows (every
    column) and their count. Rows are hashed one by one and summed, so the digest does not depend on
    the order rows arrive in (the build sorts them by content anyway)."""
    if not len(comments):
        return pd.DataFrame({"repo": pd.Series(dtype=object), "issue": pd.Series(dtype="int64"),
                             "d0": pd.Series(dtype="uint64"), "d1": pd.Series(dtype="uint64"),
                             "n": pd.Series(dtype="int64")})  # fmt: skip
    cols = sorted(comments.columns)
    keyed = pd.DataFrame(
        {"repo": comments["repo"].astype(object).to_numpy(), "issue": comments["issue"].to_numpy()}
    )
    for i, key in enumerate(_HASH_KEYS):
        keyed[f"d{i}"] = pd.util.hash_pandas_object(
            comments[cols], index=False, hash_key=key.ljust(16)[:16]
        ).to_numpy()
    grouped = keyed.groupby(["repo", "issue"], sort=True)
    out = grouped[["d0", "d1"]].sum()
    out["n"] = grouped.size()
    return out.reset_index().astype({"issue": "int64", "d0": "uint64", "d1": "uint64", "n": "int64"})


def changed_issues(before: pd.DataFrame | None, now: pd.DataFrame) -> pd.DataFrame | None:
    """The (repo, issue) pairs of ``now`` that are new or whose comments differ from ``before``;
    None when a full refresh is needed (no previous digests, or an issue's comments disappeared)."""
    if before is None:
        return None
    merged = now.merge(before, on=["repo", "issue"], how="outer", suffixes=("", "_before"), indicator=True)
    if (merged["_merge"] == "right_only").any():
        return None  # comments of an issue were deleted: rebuild everything
    both = merged["_merge"] == "both"
    same = both & (merged["d0"] == merged["d0_before"]) & (merged["d1"] == merged["d1_before"])
    same &= merged["n"] == merged["n_before"]
    return merged.loc[~same, ["repo", "issue"]].reset_index(drop=True)


def save_issue_state(path: Path, digests: pd.DataFrame, warnings: dict[tuple[str, int], list[DataWarning]],
                     token: str) -> None:  # fmt: skip
    """Write the per-issue digests and per-trail warnings (JSON text) with ``token`` (temp + rename)."""
    notes = {k: [w.model_dump(mode="json") for w in v] for k, v in warnings.items()}
    save_keyed_state(path, digests, notes, token)


def load_issue_state(
    path: Path, token: str | None
) -> tuple[pd.DataFrame, dict[tuple[str, int], list[DataWarning]]] | None:
    """The state :func:`save_issue_state` wrote, when it carries ``token`` (else None: it belongs to
    another stored value, and the caller rebuilds everything)."""
    state = load_keyed_state(path, token)
    if state is None:
        return None
    digests, notes = state
    try:
        warnings = {k: [DataWarning.model_validate(w) for w in v] for k, v in notes.items()}
    except (TypeError, ValueError):  # a file of the right token but another shape
        return None
    return digests, warnings


def save_keyed_state(
    path: Path, digests: pd.DataFrame, notes: Mapping[tuple[str, int], Any], token: str
) -> None:
    """Write per-issue digests (``repo``, ``issue``, ``d0``, ``d1``, ``n``) and a JSON-shaped note
    per issue (absent = none) to one Parquet file carrying ``token`` (temp + rename). The stored
    value carries the same token, so state and value are used together or not at all
    (docs/incremental.md "What is remembered")."""
    keys = list(zip(digests["repo"].tolist(), digests["issue"].tolist(), strict=True))
    texts = [orjson.dumps(notes[k]).decode() if k in notes else None for k in keys]
    table = pa.table(
        {
            "repo": pa.array(digests["repo"].tolist(), pa.string()),
            "issue": pa.array(digests["issue"].tolist(), pa.int64()),
            "d0": pa.array(digests["d0"].to_numpy(), pa.uint64()),
            "d1": pa.array(digests["d1"].to_numpy(), pa.uint64()),
            "n": pa.array(digests["n"].tolist(), pa.int64()),
            "warnings": pa.array(texts, pa.string()),
        }
    ).replace_schema_metadata({TOKEN_KEY: token, "rule": str(RULE_VERSION)})
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(path)


def load_keyed_state(path: Path, token: str | None) -> tuple[pd.DataFrame, dict[tuple[str, int], Any]] | None:
    """The digests and notes :func:`save_keyed_state` wrote, when the file carries ``token`` (else
    None, as for a missing or unreadable file: the caller rebuilds everything)."""
    if token is None or not path.is_file():
        return None
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowInvalid):
        return None
    meta = table.schema.metadata or {}
    if meta.get(TOKEN_KEY.encode()) != token.encode() or meta.get(b"rule") != str(RULE_VERSION).encode():
        return None
    try:
        repos = table.column("repo").to_pylist()
        issues = table.column("issue").to_pylist()
        texts = table.column("warnings").to_pylist()
        notes = {
            (r, i): orjson.loads(t) for r, i, t in zip(repos, issues, texts, strict=True) if t is not None
        }
        digests = pd.DataFrame(
            {
                "repo": pd.Series(repos, dtype=object),
                "issue": pd.Series(issues, dtype="int64"),
                "d0": table.column("d0").to_numpy().astype("uint64"),
                "d1": table.column("d1").to_numpy().astype("uint64"),
                "n": pd.Series(table.column("n").to_pylist(), dtype="int64"),
            }
        )
    except (KeyError, TypeError, ValueError, orjson.JSONDecodeError):  # right token, another shape
        return None
    return digests, notes


def _rows_of(frame: pd.DataFrame, keys: pd.DataFrame) -> pd.Series:
    """A boolean mask of ``frame``'s rows whose (repo, issue) is in ``keys``."""
    if not len(frame) or not len(keys):
        return pd.Series(False, index=frame.index)
    wanted = pd.MultiIndex.from_frame(keys[["repo", "issue"]].astype({"repo": object, "issue": "int64"}))
    have = pd.MultiIndex.from_arrays([frame["repo"].astype(object), frame["issue"].astype("int64")])
    return pd.Series(have.isin(wanted), index=frame.index)


def refresh_trail_runs(
    comments: pd.DataFrame,
    stored: pd.DataFrame | None,
    state: tuple[pd.DataFrame, dict[tuple[str, int], list[DataWarning]]] | None,
) -> tuple[TableResult, pd.DataFrame, dict[tuple[str, int], list[DataWarning]], int | None]:
    """``trail_runs`` for ``comments``: recomputed only for the issues whose comments changed since
    ``state`` (the digests and per-trail warnings of the ``stored`` rows), everything when there is
    no usable state. Returns the result (equal to ``build_trail_runs(comments)``), the new digests
    and per-issue warnings, and how many issues were recomputed (None = all)."""
    digests = issue_digests(comments)
    changed = changed_issues(state[0], digests) if state is not None and stored is not None else None
    if changed is None:
        frame, per_issue = trail_runs_by_issue(comments)
        recomputed = None
    else:
        fresh, fresh_warnings = trail_runs_by_issue(comments[_rows_of(comments, changed).to_numpy()])
        assert state is not None and stored is not None
        keep = stored[~_rows_of(stored, changed).to_numpy()]
        parts = [f for f in (keep, fresh) if len(f)]
        frame = pd.concat(parts, ignore_index=True) if len(parts) > 1 else (parts[0] if parts else fresh)
        frame = frame.sort_values(RUN_ORDER, kind="stable").reset_index(drop=True)
        if len(keep) and len(fresh):
            frame = frame.astype(keep.dtypes.to_dict())
        changed_keys = set(zip(changed["repo"].tolist(), changed["issue"].tolist(), strict=True))
        per_issue = {k: v for k, v in state[1].items() if k not in changed_keys}
        per_issue.update(fresh_warnings)
        recomputed = len(changed_keys)
    milestones = int(frame["milestone_count"].sum()) if len(frame) else 0
    result = TableResult(
        frame=frame,
        warnings=trail_runs_warnings(frame, per_issue),
        extra={"milestones": milestones, "runs": len(frame)},
    )
    return result, digests, per_issue, recomputed
