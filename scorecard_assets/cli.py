"""The ``scorecard`` command (``[project.scripts]``; ``python -m scorecard_assets.cli`` is the same).

Report commands, run in the Dagster instance of the working directory (see :func:`_instance`):

- ``scorecard run [--partition WEEK]``: the whole asset graph for one week (default: the latest
  complete week before the config's ``as_of``, else before today), then the digest and the files;
- ``scorecard latest``: the week ``run`` picks by default;
- ``scorecard backfill --from WEEK --to WEEK``: past weeks from the stored snapshots in one
  in-process run for the range (no daemon); week by week when that run fails, or with ``--per-week``.

Command groups of other packages register in :data:`COMMAND_GROUPS` (``scorecard github sync``,
``scorecard pairings verify``, …). A week is keyed by its Monday; a week that is not over yet, one
past the config's ``as_of``, one before the first partition and a reversed range each stop with one
line and exit status 1. Long work shows progress on stderr and ends with a summary with timings.
Exit status: 0 done, 1 a run or a check of the input failed, 2 bad configuration or usage.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from scorecard_assets.config import ConfigError, load_config
from scorecard_assets.dotenv_file import load_dotenv_of_cwd
from scorecard_assets.progress import Progress
from scorecard_assets.report.markdown import warning_count_text
from scorecard_assets.scoring.windows import latest_complete_partition, week_past_as_of, window_for_partition
from scorecard_assets.storage.run_failures import root_cause

if TYPE_CHECKING:
    import dagster as dg

PROG = "scorecard"
INSTANCE_FILE = "dagster.yaml"

# Command groups that live with their package: (name, module, one-line help). Each module defines
# ``add_commands(commands: argparse._SubParsersAction) -> None``, which adds its subcommands, each
# with ``set_defaults(func=handler)`` where ``handler(args) -> int`` is the exit status. To add a
# group (the session records' ``scorecard sessions export``), append one line here, e.g.
#     ("sessions", "scorecard_assets.sessions.__main__", "interactive session records: export"),
# and give that module ``add_commands`` plus ``main(argv)`` = ``cli.main(["sessions", *argv])`` for
# its ``python -m`` alias. README "Command line" lists every command.
COMMAND_GROUPS: list[tuple[str, str, str]] = [
    ("github", "scorecard_assets.github.__main__", "sync trails from the GitHub API; export the cache"),
    ("pairings", "scorecard_assets.pairings.__main__", "Pragmatikos tools: verify a published pool.json"),
    ("sessions", "scorecard_assets.sessions.__main__", "your own session records: export contributed rows"),
]


# ---------------------------------------------------------------------------------------- weeks


def _default_partition() -> str:
    """The latest complete week before the config's ``as_of`` (else before today), and never one the
    partitions do not have yet (an ``as_of`` in the future)."""
    from scorecard_assets.defs.partitions import weekly_partitions

    cfg = load_config()
    week = latest_complete_partition(cfg.as_of or datetime.now(UTC).date())
    last = weekly_partitions.get_last_partition_key()
    return min(week, last) if last is not None else week


def _checked_week(key: str, flag: str) -> str:
    """``key`` when it is a week the report can render, else a one-line exit naming ``flag``: not a
    date, not a Monday, before the first partition, not over yet, or past the config's ``as_of``."""
    from scorecard_assets.defs.partitions import weekly_partitions

    try:
        day = date.fromisoformat(key)
    except ValueError:
        message = f"{flag}: {key!r} is not a date; expected a Monday as YYYY-MM-DD, e.g. 2026-10-05"
        raise SystemExit(message) from None
    if day.weekday() != 0:
        monday = day - timedelta(days=day.weekday())
        raise SystemExit(f"{flag}: {key} is a {day:%A}; weeks are keyed by their Monday ({monday})")
    first = weekly_partitions.get_first_partition_key()
    if first is not None and key < first:
        raise SystemExit(
            f"{flag}: {key} is before the first week {first} (PARTITIONS_START in defs/partitions.py)"
        )
    complete = latest_complete_partition(datetime.now(UTC).date())
    if key > complete:
        raise SystemExit(f"{flag}: week {key} is not over yet; the last complete week is {complete}")
    # then the config's as_of: when it is set the partitions end there too, and its message says why
    past = week_past_as_of(key, load_config().as_of)
    if past:
        raise SystemExit(f"{flag}: {past}")
    last = weekly_partitions.get_last_partition_key()
    if last is not None and key > last:
        raise SystemExit(f"{flag}: week {key} is past the last partition {last}")
    return key


