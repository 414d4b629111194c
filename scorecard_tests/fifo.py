"""Named pipes for the "never open a FIFO" tests: a reader that opened one would block for ever."""

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
