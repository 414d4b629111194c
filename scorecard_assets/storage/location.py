"""Where stored things live: a local directory or an object-store prefix, behind one path type.

Every store of the project (asset values, incremental state, published reports) sits on a
:class:`Location`: a ``UPath`` (universal-pathlib) for a local directory or any fsspec URL
(``s3://bucket/prefix``, ``gs://…``, ``memory://…`` in tests). Local locations write atomically
(temporary file, fsync, rename); object stores write each object in one request, which is atomic
per object. Nothing here assumes that two runs share a disk (docs/storage.md).

Pure module: no Dagster.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from upath import UPath

NEW_FILE_MODE = 0o644


def as_location(where: str | os.PathLike[str] | UPath) -> UPath:
    """``where`` as a ``UPath``: an fsspec URL as given, a local path made absolute (``~`` expanded).

    Credentials and endpoints of object stores come from their usual environment (for S3:
    ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL``, ``AWS_REGION``)."""
    if isinstance(where, UPath):
        return where
    text = os.fspath(where)
    if "://" in text and not text.startswith("file://"):
        return UPath(text)
    if text.startswith("file://"):
        text = text[len("file://") :]
    return UPath(Path(text).expanduser().resolve())


def is_local(path: UPath) -> bool:
    """True for a path on this machine's file system (``Path`` operations apply directly)."""
    return isinstance(path, Path)


def uri_of(path: UPath) -> str:
    """A URI for links in the UI and the README: ``file:///…`` for local paths, the URL otherwise."""
    if is_local(path):
        return Path(path).resolve().as_uri()
    return str(path)


def arrow_target(path: UPath) -> tuple[Any, str]:
    """``(filesystem, path)`` for pyarrow: ``(None, local path)`` or the fsspec file system and its path."""
    if is_local(path):
        return None, str(path)
    return path.fs, path.path


def write_bytes(path: UPath, data: bytes) -> None:
    """Write ``data`` to ``path`` so that readers see the old content or the new one, never a mix.

    Local: a temporary file in the same directory, flushed and fsynced, then renamed over the
    target (the directory is fsynced too). Object store: one PUT (atomic per object)."""
    if not is_local(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        return
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, NEW_FILE_MODE)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_directory(target.parent)


def fsync_directory(directory: Path) -> None:
    """Make a rename inside ``directory`` durable (best effort where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_bytes_or_none(path: UPath) -> bytes | None:
    """The content of ``path``, or None when there is no such object."""
    try:
        return path.read_bytes()
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def remove(path: UPath) -> None:
    """Delete one object / file if it exists."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


@contextlib.contextmanager
def local_copy(path: UPath, suffix: str = "") -> Iterator[Path]:
    """A local file path holding ``path``'s content (for libraries that need a real file, such as
    SQLite); for a local location, the file itself."""
    if is_local(path):
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix="scorecard-") as tmp:
        local = Path(tmp) / f"copy{suffix}"
        data = read_bytes_or_none(path)
        if data is not None:
            local.write_bytes(data)
        yield local
