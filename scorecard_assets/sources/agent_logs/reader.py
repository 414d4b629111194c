"""Reading a fleet's agent logs (``read_agent_logs``): the walk over every host's runs/ directories,
the incremental cache, the warnings and the ``AGENT_LOG_USAGE`` frame."""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from scorecard_assets.config import HostConfig, ScorecardConfig
from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.schemas import AGENT_LOG_USAGE, empty_frame
from scorecard_assets.sources.agent_logs.cache import (
    FULL_READ,
    AgentLogCache,
    FileState,
    ReadPlan,
    fingerprint,
)
from scorecard_assets.sources.agent_logs.log_warnings import file_warnings, missing, shared_slug, unreadable
from scorecard_assets.sources.agent_logs.slices import EMPTY_TABLE, SliceResult, SliceTable, cost_missing
from scorecard_assets.sources.agent_logs.slicing import parse_log_file
from scorecard_assets.sources.agent_logs.tally import NO_TOTALS, DirTally, RowTotals, source_stat
from scorecard_assets.sources.files import UNREADABLE, path_problem
from scorecard_assets.sources.slugs import sanitize_slug, slug_collisions

_LOG_NAME_RE = re.compile(r"-([0-9]+)\.log\Z")


# --------------------------------------------------------------------------------------------------
# File names and slugs


def issue_from_log_name(name: str) -> int | None:
    """The issue number of a log file name (``-<digits>.log`` at the very end), else None.

    ``issue-526.log`` -> 526, ``batch-b-20260901-02-m2-542.log`` -> 542; ``notes.txt``,
    ``issue-.log``, ``engine.log`` -> None. Only ASCII digits count, and a number that does not fit
    a 64-bit integer is no issue number.
    """
    match = _LOG_NAME_RE.search(name)
    if match is None:
        return None
    number = int(match.group(1))
    return number if number < 2**63 else None


# --------------------------------------------------------------------------------------------------
# Files, directories, the frame


@dataclass
class _ReadCounters:
    unchanged: int = 0
    appended: int = 0
    full: int = 0
    bytes_parsed: int = 0


class _FileRead(NamedTuple):
    """One log read by this call: who it belongs to and where its slices are.

    Its rows are ``kept_rows`` rows of the loaded cache table from ``kept_first`` (all of them when
    the file is unchanged, the slices before the re-parsed last one after an append), followed by
    ``fresh_rows`` slices of this call's parses from ``fresh_first``. ``state`` is the file's new
    cache state after a parse, None when it is unchanged. The first four fields are the sort key.
    """

    host: str
    repo: str
    issue: int
    log_path: str
    slug: str
    kept_first: int
    kept_rows: int
    fresh_first: int
    fresh_rows: int
    state: FileState | None


_FILE_ORDER = itemgetter(0, 1, 2, 3)
_NO_SLICES: tuple[SliceResult, ...] = ()


def _has_problem(s: SliceResult) -> bool:
    """True when the slice contributes to a file warning (see ``log_warnings.file_warnings``)."""
    return (
        s.malformed > 0
        or s.bad_values > 0
        or s.replaced > 0
        or s.preamble_problem is not None
        or s.format_hint is not None
        or cost_missing(s.log_format, s.cost_usd, s.assistant_turns, s.result_records)
    )


def _log_entries(runs_dir: Path) -> list[tuple[str, str]]:
    """(name, path) of every entry in ``runs_dir``, by name. OSError propagates.

    Entries of any type are returned: one named like a log that is not a regular file (a directory,
    a broken or looping symlink) is reported as unreadable by ``_read_one_log`` rather than skipped.
    """
    with os.scandir(runs_dir) as entries:
        found = [(e.name, e.path) for e in entries]
    return sorted(found)


