"""The report store: published reports under ``<output>/<window end>/`` and ``<output>/latest/``.

``<output>`` is a :class:`~scorecard_assets.storage.location.Location`: a local directory or an
object-store prefix (``s3://bucket/reports``). Contracts, the same for both:

- every file is written atomically (local: temporary file, fsync, rename; object store: one PUT);
  readers see the old file or the new one, never a mix, and a failure leaves the old one in place;
- :meth:`ReportStore.publish` writes every file into ``<output>/<window end>/``, then refreshes
  ``latest/`` only when the window is not older than the one ``latest/WINDOW`` names (a backfill of
  an older week never replaces the latest report). The refresh writes each file, removes files of
  ``latest/`` that are not in the new set, and writes ``WINDOW`` last, so ``WINDOW`` names a window
  only once its files are all in place;
- concurrent publishers are serialised: locally by an advisory lock on ``<output>/.publish.lock``,
  on a deployment by the Dagster pool of the publishing step (docs/deploying.md);
- temporary files left by a killed publish (``.<name>.<random>.tmp``, the pattern of
  ``location.write_bytes``) are removed by the next publish when they are older than its start
  (docs/reliability.md "Publishing"); nothing else is ever removed from a window folder;
- :meth:`ReportStore.published_sidecar` reads what is already published for a window (the publish
  guard's input, ``report/guard.py``); a damaged file reads as nothing published.

Pure module (no Dagster); it never writes outside its location.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import orjson
from upath import UPath

from scorecard_assets.storage.location import (
    as_location,
    is_local,
    read_bytes_or_none,
    remove,
    uri_of,
    write_bytes,
)

try:  # POSIX advisory locks; elsewhere local publishing is simply not serialised
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX platforms
    fcntl = None  # type: ignore[assignment]

LATEST_DIR = "latest"
SIDECAR_FILE = "model-scorecard.json"
WINDOW_FILE = "WINDOW"
LOCK_FILE = ".publish.lock"

_WINDOW_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
# ``tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp")`` in ``location.write_bytes``: 8 random characters
_TEMP_RE = re.compile(r"^\.[A-Za-z0-9][A-Za-z0-9._-]*\.[A-Za-z0-9_]{8}\.tmp$")


def write_atomic(path: UPath | Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (str as UTF-8) atomically, keeping a local file's permission bits."""
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    target = as_location(path) if not isinstance(path, UPath) else path
    mode = _existing_mode(target)
    write_bytes(target, payload)
    if mode is not None:
        os.chmod(Path(target), mode)


def _existing_mode(path: UPath) -> int | None:
    if not is_local(path):
        return None
    try:
        return Path(path).stat().st_mode & 0o7777
    except OSError:
        return None


