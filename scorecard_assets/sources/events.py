"""Scheduler journals of every host and repo -> the ``dispatch_events`` frame (docs/sources.md
"events.jsonl").

Contract:

- For every host (name order) and configured repo (name order), the journal is
  ``<dossier_home>/sched/<sanitize_slug(repo)>/events.jsonl``. Every line is decoded, so that bad
  lines and unknown event names are found wherever they are.
- Rows are kept only for the four events the scorecard reads: ``spawned``, ``redispatched``,
  ``stalled`` and ``fence-written``. A ``verify-incomplete`` with ``detail`` ``"unverified-exit"``
  (the scheduler's own record of an unverified exit, which the reference ignores) is counted as
  ignored like the others but also listed in ``extra["unverified_exit_events"]`` (host, repo, issue,
  ts) for our Unverified (journal) count. Other names of the scheduler vocabulary are ignored (counted
  in the file's SourceStat); names outside it get one ``unknown_event`` warning per name per file
  carrying the number of lines.
- On a kept event, ``issue`` must be a JSON number holding a positive integer (``3810.0`` is
  accepted; strings, booleans, fractions, zero or negatives are not) and ``ts`` a string that parses
  as an ISO 8601 time (naive times read as UTC); otherwise the line is skipped and reported as
  ``malformed_line`` naming the field. A missing or non-string ``event`` is malformed too.
- ``unit``, ``tier``, ``cmd``, ``detail`` and ``log`` are kept only when JSON strings (another type
  becomes NA and is reported; the row stays). ``agent_cli`` is the basename of the first
  whitespace-separated token of ``cmd`` (``/home/u/.opencode/bin/opencode run`` -> ``opencode``);
  ``is_report_agent`` is ``detail == "report agent"``.
- A missing dossier home gives one ``events_missing`` per host; a missing or empty journal (no
  decodable line) one ``events_missing`` per repo and host; paths that exist but cannot be read
  give ``unreadable_file``. Repos whose slugs collide cannot be told apart, so their shared
  directory is not read and each of them gets ``events_missing`` saying why.
- ``sched`` directories of a host that belong to no configured repo are listed in the ``notes`` of
  a SourceStat for that host (``path`` = the sched directory); nothing is read from them.
- One SourceStat per journal: rows kept, lines, malformed lines, bytes. Nothing is written.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import DataWarning, SourceStat, TableResult
from scorecard_assets.sanitize import shown
from scorecard_assets.schemas import DISPATCH_EVENTS, empty_frame
from scorecard_assets.sources.files import MISSING, os_error_reason, path_problem, read_problem
from scorecard_assets.sources.jsonl import (
    MAX_INT64,
    WARNINGS_PER_FILE,
    JsonlColumns,
    LineProblem,
    add_accounting,
    gc_paused,
    iter_jsonl_parts,
    json_type_name,
    malformed_line_warnings,
    plural,
    replaced_text_warning,
    text_column,
    utc_times,
    with_consequence,
)
from scorecard_assets.sources.slugs import sanitize_slug, slug_collisions

ASSET = "dispatch_events"
SOURCE = "events.jsonl"
SCHED_DIR_NAME = "sched"
EVENTS_FILE_NAME = "events.jsonl"

SCORED_EVENTS = ("spawned", "redispatched", "stalled", "fence-written")
REPORT_AGENT_DETAIL = "report agent"
# A ``verify-incomplete`` with this detail: the scheduler saw the agent exit unverified (ours; the
# reference ignores the event). Not a row of the frame: listed in ``extra`` (module doc).
UNVERIFIED_EXIT_EVENT = "verify-incomplete"
UNVERIFIED_EXIT_DETAIL = "unverified-exit"
UNVERIFIED_EXITS_EXTRA = "unverified_exit_events"

# The scheduler's whole event vocabulary (its JournalEventName type, docs/sources.md "events.jsonl").
SCHEDULER_EVENTS = frozenset(
    [
        "assigned",
        "spawned",
        "exit-detected",
        "orphan-pid",
        "external-advance",
        "progress",
        "phase-updated",
        "verify-complete",
        "verify-incomplete",
        "stalled",
        "redispatched",
        "unit-failed",
        "member-advance-skipped",
        "dependents-blocked",
        "dispatch-profile-missing",
        "slot-released",
        "requeued",
        "ground-truth-unreachable",
        "suspect-dispatch",
        "dispatch-unhealthy",
        "dispatch-failure",
        "tick-failed",
        "pr-parked",
        "merge-accepted",
        "pr-watch-failed",
        "pr-watch-waiting",
        "teardown-done",
        "teardown-failed",
        "report-dispatched",
        "report-failed",
        "stale-failure-reconciled",
        "anchor-closed",
        "anchor-close-failed",
        "suite-failed",
        "git-failed",
        "attributed",
        "fix-dispatched",
        "fix-resolved",
        "member-evicted",
        "revert-conflict",
        "batch-rebased",
        "batch-dissolved",
        "batch-preserved",
        "batch-split",
        "batch-blocked",
        "gate-inconclusive",
        "gate-skipped",
        "milestone-post-failed",
        "fence-written",
        "fence-failed",
        "stale-closed",
        "fence-bound",
        "fence-bind-failed",
        "fence-released",
        "fence-release-failed",
        "deferred-to-owner",
        "announced-wait",
        "stopped",
        "batch-setup-done",
        "batch-setup-failed",
        "batch-warmup-done",
        "batch-warmup-failed",
        "member-advanced",
        "member-worktree-reused",
        "member-landed",
        "landing-failed",
        "member-worktree-torn-down",
        "stale-member-worktree",
        "label-blocked",
        "label-check-failed",
        "label-cleared",
        "run-log-skipped",
        "run-log-recorded",
        "run-log-no-usage",
        "run-log-failed",
        "engine-stale",
        "engine-auto-upgrade-attempted",
        "engine-auto-upgrade-failed",
        "reprioritized",
        "stale-milestone-ignored",
        "eviction-duplicate",
        "pr-detect-ambiguous",
        "member-handed-back",
        "dissolve-suppressed",
        "member-requeued",
        "kept-worktree-cleared",
        "batch-anchor-open-on-abandon",
        "batch-resumed",
        "member-reprompted",
    ]
)

TEXT_FIELDS = ("unit", "tier", "cmd", "detail", "log")
READ_FIELDS = ("ts", "event", "issue", *TEXT_FIELDS)

NO_EVENTS = "stall, escalation and unverified-exit counts are 0 and the dispatch tier and agent CLI unknown"
FIELD_DROPPED = "that field is treated as absent; the event still counts"
UNCONFIGURED_NOTE_NAMES = 20


@dataclass
class _Collected:
    frames: list[pd.DataFrame] = field(default_factory=list)
    warnings: list[DataWarning] = field(default_factory=list)
    sources: list[SourceStat] = field(default_factory=list)
    lines: int = 0
    bytes: int = 0
    unverified: list[dict[str, object]] = field(default_factory=list)


def read_dispatch_events(cfg: ScorecardConfig, read_journal: JournalReader | None = None) -> TableResult:
    """Every host's journals of every configured repo as one ``schemas.DISPATCH_EVENTS`` frame.

    Rows are ordered by host, repo and line number, whatever the order of hosts in the config.
    ``extra`` carries ``lines`` and ``bytes`` read in total, and ``unverified_exit_events``.
    ``read_journal`` replaces the reading of one journal (``jsonl_cache.py`` resumes at an offset).
    """
    repos = sorted(cfg.repo_names)
    collisions = slug_collisions(repos)
    out = _Collected()
    for host in sorted(cfg.hosts, key=lambda h: h.name):
        with gc_paused():
            _read_host(host.name, host.dossier_home, repos, collisions, out, read_journal or _read_whole)
    frame = pd.concat(out.frames, ignore_index=True) if out.frames else empty_frame(DISPATCH_EVENTS)
    return TableResult(
        frame=frame,
        warnings=out.warnings,
        sources=out.sources,
        extra={"lines": out.lines, "bytes": out.bytes, UNVERIFIED_EXITS_EXTRA: out.unverified},
    )


def _scope(host: str, repo: str | None) -> str:
    """Whose events a missing or unreadable path costs: one repo on the host, else all of them."""
    return f"{repo} on host {host}" if repo else f"every repo on host {host}"


def _events_missing(host: str, repo: str | None, path: str, what: str) -> DataWarning:
    return DataWarning(
        code="events_missing",
        asset=ASSET,
        message=f"{what}; {NO_EVENTS} for {_scope(host, repo)}",
        repo=repo,
        host=host,
        path=path,
        values={"host": host, "repo": repo, "path": path},
    )


def _unreadable(host: str, repo: str | None, path: str, reason: str) -> DataWarning:
    return DataWarning(
        code="unreadable_file",
        asset=ASSET,
        message=f"{path} {reason}, so it cannot be read; {NO_EVENTS} for {_scope(host, repo)}",
        repo=repo,
        host=host,
        path=path,
        values={"host": host, "repo": repo, "path": path, "reason": reason},
    )


def _path_warning(
    host: str, repo: str | None, path: Path, kind: str, reason: str, *, is_home: bool
) -> DataWarning:
    """``events_missing`` for a missing dossier home or journal, ``unreadable_file`` otherwise."""
    if kind == MISSING:
        return _events_missing(
            host, repo, str(path), f"dossier home {path} {reason}" if is_home else f"{path} {reason}"
        )
    return _unreadable(host, repo, str(path), f"(dossier home) {reason}" if is_home else reason)


def _read_host(
    host: str,
    home: Path,
    repos: list[str],
    collisions: dict[str, list[str]],
    out: _Collected,
    read: JournalReader,
) -> None:
    problem = path_problem(home, want_dir=True)
    if problem is not None:
        kind, reason = problem
        out.warnings.append(_path_warning(host, None, home, kind, reason, is_home=True))
        out.sources.append(
            SourceStat(source=SOURCE, host=host, path=str(home), notes=f"dossier home {reason}")
        )
        return
    sched = home / SCHED_DIR_NAME
    for repo in repos:
        slug = sanitize_slug(repo)
        path = sched / slug / EVENTS_FILE_NAME
        if slug in collisions:
            others = ", ".join(r for r in collisions[slug] if r != repo)
            what = f"{path} is shared with {others} (same slug {slug}), so its events cannot be attributed"
            out.warnings.append(_events_missing(host, repo, str(path), what))
            out.sources.append(
                SourceStat(source=SOURCE, host=host, repo=repo, path=str(path), notes="slug shared; not read")
            )
            continue
        _read_journal(host, repo, slug, path, out, read)
    _note_unconfigured(host, sched, {sanitize_slug(r) for r in repos}, out)


def _read_whole(host: str, repo: str, slug: str, path: Path) -> tuple[int, int, bool, JournalRead]:
    """One journal read from its start: (lines, bytes, no decoded object, its rows and warnings).

    Its lines are decoded a part at a time and each part's rows turned into a typed frame piece
    (docs/reliability.md "Streaming"); the pieces and counters add up to one read of the journal."""
    summary = JsonlColumns(path=str(path), fields=(), columns={}, line_nos=[])
    reads: list[JournalRead] = []
    for part, _ in iter_jsonl_parts(path, READ_FIELDS):
        add_accounting(summary, part)
        reads.append(journal_frame(host, repo, slug, part))
    return summary.lines, summary.bytes, summary.is_empty, merged_journal(host, repo, str(path), reads)


def merged_journal(host: str, repo: str, path: str, reads: list[JournalRead]) -> JournalRead:
    """The ``JournalRead`` of a journal from those of its consecutive parts: frames concatenated,
    counters added, problem and line lists in line order, unknown event names in first-seen order, and
    the warnings made from the merged problems (so the caps and summaries are those of one read)."""
    if len(reads) == 1:
        return reads[0]
    frames = [r.frame for r in reads if len(r.frame)]
    unknown: dict[str, list[int]] = {}
    for r in reads:
        for name, lines in r.unknown_lines.items():
            unknown.setdefault(name, []).extend(lines)
    problems = [p for r in reads for p in r.problems]
    return JournalRead(
        frame=pd.concat(frames, ignore_index=True) if frames else empty_frame(DISPATCH_EVENTS),
        warnings=journal_warnings(host, repo, path, problems, unknown),
        malformed_lines=sum(r.malformed_lines for r in reads),
        ignored=sum(r.ignored for r in reads),
        unknown=sum(r.unknown for r in reads),
        unverified=[pair for r in reads for pair in r.unverified],
        problems=problems,
        unknown_lines=unknown,
        replaced=[n for r in reads for n in r.replaced],
    )


def _read_journal(host: str, repo: str, slug: str, path: Path, out: _Collected, read: JournalReader) -> None:
    stat = SourceStat(source=SOURCE, host=host, repo=repo, path=str(path))
    out.sources.append(stat)
    try:
        lines, size, is_empty, journal = read(host, repo, slug, path)
    except OSError as exc:
        kind, reason = read_problem(exc)
        out.warnings.append(_path_warning(host, repo, path, kind, reason, is_home=False))
        stat.notes = f"events.jsonl {reason}"
        return
    out.lines += lines
    out.bytes += size
    if is_empty:
        what = f"{path} holds no events ({plural(lines, 'line')})"
        out.warnings.append(_events_missing(host, repo, str(path), what))
    out.warnings.extend(journal.warnings)
    out.warnings.extend(replaced_text_warning(str(path), journal.replaced, asset=ASSET, host=host, repo=repo))
    if len(journal.frame):
        out.frames.append(journal.frame)
    out.unverified += [{"host": host, "repo": repo, "issue": n, "ts": ts} for n, ts in journal.unverified]
    stat.files = 1
    stat.rows = len(journal.frame)
    stat.malformed = journal.malformed_lines
    stat.bytes = size
    stat.notes = (
        f"{plural(lines, 'line')}: {len(journal.frame)} scored events kept, "
        f"{journal.ignored} other scheduler events ignored, {journal.unknown} with an unknown event name, "
        f"{journal.malformed_lines} malformed"
    )


def _note_unconfigured(host: str, sched: Path, configured: set[str], out: _Collected) -> None:
    try:
        present = sorted(p.name for p in sched.iterdir() if p.is_dir())
    except FileNotFoundError:
        return
    except OSError as exc:
        out.warnings.append(_unreadable(host, None, str(sched), os_error_reason(exc)))
        return
    extra = [name for name in present if name not in configured]
    if not extra:
        return
    shown_names = ", ".join(shown(n) for n in extra[:UNCONFIGURED_NOTE_NAMES])
    more = f" and {len(extra) - UNCONFIGURED_NOTE_NAMES} more" if len(extra) > UNCONFIGURED_NOTE_NAMES else ""
    out.sources.append(
        SourceStat(
            source=SOURCE,
            host=host,
            path=str(sched),
            notes=(
                f"{len(extra)} sched directories belong to no configured repo (not read): {shown_names}{more}"
            ),
        )
    )


@dataclass
class JournalRead:
    """One journal's kept rows, its warnings and its counters."""

    frame: pd.DataFrame
    warnings: list[DataWarning]
    malformed_lines: int
    ignored: int
    unknown: int
    unverified: list[tuple[int, str]] = field(default_factory=list)
    problems: list[LineProblem] = field(default_factory=list)  # uncapped, before the warnings
    unknown_lines: dict[str, list[int]] = field(default_factory=dict)
    replaced: list[int] = field(default_factory=list)  # lines with lone surrogates replaced


