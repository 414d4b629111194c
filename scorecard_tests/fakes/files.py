"""Files that misbehave, for the readers' "nothing is lost" tests: a named pipe that must never be
opened (a reader that opened it would block for ever) and a handle whose reads fail after the first
block."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

needs_mkfifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")


def fifo_never_opened(path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Make ``path`` a FIFO nobody writes; opening it fails the test (instead of blocking it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    real_open = Path.open

    def guarded(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            raise AssertionError(f"{self} was opened: reading a FIFO blocks until a writer comes")
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", guarded)
    return path


class FailsAfterFirstBlock:
    """Wraps an open binary handle: the first ``read`` works, every later one raises EIO."""

    def __init__(self, real: Any) -> None:
        self.real, self.reads = real, 0

    def __enter__(self) -> FailsAfterFirstBlock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.real.close()

    def read(self, size: int) -> bytes:
        self.reads += 1
        if self.reads > 1:
            raise OSError(5, "Input/output error")
        return bytes(self.real.read(size))