@dataclass
class _Read:
    """What one ``read_agent_logs`` call accumulates across hosts and repos.

    ``cached`` is the loaded cache table (empty without a usable cache) and ``totals`` its running
    totals; ``fresh`` holds the slices parsed by this call; ``files`` one entry per log read;
    ``done`` the logs parsed by this call, with their stat (for a dossier home shared by two hosts).
    """

    cache: AgentLogCache | None
    cached: SliceTable = EMPTY_TABLE
    totals: RowTotals = NO_TOTALS
    counters: _ReadCounters = field(default_factory=_ReadCounters)
    fresh: list[SliceResult] = field(default_factory=list)
    files: list[_FileRead] = field(default_factory=list)
    warnings: list[DataWarning] = field(default_factory=list)
    done: dict[str, tuple[tuple[int, int, int, int], _FileRead]] = field(default_factory=dict)


def _read_repo_logs(
    read: _Read, host: HostConfig, repo: str, shared_with: list[str], *, home_unusable: bool = False
) -> SourceStat:
    """Read ``<dossier_home>/sched/<slug>/runs/*.log`` of one repo on one host."""
    slug = sanitize_slug(repo)
    runs_dir = host.dossier_home / "sched" / slug / "runs"
    tally = DirTally()
    if shared_with:
        read.warnings.append(shared_slug(runs_dir, host.name, repo, slug, shared_with))
        return source_stat(host.name, repo, runs_dir, tally, "slug shared with another repo; not read")
    if home_unusable:
        read.warnings.append(missing(runs_dir, host.name, repo, tally, exists=False))
        return source_stat(host.name, repo, runs_dir, tally, "dossier home unusable")
    try:
        entries = _log_entries(runs_dir)
    except FileNotFoundError:
        read.warnings.append(missing(runs_dir, host.name, repo, tally, exists=False))
        return source_stat(host.name, repo, runs_dir, tally, "no runs/ directory")
    except OSError as exc:
        read.warnings.append(unreadable(runs_dir, host.name, repo, exc, "directory"))
        read.warnings.append(missing(runs_dir, host.name, repo, tally, exists=True))
        return source_stat(host.name, repo, runs_dir, tally, "runs/ directory unreadable")
    for name, path in entries:
        issue = issue_from_log_name(name)
        if issue is None:
            tally.ignored_names += 1
            continue
        _read_one_log(read, host.name, repo, slug, path, issue, tally)
    if not tally.yields_usage:
        read.warnings.append(missing(runs_dir, host.name, repo, tally, exists=True))
    return source_stat(host.name, repo, runs_dir, tally, None)


def _read_one_log(
    read: _Read, host: str, repo: str, slug: str, path: str, issue: int, tally: DirTally
) -> None:
    """Read one log into ``read`` (its entry, its warnings) and ``tally``, parsing only what the cache
    cannot vouch for; an unreadable log is reported. An unchanged log costs a stat and a few lookups."""
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "not a regular file", path)
        cached = read.cache.unchanged_rows(path, st) if read.cache is not None else None
        if cached is not None:
            read.counters.unchanged += 1
            start, kept = cached
            read.files.append(_FileRead(host, repo, issue, path, slug, start, kept, 0, 0, None))
            parsed: Sequence[SliceResult] = _NO_SLICES
        else:
            got, parsed = _parse_log_file(read, (host, repo, issue, path, slug), st)
            start, kept = got.kept_first, got.kept_rows
            read.files.append(got)
    except OSError as exc:
        tally.unreadable += 1
        read.warnings.append(unreadable(path, host, repo, exc, "file"))
        return
    tally.files += 1
    tally.bytes += st.st_size
    stop = start + kept
    totals = read.totals
    if kept:
        tally.add_cached(totals, start, stop)
    if parsed:
        tally.add_parsed(parsed)
    if totals.problems[stop] > totals.problems[start] or (parsed and any(map(_has_problem, parsed))):
        slices = [*read.cached.problems(start, stop), *parsed]
        read.warnings.extend(file_warnings(path, host, repo, issue, slices))