def _weeks(start: str, end: str) -> list[str]:
    """Every week from ``start`` to ``end`` (both checked); a reversed range is refused."""
    a = date.fromisoformat(_checked_week(start, "backfill --from"))
    b = date.fromisoformat(_checked_week(end, "backfill --to"))
    if a > b:
        raise SystemExit(f"backfill: --from {start} is after --to {end}; give the earlier week first")
    out = []
    while a <= b:
        out.append(a.isoformat())
        a += timedelta(days=7)
    return out


def _report_dir(partition: str) -> Path:
    cfg = load_config()
    w = window_for_partition(partition, days=cfg.window.days, mode=cfg.window.mode)
    return Path(cfg.output_dir) / w.window_end_date


# ------------------------------------------------------------------------------------- instance


@contextlib.contextmanager
def _instance() -> Iterator[dg.DagsterInstance]:
    """The instance ``dg dev`` / ``dagster dev`` would use from here: ``$DAGSTER_HOME`` when set;
    else the ``dagster.yaml`` of the working directory with a throw-away home beside it (the repo's
    file keeps everything under ``.dagster/instance/``); else a temporary instance."""
    import dagster as dg

    if os.environ.get("DAGSTER_HOME"):
        with dg.DagsterInstance.get() as instance:
            yield instance
        return
    cwd = Path.cwd()
    if (cwd / INSTANCE_FILE).is_file():
        from dagster._core.instance import InstanceRef

        with (
            tempfile.TemporaryDirectory(prefix=".tmp_dagster_home_", dir=cwd) as home,
            dg.DagsterInstance.from_ref(InstanceRef.from_dir(home, config_dir=str(cwd))) as instance,
        ):
            yield instance
        return
    print(
        f"note: no DAGSTER_HOME and no ./{INSTANCE_FILE}; using a temporary instance "
        "(runs will not show in the UI)",
        file=sys.stderr,
    )
    with dg.DagsterInstance.ephemeral() as instance:
        yield instance


# ------------------------------------------------------------------------------------------ runs

_STEP_DONE = {"STEP_SUCCESS": True, "STEP_FAILURE": False, "STEP_SKIPPED": False}
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"


