"""Incremental reading state for append-only agent logs (docs/sources.md "Files and slices").

The cache remembers, per log file, what the file looked like when it was last parsed and where its
parsed dispatch slices sit in a *slice table* stored with the file states. The cache is deliberately
ignorant of what a slice holds: the table is a set of named columns that the reader (``agent_logs``)
encodes, decodes and validates; the cache only knows each file's row range in it. What the cache
decides is *how much* of a file must be parsed again:

- **unchanged** (same device, inode, size and ``mtime_ns``): nothing is read; every cached row of
  the file is reused.
- **append** (same device and inode, larger size, the first 4 KiB and the last 4 KiB of the previously
  seen content still hash the same): only the bytes from the start of the last slice onward are
  parsed; the rows before it are reused. The last slice is parsed again because new bytes may extend
  it (a completed truncated line, more records of the same dispatch).
- **full** (no entry, a new inode or device, a smaller size, the same size with another mtime, or a
  changed head or tail): the whole file is parsed.

Stored form: one document (``agent-logs.v2.cache``) under the cache directory, laid out in columns so
that loading it costs little more than reading it, whatever the number of files or slices. Like the
*safetensors* layout it is a JSON header followed by raw number arrays:

- 8 bytes: the header's length (unsigned, little-endian);
- the header, JSON (padded with spaces to a multiple of 8 bytes)::

    {"kind": "scorecard.agent-logs", "version": 2, "body_bytes": <length of the body>,
     "files": {"path": [...], "head_hash": [...], "tail_hash": [...],
               "dev": <ref>, "inode": <ref>, ..., "first_row": <ref>, "rows": <ref>},
     "slices": {"rows": <row count>, "columns": {<reader columns>}}}

- the body: little-endian arrays of fixed-width numbers, each at an 8-byte aligned offset; a
  ``<ref>`` is ``{"dtype", "offset", "count"}`` (:class:`Packer`, :class:`Unpacker`).

An array is used where it lies (no copy, no per-value decoding), after one check of its type, its
length and its bounds; its values cannot be of another type. File ``i`` owns the table rows
``[first_row[i], first_row[i] + rows[i])``.

A missing, unreadable, truncated, corrupt or other-version document is ignored (the next read is a
full one), and so is a document whose columns are missing, mistyped or of unequal lengths (a document
of an earlier version, under its own name, is removed when the current one is written); a single file
whose values are out of range (an offset beyond its size, a row range outside the table) is dropped
alone. The document is written to a temporary file and renamed over the previous one, so a killed run
leaves the old state intact. JSON and plain number arrays rather than pickle, so that loading a cache
file can never execute code.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import orjson

# Bumped whenever the layout or what a parser extracts changes (v3: Codex turns from turn.started; v4: line
# accounting, wrong-type fields, the content-chosen format and its command hint; v5: lines whose lone
# surrogate escapes were replaced),
# so that slices parsed by an older reader are never served.
CACHE_VERSION = 5
CACHE_KIND = "scorecard.agent-logs"
CACHE_FILE_NAME = f"agent-logs.v{CACHE_VERSION}.cache"
# Documents of earlier versions (v1 was a single JSON document, v2 the first columnar one): ignored,
# removed once this one is written.
OLDER_FILE_NAMES = ("agent-logs.v1.json", "agent-logs.v2.cache", "agent-logs.v3.cache", "agent-logs.v4.cache")
FINGERPRINT_BYTES = 4096

ReadMode = Literal["unchanged", "append", "full"]
StrPath = str | os.PathLike[str]


_ALIGN = 8
_LENGTH_BYTES = 8


class Packer:
    """Collects the number arrays of a document's body; :meth:`add` returns the reference the header
    stores in their place: ``{"dtype", "offset", "count"}`` (offsets aligned to 8 bytes)."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self.size = 0

    def add(self, values: Any, dtype: str) -> dict[str, Any]:
        data = np.ascontiguousarray(values, dtype=dtype).tobytes()
        ref = {"dtype": dtype, "offset": self.size, "count": len(data) // np.dtype(dtype).itemsize}
        padding = bytes(-len(data) % _ALIGN)
        self._parts += (data, padding)
        self.size += len(data) + len(padding)
        return ref

    def body(self) -> bytes:
        return b"".join(self._parts)


class Unpacker:
    """Reads the arrays a document's header refers to, straight from its body (no copy)."""

    def __init__(self, body: bytes | memoryview) -> None:
        self.body = body

    def get(self, ref: object, dtype: str, count: int) -> np.ndarray:
        """The ``count`` values of ``dtype`` that ``ref`` points at (read-only); ValueError when ``ref``
        is not a reference to exactly that within the body."""
        if not isinstance(ref, dict) or ref.get("dtype") != dtype or ref.get("count") != count:
            raise ValueError(f"not a reference to {count} values of {dtype}")
        offset = ref.get("offset")
        size = count * np.dtype(dtype).itemsize
        if type(offset) is not int or offset < 0 or offset + size > len(self.body):
            raise ValueError("a reference outside the body")
        if count == 0:
            return np.zeros(0, dtype=dtype)
        return np.frombuffer(self.body, dtype=dtype, count=count, offset=offset)


def read_document(path: Path) -> tuple[object, Unpacker]:
    """The header (decoded JSON) and body of a stored document. OSError propagates; ValueError when
    the bytes are not a header length, a JSON header and a body of the length the header states."""
    data = path.read_bytes()
    if len(data) < _LENGTH_BYTES:
        raise ValueError("shorter than its header length")
    header_end = _LENGTH_BYTES + int.from_bytes(data[:_LENGTH_BYTES], "little")
    if header_end > len(data):
        raise ValueError("shorter than its header")
    try:
        header = orjson.loads(memoryview(data)[_LENGTH_BYTES:header_end])
    except orjson.JSONDecodeError as exc:
        raise ValueError("a header that is not JSON") from exc
    body = memoryview(data)[header_end:]
    if not isinstance(header, dict) or header.get("body_bytes") != len(body):
        raise ValueError("a body of another length than its header states")
    return header, Unpacker(body)


def document_bytes(header: dict[str, Any], body: bytes) -> bytes:
    """The stored form of a header (JSON-ready, without ``body_bytes``) and its body. The header is
    padded with JSON whitespace so that the body, and so every array in it, starts 8-byte aligned."""
    encoded = orjson.dumps({**header, "body_bytes": len(body)})
    encoded += b" " * (-(_LENGTH_BYTES + len(encoded)) % _ALIGN)
    return len(encoded).to_bytes(_LENGTH_BYTES, "little") + encoded + body


def text_list(raw: object, length: int) -> list[str]:
    """A stored list of ``length`` strings; ValueError when it is anything else."""
    if not isinstance(raw, list) or len(raw) != length or not set(map(type, raw)) <= {str}:
        raise ValueError("not a list of strings of the expected length")
    return raw


@dataclass(frozen=True, slots=True)
class FileState:
    """What a log file looked like when it was parsed, and how many table rows (slices) it has.

    The last of its ``rows`` slices starts at byte ``resume_offset`` (line ``resume_line``, slice
    index ``resume_index``); a file without any slice has ``rows == 0``, ``resume_offset == 0``,
    ``resume_line == 1`` and ``resume_index == 0``.
    """

    dev: int
    inode: int
    size: int
    mtime_ns: int
    head_len: int
    head_hash: str
    tail_hash: str
    resume_offset: int
    resume_line: int
    resume_index: int
    rows: int


_STATE_FIELDS = tuple(f.name for f in fields(FileState))
_TEXT_FIELDS = ("path", "head_hash", "tail_hash")
# Packed file columns: the numbers of the state plus the file's first row in the slice table. Device
# and inode numbers are unsigned 64-bit on some systems; mtimes may be negative.
_NUMBER_TYPES = {
    "dev": "<u8",
    "inode": "<u8",
    "size": "<i8",
    "mtime_ns": "<i8",
    "head_len": "<i8",
    "resume_offset": "<i8",
    "resume_line": "<i8",
    "resume_index": "<i8",
    "rows": "<i8",
    "first_row": "<i8",
}
_COUNTS = ("size", "head_len", "resume_offset", "resume_index", "rows", "first_row")


class ReadPlan(NamedTuple):
    """What to parse: bytes ``[start_offset, size)``, numbering lines from ``start_line`` and slices
    from ``start_index``; the ``kept_rows`` table rows from ``kept_first_row`` are the cached slices
    that precede ``start_offset`` (all of the file's rows when it is unchanged)."""

    mode: ReadMode
    start_offset: int = 0
    start_line: int = 1
    start_index: int = 0
    kept_first_row: int = 0
    kept_rows: int = 0


FULL_READ = ReadPlan(mode="full")


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_range(path: StrPath, offset: int, length: int) -> bytes:
    """``length`` bytes of ``path`` from ``offset`` (fewer when the file is shorter)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(length)


def fingerprint_bytes(data: bytes) -> tuple[int, str, str]:
    """(head length, hash of the first ≤ 4 KiB, hash of the last ≤ 4 KiB) of a whole file's bytes."""
    length = min(FINGERPRINT_BYTES, len(data))
    return length, _digest(data[:length]), _digest(data[len(data) - length :])


def fingerprint(path: StrPath, size: int) -> tuple[int, str, str]:
    """Like :func:`fingerprint_bytes` for the first ``size`` bytes of ``path``, reading ≤ 8 KiB."""
    length = min(FINGERPRINT_BYTES, size)
    head = read_range(path, 0, length)
    tail = read_range(path, size - length, length)
    return length, _digest(head), _digest(tail)


def _same_prefix(path: StrPath, size: int, head_len: int, head_hash: str, tail_hash: str) -> bool:
    """True when the bytes a stored state fingerprinted (a file of ``size`` bytes) are still in place."""
    tail_len = min(FINGERPRINT_BYTES, size)
    head = read_range(path, 0, head_len)
    tail = read_range(path, size - tail_len, tail_len)
    return (
        len(head) == head_len
        and len(tail) == tail_len
        and _digest(head) == head_hash
        and _digest(tail) == tail_hash
    )


def _stored_files(raw: object, unpacker: Unpacker) -> tuple[dict[str, list[Any]], dict[str, np.ndarray]]:
    """The stored file columns as Python lists (for per-file lookups) and the packed ones as arrays (for
    whole-column checks); ValueError naming the first unusable column."""
    if not isinstance(raw, dict):
        raise ValueError("files is not an object")
    paths = raw.get("path")
    count = len(paths) if isinstance(paths, list) else 0
    lists: dict[str, list[Any]] = {}
    numbers: dict[str, np.ndarray] = {}
    for name in _TEXT_FIELDS:
        try:
            lists[name] = text_list(raw.get(name), count)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
    for name, dtype in _NUMBER_TYPES.items():
        try:
            numbers[name] = unpacker.get(raw.get(name), dtype, count)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        lists[name] = numbers[name].tolist()
    return lists, numbers


def _in_range(numbers: dict[str, np.ndarray], table_rows: int) -> np.ndarray:
    """Per file: counts and offsets >= 0, offsets within the size, rows within the table."""
    size = numbers["size"]
    usable = np.ones(len(size), dtype=bool)
    for name in _COUNTS:
        usable &= numbers[name] >= 0
    usable &= numbers["resume_line"] >= 1
    usable &= (numbers["resume_offset"] <= size) & (numbers["head_len"] <= size)
    usable &= numbers["rows"] <= table_rows - numbers["first_row"]
    return usable


class AgentLogCache:
    """Per-file parse state and the slice table, loaded from and saved to ``<cache_dir>/agent-logs.v2.cache``.

    Use: :meth:`load`; the reader decodes :attr:`slice_columns` (or :meth:`discard`\\ s everything when it
    cannot) and may :meth:`drop_inconsistent` entries; :meth:`plan` per file; then, with each file's
    rows placed in the next table, :meth:`keep` (unchanged) or :meth:`place` (parsed) per file;
    finally :meth:`save`. ``load_problem`` says why a stored document was ignored (None when it was
    read or absent); ``dropped_entries`` counts the stored files that were dropped alone.
    """

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self.load_problem: str | None = None
        self.dropped_entries = 0
        self.dirty = False
        self.slice_columns: dict[str, Any] = {}
        self.slice_rows = 0
        self.unpacker = Unpacker(b"")
        self._positions: dict[str, int] = {}
        self._files: dict[str, list[Any]] = {}
        # The next table: per file, its new state (or the position of the loaded state it keeps) and
        # its first row (two dicts of plain values: nothing for the garbage collector to track).
        self._next: dict[str, FileState | int] = {}
        self._next_first_row: dict[str, int] = {}

    @property
    def path(self) -> Path:
        return self.cache_dir / CACHE_FILE_NAME

    def __len__(self) -> int:
        return len(self._positions)

    def __contains__(self, key: object) -> bool:
        return key in self._positions

    # ------------------------------------------------------------------------------------- loading

    @classmethod
    def load(cls, cache_dir: Path) -> AgentLogCache:
        """The stored state, or an empty one when the document is absent, corrupt or of another version."""
        cache = cls(cache_dir)
        try:
            raw, unpacker = read_document(cache.path)
        except FileNotFoundError:
            older = [name for name in OLDER_FILE_NAMES if (cache_dir / name).is_file()]
            if older:
                return cache._ignored(f"cache file of an older version ({older[-1]}); full re-read")
            return cache
        except OSError as exc:
            return cache._ignored(f"cache file unreadable ({type(exc).__name__}); full re-read")
        except ValueError as exc:
            return cache._ignored(f"cache file corrupt ({exc}); full re-read")
        if not isinstance(raw, dict) or raw.get("kind") != CACHE_KIND or raw.get("version") != CACHE_VERSION:
            return cache._ignored("cache file of another kind or version; full re-read")
        slices = raw.get("slices")
        rows = slices.get("rows") if isinstance(slices, dict) else None
        columns = slices.get("columns") if isinstance(slices, dict) else None
        if type(rows) is not int or rows < 0 or not isinstance(columns, dict):
            return cache._ignored("cache file without a slice table; full re-read")
        try:
            files, numbers = _stored_files(raw.get("files"), unpacker)
        except ValueError as exc:
            return cache._ignored(f"cache file with unusable file states ({exc}); full re-read")
        cache.slice_columns, cache.slice_rows, cache._files = columns, rows, files
        cache.unpacker = unpacker
        usable = _in_range(numbers, rows).tolist()
        cache._positions = {path: i for i, path in enumerate(files["path"]) if usable[i]}
        cache._drop(len(usable) - len(cache._positions))
        return cache

    def _drop(self, count: int) -> None:
        if count:
            self.dropped_entries += count
            self.dirty = True

    def _ignored(self, problem: str) -> AgentLogCache:
        self.load_problem = problem
        self.dirty = True
        return self

    def discard(self, problem: str) -> None:
        """Ignore everything loaded (the reader found the slice table unusable): read every file in full."""
        self.slice_columns, self.slice_rows, self.unpacker = {}, 0, Unpacker(b"")
        self._positions, self._files = {}, {}
        self._ignored(problem)

    def drop_inconsistent(self, offsets: np.ndarray, lines: np.ndarray, indices: np.ndarray) -> None:
        """Drop the entries whose last row does not start where the entry says its last slice starts.

        ``offsets``/``lines``/``indices`` are the byte offset, first line and slice index of every
        table row (decoded by the reader). A file without rows must resume at the very start.
        """
        if not self._positions:
            return
        keys = list(self._positions)
        where = np.fromiter(self._positions.values(), dtype=np.int64, count=len(keys))
        files = self._files
        rows = np.array(files["rows"], dtype=np.int64)[where]
        has_rows = rows > 0
        last = (np.array(files["first_row"], dtype=np.int64)[where] + rows - 1)[has_rows]
        consistent = np.ones(len(keys), dtype=bool)
        checks = (("resume_offset", offsets, 0), ("resume_line", lines, 1), ("resume_index", indices, 0))
        for name, found, at_start in checks:
            stored = np.array(files[name], dtype=np.int64)[where]
            matches = stored == at_start
            matches[has_rows] = stored[has_rows] == found[last]
            consistent &= matches
        pairs = zip(keys, where.tolist(), consistent.tolist(), strict=True)
        self._positions = {key: i for key, i, ok in pairs if ok}
        self._drop(len(keys) - len(self._positions))

    # ------------------------------------------------------------------------------------ planning

    def unchanged_rows(self, key: str, st: os.stat_result) -> tuple[int, int] | None:
        """(first row, row count) of ``key`` when :meth:`plan` would say unchanged, else None; the fast
        path of a read in which most files did not change."""
        i = self._positions.get(key)
        if i is None:
            return None
        files = self._files
        if (
            files["size"][i] != st.st_size
            or files["mtime_ns"][i] != st.st_mtime_ns
            or files["inode"][i] != st.st_ino
            or files["dev"][i] != st.st_dev
        ):
            return None
        return files["first_row"][i], files["rows"][i]

    def plan(self, key: str, path: StrPath, st: os.stat_result) -> ReadPlan:
        """Decide how much of ``path`` (stat ``st``) must be parsed; may read ≤ 8 KiB to check an append."""
        i = self._positions.get(key)
        if i is None:
            return FULL_READ
        files = self._files
        old_size = files["size"][i]
        if files["inode"][i] != st.st_ino or files["dev"][i] != st.st_dev or st.st_size < old_size:
            return FULL_READ
        if st.st_size == old_size:
            if st.st_mtime_ns != files["mtime_ns"][i]:
                return FULL_READ
            return ReadPlan(
                "unchanged",
                old_size,
                files["resume_line"][i],
                files["resume_index"][i],
                files["first_row"][i],
                files["rows"][i],
            )
        try:
            if not _same_prefix(
                path, old_size, files["head_len"][i], files["head_hash"][i], files["tail_hash"][i]
            ):
                return FULL_READ
        except OSError:
            return FULL_READ
        return ReadPlan(
            "append",
            files["resume_offset"][i],
            files["resume_line"][i],
            files["resume_index"][i],
            files["first_row"][i],
            max(files["rows"][i] - 1, 0),
        )

    def state(self, key: str) -> FileState | None:
        """The loaded state of ``key`` (None when there is none)."""
        i = self._positions.get(key)
        if i is None:
            return None
        return FileState(*(self._files[name][i] for name in _STATE_FIELDS))

    # ---------------------------------------------------------------------------- the next table

    def keep(self, key: str, first_row: int) -> None:
        """An unchanged file keeps its loaded state; its rows start at ``first_row`` in the next table."""
        i = self._positions[key]
        self._next[key] = i
        self._next_first_row[key] = first_row
        if first_row != self._files["first_row"][i]:
            self.dirty = True

    def place(self, key: str, state: FileState, first_row: int) -> None:
        """A parsed file: its new state, with its rows at ``first_row`` in the next table."""
        self._next[key] = state
        self._next_first_row[key] = first_row
        self.dirty = True

    def save(self, encode_slices: Callable[[Packer], tuple[dict[str, Any], int]]) -> str | None:
        """Write the placed files and the next table atomically (temporary file + rename) when anything
        differs from what was loaded: a file placed anew, moved, dropped or gone, or a load problem.

        ``encode_slices`` returns the next table's JSON-ready columns (with references to the arrays
        it adds to the given packer) and its row count; it is called only when the document is
        written. Returns a problem text instead of raising: a cache that cannot be written costs the
        next read its speed, not its correctness.
        """
        if self._next.keys() != self._positions.keys():
            self.dirty = True
        if not self.dirty and self.path.is_file():
            return None
        tmp_name: str | None = None
        try:
            packer = Packer()
            columns, rows = encode_slices(packer)
            header = {
                "kind": CACHE_KIND,
                "version": CACHE_VERSION,
                "files": self._next_file_columns(packer),
                "slices": {"rows": rows, "columns": columns},
            }
            payload = document_bytes(header, packer.body())
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            fd, tmp_name = tempfile.mkstemp(prefix=".agent-logs.", suffix=".tmp", dir=self.cache_dir)
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp_name, self.path)
            tmp_name = None
            self.dirty = False
            for name in OLDER_FILE_NAMES:
                with contextlib.suppress(OSError):
                    (self.cache_dir / name).unlink(missing_ok=True)
        except (OSError, TypeError, ValueError, OverflowError, orjson.JSONEncodeError) as exc:
            return f"agent-log cache not saved ({type(exc).__name__}: {exc})"
        finally:
            if tmp_name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp_name)
        return None

    def _next_file_columns(self, packer: Packer) -> dict[str, Any]:
        """The stored file columns of the placed files (see the module docstring)."""
        columns: dict[str, list[Any]] = {name: [] for name in (*_TEXT_FIELDS, *_NUMBER_TYPES)}
        loaded = self._files
        for key, state in self._next.items():
            columns["path"].append(key)
            for name in _STATE_FIELDS:
                columns[name].append(
                    getattr(state, name) if isinstance(state, FileState) else loaded[name][state]
                )
            columns["first_row"].append(self._next_first_row[key])
        stored: dict[str, Any] = {name: columns[name] for name in _TEXT_FIELDS}
        for name, dtype in _NUMBER_TYPES.items():
            stored[name] = packer.add(np.array(columns[name], dtype=dtype), dtype)
        return stored
