"""Incremental reading state for append-only agent logs (product.md §7).

The cache remembers, per log file, what the file looked like when it was last parsed and the parsed
dispatch slices. It is deliberately ignorant of what a slice holds: slices are opaque JSON-ready
dicts that the reader (``agent_logs``) encodes and decodes. What the cache decides is *how much* of a
file must be parsed again:

- **unchanged** (same device, inode, size and ``mtime_ns``): nothing is read; every cached slice is
  reused.
- **append** (same device and inode, larger size, the first 4 KiB and the last 4 KiB of the previously
  seen content still hash the same): only the bytes from the start of the last slice onward are
  parsed; the slices before it are reused. The last slice is parsed again because new bytes may
  extend it (a completed truncated line, more records of the same dispatch).
- **full** (no entry, a new inode or device, a smaller size, the same size with another mtime, or a
  changed head or tail): the whole file is parsed.

The state is one JSON document (``agent-logs.v1.json``) under the cache directory, written to a
temporary file and renamed over the previous one, so a killed run leaves the old state intact. A
missing, unreadable, corrupt or other-version document is ignored: the next read is a full one.
JSON rather than pickle so that loading a cache file can never execute code.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import orjson

CACHE_VERSION = 1
CACHE_KIND = "scorecard.agent-logs"
CACHE_FILE_NAME = f"agent-logs.v{CACHE_VERSION}.json"
FINGERPRINT_BYTES = 4096

ReadMode = Literal["unchanged", "append", "full"]
_INT_FIELDS = ("dev", "inode", "size", "mtime_ns", "head_len", "resume_offset", "resume_line", "resume_index")


@dataclass
class FileState:
    """What a log file looked like when it was parsed, and its parsed slices.

    ``slices`` are the reader's encoded slices in file order; the last one starts at
    ``resume_offset`` (line ``resume_line``, slice index ``resume_index``). A file without any
    slice has ``resume_offset == 0`` and an empty ``slices`` list.
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
    slices: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The stored form (slices are referenced, not copied)."""
        stored: dict[str, Any] = {
            name: getattr(self, name) for name in (*_INT_FIELDS, "head_hash", "tail_hash")
        }
        stored["slices"] = self.slices
        return stored

    @classmethod
    def from_json(cls, raw: object) -> FileState:
        """Validate one stored entry; ValueError when any field has the wrong type."""
        if not isinstance(raw, dict):
            raise ValueError("entry is not an object")
        for name in _INT_FIELDS:
            value = raw.get(name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} is not a non-negative integer")
        for name in ("head_hash", "tail_hash"):
            if not isinstance(raw.get(name), str):
                raise ValueError(f"{name} is not a string")
        slices = raw.get("slices")
        if not isinstance(slices, list) or not all(isinstance(s, dict) for s in slices):
            raise ValueError("slices is not a list of objects")
        if raw["resume_offset"] > raw["size"] or raw["head_len"] > raw["size"]:
            raise ValueError("offsets beyond the recorded size")
        return cls(**{name: raw[name] for name in (*_INT_FIELDS, "head_hash", "tail_hash")}, slices=slices)


@dataclass(frozen=True)
class ReadPlan:
    """What to parse: bytes ``[start_offset, size)``, numbering lines from ``start_line`` and slices
    from ``start_index``; ``kept`` are the cached slices that precede ``start_offset``."""

    mode: ReadMode
    start_offset: int = 0
    start_line: int = 1
    start_index: int = 0
    kept: list[dict[str, Any]] = field(default_factory=list)


FULL_READ = ReadPlan(mode="full")


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def read_range(path: Path, offset: int, length: int) -> bytes:
    """``length`` bytes of ``path`` from ``offset`` (fewer when the file is shorter)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(length)


def fingerprint_bytes(data: bytes) -> tuple[int, str, str]:
    """(head length, hash of the first ≤ 4 KiB, hash of the last ≤ 4 KiB) of a whole file's bytes."""
    length = min(FINGERPRINT_BYTES, len(data))
    return length, _digest(data[:length]), _digest(data[len(data) - length :])


def fingerprint(path: Path, size: int) -> tuple[int, str, str]:
    """Like :func:`fingerprint_bytes` for the first ``size`` bytes of ``path``, reading ≤ 8 KiB."""
    length = min(FINGERPRINT_BYTES, size)
    head = read_range(path, 0, length)
    tail = read_range(path, size - length, length)
    return length, _digest(head), _digest(tail)


