"""What one runs/ directory contributed to a read (``DirTally``), counted from parsed slices or from
running totals over the loaded cache table (``RowTotals``), and the ``SourceStat`` it makes."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from scorecard_assets.records import SourceStat
from scorecard_assets.sources.agent_logs.slices import (
    COST_FORMATS,
    EMPTY_TABLE,
    FORMAT_UNKNOWN,
    TOKEN_FIELDS,
    SliceResult,
    SliceTable,
)

SOURCE = "agent logs"


@dataclass(frozen=True)
class RowTotals:
    """Running totals over the rows of the loaded cache table, so that tallying an unchanged file
    costs a few subtractions: ``malformed[b] - malformed[a]`` is the malformed lines of rows
    ``[a, b)``; ``usage``, ``unknown`` and ``problems`` count rows that record usage, rows in an
    unrecognised format and rows that make a file warning. ``costs`` are the rows' costs (NaN = none),
    added one by one so that the sum is the one a parse gives."""

    malformed: list[int]
    lines: list[int]
    ignored: list[int]
    replaced: list[int]
    usage: list[int]
    unknown: list[int]
    problems: list[int]
    costs: list[float]

    @classmethod
    def of(cls, table: SliceTable) -> RowTotals:
        columns = table.columns

        def running(counts: np.ndarray) -> list[int]:
            return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).tolist()

        usage = ~np.isnan(columns["cost_usd"])
        for name in TOKEN_FIELDS:
            usage |= ~np.isnan(columns[name])
        malformed = columns["malformed"]
        problems = (malformed > 0) | (columns["bad_values"] > 0) | ~pd.isna(columns["preamble_problem"])
        problems |= ~pd.isna(columns["format_hint"])
        problems |= columns["replaced"] > 0
        problems |= (
            np.isin(columns["log_format"], COST_FORMATS)
            & np.isnan(columns["cost_usd"])
            & ((columns["assistant_turns"] > 0) | (columns["result_records"] > 0))
        )
        return cls(
            malformed=running(malformed),
            lines=running(columns["lines"]),
            ignored=running(columns["ignored_lines"]),
            replaced=running(columns["replaced"]),
            usage=running(usage),
            unknown=running(columns["log_format"] == FORMAT_UNKNOWN),
            problems=running(problems),
            costs=columns["cost_usd"].tolist(),
        )


NO_TOTALS = RowTotals.of(EMPTY_TABLE)


@dataclass
class DirTally:
    """What one runs/ directory contributed, for its ``SourceStat`` and ``agent_logs_missing``."""

    files: int = 0
    slices: int = 0
    lines: int = 0
    ignored: int = 0
    malformed: int = 0
    replaced: int = 0
    bytes: int = 0
    cost: float | None = None
    yields_usage: bool = False
    ignored_names: int = 0
    unknown_format: int = 0
    unreadable: int = 0

    def add_cached(self, totals: RowTotals, start: int, stop: int) -> None:
        """Count rows ``[start, stop)`` of the loaded table (in row order)."""
        self.slices += stop - start
        self.malformed += totals.malformed[stop] - totals.malformed[start]
        self.lines += totals.lines[stop] - totals.lines[start]
        self.ignored += totals.ignored[stop] - totals.ignored[start]
        self.replaced += totals.replaced[stop] - totals.replaced[start]
        self.yields_usage = self.yields_usage or totals.usage[stop] > totals.usage[start]
        self.unknown_format += totals.unknown[stop] - totals.unknown[start]
        for cost in totals.costs[start:stop]:
            if cost == cost:  # not NaN
                self.cost = (self.cost or 0.0) + cost

    def add_parsed(self, slices: Sequence[SliceResult]) -> None:
        """Count slices parsed now (in slice order)."""
        for s in slices:
            self.slices += 1
            self.malformed += s.malformed
            self.lines += s.lines
            self.ignored += s.ignored_lines
            self.replaced += s.replaced
            self.yields_usage = self.yields_usage or s.yields_usage()
            self.unknown_format += s.log_format == FORMAT_UNKNOWN
            if not math.isnan(s.cost_usd):
                self.cost = (self.cost or 0.0) + s.cost_usd


def source_stat(host: str, repo: str, runs_dir: Path, tally: DirTally, note: str | None) -> SourceStat:
    notes = [note] if note else []
    if tally.lines:
        # docs/reliability.md "Line accounting": read + malformed + ignored = every line
        read = tally.lines - tally.malformed - tally.ignored
        notes.append(
            f"{tally.lines} line(s): {read} read, {tally.malformed} malformed, {tally.ignored} ignored by "
            "design (blank, record kinds that carry no usage, text in an unrecognised format)"
        )
    if tally.replaced:
        # docs/reliability.md "Encodings": valid JSON, kept, each lone surrogate replaced by U+FFFD
        notes.append(f"{tally.replaced} line(s) with a lone UTF-16 surrogate escape replaced by U+FFFD")
    if tally.ignored_names:
        notes.append(f"{tally.ignored_names} file(s) ignored: no issue number in the name")
    if tally.unknown_format:
        notes.append(f"{tally.unknown_format} slice(s) in an unrecognised format (no usage read)")
    if tally.unreadable:
        notes.append(f"{tally.unreadable} log file(s) unreadable")
    return SourceStat(
        source=SOURCE,
        host=host,
        repo=repo,
        path=str(runs_dir),
        files=tally.files,
        rows=tally.slices,
        malformed=tally.malformed,
        bytes=tally.bytes,
        cost_usd=tally.cost,
        notes="; ".join(notes) or None,
    )
