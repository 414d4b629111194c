"""Read offsets for the append-only journals ``runs.jsonl`` and ``events.jsonl``
(docs/incremental.md "Append-only journals: read offsets").

Per input file the cache remembers, in a state-store folder: the byte offset just after the last
complete line parsed (``offset``), the number of lines before it (``lines``), a hash of the first
≤ 4 KiB and of the last ≤ 4 KiB before the offset, the typed rows of those lines (Parquet
*segments*, one per run that added rows, compacted when there are many) and everything else a
fresh read derives per file: the per-line problems (not yet capped into warnings) and the counters.

The next read of the file:

- **append** (the file is at least ``offset`` bytes long and both hashes still match): only the
  bytes after ``offset`` are parsed, with line numbers continuing at ``lines + 1``;
- **full** (no entry, a shorter file, a changed head or tail: truncation or rotation, or an entry
  that cannot be used): the file is parsed from its start.

A last line without a newline (a write still under way) is parsed and reported exactly as a fresh
read reports it (``jsonl.py``: a row when it decodes, else a ``malformed_line``), but it is not
consumed: the offset stays before it, so once completed it is parsed again as a whole line.

The readers' results are rebuilt from the per-file parts in the fresh read's order (hosts by name,
repos by name, lines in file order); the warnings are made by the readers' own functions from the
merged, uncapped problem lists, so per-file caps and summaries come out as in a fresh read.

Stored form: ``<kind>.v1.json`` (the index, JSON) and ``<kind>-<token>.parquet`` segments
(``storage/codec.py``). A missing, corrupt or other-version index is ignored (full reads); an entry
whose segment is missing or unreadable is dropped alone. Nothing is pickled.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pandas as pd
import pyarrow.parquet as pq

from scorecard_assets.config import HostConfig, ScorecardConfig
from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.schemas import DISPATCH_EVENTS, RUN_TELEMETRY, empty_frame
from scorecard_assets.sources import events as ev
from scorecard_assets.sources import runs_jsonl as rj
from scorecard_assets.sources.files import path_problem, read_problem
from scorecard_assets.sources.jsonl import (
    JsonlColumns,
    LineProblem,
    gc_paused,
    iter_jsonl_parts,
    parse_jsonl_bytes,
)
from scorecard_assets.storage.codec import arrow_to_frame, frame_to_arrow

CACHE_VERSION = 1
FINGERPRINT_BYTES = 4096
MAX_SEGMENTS = 16
RUNS_KIND = "runs"
EVENTS_KIND = "events"


@dataclass
class ReadStats:
    """What one cached read did (asset metadata; not part of the value)."""

    bytes_parsed: int = 0
    files_full: int = 0
    files_append: int = 0
    cache_problem: str | None = None

    def metadata(self) -> dict[str, object]:
        out: dict[str, object] = {
            "bytes_parsed": self.bytes_parsed,
            "files_full": self.files_full,
            "files_append": self.files_append,
        }
        if self.cache_problem:
            out["cache_problem"] = self.cache_problem
        return out


# ----------------------------------------------------------------------------------- the bytes


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _range(fh: Any, offset: int, length: int) -> bytes:
    fh.seek(offset)
    return fh.read(length)


def _marks(fh: Any, offset: int) -> tuple[str, str]:
    """Hashes of the first and of the last ≤ 4 KiB before ``offset``."""
    length = min(FINGERPRINT_BYTES, offset)
    return _digest(_range(fh, 0, length)), _digest(_range(fh, offset - length, length))


def _marks_of(path: Path, offset: int) -> tuple[str, str]:
    with path.open("rb") as fh:
        return _marks(fh, offset)


def _still_prefix(path: Path, offset: int, head_hash: str, tail_hash: str) -> bool:
    """True when ``path`` still starts with the bytes an entry consumed (size and both hashes)."""
    try:
        if path.stat().st_size < offset:
            return False
        with path.open("rb") as fh:
            return _marks(fh, offset) == (head_hash, tail_hash)
    except OSError:
        return False


# ----------------------------------------------------------------------------------- problems


def problems_json(problems: Sequence[LineProblem]) -> list[list[Any]]:
    return [[p.line, p.reason, p.field, p.value, p.consequence] for p in problems]


def problems_from_json(raw: object) -> list[LineProblem]:
    if not isinstance(raw, list):
        raise ValueError("problems are not a list")
    out = []
    for item in raw:
        if (
            not isinstance(item, list)
            or len(item) != 5
            or type(item[0]) is not int
            or type(item[1]) is not str
        ):
            raise ValueError("a stored problem is not [line, reason, field, value, consequence]")
        out.append(LineProblem(*item))
    return out


# ----------------------------------------------------------------------------------- the store


@dataclass
class Entry:
    """One file's remembered state (module contract); ``parts`` is the reader's own JSON."""

    offset: int
    lines: int
    head_hash: str
    tail_hash: str
    segments: list[str]
    parts: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "lines": self.lines,
            "head_hash": self.head_hash,
            "tail_hash": self.tail_hash,
            "segments": self.segments,
            "parts": self.parts,
        }


def _entry(raw: object) -> Entry:
    if not isinstance(raw, dict):
        raise ValueError("not an object")
    entry = Entry(
        raw.get("offset"),  # type: ignore[arg-type]
        raw.get("lines"),  # type: ignore[arg-type]
        raw.get("head_hash"),  # type: ignore[arg-type]
        raw.get("tail_hash"),  # type: ignore[arg-type]
        raw.get("segments"),  # type: ignore[arg-type]
        raw.get("parts"),  # type: ignore[arg-type]
    )
    if (
        type(entry.offset) is not int
        or type(entry.lines) is not int
        or entry.offset < 0
        or entry.lines < 0
        or (entry.lines == 0) != (entry.offset == 0)
        or type(entry.head_hash) is not str
        or type(entry.tail_hash) is not str
        or not isinstance(entry.segments, list)
        or not all(type(s) is str and "/" not in s for s in entry.segments)
        or not isinstance(entry.parts, dict)
    ):
        raise ValueError("an entry with unusable values")
    return entry


class JsonlCache:
    """The entries of one reader (``kind``) in a state-store folder; :meth:`save` writes the next index."""

    def __init__(self, folder: Path, kind: str, reader_version: str = "") -> None:
        self.folder = folder
        self.kind = kind
        self.reader_version = reader_version
        self.entries: dict[str, Entry] = {}
        self.next: dict[str, Entry] = {}
        self.problem: str | None = None

    @property
    def index_path(self) -> Path:
        return self.folder / f"{self.kind}.v{CACHE_VERSION}.json"

    @classmethod
    def load(cls, folder: Path, kind: str, reader_version: str = "") -> JsonlCache:
        """The stored entries; none when the index is absent, unusable, or was written by another
        version of this module or of the reader (``reader_version``: the asset's code version)."""
        cache = cls(folder, kind, reader_version)
        try:
            raw = orjson.loads(cache.index_path.read_bytes())
        except FileNotFoundError:
            return cache
        except (OSError, orjson.JSONDecodeError) as exc:
            cache.problem = f"offset index unreadable ({type(exc).__name__}); full re-read"
            return cache
        if (
            not isinstance(raw, dict)
            or raw.get("version") != CACHE_VERSION
            or not isinstance(raw.get("files"), dict)
        ):
            cache.problem = "offset index of another version; full re-read"
            return cache
        if raw.get("reader_version") != reader_version:
            cache.problem = "offsets stored by another reader version; full re-read"
            return cache
        for key, value in raw["files"].items():
            try:
                cache.entries[key] = _entry(value)
            except ValueError:
                cache.problem = "an unusable offset entry was dropped"
        return cache

    def resume(self, path: Path) -> Entry | None:
        """The entry to continue from when ``path`` only grew since (else None: read it whole)."""
        entry = self.entries.get(str(path))
        if entry is None or not _still_prefix(path, entry.offset, entry.head_hash, entry.tail_hash):
            return None
        return entry

    def frames(self, entry: Entry, columns: Sequence[str]) -> list[pd.DataFrame]:
        """The stored rows of an entry; OSError/ValueError when a segment cannot be used."""
        frames = [arrow_to_frame(pq.read_table(self.folder / name)) for name in entry.segments]
        if any(list(f.columns) != list(columns) for f in frames):
            raise ValueError("a segment with other columns")
        return frames

    def write_segment(self, frame: pd.DataFrame) -> str:
        name = f"{self.kind}-{secrets.token_hex(8)}.parquet"
        self.folder.mkdir(parents=True, exist_ok=True)
        pq.write_table(frame_to_arrow(frame), self.folder / name)
        return name

    def save(self) -> None:
        """Write the next index (temporary file + rename), then remove the segments it does not name."""
        self.folder.mkdir(parents=True, exist_ok=True)
        payload = orjson.dumps(
            {
                "version": CACHE_VERSION,
                "reader_version": self.reader_version,
                "files": {k: e.as_json() for k, e in self.next.items()},
            }
        )
        tmp = self.index_path.with_suffix(".tmp")
        tmp.write_bytes(payload)
        os.replace(tmp, self.index_path)
        kept = {name for e in self.next.values() for name in e.segments}
        for stale in self.folder.glob(f"{self.kind}-*.parquet"):
            if stale.name not in kept:
                stale.unlink(missing_ok=True)


@dataclass
class FilePart:
    """One file's rows and per-file results, merged from the stored entry and the new lines."""

    frames: list[pd.DataFrame]
    part: dict[str, Any]


def _read_file(
    cache: JsonlCache,
    path: Path,
    fields: Sequence[str],
    build: Callable[[JsonlColumns], tuple[pd.DataFrame, dict[str, Any]]],
    merge: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]],
    stats: ReadStats,
) -> FilePart:
    """Rows and parts of one file: the stored ones plus those of the new complete lines plus the
    unterminated tail's; the cache's next entry gets the stored and new complete ones.

    The new lines are decoded a part at a time (``jsonl.iter_jsonl_parts``), each part built into
    typed rows before the next is decoded (docs/reliability.md "Streaming")."""
    entry = cache.resume(path)
    stored_frames: list[pd.DataFrame] = []
    empty_frame_, template = build(parse_jsonl_bytes(b"", fields, path=str(path)))
    if entry is not None and not _usable_parts(entry.parts, template):
        cache.problem = f"offset entry of {path} unusable; read whole"
        entry = None
    if entry is not None:
        try:
            stored_frames = cache.frames(entry, list(empty_frame_.columns))
        except (OSError, ValueError) as exc:
            cache.problem = f"offset segment unusable ({type(exc).__name__}); {path} re-read whole"
            entry = None
    offset, lines = (entry.offset, entry.lines) if entry is not None else (0, 0)
    new_frames: list[pd.DataFrame] = []
    tail: tuple[pd.DataFrame, dict[str, Any]] | None = None
    kept = entry.parts if entry is not None else None
    consumed, new_lines = offset, 0
    for part, is_tail in iter_jsonl_parts(path, fields, offset=offset, first_line=lines + 1, tail_apart=True):
        stats.bytes_parsed += part.bytes
        built = build(part)
        if is_tail:
            tail = built
            continue
        frame, found = built
        if len(frame):
            new_frames.append(frame)
        kept = found if kept is None else merge(kept, found)
        consumed, new_lines = part.end_offset, new_lines + part.lines
    assert kept is not None  # there is always a part of complete lines
    head_hash, tail_hash = _marks_of(path, consumed)
    if entry is None:
        stats.files_full += 1
    else:
        stats.files_append += 1
    frames = [f for f in stored_frames if len(f)] + new_frames
    segments = list(entry.segments) if entry is not None else []
    if new_frames:
        if len(segments) >= MAX_SEGMENTS:  # compact: one segment for everything consumed
            segments = [cache.write_segment(pd.concat(frames, ignore_index=True))]
        else:
            new = new_frames[0] if len(new_frames) == 1 else pd.concat(new_frames, ignore_index=True)
            segments.append(cache.write_segment(new))
    cache.next[str(path)] = Entry(consumed, lines + new_lines, head_hash, tail_hash, segments, kept)
    if tail is None:
        return FilePart(frames, kept)
    tail_frame, tail_part = tail
    if len(tail_frame):
        frames.append(tail_frame)
    return FilePart(frames, merge(kept, tail_part))


