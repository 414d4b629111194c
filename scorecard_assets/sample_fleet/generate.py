"""Generate a fleet: the bundled sample, the parity fleet, or a benchmark fleet of size S, M or L.

Usage::

    python -m scorecard_assets.sample_fleet.generate --out DIR [--size sample|S|M|L]
        [--profile sample|stress|parity] [--seed N]

The output directory holds one fleet (its ``scorecard.yaml`` is the fleet's config): recorded GitHub
issues and comments, per-host ``runs.jsonl``, scheduler journals and agent logs, and a small file of
imported Pragmatikos cycles. The same arguments always produce byte-identical files: every random
choice comes from ``random.Random`` seeded by the arguments, times derive from the fixed ``as_of``,
and JSON is written with a fixed key order.

Profiles:

- ``sample`` (the bundled default, ``make sample``): a team's fleet with the handful of problems a
  real week has (one pasted ``at=``, a writer with a slow clock, a journal cut mid-line, an agent
  still running, old telemetry whose cost is only in the agent log, a moving ``-latest`` tag, a
  ``[1m]`` variant, gateway spellings, classifier-only runs); nothing hostile.
- ``stress``: the same fleet with every situation the data warnings describe: hostile strings in
  models, tiers, branches and commands, invalid review counters, the cases where the product
  deliberately differs from the reference scorecard (the "Quirks of the reference" tables of
  docs/join.md and docs/scoring.md), and the configured inputs around the simulated fleet that hold
  no data (``_extras``: a host just added, a retired host, a repo never exported, a repo whose export
  hit the rate limit, a cycle file of an unknown type). Tests generate it where they need it.
- ``parity``: a fleet without those situations (one host, no report agents, no classifier runs, no
  shared issue numbers, no unusable ``at=``, no invalid review counters, Claude logs whose ``usage``
  equals their ``modelUsage``, everything inside the last 30 days), so the product and an independent
  model of the reference must agree on it.

The directory is replaced as a whole; a non-empty directory that this tool did not write is refused.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from scorecard_assets.sample_fleet import _batches
from scorecard_assets.sample_fleet._anomalies import inject
from scorecard_assets.sample_fleet._catalog import GENERATOR_VERSION, PROFILES, SIZES
from scorecard_assets.sample_fleet._config_cycles import render_config, render_cycles
from scorecard_assets.sample_fleet._extras import (
    render_extra_exports,
    render_extra_hosts,
    render_unsupported_cycle_file,
)
from scorecard_assets.sample_fleet._github import render_github
from scorecard_assets.sample_fleet._model import Dispatch
from scorecard_assets.sample_fleet._planner import Planner
from scorecard_assets.sample_fleet._render import Written, render_gate_logs, render_hosts
from scorecard_assets.sample_fleet._sessions import render_session_sample

MARKER_FILE = "fleet.json"
PACKAGE_DATA_DIR = Path(__file__).resolve().parent / "data"


class FleetExistsError(RuntimeError):
    """The output directory holds files this generator did not write."""


@dataclass(frozen=True)
class FleetSummary:
    """What one generation wrote (counts are of lines/objects in the files as written)."""

    out: str
    size: str
    profile: str
    seed: int
    version: str
    issues: int
    pull_requests: int
    comments: int
    milestone_comments: int
    events: int
    runs_jsonl_lines: int
    logs: int
    log_bytes: int
    cycle_rows: int
    files: int
    total_bytes: int

    def marker(self) -> dict[str, object]:
        """The content of ``fleet.json``: how to regenerate, and what was generated."""
        data = asdict(self)
        data.pop("out")
        return data


def _output_dir_setting(size: str, profile: str) -> str:
    """Reports of the committed sample land in the repo's reports/; other fleets keep theirs inside."""
    return "../../../reports" if (size == "sample" and profile == "sample") else "reports"


def _check_replaceable(out: Path) -> None:
    """``out`` may be written: absent, empty, or a fleet this generator wrote (it has ``fleet.json``)."""
    if out.exists():
        if not out.is_dir():
            raise FleetExistsError(f"{out} exists and is not a directory")
        if any(out.iterdir()) and not (out / MARKER_FILE).is_file():
            raise FleetExistsError(f"{out} is not empty and holds no {MARKER_FILE}: refusing to replace it")