def _execute(
    job_name: str,
    partition: str,
    instance: dg.DagsterInstance,
    *,
    last: str | None = None,
    steps: bool = True,
    force: bool = False,
) -> bool:
    """Run ``job_name`` for ``partition`` in this process, or for the weeks ``partition`` .. ``last``
    in one run (the report assets' single-run backfill policy, docs/dagster.md "Backfills: one run
    per range"); progress per step when ``steps``; ``force`` publishes over the publish guard
    (docs/reliability.md "The publish guard")."""
    from scorecard_assets.definitions import defs

    job = defs.resolve_job_def(job_name)
    level = os.environ.get("SCORECARD_LOG_LEVEL", "WARNING")  # DEBUG shows every Dagster event
    quiet: dict[str, object] = {"loggers": {"console": {"config": {"log_level": level}}}}
    if force:
        quiet["ops"] = {"model_scorecard": {"config": {"force": True}}}
    run_id = str(uuid.uuid4())
    label = partition if last is None or last == partition else f"{partition} → {last}"
    progress = Progress(total=len(job.graph.node_dict), unit="step", what=f"{job_name} [{label}]")
    which: dict[str, object] = {"partition_key": partition}
    if last is not None and last != partition:
        which = {"tags": {RANGE_START_TAG: partition, RANGE_END_TAG: last}}

    def on_event(entry: object) -> None:
        event = getattr(entry, "dagster_event", None)
        kind = getattr(event, "event_type_value", None)
        step = getattr(entry, "step_key", None)
        if step is None:
            return
        if kind == "STEP_START":
            progress.start(step)
        elif kind in _STEP_DONE:
            progress.finish(step, ok=_STEP_DONE[kind], note="skipped" if kind == "STEP_SKIPPED" else "")

    if steps:
        instance.add_event_listener(run_id, on_event)
    try:
        result = job.execute_in_process(
            instance=instance,
            raise_on_error=False,
            run_config=quiet,
            run_id=run_id,
            **which,  # type: ignore[arg-type]
        )
    finally:
        progress.close()
    for e in result.all_events:
        if e.is_step_failure:
            cause = root_cause(e.event_specific_data.error)[:500]
            print(f"step failed: {e.step_key}: {cause}", file=sys.stderr)
    checks = result.get_asset_check_evaluations()
    warn = [c for c in checks if not c.passed]
    line = f"{job_name} [{label}]: {'SUCCESS' if result.success else 'FAILURE'}"
    if checks:
        line += f"; {len(warn)} of {len(checks)} checks warned"
    count = _report_warning_count(result)
    if count is not None:
        line += f"; the report lists {warning_count_text(count)}"
    print(line)
    if steps:
        print(progress.summary(), file=sys.stderr)
    return result.success


def _report_warning_count(result: dg.ExecuteInProcessResult) -> int | None:
    """The ``data_warnings`` of the run's scorecard_report materialization (the report's count)."""
    for event in result.get_asset_materialization_events():
        materialization = event.event_specific_data.materialization  # type: ignore[union-attr]
        if materialization.asset_key.to_user_string() == "scorecard_report":
            value = materialization.metadata.get("data_warnings")
            return int(value.value) if value is not None else None  # type: ignore[arg-type]
    return None


def cmd_run(args: argparse.Namespace) -> int:
    partition = _checked_week(args.partition, "--partition") if args.partition else _default_partition()
    with _instance() as instance:
        ok = _execute("weekly_scorecard_job", partition, instance, force=args.force)
    out = _report_dir(partition)
    if ok and out.is_dir():
        digest = out / "digest.txt"
        if digest.is_file():
            print("\n" + digest.read_text(encoding="utf-8").rstrip())
        print(f"\nReport for week {partition} written to {out}/")
        for p in sorted(out.iterdir()):
            print(f"  {p}")
        latest = out.parent / "latest"
        if latest.is_dir():
            print(f"latest: {latest}/model-scorecard.md")
    return 0 if ok else 1


def cmd_latest(_: argparse.Namespace) -> int:
    print(_default_partition())
    return 0


def cmd_backfill(args: argparse.Namespace) -> int:
    weeks = _weeks(args.start, args.end)
    with _instance() as instance:
        if len(weeks) > 1 and not args.per_week:
            # One run for the range: the sources and transforms are loaded once and every report
            # step loops over the weeks. When it fails nothing of the range is published, so the
            # weeks are run one at a time and a bad week does not stop the others.
            if _execute(args.job, weeks[0], instance, last=weeks[-1]):
                for key in weeks:
                    print(f"  -> {_report_dir(key)}")
                return 0
            print(
                f"backfill: the run over {weeks[0]} → {weeks[-1]} failed; running the {len(weeks)} weeks "
                "one at a time so one bad week does not stop the others",
                file=sys.stderr,
            )
        return _week_by_week(args.job, weeks, instance)


