"""The benchmark harness's own logic: targets, Dagster log parsing, per-child memory, the table.

No timing assertions: only what the harness computes from given inputs, and that a child's peak
RSS is that child's own (not the high-water mark of every child so far).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from bench.bench_github import export_problem
from bench.run import (
    STEP_NAMES,
    Harness,
    Row,
    Target,
    _pages,
    _selected,
    dagster_step_seconds,
    parse_duration,
    render_table,
)

# ----------------------------------------------------------------------------------------- targets


def test_at_most_target_is_inclusive_at_the_limit() -> None:
    target = Target(15.0, True, " s")
    assert target.verdict(14.99) == "PASS"
    assert target.verdict(15.0) == "PASS"
    assert target.verdict(15.01) == "MISS"


def test_at_least_target_is_inclusive_at_the_limit() -> None:
    target = Target(200_000, False, " lines/s")
    assert target.verdict(200_000) == "PASS"
    assert target.verdict(199_999) == "MISS"
    assert target.text == "≥ 200,000 lines/s"


def test_unmeasured_value_is_neither_pass_nor_miss() -> None:
    target = Target(3, True, " req")
    assert target.verdict(None) == "?"
    assert target.verdict(math.nan) == "?"


def test_target_shown_for_information_on_sizes_it_does_not_bind() -> None:
    row = Row(step="x").check(Target(60, True, " s"), 75.0, "75.0 s", held=False)
    assert row.verdict == "info"
    assert row.target == "(≤ 60 s: fleet M)"
    assert row.measured == "75.0 s"


def test_information_row_names_what_the_target_was_set_for() -> None:
    row = Row(step="x").check(Target(200, False, " MB/s"), 90.0, "90", held=False, scope="Claude stream-json")
    assert (row.target, row.verdict) == ("(≥ 200 MB/s: Claude stream-json)", "info")


def test_cold_sync_page_counts_round_up() -> None:
    # ⌈I/100⌉ per listing; an empty listing still costs its one request.
    assert _pages(0) == 1
    assert _pages(100) == 1
    assert _pages(101) == 2
    assert _pages(250) == 3


# ------------------------------------------------------------------------------ Dagster log lines


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("838ms", 0.838),
        ("1.03s", 1.03),
        ("1m 5s", 65.0),
        ("2m32s", 152.0),  # Dagster writes minutes and seconds without a space
        ("1h2m3.5s", 3723.5),
        ("2h", 7200.0),
        ("12s", 12.0),
    ],
)
def test_parse_duration_reads_dagster_formats(text: str, seconds: float) -> None:
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "soon", "ms", "1.2.3s", "5 apples", "3s later"])
def test_parse_duration_refuses_unreadable_text(text: str) -> None:
    assert parse_duration(text) is None


def _log_line(step: str, duration: str) -> str:
    return (
        "2026-11-30 11:20:30 +0000 - dagster - DEBUG - weekly_report_job - 44f4 - 3845 - "
        f'{step} - STEP_SUCCESS - Finished execution of step "{step}" in {duration}.'
    )


def test_step_seconds_are_summed_per_step_with_their_count() -> None:
    log = "\n".join(
        [
            _log_line("model_scorecard", "227ms"),
            _log_line("scorecard_report", "1.03s"),
            _log_line("model_scorecard", "1.5s"),
            '2026-11-30 - dagster - DEBUG - STEP_START - Started execution of step "cycles".',
            _log_line("cycles", "soon"),
        ]
    )
    got = dagster_step_seconds(log)
    assert set(got) == {"model_scorecard", "scorecard_report"}
    count, total = got["model_scorecard"]
    assert count == 2
    assert total == pytest.approx(0.227 + 1.5)
    assert got["scorecard_report"] == (1, pytest.approx(1.03))


# ------------------------------------------------------------------------------- child processes


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_each_child_reports_its_own_peak_not_the_largest_so_far(tmp_path: Path) -> None:
    harness = Harness(tmp_path, None)
    big = harness.run("big", _python("b = b'x' * (300 * 1024 * 1024)"))
    small = harness.run("small", _python("pass"))
    assert big.ok and small.ok
    assert big.peak_rss_mb >= 300
    # RUSAGE_CHILDREN of the harness would still say >= 300 MB here.
    assert small.peak_rss_mb < 100


def test_child_peak_leaves_out_the_harness_own_memory(tmp_path: Path) -> None:
    # A process that execs keeps the RSS high-water mark of the memory it replaces: without the
    # launcher, a child of a harness holding 400 MB would report at least 400 MB.
    harness = Harness(tmp_path, None)
    ballast = b"x" * (400 * 1024 * 1024)
    small = harness.run("small", _python("pass"))
    assert len(ballast) > 0
    assert small.ok
    assert small.peak_rss_mb < 100


def test_a_signalled_child_reports_128_plus_the_signal(tmp_path: Path) -> None:
    harness = Harness(tmp_path, None)
    child = harness.run("term", _python("import os, signal; os.kill(os.getpid(), signal.SIGTERM)"))
    assert child.returncode == 128 + 15


def test_child_exit_code_and_output_are_kept(tmp_path: Path) -> None:
    harness = Harness(tmp_path, None)
    child = harness.run(
        "fails", _python("import sys; print('out'); print('why', file=sys.stderr); sys.exit(3)")
    )
    assert child.returncode == 3
    assert not child.ok
    assert child.stdout().strip() == "out"
    assert "why" in child.failure()


def test_profile_mode_wraps_the_module_in_cprofile(tmp_path: Path) -> None:
    harness = Harness(tmp_path / "work", tmp_path / "prof")
    argv = harness.python("S-readers", "bench.run", "--child", "readers")
    assert argv[1:5] == ["-m", "cProfile", "-o", str(tmp_path / "prof" / "S-readers.prof")]
    assert argv[5:8] == ["-m", "bench.run", "--child"]


# ------------------------------------------------------------------------------ selection, table


def test_only_keeps_the_harness_order_and_refuses_unknown_names() -> None:
    assert _selected(["sample", "readers"]) == ["readers", "sample"]
    assert _selected(None) == list(STEP_NAMES)
    with pytest.raises(SystemExit, match="nonsense"):
        _selected(["readers", "nonsense"])


def test_table_lines_are_aligned_and_carry_the_verdict() -> None:
    rows = [
        Row(step="readers: runs.jsonl", seconds=0.1234, peak_mb=12.0, memory="py").check(
            Target(200_000, False, " lines/s"), 150_000, "150,000"
        ),
        Row(step="github warm: acme/api", requests=2).check(Target(3, True, " req"), 2, "2"),
    ]
    text = render_table("M", rows)
    lines = text.splitlines()
    table = lines[2:]
    assert lines[0] == "### M"
    assert len({len(line) for line in table}) == 1
    assert "MISS" in table[2] and "150,000" in table[2]
    assert "PASS" in table[3] and "| 2 " in table[3]


# -------------------------------------------------------------------------- bench_github exports


def test_export_problem_names_a_saved_error_reply(tmp_path: Path) -> None:
    (tmp_path / "issues.json").write_text('{"message": "API rate limit exceeded", "status": "403"}')
    (tmp_path / "comments.json").write_text("[]")
    assert export_problem(tmp_path) == "issues.json holds a JSON dict, not a list"


def test_export_problem_names_unparsable_and_missing_files(tmp_path: Path) -> None:
    (tmp_path / "issues.json").write_text("[]")
    (tmp_path / "comments.json").write_text("[{")
    problem = export_problem(tmp_path)
    assert problem is not None and problem.startswith("comments.json: ")
    (tmp_path / "comments.json").unlink()
    problem = export_problem(tmp_path)
    assert problem is not None and problem.startswith("comments.json: ")


def test_export_problem_accepts_two_lists(tmp_path: Path) -> None:
    (tmp_path / "issues.json").write_text("[]")
    (tmp_path / "comments.json").write_text('[{"id": 1}]')
    assert export_problem(tmp_path) is None
