"""``runs.jsonl`` of every host -> the run_telemetry frame (docs/sources.md "runs.jsonl")."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.config import HostConfig
from scorecard_assets.records import WARNING_CODES, DataWarning
from scorecard_assets.schemas import RUN_TELEMETRY, contract_problems
from scorecard_assets.sources.runs_jsonl import issue_of_unit, read_run_telemetry
from scorecard_tests.fakes.files import FailsAfterFirstBlock, fifo_never_opened, needs_mkfifo

# Three lines in the shapes runs.jsonl really has (a scheduler cycle, a report agent, a CLI run).
SPEC_LINES = [
    '{"timestamp":"2026-09-01T15:10:02.114Z","dossier":"sched:cycle","resolved_version":"n/a","source":"local",'
    '"verification":"skipped","llm":"claude","user":"sched","cwd":"/home/u/projects/ai-dossier/main","nested":false,'
    '"duration_ms":600000,"spawned_command":"claude -p --output-format stream-json --verbose --model sonnet",'
    '"model":"claude-sonnet-5","exit_code":null,"spawn_error":null,"input_tokens":262,"output_tokens":48049,'
    '"cache_creation_tokens":244886,"cache_read_tokens":13378921,"total_cost_usd":4.173,"unit":"issue:540",'
    '"tier":"mid"}',
    '{"timestamp":"2026-08-30T01:22:06.918Z","dossier":"sched:report","resolved_version":"n/a","source":"local",'
    '"verification":"skipped","llm":"claude","user":"sched","cwd":"/home/u/imboard/main","nested":false,'
    '"duration_ms":120000,"spawned_command":"claude -p --output-format json --model haiku","model":"haiku",'
    '"exit_code":null,"spawn_error":null,"input_tokens":null,"output_tokens":null,"cache_creation_tokens":null,'
    '"cache_read_tokens":null,"total_cost_usd":null,"unit":"issue:3891","tier":"mechanical"}',
    '{"timestamp":"2026-09-10T09:00:00Z","dossier":"imboard-ai/git/full-cycle-issue","resolved_version":"3.8.0",'
    '"source":"registry","verification":"passed","llm":"claude-code","user":"yuval","cwd":"/home/u/x",'
    '"nested":false,"duration_ms":5400,"input_tokens":10,"output_tokens":20,"total_cost_usd":0.01}',
]


def host(
    tmp_path: Path, name: str, lines: list[str] | bytes | None, *, trailing_newline: bool = True
) -> HostConfig:
    """A dossier home holding ``runs.jsonl`` (``None`` = the file is absent)."""
    home = tmp_path / name
    home.mkdir(parents=True, exist_ok=True)
    if isinstance(lines, bytes):
        (home / "runs.jsonl").write_bytes(lines)
    elif lines is not None:
        text = "\n".join(lines) + ("\n" if trailing_newline else "")
        (home / "runs.jsonl").write_text(text, encoding="utf-8")
    return HostConfig(name=name, dossier_home=home)


def entry(**fields: object) -> str:
    base: dict[str, object] = {"timestamp": "2026-09-01T00:00:00Z", "unit": "issue:1"}
    base.update(fields)
    return json.dumps(base)


def codes(warnings: list[DataWarning]) -> list[str]:
    return [w.code for w in warnings]


def only(warnings: list[DataWarning], code: str) -> list[DataWarning]:
    return [w for w in warnings if w.code == code]


# --- the documented example lines ---


def test_spec_examples_become_rows_with_their_values(tmp_path: Path) -> None:
    h = host(tmp_path, "h1", SPEC_LINES)
    result = read_run_telemetry([h])
    df = result.frame
    assert contract_problems(df, RUN_TELEMETRY) == []
    assert len(df) == 3
    first, second, third = (df.iloc[i] for i in range(3))
    assert first["host"] == "h1" and first["line_no"] == 1
    assert first["source_file"] == str(h.dossier_home / "runs.jsonl")
    assert first["timestamp"] == pd.Timestamp("2026-09-01T15:10:02.114Z")
    assert first["issue"] == 540 and first["tier"] == "mid" and first["model"] == "claude-sonnet-5"
    assert first["cwd"] == "/home/u/projects/ai-dossier/main" and first["dossier"] == "sched:cycle"
    assert first["spawned_command"] == "claude -p --output-format stream-json --verbose --model sonnet"
    assert (first["input_tokens"], first["output_tokens"]) == (262.0, 48049.0)
    assert (first["cache_creation_tokens"], first["cache_read_tokens"]) == (244886.0, 13378921.0)
    assert first["total_cost_usd"] == pytest.approx(4.173) and first["duration_ms"] == 600000.0
    assert (
        pd.isna(first["provider"]) and pd.isna(first["reasoning_tokens"]) and pd.isna(first["cost_available"])
    )
    # nulls stay "not reported", never a fabricated 0
    assert second["issue"] == 3891 and second["tier"] == "mechanical"
    for col in (
        "input_tokens",
        "output_tokens",
        "cache_creation_tokens",
        "cache_read_tokens",
        "total_cost_usd",
    ):
        assert math.isnan(second[col])
    # no unit: kept, but not an issue row
    assert pd.isna(third["unit"]) and pd.isna(third["issue"])
    assert third["duration_ms"] == 5400.0 and third["total_cost_usd"] == pytest.approx(0.01)
    assert result.warnings == []
    (stat,) = result.sources
    assert (stat.source, stat.host, stat.files, stat.rows, stat.malformed) == ("runs.jsonl", "h1", 1, 3, 0)
    assert stat.cost_usd == pytest.approx(4.173 + 0.01)
    assert result.extra["lines"] == 3


def test_newer_fields_provider_reasoning_and_cost_available(tmp_path: Path) -> None:
    lines = [
        entry(provider="opencode", reasoning_tokens=12, cost_available=False, total_cost_usd=0),
        entry(cost_available=True),
    ]
    df = read_run_telemetry([host(tmp_path, "h", lines)]).frame
    assert df["provider"].iloc[0] == "opencode"
    assert df["reasoning_tokens"].iloc[0] == 12.0
    assert df["cost_available"].tolist() == [False, True]
    assert df["total_cost_usd"].iloc[0] == 0.0  # a reported zero stays zero


# --- unit -> issue ---


@pytest.mark.parametrize(
    ("unit", "issue"),
    [
        ("issue:540", 540),
        ("issue:007", 7),
        ("batch:b-20260901-02", None),
        ("issue:", None),
        ("issue:12 ", None),
        (" issue:12", None),
        ("issue:12\n", None),
        ("ISSUE:12", None),
        ("issue:-3", None),
        ("issue:1.5", None),
        ("issue:\u0663", None),  # an Arabic-Indic digit is not an ASCII digit
        ("issue:12:3", None),
    ],
)
def test_only_units_of_the_exact_form_issue_n_give_an_issue(unit: str, issue: int | None) -> None:
    assert issue_of_unit(unit) == (issue, False)


def test_issue_numbers_beyond_int64_are_reported_not_kept(tmp_path: Path) -> None:
    huge = "issue:" + "9" * 30
    result = read_run_telemetry([host(tmp_path, "h", [entry(unit=huge), entry(unit="issue:9")])])
    assert pd.isna(result.frame["issue"].iloc[0]) and result.frame["issue"].iloc[1] == 9
    (w,) = only(result.warnings, "malformed_line")
    assert w.line == 1 and w.values["field"] == "unit"


def test_issue_column_is_nullable_int(tmp_path: Path) -> None:
    df = read_run_telemetry([host(tmp_path, "h", [entry(unit="issue:5"), entry(unit="batch:x")])]).frame
    assert str(df["issue"].dtype) == "Int64"
    assert df["issue"].iloc[0] == 5 and df["issue"].isna().iloc[1]


# --- numeric field rules ---


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("input_tokens", -1),
        ("output_tokens", 1e15 + 1e6),
        ("cache_read_tokens", "123"),
        ("cache_creation_tokens", True),
        ("reasoning_tokens", [1]),
        ("total_cost_usd", 1_000_001),
        ("total_cost_usd", -0.5),
        ("total_cost_usd", "4.17"),
        ("duration_ms", 1e12 + 1),
        ("duration_ms", {"ms": 5}),
    ],
)
def test_bad_numbers_become_nan_with_an_out_of_range_warning(
    tmp_path: Path, field: str, value: object
) -> None:
    result = read_run_telemetry([host(tmp_path, "h", [entry(output_tokens=5), entry(**{field: value})])])
    df = result.frame
    assert len(df) == 2  # the line still counts
    assert math.isnan(df[field].iloc[1])
    assert df["issue"].iloc[1] == 1
    (w,) = only(result.warnings, "out_of_range_value")
    assert (w.line, w.host, w.values["field"]) == (2, "h", field)
    assert w.path is not None and w.path.endswith("runs.jsonl")
    assert field in w.message and "runs.jsonl line 2" in w.message
    assert w.values["value"] == json.dumps(value, separators=(",", ":"))


@pytest.mark.parametrize(
    ("field", "value"),
    [("input_tokens", 1e15), ("total_cost_usd", 1e6), ("duration_ms", 1e12), ("output_tokens", 0)],
)
def test_limits_are_inclusive(tmp_path: Path, field: str, value: float) -> None:
    result = read_run_telemetry([host(tmp_path, "h", [entry(**{field: value})])])
    assert result.frame[field].iloc[0] == value
    assert only(result.warnings, "out_of_range_value") == []


def test_a_number_beyond_double_range_is_rejected_as_a_field_not_as_the_line(tmp_path: Path) -> None:
    line = '{"timestamp":"2026-09-01T00:00:00Z","unit":"issue:4","input_tokens":1e400,"output_tokens":3}'
    result = read_run_telemetry([host(tmp_path, "h", [line])])
    df = result.frame
    assert len(df) == 1 and math.isnan(df["input_tokens"].iloc[0]) and df["output_tokens"].iloc[0] == 3.0
    (w,) = only(result.warnings, "out_of_range_value")
    assert w.values["value"] == "Infinity"


def test_text_fields_of_another_type_are_dropped_and_reported(tmp_path: Path) -> None:
    result = read_run_telemetry([host(tmp_path, "h", [entry(model=42, tier=["mid"], unit=7)])])
    row = result.frame.iloc[0]
    assert pd.isna(row["model"]) and pd.isna(row["tier"]) and pd.isna(row["unit"]) and pd.isna(row["issue"])
    fields = sorted(w.values["field"] for w in only(result.warnings, "malformed_line"))
    assert fields == ["model", "tier", "unit"]


def test_cost_available_must_be_a_boolean(tmp_path: Path) -> None:
    result = read_run_telemetry([host(tmp_path, "h", [entry(cost_available="yes")])])
    assert pd.isna(result.frame["cost_available"].iloc[0])
    (w,) = only(result.warnings, "malformed_line")
    assert w.values["field"] == "cost_available"


# --- timestamps ---


def test_timestamps_are_utc_and_offsets_are_converted(tmp_path: Path) -> None:
    lines = [entry(timestamp="2026-09-01T15:10:02.114Z"), entry(timestamp="2026-09-01T17:10:02+02:00")]
    df = read_run_telemetry([host(tmp_path, "h", lines)]).frame
    assert str(df["timestamp"].dt.tz) == "UTC"
    assert df["timestamp"].iloc[1] == pd.Timestamp("2026-09-01T15:10:02Z")


def test_bad_or_missing_timestamps_become_nat_and_are_counted(tmp_path: Path) -> None:
    lines = [
        entry(timestamp="last tuesday"),
        entry(timestamp=1788000000),
        json.dumps({"unit": "issue:3"}),
        entry(),
    ]
    result = read_run_telemetry([host(tmp_path, "h", lines)])
    df = result.frame
    assert len(df) == 4
    assert df["timestamp"].isna().tolist() == [True, True, True, False]
    bad = only(result.warnings, "malformed_line")
    assert [w.line for w in bad] == [1, 2, 3]
    assert all(w.values["field"] == "timestamp" for w in bad)
    assert "last tuesday" in bad[0].message


# --- bad lines ---


def test_bad_lines_are_skipped_reported_and_the_rest_counts(tmp_path: Path) -> None:
    lines = [entry(unit="issue:1"), "{not json", "[1, 2]", entry(unit="issue:2")]
    result = read_run_telemetry([host(tmp_path, "h", lines)])
    assert result.frame["issue"].tolist() == [1, 2]
    assert result.frame["line_no"].tolist() == [1, 4]
    bad = only(result.warnings, "malformed_line")
    assert [w.line for w in bad] == [2, 3]
    assert result.sources[0].malformed == 2 and result.sources[0].rows == 2


def test_truncated_last_line_is_reported(tmp_path: Path) -> None:
    lines = [entry(unit="issue:1"), entry(unit="issue:2")[:25]]
    result = read_run_telemetry([host(tmp_path, "h", lines, trailing_newline=False)])
    assert result.frame["issue"].tolist() == [1]
    (w,) = only(result.warnings, "malformed_line")
    assert w.line == 2 and "no newline" in w.message


def test_many_bad_lines_give_twenty_warnings_and_a_summary(tmp_path: Path) -> None:
    lines = [entry()] + ["garbage"] * 30
    result = read_run_telemetry([host(tmp_path, "h", lines)])
    bad = only(result.warnings, "malformed_line")
    assert len(bad) == 21
    assert bad[-1].count == 10 and bad[-1].line == 22
    assert sum(w.count for w in bad) == 30
    assert result.sources[0].malformed == 30


def test_bad_lines_and_bad_fields_share_one_cap_per_file(tmp_path: Path) -> None:
    lines = ["garbage"] * 15 + [entry(timestamp="never")] * 15
    result = read_run_telemetry([host(tmp_path, "h", lines)])
    bad = only(result.warnings, "malformed_line")
    assert len(bad) == 21 and sum(w.count for w in bad) == 30
    assert "skipped" in bad[0].message and "kept without a time" in bad[15].message
    assert bad[-1].count == 10 and bad[-1].line == 21
    assert len(result.frame) == 15 and result.sources[0].malformed == 15


# --- missing, empty and unreadable inputs ---


def test_missing_runs_jsonl_gives_telemetry_missing(tmp_path: Path) -> None:
    h = host(tmp_path, "h1", None)
    result = read_run_telemetry([h])
    (w,) = result.warnings
    assert w.code == "telemetry_missing" and WARNING_CODES[w.code].reference == "a"
    assert w.host == "h1" and w.path == str(h.dossier_home / "runs.jsonl")
    assert "h1" in w.message and "runs.jsonl" in w.message and "telemetry" in w.message
    assert len(result.frame) == 0 and contract_problems(result.frame, RUN_TELEMETRY) == []
    assert result.sources[0].files == 0


@pytest.mark.parametrize("content", [b"", b"\n\n", b"not json\n"])
def test_a_file_with_zero_entries_gives_telemetry_missing(tmp_path: Path, content: bytes) -> None:
    result = read_run_telemetry([host(tmp_path, "h1", content)])
    assert codes(result.warnings).count("telemetry_missing") == 1
    assert len(result.frame) == 0


def test_missing_dossier_home_gives_one_warning_naming_it(tmp_path: Path) -> None:
    h = HostConfig(name="far", dossier_home=tmp_path / "gone")
    result = read_run_telemetry([h])
    (w,) = result.warnings
    assert w.code == "telemetry_missing" and w.path == str(tmp_path / "gone") and w.host == "far"


def test_runs_jsonl_that_is_a_directory_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "h" / "runs.jsonl").mkdir(parents=True)
    result = read_run_telemetry([HostConfig(name="h", dossier_home=tmp_path / "h")])
    (w,) = result.warnings
    assert w.code == "unreadable_file" and "directory" in w.message


def test_dossier_home_that_is_a_file_is_unreadable(tmp_path: Path) -> None:
    (tmp_path / "home").write_text("x")
    (w,) = read_run_telemetry([HostConfig(name="h", dossier_home=tmp_path / "home")]).warnings
    assert w.code == "unreadable_file" and w.path == str(tmp_path / "home")


def test_permission_denied_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    h = host(tmp_path, "h", [entry()])

    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "runs.jsonl":
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    (w,) = read_run_telemetry([h]).warnings
    assert w.code == "unreadable_file" and "permission denied" in w.message


def test_one_bad_host_does_not_stop_the_others(tmp_path: Path) -> None:
    good = host(tmp_path, "good", [entry(unit="issue:8")])
    bad = HostConfig(name="bad", dossier_home=tmp_path / "nowhere")
    result = read_run_telemetry([bad, good])
    assert result.frame["issue"].tolist() == [8]
    assert [s.host for s in result.sources] == ["bad", "good"]


# --- several hosts ---


def test_frames_are_identical_whatever_the_host_order(tmp_path: Path) -> None:
    a = host(tmp_path, "alpha", [entry(unit="issue:1"), entry(unit="issue:2", input_tokens=-4)])
    b = host(tmp_path, "beta", [entry(unit="issue:3"), "junk"])
    c = HostConfig(name="gamma", dossier_home=tmp_path / "missing")
    one = read_run_telemetry([a, b, c])
    two = read_run_telemetry([c, b, a])
    pd.testing.assert_frame_equal(one.frame, two.frame)
    assert one.warnings == two.warnings
    assert one.sources == two.sources
    assert one.frame["host"].tolist() == ["alpha", "alpha", "beta"]


def test_no_hosts_gives_an_empty_conforming_frame() -> None:
    result = read_run_telemetry([])
    assert len(result.frame) == 0 and contract_problems(result.frame, RUN_TELEMETRY) == []


def test_nothing_is_written_into_the_dossier_home(tmp_path: Path) -> None:
    h = host(tmp_path, "h", [entry(), "bad", entry(input_tokens=-1)])
    before = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    read_run_telemetry([h])
    after = sorted((p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    assert before == after
    assert os.listdir(h.dossier_home) == ["runs.jsonl"]


# --- several hosts read into one frame: rows and warnings stay with their own file and line ---


def test_each_warning_names_its_own_host_file_and_line(tmp_path: Path) -> None:
    a = host(tmp_path, "a", [entry(unit="issue:1"), entry(unit="issue:2", output_tokens=-5)])
    b = host(tmp_path, "b", ["junk", "   "])  # no entries at all
    c = host(
        tmp_path,
        "c",
        [
            "{",
            entry(unit="issue:3"),
            entry(unit="issue:4", model=7),
            entry(timestamp="never", total_cost_usd="1"),
        ],
    )
    result = read_run_telemetry([c, a, b])
    df = result.frame
    assert df["host"].tolist() == ["a", "a", "c", "c", "c"]
    assert df["line_no"].tolist() == [1, 2, 2, 3, 4]
    assert df["issue"].tolist()[:4] == [1, 2, 3, 4]
    assert (
        df["source_file"].tolist()
        == [str(a.dossier_home / "runs.jsonl")] * 2 + [str(c.dossier_home / "runs.jsonl")] * 3
    )
    seen = [(w.code, w.host, w.line, w.values.get("field")) for w in result.warnings]
    assert seen == [
        ("out_of_range_value", "a", 2, "output_tokens"),
        ("telemetry_missing", "b", None, None),
        ("malformed_line", "b", 1, None),
        ("out_of_range_value", "c", 4, "total_cost_usd"),
        ("malformed_line", "c", 1, None),
        ("malformed_line", "c", 3, "model"),
        ("malformed_line", "c", 4, "timestamp"),
    ]
    for w in result.warnings:
        assert w.path is not None and f"/{w.host}/" in w.path
    assert [(s.host, s.rows, s.malformed) for s in result.sources] == [("a", 2, 0), ("b", 0, 1), ("c", 3, 1)]


def test_problems_on_one_line_keep_their_field_order_on_any_host(tmp_path: Path) -> None:
    line = entry(timestamp=5, dossier=1, model=2, unit="issue:" + "9" * 25, cost_available="no")
    one = read_run_telemetry([host(tmp_path, "z", [line])])
    two = read_run_telemetry([host(tmp_path, "a", [entry(), entry()]), host(tmp_path, "z", [line])])
    fields = ["dossier", "model", "unit", "cost_available", "timestamp"]
    assert [w.values["field"] for w in one.warnings] == fields
    assert [w.values["field"] for w in two.warnings] == fields
    assert [w.message for w in one.warnings] == [w.message for w in two.warnings]


def test_costs_per_host_count_only_that_hosts_rows(tmp_path: Path) -> None:
    a = host(tmp_path, "a", [entry(total_cost_usd=1.5), entry(total_cost_usd=2)])
    b = host(tmp_path, "b", [entry(total_cost_usd=None)])
    c = host(tmp_path, "c", [entry(total_cost_usd=4), entry(total_cost_usd=-1)])
    stats = {s.host: s for s in read_run_telemetry([a, b, c]).sources}
    assert stats["a"].cost_usd == pytest.approx(3.5)
    assert stats["b"].cost_usd is None
    assert stats["c"].cost_usd == pytest.approx(4.0)  # the rejected -1 is not a cost


def test_a_file_that_fails_midway_adds_no_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    good = host(tmp_path, "a", [entry(unit="issue:1")])
    broken = host(tmp_path, "b", [entry(unit=f"issue:{n}") for n in range(2, 5000)])
    after = host(tmp_path, "c", [entry(unit="issue:9")])
    real_open = Path.open

    def open_runs(self: Path, *args: Any, **kwargs: Any) -> Any:
        handle = real_open(self, *args, **kwargs)
        return FailsAfterFirstBlock(handle) if self.parent.name == "b" else handle

    monkeypatch.setattr(Path, "open", open_runs)
    result = read_run_telemetry([good, broken, after])
    assert result.frame["issue"].tolist() == [1, 9]
    assert result.frame["host"].tolist() == ["a", "c"]
    (w,) = result.warnings
    assert (w.code, w.host) == ("unreadable_file", "b") and "input/output error" in w.message
    assert [s.rows for s in result.sources] == [1, 0, 1]


@pytest.mark.parametrize(
    ("unit", "issue"),
    [
        ("issue:" + "9" * 18, 999_999_999_999_999_999),
        ("issue:9223372036854775807", 2**63 - 1),
        ("issue:" + "0" * 30 + "42", 42),
        ("issue:00", 0),
        ("issue:\u00b2", None),  # a superscript two is a digit to Python, not an ASCII digit
        ("issue:+5", None),
        ("issue:5_0", None),
        ("issue: 5", None),
        ("Issue:5", None),
    ],
)
def test_issue_numbers_in_the_frame_follow_the_unit_rule(
    tmp_path: Path, unit: str, issue: int | None
) -> None:
    lines = [entry(unit=unit), entry(unit="issue:3"), entry(unit=unit)]
    result = read_run_telemetry([host(tmp_path, "h", lines)])
    got = result.frame["issue"].tolist()
    assert got[1] == 3
    if issue is None:
        assert pd.isna(got[0]) and pd.isna(got[2])
    else:
        assert got[0] == issue and got[2] == issue
    assert result.warnings == []


def test_an_integer_beyond_every_float_next_to_1e400_is_out_of_range_not_a_crash(tmp_path: Path) -> None:
    line = (
        '{"timestamp":"2026-09-01T00:00:00Z","unit":"issue:4","input_tokens":1e400,"output_tokens":'
        + "9" * 400
    )
    result = read_run_telemetry([host(tmp_path, "h", [line + "}", entry(unit="issue:5", output_tokens=8)])])
    df = result.frame
    assert df["issue"].tolist() == [4, 5]
    assert math.isnan(df["input_tokens"].iloc[0]) and math.isnan(df["output_tokens"].iloc[0])
    assert df["output_tokens"].iloc[1] == 8.0
    assert [(w.line, w.values["field"]) for w in only(result.warnings, "out_of_range_value")] == [
        (1, "input_tokens"),
        (1, "output_tokens"),
    ]


# --- hostile input ---


def deep_line(depth: int = 5000) -> str:
    """A runs.jsonl line orjson refuses for 1e400, nested beyond the standard library's recursion limit."""
    return '{"timestamp":"2026-11-10T03:03:40Z","x":1e400,"y":' + "[" * depth + "]" * depth + "}"