class ReportStore:
    """Published reports at one location (module doc)."""

    def __init__(self, location: str | os.PathLike[str] | UPath) -> None:
        self.location = as_location(location)

    def __repr__(self) -> str:
        return f"ReportStore({self.location})"

    def window_location(self, window_end: str) -> UPath:
        _check_window(window_end)
        return self.location / window_end

    def uri(self, window_end: str, name: str | None = None) -> str:
        """The link to a published window folder (or one file of it): ``file://…`` or the URL."""
        folder = self.window_location(window_end)
        return uri_of(folder / name if name else folder)

    def publish(
        self,
        window_end: str,
        files: Mapping[str, bytes | str],
        *,
        run_started: datetime | None = None,
    ) -> dict[str, UPath]:
        """Write ``files`` (name -> content) into ``<window_end>/`` and maybe refresh ``latest/``.

        ``window_end`` must be a ``YYYY-MM-DD`` date and every name a plain file name (no folders, no
        leading dot, not ``WINDOW``); anything else raises ``ValueError`` before a byte is written.
        Returns name -> location of the files in the window folder. Temporary files of killed
        publishes older than ``run_started`` (default: now) are removed first."""
        _check_window(window_end)
        _check_names(files)
        window_dir = self.location / window_end
        written: dict[str, UPath] = {}
        started = run_started or datetime.now(UTC)
        with self._lock():
            self.remove_stale_temporaries(started, window_end=None if is_local(self.location) else window_end)
            for name, content in files.items():
                write_atomic(window_dir / name, content)
                written[name] = window_dir / name
            if should_refresh_latest(self.latest_window(), window_end):
                self._refresh_latest(window_end, files)
        return written

    def latest_window(self) -> str | None:
        """The window ``latest/WINDOW`` names, or None when absent or not a date."""
        data = read_bytes_or_none(self.location / LATEST_DIR / WINDOW_FILE)
        try:
            text = (data or b"").decode("utf-8").strip()
        except UnicodeDecodeError:
            return None
        return text if _is_window(text) else None

    def published_sidecar(self, window_end: str) -> dict[str, Any] | None:
        """The sidecar already published for ``window_end``; None when there is none or it cannot be
        read (a damaged file must not block a good report)."""
        if not _is_window(window_end):
            return None
        data = read_bytes_or_none(self.location / window_end / SIDECAR_FILE)
        if data is None:
            return None
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def published_issue_rows(self, window_end: str) -> int | None:
        """``grandTotal.n`` of the sidecar already published for ``window_end``, or None."""
        sidecar = self.published_sidecar(window_end)
        grand = sidecar.get("grandTotal") if sidecar else None
        n = grand.get("n") if isinstance(grand, dict) else None
        return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None

    def file(self, window_end: str, name: str) -> bytes | None:
        """One published file's content, or None."""
        return read_bytes_or_none(self.window_location(window_end) / name)

    def remove_stale_temporaries(self, before: datetime, *, window_end: str | None = None) -> list[str]:
        """Remove our temporary files (``_TEMP_RE``) last modified before ``before`` from the
        location, ``latest/`` and every window folder (only ``window_end``'s when given: what
        ``publish`` does on an object store, where listing every window costs requests and our
        one-PUT writes leave no temporary file); returns their paths relative to the location.

        docs/reliability.md "Publishing": a publish killed between writing a temporary file and
        renaming it leaves that file behind; the next publish (holding the lock) removes it. A file
        of another name, or one newer than ``before`` (a publish still running), is left alone.
        """
        cutoff = before.timestamp()
        if window_end is None:
            folders = [self.location, *(p for p in _children(self.location) if _is_folder_to_clean(p))]
        else:
            folders = [self.location, self.location / LATEST_DIR, self.window_location(window_end)]
        removed: list[str] = []
        for folder in folders:
            for child in _children(folder):
                if not _TEMP_RE.match(child.name) or not _is_plain_file(child):
                    continue
                modified = _modified_at(child)
                if modified is not None and modified < cutoff:
                    remove(child)
                    removed.append(child.name if folder is self.location else f"{folder.name}/{child.name}")
        return sorted(removed)

    # ---------------------------------------------------------------------------------- helpers

    def _refresh_latest(self, window_end: str, files: Mapping[str, bytes | str]) -> None:
        latest = self.location / LATEST_DIR
        for name, content in files.items():
            write_atomic(latest / name, content)
        for stale in sorted(_children(latest), key=lambda p: p.name):
            if stale.name not in files and stale.name != WINDOW_FILE and _is_plain_file(stale):
                remove(stale)
        write_atomic(latest / WINDOW_FILE, window_end + "\n")

    @contextlib.contextmanager
    def _lock(self) -> Iterator[None]:
        if not is_local(self.location) or fcntl is None:
            yield
            return
        root = Path(self.location)
        root.mkdir(parents=True, exist_ok=True)
        with open(root / LOCK_FILE, "a+b") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _children(path: UPath) -> list[UPath]:
    try:
        return list(path.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []


def _is_folder_to_clean(path: UPath) -> bool:
    return (path.name == LATEST_DIR or _is_window(path.name)) and path.is_dir()


def _modified_at(path: UPath) -> float | None:
    """Epoch seconds of the last change of a file or object; None when the store does not say."""
    if is_local(path):
        try:
            return Path(path).stat().st_mtime
        except OSError:
            return None
    try:
        info = path.fs.info(path.path)
    except (OSError, ValueError):
        return None
    for key in ("mtime", "LastModified", "last_modified", "updated", "created"):
        value = info.get(key)
        if isinstance(value, datetime):
            return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()
    return None


def _is_plain_file(path: UPath) -> bool:
    if is_local(path):
        p = Path(path)
        return p.is_file() and not p.is_symlink()
    return path.is_file()


def should_refresh_latest(current: str | None, window_end: str) -> bool:
    """``latest/`` takes ``window_end`` unless it already holds a newer window (same window: refresh)."""
    return current is None or date.fromisoformat(window_end) >= date.fromisoformat(current)


def _is_window(text: str) -> bool:
    if not isinstance(text, str) or not _WINDOW_RE.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_window(window_end: str) -> None:
    if not _is_window(window_end):
        raise ValueError(f"window_end must be a YYYY-MM-DD date, got {window_end!r}")


def _check_names(files: Mapping[str, bytes | str]) -> None:
    bad = [n for n in files if not isinstance(n, str) or not _FILE_NAME_RE.match(n) or n == WINDOW_FILE]
    if bad:
        raise ValueError(
            "report file names must be plain names (letters, digits, '.', '_', '-'; "
            f"not {WINDOW_FILE}): {bad!r}"
        )