JournalReader = Callable[[str, str, str, Path], tuple[int, int, bool, JournalRead]]


@dataclass
class _Triage:
    """Decoded lines sorted by what happens to them (indexes into the decoded columns)."""

    scored: list[int] = field(default_factory=list)
    issues: list[int] = field(default_factory=list)
    skipped: list[LineProblem] = field(default_factory=list)
    unknown: dict[str, list[int]] = field(default_factory=dict)
    ignored: int = 0
    unverified: list[tuple[int, str]] = field(default_factory=list)


def issue_number(value: object) -> int | None:
    """The issue of a JSON ``issue`` value: a positive whole number (``3810`` or ``3810.0``), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    else:
        return None
    return number if 0 < number <= MAX_INT64 else None


def agent_cli_of(cmd: str | None) -> str | None:
    """Basename of the first whitespace-separated token of ``cmd``; None when blank or a bare ``/``."""
    if cmd is None:
        return None
    tokens = cmd.split(None, 1)
    if not tokens:
        return None
    return posixpath.basename(tokens[0]) or None


def _issue_problem(value: object) -> str:
    if value is None:
        return "field 'issue' is missing or null"
    if type(value) in (int, float):
        return f"field 'issue' = {shown(value)} is not a positive whole number"
    return f"field 'issue' is a JSON {json_type_name(value)} ({shown(value)}), expected a number"


def _ts_problem(value: object) -> str:
    if value is None:
        return "field 'ts' is missing or null"
    return f"field 'ts' is a JSON {json_type_name(value)} ({shown(value)}), expected a string"


def _triage(batch: JsonlColumns) -> _Triage:
    """Sort lines: scored events with a usable issue and a string ts, ignored, unknown, malformed."""
    out = _Triage(skipped=list(batch.bad))
    line_nos = batch.line_nos
    columns = batch.columns
    for i, (name, raw_issue, raw_ts) in enumerate(
        zip(columns["event"], columns["issue"], columns["ts"], strict=True)
    ):
        if type(name) is not str:
            reason = "field 'event' is missing or null" if name is None else "field 'event' is not a string"
            out.skipped.append(LineProblem(line_nos[i], reason, "event", shown(name)))
        elif name not in SCHEDULER_EVENTS:
            out.unknown.setdefault(name, []).append(line_nos[i])
        elif name not in SCORED_EVENTS:
            out.ignored += 1
            if name == UNVERIFIED_EXIT_EVENT and columns["detail"][i] == UNVERIFIED_EXIT_DETAIL:
                number = issue_number(raw_issue)
                if number is not None and type(raw_ts) is str:
                    out.unverified.append((number, raw_ts))
        elif (number := issue_number(raw_issue)) is None:
            out.skipped.append(LineProblem(line_nos[i], _issue_problem(raw_issue), "issue", shown(raw_issue)))
        elif type(raw_ts) is not str:
            out.skipped.append(LineProblem(line_nos[i], _ts_problem(raw_ts), "ts", shown(raw_ts)))
        else:
            out.scored.append(i)
            out.issues.append(number)
    return out


def journal_frame(host: str, repo: str, slug: str, batch: JsonlColumns) -> JournalRead:
    """The DISPATCH_EVENTS rows of one decoded journal, with its warnings (module contract)."""
    path = batch.path
    columns, line_nos = batch.columns, batch.line_nos
    triage = _triage(batch)
    times = utc_times([columns["ts"][i] for i in triage.scored])
    parsed = ~np.asarray(times.isna(), dtype=bool)
    for i in np.asarray(triage.scored, dtype=np.int64)[~parsed].tolist():
        raw = columns["ts"][i]
        reason = f"field 'ts' = {shown(raw)} is not an ISO 8601 time"
        triage.skipped.append(LineProblem(line_nos[i], reason, "ts", shown(raw)))
    kept = [i for i, ok in zip(triage.scored, parsed.tolist(), strict=True) if ok]
    kept_lines = [line_nos[i] for i in kept]
    field_problems: list[LineProblem] = []
    texts = {
        name: text_column([columns[name][i] for i in kept], kept_lines, name, field_problems)
        for name in TEXT_FIELDS
    }
    frame = _frame(
        (host, repo, slug, path),
        kept_lines,
        times[parsed],
        [columns["event"][i] for i in kept],
        np.asarray(triage.issues, dtype=np.int64)[parsed],
        texts,
    )
    problems = [*triage.skipped, *with_consequence(field_problems, FIELD_DROPPED)]
    return JournalRead(
        frame=frame,
        warnings=journal_warnings(host, repo, path, problems, triage.unknown),
        malformed_lines=len(triage.skipped),
        ignored=triage.ignored,
        unknown=sum(len(lines) for lines in triage.unknown.values()),
        unverified=triage.unverified,
        problems=problems,
        unknown_lines=triage.unknown,
        replaced=batch.replaced,
    )


def journal_warnings(
    host: str, repo: str, path: str, problems: list[LineProblem], unknown: dict[str, list[int]]
) -> list[DataWarning]:
    """A journal's warnings from its (uncapped) line problems and its unknown event names' lines."""
    return [
        *malformed_line_warnings(path, problems, asset=ASSET, host=host, repo=repo),
        *_unknown_event_warnings(host, repo, path, unknown),
    ]


def _frame(
    origin: tuple[str, str, str, str],
    line_nos: list[int],
    times: pd.DatetimeIndex,
    events: list[str],
    issues: np.ndarray,
    texts: dict[str, list[str | None]],
) -> pd.DataFrame:
    """Assemble the kept rows; ``origin`` is (host, repo, slug, source_file), constant per journal."""
    n = len(line_nos)
    if n == 0:
        return empty_frame(DISPATCH_EVENTS)
    host, repo, slug, path = origin
    cmds = texts["cmd"]
    data: dict[str, object] = {
        "host": pd.array([host] * n, dtype="str"),
        "repo": pd.array([repo] * n, dtype="str"),
        "slug": pd.array([slug] * n, dtype="str"),
        "source_file": pd.array([path] * n, dtype="str"),
        "line_no": np.asarray(line_nos, dtype=np.int64),
        "ts": times,
        "event": pd.array(events, dtype="str"),
        "issue": issues,
        "unit": pd.array(texts["unit"], dtype="str"),
        "tier": pd.array(texts["tier"], dtype="str"),
        "cmd": pd.array(cmds, dtype="str"),
        "agent_cli": pd.array([agent_cli_of(c) for c in cmds], dtype="str"),
        "detail": pd.array(texts["detail"], dtype="str"),
        "is_report_agent": np.asarray([d == REPORT_AGENT_DETAIL for d in texts["detail"]], dtype=bool),
        "log": pd.array(texts["log"], dtype="str"),
    }
    return pd.DataFrame(data, columns=list(DISPATCH_EVENTS))


def _unknown_event_warnings(
    host: str, repo: str, path: str, unknown: dict[str, list[int]]
) -> list[DataWarning]:
    """One ``unknown_event`` per name (first-seen order, at most 20), then one summary for the rest."""
    warnings: list[DataWarning] = []
    names = list(unknown)
    for name in names[:WARNINGS_PER_FILE]:
        lines = unknown[name]
        warnings.append(
            DataWarning(
                code="unknown_event",
                asset=ASSET,
                message=(
                    f"{path}: event {shown(name)} is not in the scheduler vocabulary "
                    f"({plural(len(lines), 'line')}, first at line {lines[0]}); those lines are ignored"
                ),
                repo=repo,
                host=host,
                path=path,
                line=lines[0],
                values={"event": shown(name), "lines": len(lines), "first_line": lines[0]},
                count=len(lines),
            )
        )
    rest = names[WARNINGS_PER_FILE:]
    if rest:
        total = sum(len(unknown[n]) for n in rest)
        warnings.append(
            DataWarning(
                code="unknown_event",
                asset=ASSET,
                message=(
                    f"{path}: {plural(len(rest), 'more event name')} outside the scheduler vocabulary "
                    f"({plural(total, 'line')}); those lines are ignored"
                ),
                repo=repo,
                host=host,
                path=path,
                values={"names": len(rest), "lines": total},
                count=total,
            )
        )
    return warnings
