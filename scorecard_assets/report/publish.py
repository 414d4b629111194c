"""Atomic publishing of the report files: ``<output>/<window end>/`` and ``<output>/latest/``.

Contracts:

- :func:`write_atomic` writes into a temporary file in the target's directory, flushes and fsyncs
  it, then ``os.replace``-s it over the target (atomic on POSIX). Readers see the old file or the
  new one, never a mix; on any failure the old file is untouched and the temporary file is removed.
- :func:`publish_report` writes every file into ``<output>/<window end>/``, then refreshes
  ``<output>/latest/`` only when ``window_end`` is not older than the window recorded in
  ``latest/WINDOW``: a backfill of an older week never replaces the latest report. The refresh
  writes each file atomically, removes files of ``latest/`` that are not in the new set, and writes
  ``WINDOW`` last (so ``WINDOW`` names a window only once its files are all in place). Concurrent
  publishers (parallel backfill runs) are serialised by an advisory lock on ``<output>/.publish.lock``.
- :func:`published_issue_rows` reads what the already published sidecar of a window holds (the
  guard's input, ``report/guard.py``).

Pure module (no Dagster); it never writes outside ``output_dir``.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from collections.abc import Iterator
from datetime import date
from pathlib import Path

try:  # POSIX advisory locks; elsewhere publishing is simply not serialised
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX platforms
    fcntl = None  # type: ignore[assignment]

LATEST_DIR = "latest"
SIDECAR_FILE = "model-scorecard.json"
WINDOW_FILE = "WINDOW"
LOCK_FILE = ".publish.lock"
NEW_FILE_MODE = 0o644

_WINDOW_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_FILE_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def write_atomic(path: Path, data: bytes | str) -> None:
    """Replace ``path`` with ``data`` (str as UTF-8) atomically; create the parent folders if needed."""
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = _target_mode(path)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    _fsync_directory(path.parent)


def publish_report(output_dir: Path, window_end: str, files: dict[str, bytes | str]) -> dict[str, Path]:
    """Write ``files`` (name -> content) into ``<output_dir>/<window_end>/`` and maybe refresh ``latest/``.

    ``window_end`` must be a ``YYYY-MM-DD`` date and every name a plain file name (no folders, no
    leading dot, not ``WINDOW``); anything else raises ``ValueError`` before a byte is written.
    Returns name -> path of the files in the window folder. Use :func:`latest_window` to see which
    window ``latest/`` holds afterwards.
    """
    _check_window(window_end)
    _check_names(files)
    output_dir = Path(output_dir)
    window_dir = output_dir / window_end
    written: dict[str, Path] = {}
    with _publish_lock(output_dir):
        for name, content in files.items():
            write_atomic(window_dir / name, content)
            written[name] = window_dir / name
        if should_refresh_latest(latest_window(output_dir), window_end):
            _refresh_latest(output_dir / LATEST_DIR, window_end, files)
    return written


def latest_window(output_dir: Path) -> str | None:
    """The window recorded in ``<output_dir>/latest/WINDOW``, or None when absent or not a date."""
    try:
        text = (Path(output_dir) / LATEST_DIR / WINDOW_FILE).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    return text if _is_window(text) else None


def published_issue_rows(output_dir: Path, window_end: str) -> int | None:
    """``grandTotal.n`` of the sidecar already published for ``window_end``; None when there is none
    or it cannot be read (a damaged file must not block a good report)."""
    if not _is_window(window_end):
        return None
    path = Path(output_dir) / window_end / SIDECAR_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    grand = data.get("grandTotal") if isinstance(data, dict) else None
    n = grand.get("n") if isinstance(grand, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n >= 0 else None


def should_refresh_latest(current: str | None, window_end: str) -> bool:
    """``latest/`` takes ``window_end`` unless it already holds a newer window (same window: refresh)."""
    return current is None or date.fromisoformat(window_end) >= date.fromisoformat(current)


# ---------------------------------------------------------------------------------------- helpers


def _refresh_latest(latest_dir: Path, window_end: str, files: dict[str, bytes | str]) -> None:
    for name, content in files.items():
        write_atomic(latest_dir / name, content)
    for stale in sorted(latest_dir.iterdir()):
        if (
            stale.name not in files
            and stale.name != WINDOW_FILE
            and stale.is_file()
            and not stale.is_symlink()
        ):
            stale.unlink()
    write_atomic(latest_dir / WINDOW_FILE, window_end + "\n")


def _is_window(text: str) -> bool:
    if not _WINDOW_RE.match(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _check_window(window_end: str) -> None:
    if not isinstance(window_end, str) or not _is_window(window_end):
        raise ValueError(f"window_end must be a YYYY-MM-DD date, got {window_end!r}")


def _check_names(files: dict[str, bytes | str]) -> None:
    bad = [n for n in files if not isinstance(n, str) or not _FILE_NAME_RE.match(n) or n == WINDOW_FILE]
    if bad:
        raise ValueError(
            "report file names must be plain names (letters, digits, '.', '_', '-'; "
            f"not {WINDOW_FILE}): {bad!r}"
        )


def _target_mode(path: Path) -> int:
    """Keep the permission bits of the file being replaced; new files get 0644."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        return NEW_FILE_MODE


def _fsync_directory(directory: Path) -> None:
    """Persist the rename itself (best effort: some platforms cannot open a directory)."""
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


@contextlib.contextmanager
def _publish_lock(output_dir: Path) -> Iterator[None]:
    output_dir.mkdir(parents=True, exist_ok=True)
    if fcntl is None:  # pragma: no cover - non-POSIX platforms
        yield
        return
    with open(output_dir / LOCK_FILE, "a+b") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
