"""Writing a planned fleet: shared helpers, and the hosts' files (runs.jsonl, journals, agent logs).

JSON is written with a fixed key order, compact separators and ``ensure_ascii=False`` (control
characters are still escaped by the encoder), so the same fleet always gives the same bytes.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scorecard_assets.sample_fleet._catalog import AS_OF_MS, REPOS, plan_profile, slug_of
from scorecard_assets.sample_fleet._logformats import render_slice
from scorecard_assets.sample_fleet._model import Dispatch, Fleet, dumps, iso_millis


@dataclass
class RenderFlags:
    """Deliberate damage applied while writing (truncated last lines, malformed entries, odd paths).

    ``configured_extras`` adds the configured inputs the simulation never touches (``_extras``): a
    host just added, a retired host, two repos without a usable export, a cycle file of an unknown
    type. ``quoted_comment_id_in`` names the repo whose export writes one human comment's ``id`` as a
    string; ``log_dir_in_place_of`` = (host, repo, issue) puts a directory where that issue's log
    would be; ``truncated_cycle_row`` cuts an extra last row of the imported cycles in half;
    ``invalid_cycle_rows`` adds the three imported cycle rows that fail validation.
    """

    truncate_runs_on: tuple[str, ...] = ()
    malformed_runs_on: tuple[str, ...] = ()
    truncate_events_of: tuple[tuple[str, str], ...] = ()
    extra_log_files: bool = True
    gate_logs: bool = True
    configured_extras: bool = False
    quoted_comment_id_in: str | None = None
    log_dir_in_place_of: tuple[str, str, int] | None = None
    truncated_cycle_row: bool = False
    invalid_cycle_rows: bool = True
    surrogate_in_event_detail: bool = True  # a lone surrogate escape in an unscored event's detail
    surrogate_in_log: bool = True  # a lone surrogate escape in one agent log's first preamble


@dataclass
class Written:
    """Counts of what was written (the generator's summary)."""

    issues: int = 0
    pull_requests: int = 0
    comments: int = 0
    milestone_comments: int = 0
    events: int = 0
    runs_jsonl_lines: int = 0
    logs: int = 0
    log_bytes: int = 0
    cycle_rows: int = 0
    files: list[str] = field(default_factory=list)


def write(path: Path, text: str, written: Written, root: Path) -> int:
    """Write ``text`` as UTF-8 (parents created), record the file, return its size in bytes."""
    return write_bytes(path, text.encode("utf-8"), written, root)


def write_bytes(path: Path, data: bytes, written: Written, root: Path) -> int:
    """Write ``data`` (parents created), record the file, return its size in bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    written.files.append(path.relative_to(root).as_posix())
    return len(data)


def json_array(objs: Iterable[dict[str, Any]]) -> str:
    """A JSON array with one object per line: valid JSON that diffs well."""
    lines = [dumps(o) for o in objs]
    if not lines:
        return "[]\n"
    return "[\n" + ",\n".join(lines) + "\n]\n"


# ---------------------------------------------------------------------------------------------- hosts
def render_hosts(fleet: Fleet, root: Path, flags: RenderFlags, written: Written) -> None:
    for host in fleet.hosts:
        dossier = root / "hosts" / host / ".dossier"
        _render_runs_jsonl(fleet, host, dossier, flags, written, root)
        for repo in REPOS:
            slug = slug_of(repo.name)
            sched = dossier / "sched" / slug
            _render_events(fleet, host, repo.name, sched, flags, written, root)
            surrogate = flags.surrogate_in_log and host == fleet.hosts[0] and repo is REPOS[0]
            _render_logs(fleet, host, repo.name, sched, written, root, surrogate=surrogate)
    if flags.extra_log_files:
        first = fleet.hosts[0]
        runs = root / "hosts" / first / ".dossier" / "sched" / slug_of(REPOS[0].name) / "runs"
        engine = "".join(
            f"{iso_millis(ms)} engine tick: {k} unit(s) ready, 0 parked\n"
            for k, ms in enumerate(range(AS_OF_MS - 6 * 3_600_000, AS_OF_MS - 3_600_000, 900_000))
        )
        write(runs / "engine.log", engine, written, root)
        write(runs / "notes.txt", "scratch notes kept by an operator; not a dispatch log\n", written, root)
    if flags.log_dir_in_place_of is not None:
        host, repo, issue = flags.log_dir_in_place_of
        runs = root / "hosts" / host / ".dossier" / "sched" / slug_of(repo) / "runs"
        # a directory where a log file would be (a botched copy); .keep lets git keep it
        write(runs / f"issue-{issue}.log" / ".keep", "", written, root)


def _render_runs_jsonl(
    fleet: Fleet, host: str, dossier: Path, flags: RenderFlags, written: Written, root: Path
) -> None:
    rows = sorted((r for r in fleet.tele if r.host == host), key=lambda r: r.ts)
    lines = [dumps({"timestamp": iso_millis(r.ts), **r.fields}) for r in rows]
    if host in flags.malformed_runs_on and len(lines) > 10:
        mid = len(lines) // 2
        lines.insert(mid, lines[mid][: len(lines[mid]) // 3] + " <<<<<<< merge conflict")
        # a locale read with a lone surrogate (a non-UTF-8 environment): valid JSON, replaced, warned
        lines[mid + 1] = lines[mid + 1][:-1] + ',"locale":"C.\\udcff"}'
    text = "\n".join(lines) + "\n"
    if host in flags.truncate_runs_on and lines:
        text = text[: len(text) - 1 - len(lines[-1]) // 2]
    written.runs_jsonl_lines += len(lines)
    write(dossier / "runs.jsonl", text, written, root)


def _render_events(
    fleet: Fleet, host: str, repo: str, sched: Path, flags: RenderFlags, written: Written, root: Path
) -> None:
    evs = [e for e in fleet.events if e.host == host and e.repo == repo]
    if not evs:
        return
    order = sorted(range(len(evs)), key=lambda i: (evs[i].ts, i))
    lines = [dumps({"ts": iso_millis(evs[i].ts), **evs[i].fields}) for i in order]
    if flags.surrogate_in_event_detail and (host, repo) in flags.truncate_events_of:
        # a detail written with a lone surrogate, on an event that is not scored: kept, warned
        read_events = ("spawned", "redispatched", "stalled", "fence-written", "verify-incomplete")
        unscored = [
            i
            for i, line in enumerate(lines)
            if '"detail":"' in line and not any(f'"event":"{e}"' in line for e in read_events)
        ]
        if unscored:
            i = unscored[0]
            lines[i] = lines[i].replace('"detail":"', '"detail":"\\udcff', 1)
    text = "\n".join(lines) + "\n"
    if (host, repo) in flags.truncate_events_of:
        text = text[: len(text) - 1 - len(lines[-1]) // 2]
    written.events += len(lines)
    write(sched / "events.jsonl", text, written, root)


def _render_logs(
    fleet: Fleet, host: str, repo: str, sched: Path, written: Written, root: Path, *, surrogate: bool = False
) -> None:
    by_file: dict[str, list[Dispatch]] = {}
    for d in fleet.dispatches:
        if d.host == host and d.repo == repo:
            by_file.setdefault(d.log_name, []).append(d)
    for name in sorted(by_file):
        slices = sorted(by_file[name], key=lambda d: d.start_ms)
        rng = random.Random(
            f"log:{fleet.seed}:{fleet.size}:{plan_profile(fleet.profile)}:{host}:{repo}:{name}"
        )
        parts = [render_slice(d, rng, i == len(slices) - 1) for i, d in enumerate(slices)]
        if surrogate and parts:
            # a preamble written in a non-UTF-8 locale: valid JSON, replaced, counted and warned
            parts[0] = parts[0].replace(
                '{"type":"sched-dispatch",', '{"type":"sched-dispatch","locale":"C.\\udcff",', 1
            )
            surrogate = False
        size = write(sched / "runs" / name, "".join(parts), written, root)
        written.logs += 1
        written.log_bytes += size


def render_gate_logs(fleet: Fleet, root: Path, written: Written) -> None:
    """A batch's gate-test log: its name maps to the anchor issue, but it holds no usage at all."""
    host = fleet.hosts[0]
    for issue in fleet.issues:
        bid = next((m.key("batch") for m in issue.milestones if m.phase == "batch-setup"), None)
        if not bid:
            continue
        path = (
            root
            / "hosts"
            / host
            / ".dossier"
            / "sched"
            / slug_of(issue.repo)
            / "runs"
            / f"batch-{bid}-gate-test.focused-{issue.number}.log"
        )
        text = f"$ focused test gate for batch {bid}\nran 42 tests in 8.1s\nOK\n"
        size = write(path, text, written, root)
        written.logs += 1
        written.log_bytes += size