def _same_prefix(path: Path, old: FileState) -> bool:
    """True when the bytes the old state fingerprinted are still in place."""
    tail_len = min(FINGERPRINT_BYTES, old.size)
    head = read_range(path, 0, old.head_len)
    tail = read_range(path, old.size - tail_len, tail_len)
    return (
        len(head) == old.head_len
        and len(tail) == tail_len
        and _digest(head) == old.head_hash
        and _digest(tail) == old.tail_hash
    )


class AgentLogCache:
    """Per-file parse state, loaded from and saved to ``<cache_dir>/agent-logs.v1.json``.

    ``load_problem`` says why a stored document was ignored (None when it was read or absent).
    """

    def __init__(self, cache_dir: Path, entries: dict[str, FileState] | None = None) -> None:
        self.cache_dir = cache_dir
        self.entries: dict[str, FileState] = entries if entries is not None else {}
        self.load_problem: str | None = None
        self.dropped_entries = 0
        self.dirty = False

    @property
    def path(self) -> Path:
        return self.cache_dir / CACHE_FILE_NAME

    @classmethod
    def load(cls, cache_dir: Path) -> AgentLogCache:
        """The stored state, or an empty one when the document is absent, corrupt or of another version."""
        cache = cls(cache_dir)
        try:
            raw = orjson.loads(cache.path.read_bytes())
        except FileNotFoundError:
            return cache
        except (OSError, orjson.JSONDecodeError) as exc:
            return cache._ignored(f"cache file unreadable or not JSON ({type(exc).__name__}); full re-read")
        if not isinstance(raw, dict) or raw.get("kind") != CACHE_KIND or raw.get("version") != CACHE_VERSION:
            return cache._ignored("cache file of another kind or version; full re-read")
        files = raw.get("files")
        if not isinstance(files, dict):
            return cache._ignored("cache file without a files mapping; full re-read")
        for key, entry in files.items():
            try:
                cache.entries[key] = FileState.from_json(entry)
            except (ValueError, TypeError):
                cache.dropped_entries += 1
                cache.dirty = True
        return cache

    def _ignored(self, problem: str) -> AgentLogCache:
        self.load_problem = problem
        self.dirty = True
        return self

    def plan(self, key: str, path: Path, st: os.stat_result) -> ReadPlan:
        """Decide how much of ``path`` (stat ``st``) must be parsed; may read ≤ 8 KiB to check an append."""
        old = self.entries.get(key)
        if old is None or old.dev != st.st_dev or old.inode != st.st_ino or st.st_size < old.size:
            return FULL_READ
        if st.st_size == old.size:
            if st.st_mtime_ns == old.mtime_ns:
                return ReadPlan(
                    mode="unchanged",
                    start_offset=old.size,
                    start_line=old.resume_line,
                    start_index=old.resume_index,
                    kept=list(old.slices),
                )
            return FULL_READ
        try:
            if not _same_prefix(path, old):
                return FULL_READ
        except OSError:
            return FULL_READ
        return ReadPlan(
            mode="append",
            start_offset=old.resume_offset,
            start_line=old.resume_line,
            start_index=old.resume_index,
            kept=list(old.slices[:-1]),
        )

    def remember(self, key: str, state: FileState) -> None:
        self.entries[key] = state
        self.dirty = True

    def forget_all_but(self, keys: set[str]) -> None:
        """Drop the entries of files that were not seen in this read (deleted or no longer configured)."""
        for key in [k for k in self.entries if k not in keys]:
            del self.entries[key]
            self.dirty = True

    def save(self) -> str | None:
        """Write the state atomically (temporary file + rename) when it changed since loading.

        Returns a problem text instead of raising: a cache that cannot be written costs the next
        read its speed, not its correctness.
        """
        if not self.dirty and self.path.is_file():
            return None
        document = {
            "kind": CACHE_KIND,
            "version": CACHE_VERSION,
            "files": {key: state.to_json() for key, state in self.entries.items()},
        }
        tmp_name: str | None = None
        try:
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            payload = orjson.dumps(document)
            fd, tmp_name = tempfile.mkstemp(prefix=".agent-logs.", suffix=".tmp", dir=self.cache_dir)
            with os.fdopen(fd, "wb") as fh:
                fh.write(payload)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp_name, self.path)
            tmp_name = None
            self.dirty = False
        except (OSError, TypeError, orjson.JSONEncodeError) as exc:
            return f"agent-log cache not saved ({type(exc).__name__}: {exc})"
        finally:
            if tmp_name is not None:
                with contextlib.suppress(OSError):
                    os.unlink(tmp_name)
        return None
