"""The ``scorecard`` command: week keys and ranges checked with a one-line message and a non-zero
exit, ``./.env`` read as the dagster command reads it, every command's help, the ``python -m``
aliases, progress lines and summaries."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from scorecard_assets import cli
from scorecard_assets.defs.partitions import weekly_partitions
from scorecard_assets.dotenv_file import load_dotenv_of_cwd
from scorecard_assets.progress import Progress
from scorecard_assets.storage.run_failures import root_cause


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (
            ["run", "--partition", "2026-11-17"],
            "2026-11-17 is a Tuesday; weeks are keyed by their Monday (2026-11-16)",
        ),
        (["run", "--partition", "next week"], "'next week' is not a date"),
        (["run", "--partition", "2025-01-06"], "2025-01-06 is before the first week 2026-01-05"),
        (
            ["backfill", "--from", "2026-10-06", "--to", "2026-11-16"],
            "backfill --from: 2026-10-06 is a Tuesday",
        ),
        (["backfill", "--from", "2026-10-05", "--to", "2026-11-22"], "backfill --to: 2026-11-22 is a Sunday"),
        (
            # the sample's as_of is 2026-11-23: its last covered week is 2026-11-16
            ["run", "--partition", "2026-11-23"],
            "--partition: week 2026-11-23 ends after the config's as_of (2026-11-23); "
            "the last week it covers is 2026-11-16",
        ),
        (["run", "--partition", "2099-01-05"], "--partition: week 2099-01-05 is not over yet"),
        (
            ["backfill", "--from", "2026-11-02", "--to", "2099-01-05"],
            "backfill --to: week 2099-01-05 is not over",
        ),
        (
            ["backfill", "--from", "2026-11-16", "--to", "2026-11-02"],
            "backfill: --from 2026-11-16 is after --to 2026-11-02",
        ),
    ],
    ids=[
        "not-a-monday",
        "not-a-date",
        "before-the-first-week",
        "backfill-from",
        "backfill-to",
        "past-as-of",
        "future-week",
        "backfill-past-the-last-week",
        "reversed-range",
    ],
)
def test_a_bad_week_key_stops_with_a_message_not_a_traceback(
    argv: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./.env of the checkout is read into the test process
    assert weekly_partitions.get_first_partition_key() == "2026-01-05"  # the default the cases assume
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    message = str(stop.value.code)
    assert says in message
    assert "\n" not in message, "one line, no traceback"


def test_a_good_week_key_passes_the_check() -> None:
    assert cli._checked_week("2026-11-16", "--partition") == "2026-11-16"
    assert cli._weeks("2026-11-02", "2026-11-16") == ["2026-11-02", "2026-11-09", "2026-11-16"]


def test_dotenv_of_the_working_directory_fills_unset_variables_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("SC_TEST_DOTENV_TOKEN=from-file\nSC_TEST_DOTENV_SET=from-file\n")
    monkeypatch.delenv("SC_TEST_DOTENV_TOKEN", raising=False)
    monkeypatch.setenv("SC_TEST_DOTENV_SET", "from-shell")
    monkeypatch.chdir(tmp_path)
    try:
        assert load_dotenv_of_cwd() == tmp_path / ".env"
        assert os.environ["SC_TEST_DOTENV_TOKEN"] == "from-file"
        assert os.environ["SC_TEST_DOTENV_SET"] == "from-shell"  # the environment wins, as with dagster
    finally:
        os.environ.pop("SC_TEST_DOTENV_TOKEN", None)


def test_no_dotenv_file_is_fine(tmp_path: Path) -> None:
    assert load_dotenv_of_cwd(tmp_path) is None


def test_the_cli_reads_the_dotenv_before_anything_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / ".env").write_text("SC_TEST_DOTENV_CLI=1\n")
    monkeypatch.delenv("SC_TEST_DOTENV_CLI", raising=False)
    monkeypatch.chdir(tmp_path)
    try:
        with pytest.raises(SystemExit):
            cli.main(["run", "--partition", "not-a-week"])
        assert os.environ.get("SC_TEST_DOTENV_CLI") == "1"
    finally:
        os.environ.pop("SC_TEST_DOTENV_CLI", None)


def test_a_step_failure_is_reported_by_its_root_cause() -> None:
    from types import SimpleNamespace

    inner = SimpleNamespace(
        cls_name="FileExistsError", message="[Errno 17] File exists: '/out'\n", cause=None
    )
    wrapper = SimpleNamespace(
        cls_name="DagsterExecutionStepExecutionError", message="Error occurred", cause=inner
    )
    assert root_cause(wrapper) == "FileExistsError: [Errno 17] File exists: '/out'"
    already = SimpleNamespace(cls_name="ValueError", message="ValueError: bad", cause=None)
    assert root_cause(already) == "ValueError: bad"


def test_a_week_past_as_of_is_never_the_default(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    default = cli._default_partition()
    assert cli._checked_week(default, "--partition") == default  # the default passes every check


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["run"],
        ["latest"],
        ["backfill"],
        ["github"],
        ["github", "sync"],
        ["github", "export"],
        ["pairings"],
        ["pairings", "verify"],
        ["sessions"],
        ["sessions", "export"],
    ],
    ids=lambda a: " ".join(a) or "scorecard",
)
def test_every_command_explains_itself(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        cli.main([*argv, "--help"])
    assert stop.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: scorecard {' '.join(argv)}".rstrip())
    assert len(out.splitlines()) > 4, "a description, not just the usage line"


def test_every_registered_group_is_a_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    listed = capsys.readouterr().out
    for name, _module, summary in cli.COMMAND_GROUPS:
        assert name in listed and summary.split(";")[0] in listed


def test_python_m_forms_are_aliases_of_the_groups(capsys: pytest.CaptureFixture[str]) -> None:
    from scorecard_assets.github.__main__ import main as github_main
    from scorecard_assets.pairings.__main__ import main as pairings_main
    from scorecard_assets.sessions.__main__ import main as sessions_main

    for alias, group in ((github_main, "github"), (pairings_main, "pairings"), (sessions_main, "sessions")):
        with pytest.raises(SystemExit) as stop:
            alias(["--help"])
        assert stop.value.code == 0
        assert capsys.readouterr().out.startswith(f"usage: scorecard {group}")


def test_progress_off_a_terminal_is_one_plain_line_per_item_and_a_summary() -> None:
    import io

    stream = io.StringIO()
    progress = Progress(total=3, unit="week", what="backfill", stream=stream)
    assert progress.bar is False
    progress.finish("2026-11-02", seconds=2.0)
    progress.finish("2026-11-09", ok=False, note="guard refused", seconds=1.0)
    progress.finish("2026-11-16", seconds=4.0)
    assert stream.getvalue().splitlines() == [
        "[1/3] 2026-11-02 ok 2.0 s",
        "[2/3] 2026-11-09 FAILED 1.0 s — guard refused",
        "[3/3] 2026-11-16 ok 4.0 s",
    ]
    summary = progress.summary()
    assert summary.startswith("backfill: 3 weeks in ")
    assert ", 1 failed (2026-11-09); slowest: 2026-11-16 4.0 s, 2026-11-02 2.0 s, 2026-11-09 1.0 s" in summary


def test_progress_on_a_terminal_draws_a_bar_not_lines() -> None:
    import io

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    progress = Progress(total=2, unit="repo", what="github sync", stream=stream)
    assert progress.bar is True
    progress.start("acme/api")
    progress.finish("acme/api")
    progress.close()
    assert "[1/2]" not in stream.getvalue() and "github sync" in stream.getvalue()


def test_an_as_of_in_the_future_never_picks_a_week_the_partitions_lack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import date
    from types import SimpleNamespace

    monkeypatch.setattr(cli, "load_config", lambda: SimpleNamespace(as_of=date(2099, 1, 7)))
    assert cli._default_partition() == weekly_partitions.get_last_partition_key()
    monkeypatch.setattr(cli, "load_config", lambda: SimpleNamespace(as_of=date(2026, 11, 23)))
    assert cli._default_partition() == "2026-11-16"


def test_run_force_reaches_the_guard_as_run_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``scorecard run --force`` passes ``force`` to model_scorecard (docs/reliability.md "The publish guard")."""
    seen: list[bool] = []
    monkeypatch.setattr(
        cli, "_execute", lambda job, key, instance, **kw: seen.append(kw.get("force")) or False
    )
    monkeypatch.setattr(cli, "_report_dir", lambda key: tmp_path / "none")
    for argv, forced in (
        (["run", "--partition", "2026-11-16", "--force"], True),
        (["run", "--partition", "2026-11-16"], False),
    ):
        args = cli.build_parser().parse_args(argv)
        args.func(args)
        assert seen[-1] is forced


