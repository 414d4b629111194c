"""The file-by-file driver of the JSONL stores (Claude Code, Codex): which files are new or changed,
exact line accounting, unreadable files and the store's state (docs/sessions.md, "Incremental reads")."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from scorecard_assets.records import SourceStat
from scorecard_assets.sanitize import render_value
from scorecard_assets.sessions._common import FactsBuilder, LineStats, Msg, Problems, SessionInfo, empty_facts
from scorecard_assets.sessions._store import StoreRead
from scorecard_assets.sessions.state import StoreState, file_change, file_fingerprint
from scorecard_assets.sessions.warnings import LINE_MALFORMED, STORE_UNREADABLE

ParseFile = Callable[[Path, bytes, LineStats, Problems], list[tuple[SessionInfo, list[Msg]]]]


def read_jsonl_store(
    *,
    kind: str,
    source: str,
    root: Path,
    files: Callable[[Path], Iterable[Path]],
    parse: ParseFile,
    state: StoreState | None,
    configured: bool,
) -> StoreRead:
    """Read every new, grown or replaced file of a store folder; unchanged files are skipped."""
    old = state or StoreState(kind=kind, path=str(root))
    new = StoreState(kind=kind, path=str(root))
    builder = FactsBuilder()
    stat = SourceStat(source=source, path=str(root))
    warnings = []
    counters = {"files": 0, "files_read": 0, "new": 0, "grown": 0, "replaced": 0, "unchanged": 0}
    line_totals = LineStats()
    units: set[str] = set()
    present: set[str] = set()
    if not root.is_dir():
        stat.notes = "not present"
        if configured:
            problems = Problems(source=str(root))
            problems.add(
                STORE_UNREADABLE, None, f"{render_value(root)} is not a folder; no session of it counts"
            )
            warnings += problems.close()
        return StoreRead(kind, str(root), empty_facts(), set(), set(), new, warnings, stat, counters)
    try:
        paths = sorted(files(root))
    except OSError as exc:
        problems = Problems(source=str(root))
        problems.add(
            STORE_UNREADABLE, None, f"{render_value(root)} could not be listed ({render_value(exc)})"
        )
        stat.notes = "unreadable"
        return StoreRead(
            kind, str(root), empty_facts(), set(), set(old.files), old, problems.close(), stat, counters
        )
    for path in paths:
        key = str(path)
        counters["files"] += 1
        try:
            st = path.stat()
        except OSError as exc:
            problems = Problems(source=key)
            problems.add(
                STORE_UNREADABLE,
                None,
                f"{render_value(key)} could not be read ({render_value(exc.strerror or exc)})",
            )
            warnings += problems.close()
            continue
        present.add(key)
        change = file_change(old.files.get(key), path, st)
        if change == "same":
            counters["unchanged"] += 1
            new.files[key] = old.files[key]
            continue
        counters[change] += 1
        problems = Problems(source=key)
        try:
            with path.open("rb") as fh:
                data = fh.read()
            st = path.stat()
        except OSError as exc:
            problems.add(
                STORE_UNREADABLE,
                None,
                f"{render_value(key)} could not be read ({render_value(exc.strerror or exc)})",
            )
            warnings += problems.close()
            present.discard(key)
            continue
        stats = LineStats()
        sessions = parse(path, data, stats, problems)
        for info, msgs in sessions:
            builder.add_session(info, msgs)
        counters["files_read"] += 1
        stat.bytes += len(data)
        stat.malformed += stats.malformed
        for name, value in stats.to_dict().items():
            setattr(line_totals, name, getattr(line_totals, name) + value)
        if not stats.check():  # pragma: no cover - an accounting bug, never a data problem
            problems.add(
                LINE_MALFORMED,
                None,
                f"{render_value(key)}: line accounting does not add up {stats.to_dict()}",
            )
        warnings += problems.close()
        units.add(key)
        new.files[key] = file_fingerprint(path, data, st)
    stat.files = counters["files"]
    frame = builder.frame()
    stat.rows = len(frame)
    counters.update({f"lines_{k}": v for k, v in line_totals.to_dict().items()})
    return StoreRead(kind, str(root), frame, units, present, new, warnings, stat, counters)
