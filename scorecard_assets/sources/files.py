"""Reading input files safely: why a path cannot be used, and reads that a FIFO or device cannot block.

Pure (no Dagster). Every reader (and the GitHub export reader) checks its paths here first, so that a
missing or special file becomes a counted, reported problem with a short reason, never a hang.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

MISSING = "missing"
UNREADABLE = "unreadable"


def path_problem(path: Path, *, want_dir: bool) -> tuple[str, str] | None:
    """Why ``path`` cannot be used: ``(MISSING, reason)``, ``(UNREADABLE, reason)`` or None if usable."""
    try:
        is_dir = path.is_dir()
        exists = is_dir or path.exists()
    except OSError as exc:
        return UNREADABLE, os_error_reason(exc)
    if not exists:
        return MISSING, "does not exist"
    if want_dir and not is_dir:
        return UNREADABLE, "is not a directory"
    if not want_dir and is_dir:
        return UNREADABLE, "is a directory, not a file"
    return None


class NotRegularFileError(OSError):
    """A path that exists but is neither a regular file nor a directory (a FIFO, socket, device).

    ``strerror`` is the reason as warnings word it: ``is not a regular file (a FIFO)``.
    """


def _special_kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "a special file"


def require_regular_file(path: Path) -> None:
    """Raise unless ``path`` (symlinks followed) is a regular file; the file is not opened.

    Reading a FIFO that no one writes blocks for ever and a device may never end, so a reader
    checks first: ``IsADirectoryError`` for a directory, ``NotRegularFileError`` for any other
    non-regular file, the ``OSError`` of ``os.stat`` when the path is missing or unreachable.
    """
    mode = os.stat(path).st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "Is a directory", str(path))
    raise NotRegularFileError(errno.EINVAL, f"is not a regular file ({_special_kind(mode)})", str(path))


def read_regular_bytes(path: Path) -> bytes:
    """The whole content of ``path`` after ``require_regular_file`` (so a FIFO cannot block the read)."""
    require_regular_file(path)
    return path.read_bytes()


def read_problem(exc: OSError) -> tuple[str, str]:
    """Why a read failed, in :func:`path_problem`'s terms: ``(MISSING, "does not exist")`` when the
    file is not there, else ``(UNREADABLE, reason)``."""
    return (MISSING if isinstance(exc, FileNotFoundError) else UNREADABLE), os_error_reason(exc)


def os_error_reason(exc: OSError) -> str:
    """A short reason for a failed read (``permission denied``...), without the raw exception text."""
    if isinstance(exc, IsADirectoryError):
        return "is a directory, not a file"
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "does not exist"
    if isinstance(exc, NotRegularFileError):
        return exc.strerror or "is not a regular file"
    return (exc.strerror or type(exc).__name__).lower()
