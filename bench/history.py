"""History fleets (XL, XXL): long histories assembled from eras, and the "one more week" step.

The S/M/L fleets are one simulation each (``generate_fleet``); a fleet of years of history cannot be
simulated in one process (the planner keeps every issue in memory and runs on one core). A history
fleet is therefore cut into **eras** of ``era_weeks`` weeks each, era 0 ending at the generator's
``as_of`` and era *k* ending ``k × era_weeks`` weeks before it. Every era is its own deterministic
simulation (its own planner seed, issue numbers, issue and comment ids, so nothing clashes), run in
worker processes and cached under ``bench/fleets/.eras/``; XXL (8 eras) reuses the 2 eras of XL,
so its newest 26 weeks are exactly XL's and XXL differs from XL only by 4× the history. Only era 0
gets the sample profile's anomalies and configured extras (the config, cycles, a retired host...).

The eras are then **assembled** into one fleet: files that exist in one era only (agent logs: one
per issue) are hard-linked, the shared files (``issues.json``/``comments.json`` per repo,
``runs.jsonl`` per host, ``events.jsonl`` per host and repo) are merged in time order.

Last, the assembled fleet is **split** at ``WEEK_SPLIT`` (the Monday a week before ``as_of``): the
fleet keeps what existed before that instant and its config's ``as_of`` moves back a week; what
happened in the last week goes to ``<size>.week/``: the new lines of every ``runs.jsonl`` and
``events.jsonl``, the new slices of every agent log (new logs too), and the recorded export as of
``as_of`` (a GitHub export is a snapshot, not an append-only file). :func:`apply_week` puts it on a
copy of the fleet: appending to the append-only files and replacing the snapshots, as a week of a
real fleet would; the result is byte for byte the fleet that was simulated (tested).

``python -m bench.history XL XXL`` generates (or checks) them from the command line.
"""

from __future__ import annotations

import argparse
import heapq
import os
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import orjson

from scorecard_assets.sample_fleet._catalog import (
    AS_OF,
    AS_OF_MS,
    DAY_MS,
    GENERATOR_VERSION,
    WEEK_MS,
    SizeSpec,
)
from scorecard_assets.sample_fleet._model import dumps
from scorecard_assets.sample_fleet._planner import IssueSlot, Planner

# Bump ERA_VERSION when an era's content changes (its cache key, with the sample generator's own
# version), HISTORY_VERSION when the assembly or the split does (the fleets' marker).
ERA_VERSION = "1"
HISTORY_VERSION = "2"
MARKER_FILE = "fleet.json"
ERA_MARKER = "era.json"
WEEK_MANIFEST = "week.json"
# Up to this many eras share the number and id ranges below (era k uses slot MAX_ERAS - 1 - k, so
# older eras hold the smaller numbers and ids, as on GitHub).
MAX_ERAS = 8
NUMBER_STRIDE = 100_000
ISSUE_ID_BASE, ISSUE_ID_STRIDE = 2_900_000_000, 100_000_000
COMMENT_ID_BASE, COMMENT_ID_STRIDE = 3_100_000_000, 200_000_000
WEEK_SPLIT: date = AS_OF - timedelta(days=7)
PREAMBLE = b'{"type":"sched-dispatch","ts":"'


@dataclass(frozen=True)
class HistorySpec:
    """A history fleet: ``eras`` eras of ``era_weeks`` weeks with ``era_issues`` regular issues each."""

    name: str
    eras: int
    era_issues: int
    era_weeks: int
    output_scale: float

    def era_key(self, era: int, seed: int) -> str:
        """The cache directory of one era: everything its content depends on."""
        scale = f"{self.output_scale:g}".replace(".", "p")
        return (
            f"g{GENERATOR_VERSION}-h{ERA_VERSION}-s{seed}-"
            f"{self.era_issues}x{self.era_weeks}w-o{scale}-era{era}"
        )


# XL: ≈45,000 issues over 26 weeks (≈480,000 comments, ≈300 MB export, ≈0.8 GB of lean agent logs on
# two hosts); XXL: the same weeks and rate, 4× the history (104 weeks).
HISTORY_SIZES: dict[str, HistorySpec] = {
    "XL": HistorySpec("XL", 2, 21_500, 13, 0.3),
    "XXL": HistorySpec("XXL", 8, 21_500, 13, 0.3),
}


