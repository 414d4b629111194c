"""Progress of long CLI work (sync per repo, run per step, backfill per week) and its final summary.

On a terminal, a tqdm bar on stderr that names the item being worked on; anywhere else (a pipe, a
CI log, a cron mail) one plain line per finished item, ``[3/18] run_table ok 1.2 s``, so a log shows
what happened and when. Either way :meth:`Progress.summary` gives the closing line with timings:
how many items, how many failed, the total and the slowest items. Stdout is left to the results.

Pure module: no Dagster.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from typing import TextIO

from tqdm import tqdm

SLOWEST_SHOWN = 3


@dataclass
class Item:
    """One finished unit of work."""

    label: str
    ok: bool
    seconds: float
    note: str = ""


@dataclass
class Progress:
    """Progress over ``total`` items of one kind (``unit``: "repo", "step", "week")."""

    total: int
    unit: str
    what: str
    stream: TextIO = field(default_factory=lambda: sys.stderr)
    bar: bool | None = None  # None: a bar exactly when ``stream`` is a terminal
    items: list[Item] = field(default_factory=list)
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if self.bar is None:
            self.bar = bool(getattr(self.stream, "isatty", lambda: False)())
        self._bar = (
            tqdm(total=self.total, unit=self.unit, desc=self.what, file=self.stream, leave=False)
            if self.bar
            else None
        )
        self._current: tuple[str, float] | None = None

    def start(self, label: str) -> None:
        """``label`` begins (shown on the bar; timed until :meth:`finish`)."""
        self._current = (label, time.monotonic())
        if self._bar is not None:
            self._bar.set_postfix_str(label, refresh=True)

    def finish(self, label: str, *, ok: bool = True, note: str = "", seconds: float | None = None) -> None:
        """``label`` is done (``ok`` or failed); its time is measured from :meth:`start` unless given."""
        if seconds is None:
            began = self._current[1] if self._current and self._current[0] == label else time.monotonic()
            seconds = time.monotonic() - began
        self._current = None
        item = Item(label=label, ok=ok, seconds=seconds, note=note)
        self.items.append(item)
        if self._bar is not None:
            self._bar.update(1)
            return
        status = "ok" if ok else "FAILED"
        extra = f" — {note}" if note else ""
        print(
            f"[{len(self.items)}/{self.total}] {label} {status} {seconds:.1f} s{extra}",
            file=self.stream,
            flush=True,
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None

    @property
    def failed(self) -> list[Item]:
        return [i for i in self.items if not i.ok]

    def summary(self) -> str:
        """``what: 18 steps in 14.2 s, 0 failed; slowest: run_table 3.1 s, …``."""
        elapsed = time.monotonic() - self.started
        plural = self.unit if len(self.items) == 1 else f"{self.unit}s"
        line = f"{self.what}: {len(self.items)} {plural} in {elapsed:.1f} s, {len(self.failed)} failed"
        if self.failed:
            line += " (" + ", ".join(i.label for i in self.failed) + ")"
        slowest = sorted(self.items, key=lambda i: i.seconds, reverse=True)[:SLOWEST_SHOWN]
        if len(self.items) > 1 and slowest:
            line += "; slowest: " + ", ".join(f"{i.label} {i.seconds:.1f} s" for i in slowest)
        return line
