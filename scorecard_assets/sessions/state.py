"""The incremental-read state of the sessions path: plain JSON, persisted by the caller.

``SessionsState`` holds one ``StoreState`` per store (OpenCode: a fingerprint per session; JSONL
stores: a ``FileState`` per file) and one ``RepoState`` per git repository (the ref tips seen last).
Pass the state returned by one read into the next: only new or changed sessions, files and commits
are read again (docs/sessions.md, "Incremental reads").
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

STATE_VERSION = 1
HEAD_BYTES = 4096
TAIL_BYTES = 1 << 20


class FileState(BaseModel):
    """What was seen of one JSONL file: its identity, its size and where its last full line ended."""

    model_config = ConfigDict(extra="forbid")

    size: int
    mtime_ns: int
    inode: int
    offset: int = Field(description="bytes up to the end of the last complete line")
    last_line_hash: str = Field(default="", description="sha1 of the last complete line")
    head_hash: str = Field(default="", description="sha1 of the first 4 KiB")


class StoreState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    kind: str
    path: str
    stamp: list[int] = Field(default_factory=list, description="OpenCode: size/mtime of the DB and its WAL")
    sessions: dict[str, list[int]] = Field(
        default_factory=dict,
        description="OpenCode: session id -> [time_updated, messages, last message update]",
    )
    files: dict[str, FileState] = Field(default_factory=dict, description="JSONL stores: file -> state")


class RepoState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repo_key: str
    tips: list[str] = Field(default_factory=list, description="ref tips read last time")
    last_commit: str = Field(default="", description="the newest commit seen (author time)")
    commits: int = 0


class SessionsState(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: int = STATE_VERSION
    stores: dict[str, StoreState] = Field(default_factory=dict, description="'<kind>:<path>' -> state")
    repos: dict[str, RepoState] = Field(default_factory=dict, description="repo key -> state")

    def to_json(self) -> str:
        return self.model_dump_json()

    @classmethod
    def from_json(cls, text: str | bytes | None) -> SessionsState:
        """The state in ``text``; an empty or unknown-version state reads as a fresh one."""
        if not text:
            return cls()
        state = cls.model_validate_json(text)
        return state if state.version == STATE_VERSION else cls()


def store_key(kind: str, path: Path | str) -> str:
    return f"{kind}:{path}"


def file_fingerprint(path: Path, data: bytes, st: os.stat_result) -> FileState:
    """The state of a file just read in full (``data`` = its bytes)."""
    end = data.rfind(b"\n") + 1
    start = data.rfind(b"\n", 0, max(end - 1, 0)) + 1 if end else 0
    last = data[start:end]
    return FileState(
        size=len(data),
        mtime_ns=st.st_mtime_ns,
        inode=st.st_ino,
        offset=end,
        last_line_hash=hashlib.sha1(last).hexdigest() if last else "",
        head_hash=hashlib.sha1(data[:HEAD_BYTES]).hexdigest(),
    )


def file_change(old: FileState | None, path: Path, st: os.stat_result) -> str:
    """``new`` | ``same`` | ``grown`` | ``replaced`` for a file against its last state."""
    if old is None:
        return "new"
    if st.st_size == old.size and st.st_mtime_ns == old.mtime_ns and st.st_ino == old.inode:
        return "same"
    if st.st_ino == old.inode and st.st_size >= old.size and old.offset <= st.st_size:
        lo = max(old.offset - TAIL_BYTES, 0)
        try:
            with path.open("rb") as fh:
                head = fh.read(min(HEAD_BYTES, old.size))
                fh.seek(lo)
                window = fh.read(old.offset - lo)
        except OSError:
            return "replaced"
        if hashlib.sha1(head).hexdigest() != old.head_hash:
            return "replaced"
        if old.last_line_hash:
            last = window[window.rfind(b"\n", 0, max(len(window) - 1, 0)) + 1 :]
            if hashlib.sha1(last).hexdigest() != old.last_line_hash:
                return "replaced"
        return "grown"
    return "replaced"