# --------------------------------------------------------------------------------------------- eras


class _EraPlanner(Planner):
    """The sample planner over one era's weeks, with the era's number range; in-flight issues
    (runs still going at the cutoff) only in the newest era."""

    def __init__(self, size: SizeSpec, profile: str, seed: int, era: int) -> None:
        super().__init__(size, profile, seed)
        self.era = era

    def span(self) -> tuple[int, int]:
        hi = AS_OF_MS - self.era * self.size.weeks * WEEK_MS
        lo = hi - self.size.weeks * WEEK_MS
        return lo, (hi - 4 * DAY_MS if self.era == 0 else hi)

    def _in_flight_slots(self) -> list[IssueSlot]:
        return super()._in_flight_slots() if self.era == 0 else []

    def _number(self, slots: list[IssueSlot]) -> None:
        super()._number(slots)
        offset = (MAX_ERAS - 1 - self.era) * NUMBER_STRIDE
        highest = max((s.number for s in slots), default=0)
        if highest + 1 >= NUMBER_STRIDE:
            raise ValueError(f"{len(slots)} issues need numbers up to {highest}, over {NUMBER_STRIDE}")
        for s in slots:
            s.number += offset
            s.batch_members = tuple(n + offset for n in s.batch_members)


def generate_era(spec: HistorySpec, era: int, seed: int, out: Path) -> dict[str, Any]:
    """Simulate and write one era into ``out`` (replaced); return its ``era.json`` content."""
    from scorecard_assets.sample_fleet._anomalies import inject
    from scorecard_assets.sample_fleet._config_cycles import render_config, render_cycles
    from scorecard_assets.sample_fleet._extras import (
        render_extra_exports,
        render_extra_hosts,
        render_unsupported_cycle_file,
    )
    from scorecard_assets.sample_fleet._github import render_github
    from scorecard_assets.sample_fleet._model import Dispatch
    from scorecard_assets.sample_fleet._render import RenderFlags, Written, render_gate_logs, render_hosts

    if not 0 <= era < MAX_ERAS:
        raise ValueError(f"era must be in 0..{MAX_ERAS - 1}, got {era}")
    started = time.perf_counter()
    size = SizeSpec(f"era{era}", spec.era_issues, spec.era_weeks, spec.output_scale, 0, "bench")
    fleet = _EraPlanner(size, "stress", seed, era).plan()  # every anomaly, as the S..L fleets
    by_issue: dict[tuple[str, int], list[Dispatch]] = {}
    for d in fleet.dispatches:
        by_issue.setdefault((d.repo, d.issue), []).append(d)
    if era == 0:
        flags = inject(fleet, by_issue)
    else:  # older history: clean, but a killed agent's log still ends mid-line
        flags = RenderFlags(extra_log_files=False)
        for d in fleet.dispatches:
            if d.killed and d.turn_count:
                d.truncate_tail = True
    work = out.parent / f".{out.name}.partial"
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    written = Written()
    slot = MAX_ERAS - 1 - era
    if era == 0:
        render_config(fleet, work, written, "reports", flags)
    render_github(
        fleet,
        work,
        written,
        flags,
        issue_id_base=ISSUE_ID_BASE + slot * ISSUE_ID_STRIDE,
        comment_id_base=COMMENT_ID_BASE + slot * COMMENT_ID_STRIDE,
    )
    render_hosts(fleet, work, flags, written)
    if flags.gate_logs:
        render_gate_logs(fleet, work, written)
    if era == 0:
        render_cycles(fleet, work, written, flags)
        if flags.configured_extras:
            render_extra_exports(work, written)
            render_extra_hosts(work, written)
            render_unsupported_cycle_file(work, written)
    marker = {
        "key": spec.era_key(era, seed),
        "era": era,
        "issues": written.issues,
        "pull_requests": written.pull_requests,
        "comments": written.comments,
        "milestone_comments": written.milestone_comments,
        "events": written.events,
        "runs_jsonl_lines": written.runs_jsonl_lines,
        "logs": written.logs,
        "log_bytes": written.log_bytes,
        "seconds": round(time.perf_counter() - started, 1),
    }
    (work / ERA_MARKER).write_bytes(orjson.dumps(marker, option=orjson.OPT_INDENT_2))
    if out.exists():
        shutil.rmtree(out)
    work.rename(out)
    return marker


