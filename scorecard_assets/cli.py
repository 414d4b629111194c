"""Command line: ``python -m scorecard_assets.cli run|latest|backfill``.

``run`` materializes the whole asset graph for one week (default: the latest complete week before
the config's ``as_of``, else before today) in the Dagster instance at ``$DAGSTER_HOME`` (so the UI
shows the runs), then prints where the report files are. ``backfill`` renders a range of past weeks
from the current snapshots with no daemon (one in-process run per week).
"""

from __future__ import annotations

import argparse
import os
import sys
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg

from scorecard_assets.config import ConfigError, load_config
from scorecard_assets.dotenv_file import load_dotenv_of_cwd
from scorecard_assets.scoring.windows import latest_complete_partition, window_for_partition


def _instance() -> dg.DagsterInstance:
    if os.environ.get("DAGSTER_HOME"):
        return dg.DagsterInstance.get()
    print("note: DAGSTER_HOME is not set; using a temporary instance (runs will not show in the UI)")
    return dg.DagsterInstance.ephemeral()


def _default_partition() -> str:
    cfg = load_config()
    return latest_complete_partition(cfg.as_of or datetime.now(UTC).date())


def _weeks(start: str, end: str) -> list[str]:
    a = date.fromisoformat(_checked_week(start, "backfill --from"))
    b = date.fromisoformat(_checked_week(end, "backfill --to"))
    out = []
    while a <= b:
        out.append(a.isoformat())
        a += timedelta(days=7)
    return out


def _report_dir(partition: str) -> Path:
    cfg = load_config()
    w = window_for_partition(partition, days=cfg.window.days, mode=cfg.window.mode)
    return Path(cfg.output_dir) / w.window_end_date


def _root_cause(error: object) -> str:
    """The innermost error of a step failure (Dagster wraps user errors in "Error occurred while
    executing op …"), as ``Type: message``."""
    while getattr(error, "cause", None) is not None:
        error = error.cause  # type: ignore[attr-defined]
    kind = getattr(error, "cls_name", None)
    message = str(getattr(error, "message", error)).strip()
    return message if not kind or message.startswith(kind) else f"{kind}: {message}"


def _execute(job_name: str, partition: str, instance: dg.DagsterInstance) -> bool:
    from scorecard_assets.definitions import defs

    job = defs.resolve_job_def(job_name)
    level = os.environ.get("SCORECARD_LOG_LEVEL", "WARNING")  # DEBUG shows every Dagster event
    quiet = {"loggers": {"console": {"config": {"log_level": level}}}}
    result = job.execute_in_process(
        partition_key=partition, instance=instance, raise_on_error=False, run_config=quiet
    )
    failed = [e for e in result.all_events if e.is_step_failure]
    for e in failed:
        print(f"step failed: {e.step_key}: {_root_cause(e.event_specific_data.error)[:500]}", file=sys.stderr)
    checks = result.get_asset_check_evaluations()
    warn = [c for c in checks if not c.passed]
    print(
        f"{job_name} [{partition}]: {'SUCCESS' if result.success else 'FAILURE'}; "
        f"{len(checks)} checks ran, {len(warn)} reported data warnings"
    )
    return result.success


def cmd_run(args: argparse.Namespace) -> int:
    partition = _checked_week(args.partition, "--partition") if args.partition else _default_partition()
    ok = _execute("weekly_scorecard_job", partition, _instance())
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
    instance = _instance()
    failures = 0
    for key in _weeks(args.start, args.end):
        if not _execute(args.job, key, instance):
            failures += 1
        else:
            print(f"  -> {_report_dir(key)}")
    return 1 if failures else 0


def _checked_week(key: str, flag: str) -> str:
    """``key`` when it is a week of the partitions (a Monday from the first partition on), else a
    clear exit naming ``flag`` and the expected form."""
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
        raise SystemExit(f"{flag}: {key} is before the first week {first} (SCORECARD_PARTITIONS_START)")
    return key


def main(argv: list[str] | None = None) -> int:
    load_dotenv_of_cwd()  # GITHUB_TOKEN and friends, as the dagster command reads them
    parser = argparse.ArgumentParser(prog="python -m scorecard_assets.cli", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="materialize the whole graph for one week and print the report paths")
    run.add_argument("--partition", help="week key (its Monday, YYYY-MM-DD); default: latest complete week")
    run.set_defaults(func=cmd_run)
    latest = sub.add_parser("latest", help="print the default partition key")
    latest.set_defaults(func=cmd_latest)
    bf = sub.add_parser("backfill", help="render past weeks in-process (no daemon needed)")
    bf.add_argument("--from", dest="start", required=True, help="first week key (a Monday)")
    bf.add_argument("--to", dest="end", required=True, help="last week key (a Monday)")
    bf.add_argument(
        "--job", default="weekly_report_job", help="weekly_report_job (default) or weekly_scorecard_job"
    )
    bf.set_defaults(func=cmd_backfill)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
