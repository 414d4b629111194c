"""The state store: incremental state (the GitHub cache, read offsets, fingerprints) of every reader.

State is kept in named *workspaces*: a directory a reader uses as its cache directory for one run.

- **Local** (:class:`LocalStateStore`, a directory on this machine): the workspace is the directory
  itself, used in place; readers keep their own atomic writes (SQLite transactions, temporary file +
  rename). An advisory lock per workspace serialises concurrent runs on the machine.
- **Object store** (:class:`ObjectStateStore`, any fsspec URL): the workspace is downloaded into a
  temporary directory, used, and uploaded back as a new *generation* when the run succeeds. Each
  generation's files sit under ``<name>/<generation>/``; ``<name>/HEAD`` names the current one and is
  written last (the commit point). Before committing, HEAD is read again: if another run committed
  meanwhile (generation check), nothing is overwritten and :class:`StateConflict` is raised, so the
  run fails and can be retried on top of the other run's state. Dagster pools serialise the writers
  (the GitHub sync, the readers) so that conflicts are rare; the check makes them harmless.

A failed run never commits: the previous state stays as it was (docs/storage.md).

Pure module: no Dagster.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import secrets
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from upath import UPath

from scorecard_assets.storage.location import as_location, is_local, read_bytes_or_none, remove, write_bytes

try:  # POSIX advisory locks
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX platforms
    fcntl = None  # type: ignore[assignment]

HEAD = "HEAD"
_NAME_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_.")


class StateConflict(RuntimeError):
    """Another run committed the same state workspace while this one ran."""


def _check_name(name: str) -> str:
    if not name or not set(name) <= _NAME_OK or name.startswith("."):
        raise ValueError(f"state workspace name {name!r}: use lower-case letters, digits, '-', '_', '.'")
    return name


class StateStore(Protocol):
    """Named local working directories for incremental state, persisted where the store lives."""

    location: UPath

    def workspace(self, name: str) -> contextlib.AbstractContextManager[Path]: ...

    def describe(self) -> str: ...


class LocalStateStore:
    """State in a local directory, used in place (module doc)."""

    def __init__(self, location: str | os.PathLike[str] | UPath) -> None:
        self.location = as_location(location)
        if not is_local(self.location):
            raise ValueError(f"{self.location}: not a local directory; use ObjectStateStore")

    def describe(self) -> str:
        return f"local directory {self.location}"

    @contextlib.contextmanager
    def workspace(self, name: str) -> Iterator[Path]:
        root = Path(self.location) / _check_name(name)
        root.mkdir(parents=True, exist_ok=True)
        with _locked(root.parent / f".{name}.lock"):
            yield root


@contextlib.contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    if fcntl is None:  # pragma: no cover
        yield
        return
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with open(lock_path, "a") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)


class ObjectStateStore:
    """State on an object store, checked out per run and committed as a new generation (module doc)."""

    def __init__(self, location: str | UPath) -> None:
        self.location = as_location(location)

    def describe(self) -> str:
        return f"object store {self.location}"

    def head(self, name: str) -> str | None:
        data = read_bytes_or_none(self.location / _check_name(name) / HEAD)
        return data.decode("utf-8").strip() or None if data is not None else None

    @contextlib.contextmanager
    def workspace(self, name: str) -> Iterator[Path]:
        base = self.location / _check_name(name)
        generation = self.head(name)
        with tempfile.TemporaryDirectory(prefix=f"scorecard-state-{name}-") as tmp:
            local = Path(tmp)
            before = _download(base / generation, local) if generation else {}
            yield local
            after = _digests(local)
            if after == before:
                return
            self._commit(name, base, local, after, expected=generation)

    def _commit(
        self, name: str, base: UPath, local: Path, digests: dict[str, str], *, expected: str | None
    ) -> None:
        new = secrets.token_hex(8)
        for rel in digests:
            write_bytes(base / new / rel, (local / rel).read_bytes())
        current = self.head(name)
        if current != expected:
            _remove_tree(base / new)
            raise StateConflict(
                f"state {name!r} in {self.location}: another run committed generation {current} while "
                f"this run worked from {expected}; nothing was overwritten (re-run to continue from it)"
            )
        write_bytes(base / HEAD, new.encode("utf-8"))
        # keep the previous generation (a run that read it a moment ago can still download it)
        for entry in _children(base):
            if entry.name not in {HEAD, new, expected}:
                _remove_tree(entry)


def _children(path: UPath) -> list[UPath]:
    try:
        return list(path.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _remove_tree(path: UPath) -> None:
    with contextlib.suppress(FileNotFoundError):
        if path.is_dir():
            path.fs.rm(path.path, recursive=True)
        else:
            remove(path)


def _download(prefix: UPath, local: Path) -> dict[str, str]:
    """Copy every object under ``prefix`` into ``local``; their digests by relative path."""
    out: dict[str, str] = {}
    try:
        found = prefix.fs.find(prefix.path)
    except FileNotFoundError:
        return out
    root = prefix.path.rstrip("/") + "/"
    for key in found:
        rel = key[len(root) :] if key.startswith(root) else key.rsplit("/", 1)[-1]
        target = local / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        data = prefix.fs.cat_file(key)
        target.write_bytes(data)
        out[rel] = hashlib.sha256(data).hexdigest()
    return out


def _digests(local: Path) -> dict[str, str]:
    out: dict[str, str] = {}
    for path in sorted(local.rglob("*")):
        if path.is_file() and not path.name.endswith((".lock", ".tmp")):
            out[path.relative_to(local).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def state_store_at(where: str | os.PathLike[str] | UPath) -> StateStore:
    """The state store for ``where``: local for a path, object store for a URL."""
    location = as_location(where)
    return LocalStateStore(location) if is_local(location) else ObjectStateStore(location)