def _era_marker(path: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads((path / ERA_MARKER).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _era_job(args: tuple[HistorySpec, int, int, str]) -> dict[str, Any]:
    spec, era, seed, out = args
    return generate_era(spec, era, seed, Path(out))


def ensure_eras(spec: HistorySpec, root: Path, seed: int, jobs: int) -> tuple[list[Path], float]:
    """The era directories of ``spec`` (newest first), generating the missing ones in ``jobs``
    worker processes; also the seconds spent generating."""
    cache = root / ".eras"
    dirs = [cache / spec.era_key(k, seed) for k in range(spec.eras)]
    missing = [(spec, k, seed, str(d)) for k, d in enumerate(dirs) if _era_marker(d) is None]
    started = time.perf_counter()
    if missing:
        cache.mkdir(parents=True, exist_ok=True)
        if jobs <= 1 or len(missing) == 1:
            for job in missing:
                _era_job(job)
        else:
            with ProcessPoolExecutor(max_workers=min(jobs, len(missing))) as pool:
                list(pool.map(_era_job, missing))
    return dirs, time.perf_counter() - started


# ----------------------------------------------------------------------------------------- assembly

Keyed = Iterator[tuple[Any, bytes, bool]]


def _field_key(marker: bytes) -> Callable[[bytes], str | None]:
    """The value of a leading string field (``"ts":"…"``) of a JSON line, without decoding it."""

    def key(line: bytes) -> str | None:
        at = line.find(marker, 0, 64)
        if at < 0:
            return None
        start = at + len(marker)
        end = line.find(b'"', start)
        return line[start:end].decode("ascii", "replace") if end > 0 else None

    return key


def _decoded_key(name: str) -> Callable[[bytes], Any]:
    def key(line: bytes) -> Any:
        try:
            return orjson.loads(line).get(name)
        except (orjson.JSONDecodeError, AttributeError):
            return None

    return key


def _lines(path: Path) -> Iterator[tuple[bytes, bool]]:
    """The file's lines without their newline, and whether each had one."""
    with path.open("rb") as fh:
        for raw in fh:
            if raw.endswith(b"\n"):
                yield raw[:-1], True
            else:
                yield raw, False


def _array_lines(path: Path) -> Iterator[tuple[bytes, bool]]:
    """The objects of a JSON array written one per line (the generator's layout), without commas."""
    for line, _ in _lines(path):
        if line in (b"[", b"]", b"[]", b""):
            continue
        yield (line[:-1] if line.endswith(b",") else line), True


def _keyed(lines: Iterator[tuple[bytes, bool]], key: Callable[[bytes], Any]) -> Keyed:
    """(key, line, had newline): a line without a readable key keeps the key of the line before, so
    damaged lines stay where they were."""
    last: Any = ""
    for line, nl in lines:
        k = key(line)
        if k is None:
            k = last
        last = k
        yield k, line, nl


def _is_array(path: Path) -> bool:
    with path.open("rb") as fh:
        return fh.read(2) in (b"[\n", b"[]")


@dataclass(frozen=True)
class _Merged:
    key: Callable[[bytes], Any]
    array: bool


MERGED: dict[str, _Merged] = {
    "issues.json": _Merged(_decoded_key("number"), True),
    "comments.json": _Merged(_decoded_key("created_at"), True),
    "runs.jsonl": _Merged(_field_key(b'"timestamp":"'), False),
    "events.jsonl": _Merged(_field_key(b'"ts":"'), False),
}


def _merge_file(sources: list[Path], target: Path, how: _Merged) -> None:
    """Merge files sorted by ``how.key`` (oldest era first, which wins ties) into ``target``."""
    if how.array and not all(_is_array(s) for s in sources):
        raise ValueError(f"cannot merge {target.name}: not every era wrote a JSON array")
    reader = _array_lines if how.array else _lines
    streams = [_keyed(reader(s), how.key) for s in sources]
    merged = heapq.merge(*streams, key=lambda item: item[0])
    with target.open("wb") as out:
        if how.array:
            first = True
            for _, line, _ in merged:
                out.write(b"[\n" + line if first else b",\n" + line)
                first = False
            out.write(b"[]\n" if first else b"\n]\n")
            return
        last_nl = True
        first = True
        for _, line, nl in merged:
            out.write(line if first else b"\n" + line)
            first, last_nl = False, nl
        if not first and last_nl:
            out.write(b"\n")


def _link(source: Path, target: Path) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def assemble(era_dirs: list[Path], out: Path, fleet_name: str = "history") -> None:
    """Write the fleet of ``era_dirs`` (newest first; era 0 holds the config) into ``out``; the
    config's header names the fleet ``fleet_name``."""
    sources: dict[str, list[Path]] = {}
    folders: set[str] = set()
    for era_dir in reversed(era_dirs):  # oldest first
        for folder, dirnames, filenames in os.walk(era_dir):
            rel_folder = Path(folder).relative_to(era_dir)
            folders.update((rel_folder / d).as_posix() for d in dirnames)
            for name in filenames:
                if folder == str(era_dir) and name == ERA_MARKER:
                    continue
                rel = (rel_folder / name).as_posix()
                sources.setdefault(rel, []).append(Path(folder) / name)
    out.mkdir(parents=True)
    for folder in sorted(folders):
        (out / folder).mkdir(parents=True, exist_ok=True)
    for rel, paths in sorted(sources.items()):
        target = out / rel
        how = MERGED.get(target.name)
        if len(paths) == 1:
            _link(paths[0], target)
        elif how is None:
            raise ValueError(f"{rel} was written by {len(paths)} eras and cannot be merged")
        else:
            _merge_file(paths, target, how)
    config = out / "scorecard.yaml"
    if config.is_file():
        lines = config.read_text(encoding="utf-8").splitlines()
        lines[:2] = [
            "# A generated history fleet for the benchmarks (bench/history.py), assembled from eras.",
            f"# size={fleet_name} eras={len(era_dirs)}; regenerate it, do not edit by hand.",
        ]
        _replace_bytes(config, ("\n".join(lines) + "\n").encode("utf-8"))


# -------------------------------------------------------------------------------------- week split


def _split_key(value: object) -> bool:
    """Whether a timestamp text is at or after the split instant (compared to the second)."""
    return isinstance(value, str) and value[:19] >= f"{WEEK_SPLIT.isoformat()}T00:00:00"


def _replace_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` as a new file at ``path`` (never through a hard link into the era cache)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


@dataclass
class WeekCounts:
    """What the appended week holds."""

    new_issues: int = 0
    new_comments: int = 0
    edited_comments: int = 0
    closed_issues: int = 0
    runs_jsonl_lines: int = 0
    events: int = 0
    logs_new: int = 0
    logs_appended: int = 0
    log_bytes: int = 0
    bytes_appended: int = 0
    bytes_replaced: int = 0


def _cut_jsonl(data: bytes, key: Callable[[bytes], Any]) -> int:
    """Byte offset of the first line at or after the split (damaged lines go with the line before)."""
    offset, last = 0, ""
    while offset < len(data):
        end = data.find(b"\n", offset)
        end = len(data) if end < 0 else end
        k = key(data[offset:end])
        k = last if k is None else k
        last = k
        if _split_key(k):
            return offset
        offset = end + 1
    return len(data)


def _preamble_ts(data: bytes, at: int) -> str:
    start = at + len(PREAMBLE)
    return data[start : start + 24].decode("ascii", "replace")


def _cut_log(data: bytes) -> int:
    """Byte offset of the first dispatch slice starting at or after the split (len(data) if none)."""
    last = data.rfind(b"\n" + PREAMBLE)
    last = last + 1 if last >= 0 else (0 if data.startswith(PREAMBLE) else -1)
    if last < 0 or not _split_key(_preamble_ts(data, last)):
        return len(data)  # the common case: nothing new in this log
    at = 0 if data.startswith(PREAMBLE) else data.find(b"\n" + PREAMBLE) + 1
    while True:
        if _split_key(_preamble_ts(data, at)):
            return at
        nxt = data.find(b"\n" + PREAMBLE, at)
        if nxt < 0:
            return len(data)
        at = nxt + 1


def _export_before(issues_path: Path, comments_path: Path, counts: WeekCounts) -> tuple[bytes, bytes]:
    """The recorded export of one repo as it was at the split: issues and comments created before it,
    comment counts, ``updated_at``, closing and merging as of then."""
    cutoff = f"{WEEK_SPLIT.isoformat()}T00:00:00Z"
    kept_comments: list[bytes] = []
    per_issue: dict[int, tuple[int, str]] = {}
    for line, _ in _array_lines(comments_path):
        c = orjson.loads(line)
        if _split_key(c.get("created_at")):
            counts.new_comments += 1
            continue
        if _split_key(c.get("updated_at")):
            counts.edited_comments += 1
            c["updated_at"] = c["created_at"]
            line = dumps(c).encode("utf-8")
        number = int(str(c.get("issue_url", "")).rsplit("/", 1)[-1])
        n, latest = per_issue.get(number, (0, ""))
        per_issue[number] = (n + 1, max(latest, c["updated_at"]))
        kept_comments.append(line)
    kept_issues: list[bytes] = []
    for line, _ in _array_lines(issues_path):
        i = orjson.loads(line)
        if _split_key(i.get("created_at")):
            counts.new_issues += 1
            continue
        n, latest = per_issue.get(i["number"], (0, ""))
        closed = i.get("closed_at")
        if closed is not None and closed >= cutoff:
            counts.closed_issues += 1
            closed = None
            i.update(closed_at=None, state="open")
            if i.get("state_reason") == "completed":
                i["state_reason"] = None
            pr = i.get("pull_request")
            if isinstance(pr, dict) and pr.get("merged_at"):
                pr["merged_at"] = None
        i["comments"] = n
        i["updated_at"] = max(i["created_at"], latest, closed or "")
        kept_issues.append(dumps(i).encode("utf-8"))

    def array(lines: list[bytes]) -> bytes:
        return b"[\n" + b",\n".join(lines) + b"\n]\n" if lines else b"[]\n"

    return array(kept_issues), array(kept_comments)


def _is_export(issues: Path) -> bool:
    """A repo export the split can read: issues.json and comments.json, both JSON arrays."""
    comments = issues.with_name("comments.json")
    return comments.is_file() and _is_array(issues) and _is_array(comments)


def _set_as_of(text: str, day: date) -> str:
    lines = [f"as_of: {day.isoformat()}" if line.startswith("as_of:") else line for line in text.splitlines()]
    return "\n".join(lines) + "\n"


def split_week(fleet: Path, week: Path) -> dict[str, Any]:
    """Move the last week of ``fleet`` (everything at or after ``WEEK_SPLIT``) into ``week``; return
    the manifest written to ``week/week.json``."""
    counts = WeekCounts()
    files: list[tuple[str, str]] = []
    payload = week / "files"
    payload.mkdir(parents=True)

    def put(rel: str, mode: str, data: bytes) -> None:
        target = payload / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        files.append((rel, mode))
        if mode == "append":
            counts.bytes_appended += len(data)
        else:
            counts.bytes_replaced += len(data)

    for path in sorted(p for p in fleet.rglob("*") if p.is_file()):
        rel = path.relative_to(fleet).as_posix()
        how = MERGED.get(path.name)
        if how is not None and not how.array:
            data = path.read_bytes()
            cut = _cut_jsonl(data, how.key)
            if cut < len(data):
                tail = data[cut:]
                if path.name == "runs.jsonl":
                    counts.runs_jsonl_lines += tail.count(b"\n") + (not tail.endswith(b"\n"))
                else:
                    counts.events += tail.count(b"\n") + (not tail.endswith(b"\n"))
                put(rel, "append", tail)
                _replace_bytes(path, data[:cut])
        elif path.suffix == ".log" and path.parent.name == "runs":
            data = path.read_bytes()
            cut = _cut_log(data)
            if cut < len(data):
                put(rel, "append", data[cut:])
                counts.log_bytes += len(data) - cut
                if cut == 0:
                    counts.logs_new += 1
                    path.unlink()
                else:
                    counts.logs_appended += 1
                    _replace_bytes(path, data[:cut])
        elif path.name == "issues.json" and _is_export(path):
            comments = path.with_name("comments.json")
            issues_before, comments_before = _export_before(path, comments, counts)
            put(rel, "replace", path.read_bytes())
            put(comments.relative_to(fleet).as_posix(), "replace", comments.read_bytes())
            _replace_bytes(path, issues_before)
            _replace_bytes(comments, comments_before)
    config = fleet / "scorecard.yaml"
    text = config.read_text(encoding="utf-8")
    put("scorecard.yaml", "replace", text.encode("utf-8"))
    _replace_bytes(config, _set_as_of(text, WEEK_SPLIT).encode("utf-8"))
    manifest = {
        "split": WEEK_SPLIT.isoformat(),
        "as_of_before": WEEK_SPLIT.isoformat(),
        "as_of_after": AS_OF.isoformat(),
        "files": [{"path": rel, "mode": mode} for rel, mode in files],
        "counts": asdict(counts),
    }
    (week / WEEK_MANIFEST).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2))
    return manifest


def apply_week(fleet: Path, week: Path) -> dict[str, Any]:
    """Append the week in ``week`` to the fleet at ``fleet`` (a working copy: the files change in
    place); return the week's manifest. A hard-linked file is copied before it is appended to."""
    manifest = orjson.loads((week / WEEK_MANIFEST).read_bytes())
    for entry in manifest["files"]:
        rel, mode = entry["path"], entry["mode"]
        data = (week / "files" / rel).read_bytes()
        target = fleet / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if mode == "replace":
            _replace_bytes(target, data)
            continue
        if target.exists() and target.stat().st_nlink > 1:
            _replace_bytes(target, target.read_bytes())
        with target.open("ab") as fh:
            fh.write(data)
    return manifest


@dataclass(frozen=True)
class WeekUndo:
    """What :func:`undo_week` needs to put a working copy back as it was before :func:`apply_week`:
    the size of every file the week appends to (None: the week creates it), and a copy of every file
    it replaces (under ``saved``)."""

    sizes: dict[str, int | None]
    saved: Path


def save_before_week(fleet: Path, week: Path, saved: Path) -> WeekUndo:
    """Record what :func:`apply_week` will change in ``fleet`` (copies of replaced files in ``saved``)."""
    manifest = orjson.loads((week / WEEK_MANIFEST).read_bytes())
    sizes: dict[str, int | None] = {}
    if saved.exists():
        shutil.rmtree(saved)
    saved.mkdir(parents=True)
    for entry in manifest["files"]:
        rel, target = entry["path"], fleet / entry["path"]
        if entry["mode"] == "replace":
            (saved / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(target, saved / rel)
        else:
            sizes[rel] = target.stat().st_size if target.exists() else None
    return WeekUndo(sizes, saved)


def undo_week(fleet: Path, undo: WeekUndo) -> None:
    """Put ``fleet`` back as it was before the week: appended files are truncated in place (same
    inode, as an incremental reader would see them before the week), created ones removed, replaced
    ones restored."""
    for rel, size in undo.sizes.items():
        target = fleet / rel
        if size is None:
            target.unlink(missing_ok=True)
        else:
            os.truncate(target, size)
    for path in undo.saved.rglob("*"):
        if path.is_file():
            rel = path.relative_to(undo.saved)
            _replace_bytes(fleet / rel, path.read_bytes())


# ---------------------------------------------------------------------------------------- the fleet


def _count_lines(path: Path) -> int:
    with path.open("rb") as fh:
        return sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 20), b""))


def summarise(fleet: Path) -> dict[str, int]:
    """Counts of what a fleet directory holds (its inputs as the readers see them)."""
    out = dict.fromkeys(
        ("issues", "comments", "milestone_comments", "events", "runs_jsonl_lines", "logs", "log_bytes"), 0
    )
    out.update(export_bytes=0, total_bytes=0, files=0)
    for path in fleet.rglob("*"):
        if not path.is_file() or path.name == MARKER_FILE:
            continue
        size = path.stat().st_size
        out["files"] += 1
        out["total_bytes"] += size
        if path.name in ("issues.json", "comments.json"):
            out["export_bytes"] += size
            if _is_array(path):
                n = sum(1 for _ in _array_lines(path))
                if path.name == "issues.json":
                    out["issues"] += n
                else:
                    out["comments"] += n
                    with path.open("rb") as fh:
                        out["milestone_comments"] += sum(1 for line in fh if b"<!-- runstate:v1 -->" in line)
        elif path.name == "runs.jsonl":
            out["runs_jsonl_lines"] += _count_lines(path)
        elif path.name == "events.jsonl":
            out["events"] += _count_lines(path)
        elif path.suffix == ".log" and path.parent.name == "runs":
            out["logs"] += 1
            out["log_bytes"] += size
    return out


def fleet_marker(path: Path) -> dict[str, Any] | None:
    try:
        data = orjson.loads((path / MARKER_FILE).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _wanted(spec: HistorySpec, seed: int) -> dict[str, Any]:
    return {
        "size": spec.name,
        "version": GENERATOR_VERSION,
        "history_version": HISTORY_VERSION,
        "seed": seed,
        "spec": asdict(spec),
    }


def is_current(path: Path, spec: HistorySpec, seed: int) -> bool:
    marker = fleet_marker(path)
    week = path.with_name(f"{path.name}.week")
    return (
        marker is not None
        and all(marker.get(k) == v for k, v in _wanted(spec, seed).items())
        and (week / WEEK_MANIFEST).is_file()
    )


def week_dir(fleet: Path) -> Path:
    """Where the week after a history fleet is kept."""
    return fleet.with_name(f"{fleet.name}.week")


def ensure_history_fleet(spec: HistorySpec, root: Path, seed: int, jobs: int = 2) -> Path:
    """The history fleet ``<root>/<name>`` (and its ``<name>.week``), built now unless current."""
    out = root / spec.name
    if is_current(out, spec, seed):
        return out
    era_dirs, era_seconds = ensure_eras(spec, root, seed, jobs)
    started = time.perf_counter()
    work = root / f".{spec.name}.partial"
    week = week_dir(work)
    for stale in (work, week):
        if stale.exists():
            shutil.rmtree(stale)
    assemble(era_dirs, work, spec.name)
    assembled = time.perf_counter()
    manifest = split_week(work, week)
    split = time.perf_counter()
    marker = {
        **_wanted(spec, seed),
        **summarise(work),
        "eras": [_era_marker(d) for d in era_dirs],
        "week": manifest["counts"],
        "as_of": WEEK_SPLIT.isoformat(),
        "generation_seconds": {
            "eras": round(era_seconds, 1),
            "assemble": round(assembled - started, 1),
            "split": round(split - assembled, 1),
        },
    }
    (work / MARKER_FILE).write_bytes(orjson.dumps(marker, option=orjson.OPT_INDENT_2))
    for target, new in ((week_dir(out), week), (out, work)):
        if target.exists():
            shutil.rmtree(target)
        new.rename(target)
    return out


def main(argv: list[str] | None = None) -> int:
    from bench.fleets import BENCH_SEED, DEFAULT_ROOT

    parser = argparse.ArgumentParser(prog="python -m bench.history", description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", default=["XL"], help=f"{', '.join(HISTORY_SIZES)} (default XL)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes for the eras (default 2)")
    args = parser.parse_args(argv)
    for size in args.sizes:
        started = time.perf_counter()
        path = ensure_history_fleet(HISTORY_SIZES[size], DEFAULT_ROOT, BENCH_SEED, args.jobs)
        marker = fleet_marker(path) or {}
        shown = {k: marker.get(k) for k in ("issues", "comments", "export_bytes", "log_bytes", "total_bytes")}
        print(f"{size}: {path} ready in {time.perf_counter() - started:.1f} s; {shown}", file=sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
