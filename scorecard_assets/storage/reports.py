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
- :meth:`ReportStore.published_sidecar` reads what is already published for a window (the publish
  guard's input, ``report/guard.py``); a damaged file reads as nothing published.

Pure module (no Dagster); it never writes outside its location.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterator, Mapping
from datetime import date
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

    def publish(self, window_end: str, files: Mapping[str, bytes | str]) -> dict[str, UPath]:
        """Write ``files`` (name -> content) into ``<window_end>/`` and maybe refresh ``latest/``.

        ``window_end`` must be a ``YYYY-MM-DD`` date and every name a plain file name (no folders, no
        leading dot, not ``WINDOW``); anything else raises ``ValueError`` before a byte is written.
        Returns name -> location of the files in the window folder."""
        _check_window(window_end)
        _check_names(files)
        window_dir = self.location / window_end
        written: dict[str, UPath] = {}
        with self._lock():
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