def _week_by_week(job: str, weeks: list[str], instance: dg.DagsterInstance) -> int:
    progress = Progress(total=len(weeks), unit="week", what=f"backfill {weeks[0]} → {weeks[-1]}")
    try:
        for key in weeks:
            progress.start(key)
            ok = _execute(job, key, instance, steps=False)
            progress.finish(key, ok=ok)
            if ok:
                print(f"  -> {_report_dir(key)}")
    finally:
        progress.close()
    print(progress.summary(), file=sys.stderr)
    return 1 if progress.failed else 0


# ---------------------------------------------------------------------------------------- parser


def _with_config(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        default=None,
        help="scorecard YAML for this command (sets SCORECARD_CONFIG; default: $SCORECARD_CONFIG, "
        "else the bundled sample fleet)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Weekly, evidence-weighted scorecard of an AI coding-agent fleet (a Dagster code "
        "location). The report commands run in the Dagster instance of this directory: $DAGSTER_HOME, "
        "else ./dagster.yaml (the repo's: state under .dagster/), else a temporary one.",
        epilog="Every command has --help. Weeks are keyed by their Monday (YYYY-MM-DD, UTC).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="refresh every source and render one week's report",
        description="Materialize the whole asset graph (weekly_scorecard_job: every source snapshot, "
        "the transforms, the week's report) in this process, show progress per step, then print the "
        "digest and the files written. Exit 1 when the run fails.",
    )
    run.add_argument(
        "--partition",
        metavar="WEEK",
        help="the week's Monday (YYYY-MM-DD); default: the latest complete week before the config's "
        "as_of, else before today (`scorecard latest` prints it)",
    )
    run.add_argument(
        "--force",
        action="store_true",
        help="publish even when the publish guard finds a repo, source or column that vanished "
        "against the report already published for the week (the check then says what was forced)",
    )
    _with_config(run)
    run.set_defaults(func=cmd_run)

    latest = commands.add_parser(
        "latest",
        help="print the week `run` renders by default",
        description="Print the Monday of the latest complete week before the config's as_of (else "
        "before today): the partition `scorecard run` renders without --partition.",
    )
    _with_config(latest)
    latest.set_defaults(func=cmd_latest)

    bf = commands.add_parser(
        "backfill",
        help="render a range of past weeks from the stored snapshots (no daemon)",
        description="Render every week from --from to --to in one in-process run (the report assets "
        "loop over the weeks; each week gets its own materialization and report), from the snapshots "
        "the last `run` stored (ingest is not repeated per week). Progress per step and a summary with "
        "timings. If that run fails, the weeks are run again one at a time, so one bad week does not "
        "stop the others; exit 1 when any week failed. A backfill never replaces latest/ with an older "
        "week.",
    )
    bf.add_argument("--from", dest="start", required=True, metavar="WEEK", help="first week (a Monday)")
    bf.add_argument("--to", dest="end", required=True, metavar="WEEK", help="last week (a Monday)")
    bf.add_argument(
        "--job",
        default="weekly_report_job",
        choices=["weekly_report_job", "weekly_scorecard_job"],
        help="weekly_report_job (default: report assets only) or weekly_scorecard_job (refresh the "
        "sources for every week too)",
    )
    bf.add_argument(
        "--per-week",
        action="store_true",
        help="one run per week instead of one run for the range (slower: every run loads its inputs)",
    )
    _with_config(bf)
    bf.set_defaults(func=cmd_backfill)

    for name, module, summary in COMMAND_GROUPS:
        group = commands.add_parser(name, help=summary, description=summary)
        importlib.import_module(module).add_commands(
            group.add_subparsers(dest=f"{name}_command", required=True, metavar="COMMAND")
        )
    return parser


def main(argv: list[str] | None = None) -> int:
    load_dotenv_of_cwd()  # GITHUB_TOKEN and friends, as the dagster command reads them
    args = build_parser().parse_args(argv)
    if getattr(args, "config", None) is not None and args.command in {"run", "latest", "backfill"}:
        os.environ["SCORECARD_CONFIG"] = str(args.config)
    started = time.monotonic()
    try:
        return int(args.func(args))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"interrupted after {time.monotonic() - started:.1f} s", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
