"""Atomic writes and the ``<output>/<window end>/`` + ``latest/`` publishing rules."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from scorecard_assets.storage import location as publish
from scorecard_assets.storage.reports import ReportStore, should_refresh_latest, write_atomic


def names(directory: Path) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


# --------------------------------------------------------------------------------- write_atomic


def test_write_atomic_writes_bytes_and_text(tmp_path: Path) -> None:
    write_atomic(tmp_path / "a.bin", b"\x00\x01")
    write_atomic(tmp_path / "deep" / "b.md", "Généré → ok\n")
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "deep" / "b.md").read_bytes() == "Généré → ok\n".encode()
    assert names(tmp_path) == ["a.bin", "deep"]


def test_write_atomic_replaces_and_keeps_the_mode(tmp_path: Path) -> None:
    target = tmp_path / "r.md"
    write_atomic(target, "old")
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    target.chmod(0o600)
    write_atomic(target, "new")
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert names(tmp_path) == ["r.md"]


def test_a_failed_rename_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model-scorecard.md"
    write_atomic(target, "previous report")

    def crash(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(publish.os, "replace", crash)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, "half-written new report")
    assert target.read_text() == "previous report"
    assert names(tmp_path) == ["model-scorecard.md"]


def test_a_crash_mid_write_leaves_the_old_file_and_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = tmp_path / "model-scorecard.json"
    write_atomic(target, "{}\n")
    real_fsync = os.fsync
    calls: list[int] = []

    def crash_on_first_fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 1:
            raise KeyboardInterrupt  # the process is stopped between write and rename
        real_fsync(fd)

    monkeypatch.setattr(publish.os, "fsync", crash_on_first_fsync)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, '{"new": true}\n')
    assert target.read_text() == "{}\n"
    assert names(tmp_path) == ["model-scorecard.json"]


# ------------------------------------------------------------------------------- publish_report

FILES = {"model-scorecard.md": "# report\n", "model-scorecard.json": "{}\n", "chart.png": b"\x89PNG"}


def test_publish_writes_the_window_folder_and_latest(tmp_path: Path) -> None:
    paths = ReportStore(tmp_path).publish("2026-09-21", FILES)
    assert paths == {name: tmp_path / "2026-09-21" / name for name in FILES}
    assert (tmp_path / "2026-09-21" / "chart.png").read_bytes() == b"\x89PNG"
    assert names(tmp_path / "latest") == sorted([*FILES, "WINDOW"])
    assert (tmp_path / "latest" / "model-scorecard.md").read_text() == "# report\n"
    assert ReportStore(tmp_path).latest_window() == "2026-09-21"
    assert (tmp_path / "latest" / "WINDOW").read_text() == "2026-09-21\n"


def test_a_backfill_of_an_older_week_leaves_latest_alone(tmp_path: Path) -> None:
    ReportStore(tmp_path).publish("2026-09-21", FILES)
    ReportStore(tmp_path).publish("2026-09-14", {"model-scorecard.md": "# older\n"})
    assert (tmp_path / "2026-09-14" / "model-scorecard.md").read_text() == "# older\n"
    assert (tmp_path / "latest" / "model-scorecard.md").read_text() == "# report\n"
    assert ReportStore(tmp_path).latest_window() == "2026-09-21"
    assert names(tmp_path / "latest") == sorted([*FILES, "WINDOW"])


def test_the_same_or_a_newer_window_refreshes_latest_and_drops_stale_files(tmp_path: Path) -> None:
    ReportStore(tmp_path).publish("2026-09-21", FILES)
    ReportStore(tmp_path).publish("2026-09-21", {**FILES, "model-scorecard.md": "# rerun\n"})
    assert (tmp_path / "latest" / "model-scorecard.md").read_text() == "# rerun\n"
    ReportStore(tmp_path).publish(
        "2026-09-28", {"model-scorecard.md": "# next\n", "digest.txt": "six lines\n"}
    )
    assert names(tmp_path / "latest") == ["WINDOW", "digest.txt", "model-scorecard.md"]
    assert ReportStore(tmp_path).latest_window() == "2026-09-28"
    assert names(tmp_path / "2026-09-21") == sorted(FILES)  # window folders are never pruned


def test_an_unreadable_window_marker_counts_as_no_latest(tmp_path: Path) -> None:
    (tmp_path / "latest").mkdir()
    (tmp_path / "latest" / "WINDOW").write_text("last tuesday\n")
    assert ReportStore(tmp_path).latest_window() is None
    ReportStore(tmp_path).publish("2026-01-05", FILES)
    assert ReportStore(tmp_path).latest_window() == "2026-01-05"


def test_should_refresh_latest() -> None:
    assert should_refresh_latest(None, "2026-09-14")
    assert should_refresh_latest("2026-09-14", "2026-09-14")
    assert should_refresh_latest("2026-09-14", "2026-09-21")
    assert not should_refresh_latest("2026-09-21", "2026-09-14")


@pytest.mark.parametrize("window", ["2026-9-1", "../etc", "2026-13-01", "latest", ""])
def test_a_bad_window_raises_before_writing(tmp_path: Path, window: str) -> None:
    with pytest.raises(ValueError, match="window_end"):
        ReportStore(tmp_path).publish(window, FILES)
    assert names(tmp_path) == []


@pytest.mark.parametrize("name", ["../escape.md", "sub/dir.md", ".hidden", "WINDOW", ""])
def test_a_bad_file_name_raises_before_writing(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="plain names"):
        ReportStore(tmp_path).publish("2026-09-21", {"ok.md": "x", name: "y"})
    assert names(tmp_path) == []


def test_a_failure_while_publishing_keeps_the_previous_latest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ReportStore(tmp_path).publish("2026-09-21", FILES)
    real_replace = os.replace

    def fail_inside_latest(src: str, dst: str) -> None:
        if Path(dst).parent.name == "latest":
            raise OSError(5, "I/O error")
        real_replace(src, dst)

    monkeypatch.setattr(publish.os, "replace", fail_inside_latest)
    with pytest.raises(OSError):
        ReportStore(tmp_path).publish("2026-09-28", {"model-scorecard.md": "# next\n"})
    assert (tmp_path / "2026-09-28" / "model-scorecard.md").read_text() == "# next\n"
    assert (tmp_path / "latest" / "model-scorecard.md").read_text() == "# report\n"
    assert ReportStore(tmp_path).latest_window() == "2026-09-21"
    assert names(tmp_path / "latest") == sorted([*FILES, "WINDOW"])  # no temp files left behind


# ------------------------------------------------------------------------- the empty-window guard


def published(tmp_path: Path, window_end: str, text: str) -> Path:
    (tmp_path / window_end).mkdir(parents=True, exist_ok=True)
    path = tmp_path / window_end / "model-scorecard.json"
    path.write_text(text, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"grandTotal": {"n": 133, "delivered": 95}}', 133),
        ('{"grandTotal": {"n": 0}}', 0),
        ('{"grandTotal": {"n": "133"}}', None),  # not a count
        ('{"grandTotal": {"n": true}}', None),
        ('{"grandTotal": {"n": -1}}', None),
        ('{"grandTotal": null}', None),
        ("[1, 2]", None),
        ('{"grandTotal": {"n": 13', None),  # cut short
        ("\udcff", None),
    ],
    ids=["count", "zero", "string", "bool", "negative", "null", "array", "truncated", "undecodable"],
)
def test_published_issue_rows_reads_the_grand_total_or_nothing(
    tmp_path: Path, text: str, expected: int | None
) -> None:
    if text == "\udcff":
        (tmp_path / "2026-11-22").mkdir()
        (tmp_path / "2026-11-22" / "model-scorecard.json").write_bytes(b"\xff\xfe{")
        root = tmp_path
    else:
        root = published(tmp_path, "2026-11-22", text)
    assert ReportStore(root).published_issue_rows("2026-11-22") == expected


def test_published_issue_rows_without_a_report_or_with_a_bad_window(tmp_path: Path) -> None:
    assert ReportStore(tmp_path).published_issue_rows("2026-11-22") is None
    published(tmp_path, "2026-11-22", '{"grandTotal": {"n": 5}}')
    assert ReportStore(tmp_path).published_issue_rows("../2026-11-22") is None


# ------------------------------------------------------------------------ killed publishes (issue 15)

_KILLED_PUBLISH = """
import os, signal, sys
from scorecard_assets.storage import location
from scorecard_assets.storage.reports import ReportStore

