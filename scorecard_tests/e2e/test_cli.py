"""The command line entry points: week keys checked with a clear message, ``./.env`` read as the
dagster command reads it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scorecard_assets import cli
from scorecard_assets.defs.partitions import weekly_partitions
from scorecard_assets.dotenv_file import load_dotenv_of_cwd


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
    ],
    ids=["not-a-monday", "not-a-date", "before-the-first-week", "backfill-from", "backfill-to"],
)
def test_a_bad_week_key_stops_with_a_message_not_a_traceback(
    argv: list[str], says: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no ./.env of the checkout is read into the test process
    assert weekly_partitions.get_first_partition_key() == "2026-01-05"  # the default the cases assume
    with pytest.raises(SystemExit) as stop:
        cli.main(argv)
    assert says in str(stop.value.code)


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
    assert cli._root_cause(wrapper) == "FileExistsError: [Errno 17] File exists: '/out'"
    already = SimpleNamespace(cls_name="ValueError", message="ValueError: bad", cause=None)
    assert cli._root_cause(already) == "ValueError: bad"