def test_a_deeply_nested_line_is_malformed_and_the_other_lines_count(tmp_path: Path) -> None:
    h = host(tmp_path, "h", [entry(unit="issue:1"), deep_line(), entry(unit="issue:2")])
    result = read_run_telemetry([h])
    assert result.frame["issue"].tolist() == [1, 2]
    assert result.frame["line_no"].tolist() == [1, 3]
    (w,) = result.warnings
    assert (w.code, w.line, w.path) == ("malformed_line", 2, str(h.dossier_home / "runs.jsonl"))
    assert "runs.jsonl line 2" in w.message and "nested too deeply" in w.message
    assert result.sources[0].malformed == 1 and result.sources[0].rows == 2


@needs_mkfifo
def test_a_fifo_in_place_of_runs_jsonl_is_unreadable_and_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = host(tmp_path, "a", [entry(unit="issue:1")])
    piped = host(tmp_path, "b", None)
    fifo = fifo_never_opened(piped.dossier_home / "runs.jsonl", monkeypatch)
    result = read_run_telemetry([good, piped])
    assert result.frame["host"].tolist() == ["a"]
    (w,) = result.warnings
    assert (w.code, w.host, w.path) == ("unreadable_file", "b", str(fifo))
    assert f"{fifo} is not a regular file (a FIFO)" in w.message
    assert [s.rows for s in result.sources] == [1, 0]


# --- issue 15: words pandas reads as times, lone surrogates ---


@pytest.mark.parametrize("word", ["now", "today", " Today", "NOW"])
def test_a_time_word_is_a_malformed_timestamp_never_the_current_time(tmp_path: Path, word: str) -> None:
    result = read_run_telemetry([host(tmp_path, "h1", [entry(timestamp=word), entry()])])
    assert result.frame["timestamp"].notna().sum() == 1
    bad = [w for w in result.warnings if w.code == "malformed_line" and w.line == 1]
    assert bad and "timestamp" in bad[0].message


def test_a_lone_surrogate_escape_is_valid_json_kept_and_warned(tmp_path: Path) -> None:
    line = entry(model="claude\\ud800x").replace("\\\\ud800", "\\ud800")
    assert "\\ud800" in line
    result = read_run_telemetry([host(tmp_path, "h1", [line])])
    assert len(result.frame) == 1 and result.frame["model"].iloc[0] == "claude\ufffdx"
    (warning,) = [w for w in result.warnings if w.code == "text_replaced"]
    assert warning.line == 1 and warning.values["lines"] == 1
    assert not [w for w in result.warnings if w.code == "malformed_line"]