def _scratch(out: Path, suffix: str) -> Path:
    """A sibling directory of ``out`` that only this generator uses (removed if left over)."""
    path = out.parent / f".{out.name}.{suffix}"
    if path.exists():
        shutil.rmtree(path)
    return path


def _swap_in(new: Path, out: Path) -> None:
    """Replace ``out`` by ``new`` with two renames, so a crash never leaves a half-written fleet."""
    old = _scratch(out, "old")
    if out.exists():
        out.rename(old)
    new.rename(out)
    if old.exists():
        shutil.rmtree(old)


def generate_fleet(out: Path, size: str = "sample", profile: str = "sample", seed: int = 7) -> FleetSummary:
    """Write a fleet into ``out`` (replacing a fleet previously generated there) and summarise it.

    The fleet is written into a sibling scratch directory first and swapped in at the end.
    Raises ``ValueError`` for an unknown size or profile and :class:`FleetExistsError` when ``out``
    holds files this generator did not write.
    """
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, got {size!r}")
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {', '.join(PROFILES)}, got {profile!r}")
    out = Path(out).absolute()
    _check_replaceable(out)
    fleet = Planner(SIZES[size], profile, seed).plan()
    by_issue: dict[tuple[str, int], list[Dispatch]] = {}
    for d in fleet.dispatches:
        by_issue.setdefault((d.repo, d.issue), []).append(d)
    flags = inject(fleet, by_issue)

    out.parent.mkdir(parents=True, exist_ok=True)
    work = _scratch(out, "partial")
    work.mkdir()
    written = Written()
    render_config(fleet, work, written, _output_dir_setting(size, profile), flags)
    render_github(fleet, work, written, flags)
    render_hosts(fleet, work, flags, written)
    _batches.render_batch_files(fleet, work, written)
    if flags.gate_logs:
        render_gate_logs(fleet, work, written)
    render_cycles(fleet, work, written, flags)
    if flags.configured_extras:
        render_extra_exports(work, written)
        render_extra_hosts(work, written)
        render_unsupported_cycle_file(work, written)
    if size == "sample" and profile == "sample":  # one developer's own sessions (docs/sessions.md)
        render_session_sample(work, written.files)
    summary = FleetSummary(
        out=str(out),
        size=size,
        profile=profile,
        seed=seed,
        version=GENERATOR_VERSION,
        issues=written.issues,
        pull_requests=written.pull_requests,
        comments=written.comments,
        milestone_comments=written.milestone_comments,
        events=written.events,
        runs_jsonl_lines=written.runs_jsonl_lines,
        logs=written.logs,
        log_bytes=written.log_bytes,
        cycle_rows=written.cycle_rows,
        files=len(written.files) + 1,
        total_bytes=sum((work / f).stat().st_size for f in written.files),
    )
    (work / MARKER_FILE).write_text(json.dumps(summary.marker(), indent=2) + "\n", encoding="utf-8")
    _swap_in(work, out)
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scorecard_assets.sample_fleet.generate",
        description="Generate a deterministic fleet (recorded trails, telemetry, journals, agent logs).",
    )
    parser.add_argument("--out", required=True, type=Path, help="output directory (replaced as a whole)")
    parser.add_argument("--size", default="sample", choices=list(SIZES), help="sample (default), S, M or L")
    parser.add_argument(
        "--profile", default="sample", choices=list(PROFILES), help="sample (default), stress or parity"
    )
    parser.add_argument("--seed", default=7, type=int, help="random seed (default 7)")
    args = parser.parse_args(argv)
    try:
        s = generate_fleet(args.out, args.size, args.profile, args.seed)
    except FleetExistsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{s.out}: {s.issues} issues, {s.pull_requests} pull requests, {s.comments} comments, "
        f"{s.events} events, {s.runs_jsonl_lines} runs.jsonl lines, {s.logs} logs "
        f"({s.log_bytes / 1e6:.1f} MB), {s.files} files, {s.total_bytes / 1e6:.1f} MB"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