def _parse_log_file(
    read: _Read, who: tuple[str, str, int, str, str], st: os.stat_result
) -> tuple[_FileRead, list[SliceResult]]:
    """Parse what the cache cannot vouch for of a log that is not unchanged, ``who`` = (host, repo,
    issue, path, slug): its entry and the slices parsed now (added to ``read.fresh``). OSError
    propagates."""
    path = who[3]
    seen = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    earlier = read.done.get(path)
    if earlier is not None and earlier[0] == seen:
        # The same file through another host's configuration, parsed already: the same rows.
        read.counters.unchanged += 1
        got = _FileRead(*who, *earlier[1][5:])
        return got, read.fresh[got.fresh_first : got.fresh_first + got.fresh_rows]
    plan = read.cache.plan(path, path, st) if read.cache is not None else FULL_READ
    if plan.mode == "append":
        read.counters.appended += 1
    else:
        read.counters.full += 1
    parsed, parsed_bytes = parse_log_file(
        path,
        plan.start_offset,
        st.st_size - plan.start_offset,
        base_line=plan.start_line,
        base_index=plan.start_index,
    )
    read.counters.bytes_parsed += parsed_bytes
    state = _file_state(read.cached, path, st, parsed_bytes, plan, parsed)
    got = _FileRead(*who, plan.kept_first_row, plan.kept_rows, len(read.fresh), len(parsed), state)
    read.fresh.extend(parsed)
    read.done[path] = (seen, got)
    return got, parsed


def _file_state(
    cached: SliceTable,
    path: str,
    st: os.stat_result,
    parsed_bytes: int,
    plan: ReadPlan,
    parsed: list[SliceResult],
) -> FileState:
    """The cache entry after a parse: fingerprint of the bytes read, where to resume, the row count.

    When fewer bytes than ``st_size`` could be read (the file shrank meanwhile), the entry records
    the bytes actually parsed and an mtime of 0 so the next read cannot take the file as unchanged.
    """
    size = plan.start_offset + parsed_bytes
    head_len, head_hash, tail_hash = fingerprint(path, size)
    if parsed:
        resume = (parsed[-1].offset, parsed[-1].line, parsed[-1].index)
    elif plan.kept_rows:
        last = plan.kept_first_row + plan.kept_rows - 1
        resume = tuple(int(cached.columns[name][last]) for name in ("offset", "line", "index"))
    else:
        resume = (0, 1, 0)
    return FileState(
        dev=st.st_dev,
        inode=st.st_ino,
        size=size,
        mtime_ns=st.st_mtime_ns if size == st.st_size else 0,
        head_len=head_len,
        head_hash=head_hash,
        tail_hash=tail_hash,
        resume_offset=resume[0],
        resume_line=resume[1],
        resume_index=resume[2],
        rows=plan.kept_rows + len(parsed),
    )


def _row_positions(starts: list[int], counts: list[int]) -> np.ndarray:
    """The concatenation of ``range(start, start + count)`` over the pairs, built without a Python loop."""
    start = np.array(starts, dtype=np.int64)
    count = np.array(counts, dtype=np.int64)
    total = int(count.sum())
    run_begins = np.cumsum(count) - count
    return np.arange(total, dtype=np.int64) + np.repeat(start - run_begins, count)


def _ordered_table(read: _Read, files: list[_FileRead]) -> SliceTable:
    """Every file's rows (kept from the cache, then parsed now) in the order of ``files``."""
    combined = read.cached.then(SliceTable.from_slices(read.fresh))
    fresh_base = read.cached.rows
    starts: list[int] = []
    counts: list[int] = []
    for f in files:
        starts += (f.kept_first, fresh_base + f.fresh_first)
        counts += (f.kept_rows, f.fresh_rows)
    return combined.take(_row_positions(starts, counts))


def _utc_times(ns: np.ndarray) -> Any:
    """Nanoseconds since the epoch (NaT's value for none) as a tz-aware UTC datetime array."""
    return pd.DatetimeIndex(ns.view("datetime64[ns]")).tz_localize("UTC").array


