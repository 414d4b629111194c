"""Fingerprints of input files: has anything a reader reads changed since its stored result was built?

A fingerprint is a small JSON-shaped dict per path (docs/incremental.md "What is remembered"):

- a missing path: ``{"kind": "missing"}``;
- a directory: ``{"kind": "dir", "mtime_ns": ...}`` (a directory's mtime moves when an entry is
  added, removed or renamed, which is all a reader learns from listing it);
- a file: ``{"kind": "file", "size": ..., "mtime_ns": ..., "head": <sha256 of the first 4 KiB>}``,
  plus ``"sha256"`` of the whole content when the caller asks for content hashes;
- anything else (a FIFO, a socket): ``{"kind": "other", "type": <file type bits>}``; a path that
  cannot be examined: ``{"kind": "error", "errno": ...}`` (the readers report both without reading
  them, so the same kind and type, or the same error, mean the same result).

:func:`same_inputs` is the rule: two fingerprint books describe the same inputs when they name the
same paths and every path is unchanged. A file is unchanged when its kind, size, mtime and head
hash are equal; with content hashes, a file whose mtime moved but whose size and whole-content hash
are equal is unchanged too (a copy, a ``touch``). The content hash is only computed for files
whose stat changed (:func:`refresh_hashes`), so an unchanged export is never read.

Pure module: no Dagster.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

HEAD_BYTES = 4096
HASH_CHUNK = 8 * 1024 * 1024

Fingerprint = dict[str, Any]
Book = dict[str, Fingerprint]


def _head_hash(path: Path) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read(HEAD_BYTES)).hexdigest()
    except OSError:
        return None


def content_hash(path: Path) -> str | None:
    """sha256 of the whole file, read in chunks; None when it cannot be read."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            while chunk := f.read(HASH_CHUNK):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


def fingerprint(path: Path, *, with_content: bool = False) -> Fingerprint:
    """The fingerprint of one path (module doc); a FIFO is never opened."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {"kind": "missing"}
    except OSError as exc:
        return {"kind": "error", "errno": exc.errno}
    if stat.S_ISDIR(st.st_mode):
        return {"kind": "dir", "mtime_ns": st.st_mtime_ns}
    if not stat.S_ISREG(st.st_mode):
        return {"kind": "other", "type": stat.S_IFMT(st.st_mode)}
    out: Fingerprint = {
        "kind": "file",
        "size": st.st_size,
        "mtime_ns": st.st_mtime_ns,
        "head": _head_hash(path),
    }
    if with_content:
        out["sha256"] = content_hash(path)
    return out


def book_of(paths: Iterable[Path], *, with_content: bool = False) -> Book:
    """Fingerprints of ``paths`` keyed by their text (duplicates count once)."""
    return {str(p): fingerprint(p, with_content=with_content) for p in paths}


def _same_file(before: Mapping[str, Any], now: Mapping[str, Any]) -> bool:
    if before.get("kind") != now.get("kind"):
        return False
    kind = now.get("kind")
    if kind != "file":
        return dict(before) == dict(now)  # missing, dir (its mtime), other (its type), error (errno)
    if now.get("head") is None:
        return False  # a file whose first bytes cannot be read: always read again
    if before.get("size") != now.get("size") or before.get("head") != now.get("head"):
        return False
    if before.get("mtime_ns") == now.get("mtime_ns"):
        return True
    # the stat moved: unchanged only if both sides know the whole content and it is the same
    return before.get("sha256") is not None and before.get("sha256") == now.get("sha256")


def same_inputs(before: Mapping[str, Any] | None, now: Mapping[str, Any]) -> bool:
    """True when ``now`` describes exactly the inputs ``before`` did (module doc)."""
    if not isinstance(before, Mapping) or set(before) != set(now):
        return False
    return all(isinstance(before[p], Mapping) and _same_file(before[p], now[p]) for p in now)


def refresh_hashes(before: Mapping[str, Any] | None, now: Book) -> Book:
    """``now`` with the whole-content hash filled in for the files whose stat moved but whose size
    and head did not (the only case where the hash decides); other files keep the hash ``before``
    recorded when their stat is unchanged."""
    out: Book = {}
    for path, fp in now.items():
        fp = dict(fp)
        old = before.get(path) if isinstance(before, Mapping) else None
        if fp.get("kind") == "file" and "sha256" not in fp and isinstance(old, Mapping):
            same_stat = all(old.get(k) == fp.get(k) for k in ("size", "mtime_ns", "head"))
            if same_stat:
                if old.get("sha256") is not None:
                    fp["sha256"] = old["sha256"]
            elif old.get("size") == fp.get("size") and old.get("head") == fp.get("head"):
                fp["sha256"] = content_hash(Path(path))
        out[path] = fp
    return out


def with_content_hashes(now: Book) -> Book:
    """``now`` with every file's whole-content hash (recorded when the files are parsed anyway)."""
    out: Book = {}
    for path, fp in now.items():
        fp = dict(fp)
        if fp.get("kind") == "file" and "sha256" not in fp:
            fp["sha256"] = content_hash(Path(path))
        out[path] = fp
    return out