_PROBLEM_KEYS = frozenset({"bad", "out_of_range", "wrong_type", "bad_time", "problems"})
_LINE_LIST_KEYS = frozenset({"replaced"})


def _usable_parts(parts: dict[str, Any], template: dict[str, Any]) -> bool:
    """True when stored per-file parts have the keys and value types the reader's parts have."""
    if parts.keys() != template.keys():
        return False
    try:
        for key, model in template.items():
            value = parts[key]
            if type(value) is not type(model):
                return False
            if key in _PROBLEM_KEYS:
                problems_from_json(value)
            elif key in _LINE_LIST_KEYS:
                if not all(type(n) is int for n in value):
                    return False
            elif isinstance(model, int) and value < 0:
                return False
            elif isinstance(model, list) and not all(
                isinstance(v, list) and len(v) == 2 and type(v[0]) is int and type(v[1]) is str for v in value
            ):
                return False  # unverified exits: [issue, ts]
            elif isinstance(model, dict) and not all(
                isinstance(v, list) and v and all(type(n) is int for n in v) for v in value.values()
            ):
                return False  # unknown event name -> its lines
    except ValueError:
        return False
    return True


# ----------------------------------------------------------------------------------- runs.jsonl

_RUN_LISTS = ("bad", "out_of_range", "wrong_type", "bad_time")
_COUNTS = ("lines", "blank", "bytes", "rows")