def _frame(files: list[_FileRead], table: SliceTable) -> pd.DataFrame:
    """The ``AGENT_LOG_USAGE`` frame, built column by column in contract order from the file entries
    (in row order) and their rows."""
    if table.rows == 0:
        return empty_frame(AGENT_LOG_USAGE)
    counts = np.fromiter((f.kept_rows + f.fresh_rows for f in files), dtype=np.int64, count=len(files))

    def per_row(position: int, dtype: Any = object) -> np.ndarray:
        return np.repeat(np.array([f[position] for f in files], dtype=dtype), counts)

    given = {
        "host": per_row(0),
        "repo": per_row(1),
        "issue": per_row(2, np.int64),
        "log_path": per_row(3),
        "slug": per_row(4),
        "slice_index": table.columns["index"],
        "slice_start": table.columns["slice_start_ns"],
        "slice_end": table.columns["slice_end_ns"],
    }
    columns: dict[str, Any] = {}
    for name, (kind, _) in AGENT_LOG_USAGE.items():
        values = given[name] if name in given else table.columns[name]
        if kind == "str":
            columns[name] = pd.array(values, dtype="str")
        elif kind in ("int", "float"):
            columns[name] = values
        elif kind == "boolean":
            columns[name] = pd.arrays.BooleanArray(values == 1, values == -1)
        elif kind == "object":
            columns[name] = values
        else:
            columns[name] = _utc_times(values)
    return pd.DataFrame(columns, copy=True)


def _load_cache(cache_dir: Path, read: _Read) -> AgentLogCache:
    """The cache with its table decoded into ``read``; an unusable table discards the whole cache."""
    cache = AgentLogCache.load(cache_dir)
    try:
        rows = cache.slice_rows
        table = SliceTable.decode(cache.slice_columns, rows, cache.unpacker) if len(cache) else EMPTY_TABLE
    except ValueError as exc:
        cache.discard(f"cache file with an unusable slice table ({exc}); full re-read")
        return cache
    columns = table.columns
    cache.drop_inconsistent(columns["offset"], columns["line"], columns["index"])
    read.cached, read.totals = table, RowTotals.of(table)
    return cache


def read_agent_logs(cfg: ScorecardConfig, cache_dir: Path | None = None) -> TableResult:
    """Every dispatch slice of every agent log, for all hosts × configured repos.

    Rows are sorted by (host, repo, issue, log_path, slice_index). With ``cache_dir`` the read is
    incremental (``agent_logs.cache``) and the cache is saved afterwards; without it every file is
    parsed in full and nothing is written. ``extra["reads"]`` counts files taken unchanged from the
    cache, parsed from their last slice (appended) and parsed in full, and the bytes parsed;
    ``extra["cache_problem"]`` says why a cache could not be used or saved (None when it could).
    """
    read = _Read(cache=None)
    if cache_dir is not None:
        read.cache = _load_cache(cache_dir, read)
    sources: list[SourceStat] = []
    collisions = slug_collisions(cfg.repo_names)
    for host in cfg.hosts:
        # A home that exists but cannot serve as a directory (a file, no permission) is reported once
        # per host; each repo below then reports its missing logs.
        problem = path_problem(host.dossier_home, want_dir=True)
        home_unusable = problem is not None and problem[0] == UNREADABLE
        if home_unusable:
            error = OSError(errno.ENOTDIR, problem[1])
            read.warnings.append(unreadable(host.dossier_home, host.name, None, error, "dossier home"))
        for repo in cfg.repo_names:
            shared_with = [r for r in collisions.get(sanitize_slug(repo), []) if r != repo]
            sources.append(_read_repo_logs(read, host, repo, shared_with, home_unusable=home_unusable))
    files = sorted(read.files, key=_FILE_ORDER)
    table = _ordered_table(read, files)
    cache_problem: str | None = None
    if read.cache is not None:
        cache_problem = _save_cache(read.cache, files, table) or read.cache.load_problem
    extra = {"reads": asdict(read.counters), "cache_problem": cache_problem}
    return TableResult(frame=_frame(files, table), warnings=read.warnings, sources=sources, extra=extra)


def _save_cache(cache: AgentLogCache, files: list[_FileRead], table: SliceTable) -> str | None:
    """Place every file's rows in ``table`` (the next cache table) and save when anything changed."""
    first_row = 0
    for f in files:
        if f.state is None:
            cache.keep(f.log_path, first_row)
        else:
            cache.place(f.log_path, f.state, first_row)
        first_row += f.kept_rows + f.fresh_rows
    return cache.save(lambda packer: (table.encode(packer), table.rows))