@pytest.mark.parametrize("range_ok", [True, False])
def test_a_backfill_runs_the_range_once_and_week_by_week_only_when_that_run_fails(
    range_ok: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    calls: list[tuple[str, str | None]] = []

    def execute(job: str, partition: str, instance: object, *, last: str | None = None, **_: object) -> bool:
        calls.append((partition, last))
        return range_ok if last is not None else partition != "2026-11-09"

    @contextlib.contextmanager
    def no_instance() -> Iterator[None]:
        yield None

    monkeypatch.setattr(cli, "_execute", execute)
    monkeypatch.setattr(cli, "_instance", no_instance)
    code = cli.main(["backfill", "--from", "2026-11-02", "--to", "2026-11-16"])
    out, err = capsys.readouterr()
    if range_ok:
        assert (code, calls) == (0, [("2026-11-02", "2026-11-16")])
        assert out.count("  -> ") == 3
    else:
        assert calls == [
            ("2026-11-02", "2026-11-16"),
            *((w, None) for w in ("2026-11-02", "2026-11-09", "2026-11-16")),
        ]
        assert code == 1 and out.count("  -> ") == 2
        assert "running the 3 weeks one at a time" in err


def test_a_per_week_backfill_never_runs_the_range(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str | None] = []
    monkeypatch.setattr(cli, "_execute", lambda job, p, i, *, last=None, **_: calls.append(last) or True)
    monkeypatch.setattr(cli, "_instance", contextlib.nullcontext)
    assert cli.main(["backfill", "--from", "2026-11-02", "--to", "2026-11-16", "--per-week"]) == 0
    assert calls == [None, None, None]