def _merge(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Problem lists and unverified pairs concatenated, counters added, unknown-event lines merged
    in first-seen order."""
    out: dict[str, Any] = {}
    for key, value in old.items():
        other = new.get(key)
        if isinstance(value, list):
            out[key] = [*value, *(other or [])]
        elif isinstance(value, dict):
            merged = {name: list(lines) for name, lines in value.items()}
            for name, lines in (other or {}).items():
                merged.setdefault(name, []).extend(lines)
            out[key] = merged
        else:
            out[key] = value + (other or 0)
    return out


def _runs_part(host: str) -> Callable[[JsonlColumns], tuple[pd.DataFrame, dict[str, Any]]]:
    def build(batch: JsonlColumns) -> tuple[pd.DataFrame, dict[str, Any]]:
        frame, (problems,) = rj.telemetry_frame(batch.columns, [(host, batch)])
        part = {
            "bad": problems_json(batch.bad),
            "out_of_range": problems_json(problems.out_of_range),
            "wrong_type": problems_json(problems.wrong_type),
            "bad_time": problems_json(problems.bad_time),
            "replaced": list(batch.replaced),
            "lines": batch.lines,
            "blank": batch.blank,
            "bytes": batch.bytes,
            "rows": batch.rows,
        }
        return frame, part

    return build


def read_run_telemetry_cached(
    hosts: list[HostConfig], folder: Path, reader_version: str = ""
) -> tuple[TableResult, ReadStats]:
    """``runs_jsonl.read_run_telemetry(hosts)`` exactly, parsing only what each file gained since the
    state in ``folder`` was written by the same ``reader_version`` (module contract); the state is
    updated."""
    cache = JsonlCache.load(folder, RUNS_KIND, reader_version)
    stats = ReadStats()
    frames: list[pd.DataFrame] = []
    warnings: list[DataWarning] = []
    sources: list[SourceStat] = []
    lines = size = 0
    with gc_paused():
        for host in sorted(hosts, key=lambda h: h.name):
            home = host.dossier_home
            path = home / rj.RUNS_FILE_NAME
            stat = SourceStat(source=rj.SOURCE, host=host.name, path=str(path))
            sources.append(stat)
            home_problem = path_problem(home, want_dir=True)
            if home_problem is not None:
                kind, reason = home_problem
                warnings.append(rj._path_warning(host, home, kind, reason, is_home=True))
                stat.notes = f"dossier home {reason}"
                continue
            try:
                got = _read_file(cache, path, rj.READ_FIELDS, _runs_part(host.name), _merge, stats)
            except OSError as exc:
                kind, reason = read_problem(exc)
                warnings.append(rj._path_warning(host, path, kind, reason, is_home=False))
                stat.notes = f"runs.jsonl {reason}"
                continue
            part = got.part
            summary = _summary(str(path), part)
            lines += summary.lines
            size += summary.bytes
            if summary.is_empty:
                warnings.append(
                    rj._missing(
                        host, str(path), f"{path} holds no entries ({rj.plural(summary.lines, 'line')})"
                    )
                )
            costs = (
                np.concatenate([f["total_cost_usd"].to_numpy(dtype=np.float64) for f in got.frames])
                if got.frames
                else np.zeros(0)
            )
            rj._count_host(stat, summary, costs)
            problems = rj.FileProblems(
                problems_from_json(part["out_of_range"]),
                problems_from_json(part["wrong_type"]),
                problems_from_json(part["bad_time"]),
            )
            warnings.extend(rj._line_warnings(host.name, summary, problems))
            frames.extend(got.frames)
    _save(cache, stats)
    frame = pd.concat(frames, ignore_index=True) if frames else empty_frame(RUN_TELEMETRY)
    return TableResult(
        frame=frame, warnings=warnings, sources=sources, extra={"lines": lines, "bytes": size}
    ), stats


def _summary(path: str, part: dict[str, Any]) -> JsonlColumns:
    """A ``JsonlColumns`` with a file's merged accounting (no columns), for the readers' helpers."""
    out = JsonlColumns(
        path=path,
        fields=(),
        columns={},
        line_nos=list(range(part["rows"])),  # only their count is read
        bad=problems_from_json(part["bad"]),
        replaced=part["replaced"],
    )
    out.lines, out.blank, out.bytes = part["lines"], part["blank"], part["bytes"]
    return out


def _save(cache: JsonlCache, stats: ReadStats) -> None:
    try:
        cache.save()
    except OSError as exc:
        cache.problem = f"offset index not saved ({type(exc).__name__}: {exc})"
    stats.cache_problem = cache.problem


# ----------------------------------------------------------------------------------- events.jsonl


def _events_part(
    host: str, repo: str, slug: str
) -> Callable[[JsonlColumns], tuple[pd.DataFrame, dict[str, Any]]]:
    def build(batch: JsonlColumns) -> tuple[pd.DataFrame, dict[str, Any]]:
        journal = ev.journal_frame(host, repo, slug, batch)
        part = {
            "problems": problems_json(journal.problems),
            "unknown_lines": journal.unknown_lines,
            "replaced": list(journal.replaced),
            "unverified": [list(pair) for pair in journal.unverified],
            "malformed": journal.malformed_lines,
            "ignored": journal.ignored,
            "lines": batch.lines,
            "bytes": batch.bytes,
            "rows": batch.rows,
        }
        return journal.frame, part

    return build


def read_dispatch_events_cached(
    cfg: ScorecardConfig, folder: Path, reader_version: str = ""
) -> tuple[TableResult, ReadStats]:
    """``events.read_dispatch_events(cfg)`` exactly, parsing only what each journal gained since the
    state in ``folder`` was written by the same ``reader_version`` (module contract); the state is
    updated."""
    cache = JsonlCache.load(folder, EVENTS_KIND, reader_version)
    stats = ReadStats()

    def read(host: str, repo: str, slug: str, path: Path) -> tuple[int, int, bool, ev.JournalRead]:
        got = _read_file(cache, path, ev.READ_FIELDS, _events_part(host, repo, slug), _merge, stats)
        part = got.part
        frame = pd.concat(got.frames, ignore_index=True) if got.frames else empty_frame(DISPATCH_EVENTS)
        problems = problems_from_json(part["problems"])
        unknown = part["unknown_lines"]
        journal = ev.JournalRead(
            frame=frame,
            warnings=ev.journal_warnings(host, repo, str(path), problems, unknown),
            malformed_lines=part["malformed"],
            ignored=part["ignored"],
            unknown=sum(len(v) for v in unknown.values()),
            unverified=[(int(n), str(ts)) for n, ts in part["unverified"]],
            replaced=part["replaced"],
        )
        return part["lines"], part["bytes"], part["rows"] == 0, journal

    result = ev.read_dispatch_events(cfg, read_journal=read)
    _save(cache, stats)
    return result, stats