def killed(src, dst):  # SIGKILL between writing the temporary file and renaming it
    os.kill(os.getpid(), signal.SIGKILL)

location.os.replace = killed
ReportStore(sys.argv[1]).publish("2026-08-09", {"model-scorecard.md": "# killed\\n"})
"""


def test_a_killed_publish_leaves_a_temp_file_that_the_next_publish_removes(tmp_path: Path) -> None:
    import subprocess
    import sys
    from datetime import UTC, datetime

    out = tmp_path / "reports"
    ReportStore(out).publish("2026-08-09", FILES)
    for _ in range(2):
        child = subprocess.run([sys.executable, "-c", _KILLED_PUBLISH, str(out)], check=False)
        assert child.returncode == -9
    left = [p.name for p in (out / "2026-08-09").iterdir() if p.name.endswith(".tmp")]
    # the second killed publish removed the first one's file before it was killed in turn
    assert len(left) == 1 and left[0].startswith(".model-scorecard.md.")
    (out / "2026-08-09" / ".notes.tmp").write_text("not ours")  # not our pattern: kept
    ReportStore(out).publish("2026-08-16", FILES, run_started=datetime.now(UTC))
    assert names(out / "2026-08-09") == sorted([*FILES, ".notes.tmp"])
    assert (out / "2026-08-09" / "model-scorecard.md").read_text() == "# report\n"


def test_only_temporaries_older_than_the_run_start_are_removed(tmp_path: Path) -> None:
    from datetime import UTC, datetime, timedelta

    out = tmp_path / "reports"
    ReportStore(out).publish("2026-08-09", FILES)
    old = out / "latest" / ".model-scorecard.md.abcd1234.tmp"
    young = out / "2026-08-09" / ".model-scorecard.json.zz_9yx8w.tmp"
    for path in (old, young):
        path.write_text("partial")
    start = datetime.now(UTC)
    os.utime(old, (start.timestamp() - 60, start.timestamp() - 60))
    os.utime(young, (start.timestamp() + 5, start.timestamp() + 5))  # a publish still running
    removed = ReportStore(out).remove_stale_temporaries(start)
    assert removed == ["latest/.model-scorecard.md.abcd1234.tmp"]
    assert young.exists() and not old.exists()
    assert ReportStore(out).remove_stale_temporaries(start + timedelta(seconds=10)) == [
        "2026-08-09/.model-scorecard.json.zz_9yx8w.tmp"
    ]


def test_stale_temporaries_are_removed_from_an_object_store_too() -> None:
    from datetime import UTC, datetime, timedelta

    from upath import UPath

    store = ReportStore("memory://reports-killed/reports")
    store.publish("2026-08-09", FILES)
    stray = UPath("memory://reports-killed/reports/2026-08-09/.chart.png.q1w2e3r4.tmp")
    stray.write_bytes(b"half")
    other = UPath("memory://reports-killed/reports/2026-08-09/keep.tmp")
    other.write_bytes(b"someone else's")
    # on an object store a publish cleans the location, latest/ and the window it publishes again
    store.publish("2026-08-09", FILES, run_started=datetime.now(UTC) + timedelta(seconds=1))
    assert not stray.exists() and other.exists()
    assert store.file("2026-08-09", "chart.png") == b"\x89PNG"
