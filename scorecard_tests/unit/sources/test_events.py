"""Scheduler journals -> the dispatch_events frame (docs/sources.md "events.jsonl")."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import WARNING_CODES, DataWarning
from scorecard_assets.schemas import DISPATCH_EVENTS, contract_problems
from scorecard_assets.sources.events import (
    SCHEDULER_EVENTS,
    agent_cli_of,
    issue_number,
    read_dispatch_events,
)
from scorecard_tests.fakes.files import fifo_never_opened, needs_mkfifo

REPO = "imboard-ai/imboard-monorepo"
SLUG = "imboard-ai-imboard-monorepo"  # docs/sources.md "Repo slugs"
SCORED = {"spawned", "redispatched", "stalled", "fence-written"}

# Journal lines in the scheduler's real shapes (docs/sources.md "events.jsonl").
SPEC_LINES = [
    '{"ts":"2026-08-29T22:22:55.588Z","event":"spawned","unit":"issue:3810","issue":3810,"pid":3767059,'
    '"tier":"mid","slot":1,"cmd":"claude -p --output-format json --model sonnet",'
    '"log":"/home/yuvaldim/.dossier/sched/imboard-ai-imboard-monorepo/runs/issue-3810.log"}',
    '{"ts":"2026-08-29T23:05:53.635Z","event":"verify-incomplete","unit":"issue:3886","issue":3886,'
    '"detail":"unverified-exit","slot":3,"last_progress_at":"2026-08-29T22:36:24.017Z",'
    '"observed":"milestone plan/done; closed=false"}',
    '{"ts":"2026-08-29T23:05:53.635Z","event":"redispatched","unit":"issue:3886","issue":3886,"tier":"strong",'
    '"slot":3}',
    '{"ts":"2026-08-29T23:46:08.658Z","event":"spawned","unit":"issue:3810","issue":3810,"pid":4122991,'
    '"tier":"mechanical","slot":3,"cmd":"claude -p --output-format json --model haiku",'
    '"log":".../runs/issue-3810.log","detail":"report agent"}',
    '{"ts":"2026-09-03T06:40:16.780Z","event":"stalled","unit":"issue:3985","issue":3985,"slot":2,'
    '"detail":"no progress for 90m in implement"}',
    '{"ts":"2026-09-03T06:40:16.790Z","event":"fence-written","unit":"issue:3985","issue":3985,"slot":2,'
    '"fence_gen":1,"detail":"r-3985-1a2b gen=1 takeover=slot-2"}',
    '{"ts":"2026-09-12T10:01:00.000Z","event":"spawned","unit":"issue:4244","issue":4244,"tier":"mechanical",'
    '"slot":1,"cmd":"opencode run --auto -m zai-coding-plan/glm-5.3-flash --variant low --format json --",'
    '"log":".../runs/issue-4244.log"}',
]


def config(tmp_path: Path, repos: list[str], hosts: dict[str, Path]) -> ScorecardConfig:
    return ScorecardConfig.model_validate(
        {
            "repos": [{"name": r} for r in repos],
            "hosts": [{"name": n, "dossier_home": str(p)} for n, p in hosts.items()],
        }
    )


def journal(home: Path, slug: str, content: list[str] | bytes, *, newline: bool = True) -> Path:
    path = home / "sched" / slug / "events.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text("\n".join(content) + ("\n" if newline else ""), encoding="utf-8")
    return path


_ABSENT = object()  # a field left out of the line


def ev(event: str = "spawned", **fields: object) -> str:
    base: dict[str, object] = {
        "ts": "2026-09-01T10:00:00.000Z",
        "event": event,
        "unit": "issue:7",
        "issue": 7,
    }
    base.update(fields)
    return json.dumps({k: v for k, v in base.items() if v is not _ABSENT})


def read_one(
    tmp_path: Path, lines: list[str] | bytes, *, newline: bool = True
) -> tuple[pd.DataFrame, list[DataWarning]]:
    home = tmp_path / "h1"
    journal(home, SLUG, lines, newline=newline)
    result = read_dispatch_events(config(tmp_path, [REPO], {"h1": home}))
    return result.frame, result.warnings


def only(warnings: list[DataWarning], code: str) -> list[DataWarning]:
    return [w for w in warnings if w.code == code]


# --- the documented journal lines ---


def test_spec_lines_keep_the_four_scored_events_with_their_fields(tmp_path: Path) -> None:
    df, warnings = read_one(tmp_path, SPEC_LINES)
    assert warnings == []
    assert contract_problems(df, DISPATCH_EVENTS) == []
    assert df["event"].tolist() == [
        "spawned",
        "redispatched",
        "spawned",
        "stalled",
        "fence-written",
        "spawned",
    ]
    assert df["line_no"].tolist() == [1, 3, 4, 5, 6, 7]
    assert df["issue"].tolist() == [3810, 3886, 3810, 3985, 3985, 4244]
    assert set(df["repo"]) == {REPO} and set(df["slug"]) == {SLUG} and set(df["host"]) == {"h1"}
    first = df.iloc[0]
    assert first["ts"] == pd.Timestamp("2026-08-29T22:22:55.588Z")
    assert first["tier"] == "mid" and first["agent_cli"] == "claude" and first["unit"] == "issue:3810"
    assert first["log"].endswith("issue-3810.log")
    redispatch = df.iloc[1]
    assert redispatch["tier"] == "strong" and pd.isna(redispatch["cmd"]) and pd.isna(redispatch["agent_cli"])
    assert df["is_report_agent"].tolist() == [False, False, True, False, False, False]
    assert df.iloc[3]["detail"] == "no progress for 90m in implement"
    assert df.iloc[5]["agent_cli"] == "opencode"


# --- the real journals (reference data) ---


def independent_counts(path: Path) -> Counter[tuple[int, str]]:
    counts: Counter[tuple[int, str]] = Counter()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if obj["event"] in SCORED:
                counts[(obj["issue"], obj["event"])] += 1
    return counts


@pytest.mark.parametrize("name", ["events-imboard-monorepo-w1.jsonl", "events-batch-pilot.jsonl"])
def test_real_journals_give_the_per_issue_counts_of_an_independent_count(
    tmp_path: Path, reference_dir: Path, name: str
) -> None:
    source = reference_dir / name
    home = tmp_path / "h1"
    target = journal(home, SLUG, b"")
    shutil.copyfile(source, target)
    result = read_dispatch_events(config(tmp_path, [REPO], {"h1": home}))
    df = result.frame
    assert contract_problems(df, DISPATCH_EVENTS) == []
    got = Counter({key: int(n) for key, n in df.groupby(["issue", "event"]).size().items()})
    assert got == independent_counts(source)
    assert result.warnings == []  # no line of these files is malformed, no name is unknown
    (stat,) = result.sources
    with source.open(encoding="utf-8") as fh:
        total_lines = sum(1 for _ in fh)
    assert (stat.malformed, stat.rows, stat.files) == (0, len(df), 1)
    assert result.extra["lines"] == total_lines
    with source.open(encoding="utf-8") as fh:
        report_agents = sum(
            1
            for line in fh
            if (o := json.loads(line))["event"] in SCORED and o.get("detail") == "report agent"
        )
    assert int(df["is_report_agent"].sum()) == report_agents
    assert set(df.loc[df["cmd"].notna(), "agent_cli"]) == {"claude"}


def test_real_journal_timestamps_are_times_in_utc(tmp_path: Path, reference_dir: Path) -> None:
    home = tmp_path / "h1"
    shutil.copyfile(reference_dir / "events-imboard-monorepo-w1.jsonl", journal(home, SLUG, b""))
    df = read_dispatch_events(config(tmp_path, [REPO], {"h1": home})).frame
    assert str(df["ts"].dt.tz) == "UTC" and df["ts"].notna().all()
    assert df["ts"].iloc[0] == pd.Timestamp("2026-08-29T22:22:55.588Z")


# --- field rules ---


@pytest.mark.parametrize(("value", "kept"), [(3810, 3810), (3810.0, 3810)])
def test_issue_as_a_json_number(tmp_path: Path, value: object, kept: int) -> None:
    df, warnings = read_one(tmp_path, [ev(issue=value)])
    assert df["issue"].tolist() == [kept] and warnings == []
    assert df["issue"].dtype == "int64"


@pytest.mark.parametrize("value", ["3810", 3810.5, True, None, _ABSENT, 0, -4, [3810], {"n": 1}])
def test_issue_that_is_not_a_positive_whole_number_skips_the_line(tmp_path: Path, value: object) -> None:
    df, warnings = read_one(tmp_path, [ev(issue=value), ev(issue=9)])
    assert df["issue"].tolist() == [9]
    (w,) = only(warnings, "malformed_line")
    assert w.line == 1 and w.values["field"] == "issue" and "'issue'" in w.message


def test_issue_number_helper() -> None:
    assert issue_number(12) == 12 and issue_number(12.0) == 12
    assert issue_number(float("inf")) is None and issue_number(2**64) is None and issue_number(False) is None


@pytest.mark.parametrize("value", [1788000000, None, _ABSENT, ["2026-09-01"]])
def test_ts_that_is_not_a_string_skips_the_line(tmp_path: Path, value: object) -> None:
    df, warnings = read_one(tmp_path, [ev(ts=value), ev()])
    assert df["line_no"].tolist() == [2]
    (w,) = only(warnings, "malformed_line")
    assert w.line == 1 and w.values["field"] == "ts"


@pytest.mark.parametrize("value", ["yesterday", "2026-13-45T99:00:00Z", ""])
def test_ts_that_does_not_parse_skips_the_line(tmp_path: Path, value: str) -> None:
    df, warnings = read_one(tmp_path, [ev(ts=value), ev()])
    assert df["line_no"].tolist() == [2]
    (w,) = only(warnings, "malformed_line")
    assert w.line == 1 and w.values["field"] == "ts"


def test_ts_offsets_are_converted_and_compared_as_times(tmp_path: Path) -> None:
    lines = [
        ev(ts="2026-09-01T02:00:00+02:00"),
        ev(ts="2026-09-01T00:00:00.000Z"),
        ev(ts="2026-08-31T23:30:00Z"),
    ]
    df, _ = read_one(tmp_path, lines)
    assert df["ts"].iloc[0] == df["ts"].iloc[1] == pd.Timestamp("2026-09-01T00:00:00Z")
    assert df["ts"].iloc[2] < df["ts"].iloc[1]


@pytest.mark.parametrize("field", ["tier", "cmd", "detail", "log", "unit"])
def test_text_fields_are_kept_only_when_strings(tmp_path: Path, field: str) -> None:
    df, warnings = read_one(tmp_path, [ev(**{field: 5})])
    assert len(df) == 1 and pd.isna(df[field].iloc[0])
    (w,) = only(warnings, "malformed_line")
    assert w.values["field"] == field and "event still counts" in w.message


def test_non_string_cmd_gives_no_agent_cli(tmp_path: Path) -> None:
    df, _ = read_one(tmp_path, [ev(cmd=["claude", "-p"])])
    assert pd.isna(df["agent_cli"].iloc[0])


@pytest.mark.parametrize(
    ("cmd", "cli"),
    [
        ("claude -p --output-format json --model sonnet", "claude"),
        ("/home/u/.opencode/bin/opencode run --auto -m x", "opencode"),
        ("  \tcodex exec --json", "codex"),
        ("opencode", "opencode"),
        ("   ", None),
        ("", None),
        ("/usr/bin/ run", None),
    ],
)
def test_agent_cli_is_the_basename_of_the_first_token(cmd: str, cli: str | None) -> None:
    assert agent_cli_of(cmd) == cli


@pytest.mark.parametrize(
    ("detail", "flag"),
    [("report agent", True), ("Report agent", False), ("report agent ", False), (None, False)],
)
def test_report_agent_flag_is_exact(tmp_path: Path, detail: str | None, flag: bool) -> None:
    df, _ = read_one(tmp_path, [ev(detail=detail)])
    assert df["is_report_agent"].tolist() == [flag]
    assert df["is_report_agent"].dtype == bool


# --- event names ---


def test_other_vocabulary_events_are_ignored_without_warnings(tmp_path: Path) -> None:
    lines = [ev("assigned"), ev("progress", issue="not checked"), ev("member-reprompted"), ev("stalled")]
    df, warnings = read_one(tmp_path, lines)
    assert df["event"].tolist() == ["stalled"]
    assert warnings == []


def test_vocabulary_holds_the_89_scheduler_names() -> None:
    assert len(SCHEDULER_EVENTS) == 89
    assert SCORED <= SCHEDULER_EVENTS
    assert {
        "kept-worktree-cleared",
        "engine-auto-upgrade-attempted",
        "batch-anchor-open-on-abandon",
    } <= SCHEDULER_EVENTS
    assert "unverified-exit" not in SCHEDULER_EVENTS


def test_unknown_event_names_get_one_warning_per_name_with_the_count(tmp_path: Path) -> None:
    lines = [ev("teleported"), ev("spawned"), ev("teleported"), ev("Spawned"), ev("teleported")]
    df, warnings = read_one(tmp_path, lines)
    assert df["line_no"].tolist() == [2]
    unknown = only(warnings, "unknown_event")
    assert [(w.values["event"], w.count, w.line) for w in unknown] == [
        ('"teleported"', 3, 1),
        ('"Spawned"', 1, 4),
    ]
    assert all(w.repo == REPO and w.host == "h1" for w in unknown)


def test_many_unknown_names_are_capped_with_a_summary(tmp_path: Path) -> None:
    lines = [ev(f"made-up-{i}") for i in range(25)]
    _, warnings = read_one(tmp_path, lines)
    unknown = only(warnings, "unknown_event")
    assert len(unknown) == 21 and unknown[-1].count == 5


@pytest.mark.parametrize("value", [_ABSENT, None, 7])
def test_missing_or_non_string_event_is_malformed(tmp_path: Path, value: object) -> None:
    df, warnings = read_one(tmp_path, [ev(event=value), ev()])  # type: ignore[arg-type]
    assert df["line_no"].tolist() == [2]
    (w,) = only(warnings, "malformed_line")
    assert w.values["field"] == "event"


# --- bad lines ---


def test_bad_json_in_the_middle_and_a_truncated_last_line(tmp_path: Path) -> None:
    lines = [ev(issue=1), '{"ts":', ev(issue=2), "[]", ev(issue=3)[:30]]
    df, warnings = read_one(tmp_path, lines, newline=False)
    assert df["issue"].tolist() == [1, 2]
    bad = only(warnings, "malformed_line")
    assert [w.line for w in bad] == [2, 4, 5]
    assert "no newline" in bad[-1].message


def test_source_stat_counts_the_journal(tmp_path: Path) -> None:
    home = tmp_path / "h1"
    path = journal(home, SLUG, [ev(), "junk", ev("progress"), ev("bogus"), ev("stalled")])
    result = read_dispatch_events(config(tmp_path, [REPO], {"h1": home}))
    (stat,) = result.sources
    assert (stat.source, stat.host, stat.repo, stat.path) == ("events.jsonl", "h1", REPO, str(path))
    assert (stat.files, stat.rows, stat.malformed, stat.bytes) == (1, 2, 1, path.stat().st_size)
    assert stat.notes is not None and "5 lines" in stat.notes


# --- missing, empty, unreadable ---


def test_missing_journal_gives_events_missing_for_that_repo(tmp_path: Path) -> None:
    home = tmp_path / "h1"
    journal(home, SLUG, [ev()])
    result = read_dispatch_events(config(tmp_path, [REPO, "acme/api"], {"h1": home}))
    (w,) = result.warnings
    assert w.code == "events_missing" and WARNING_CODES[w.code].reference == "e"
    assert (w.repo, w.host) == ("acme/api", "h1")
    assert w.path == str(home / "sched" / "acme-api" / "events.jsonl")
    assert "acme/api" in w.message and "stall" in w.message
    assert result.frame["repo"].tolist() == [REPO]


@pytest.mark.parametrize("content", [b"", b"\n", b"garbage\n"])
def test_empty_journal_gives_events_missing(tmp_path: Path, content: bytes) -> None:
    _, warnings = read_one(tmp_path, content)
    assert [w.code for w in warnings if w.code == "events_missing"] == ["events_missing"]


def test_journal_with_only_ignored_events_is_not_missing(tmp_path: Path) -> None:
    df, warnings = read_one(tmp_path, [ev("assigned"), ev("progress")])
    assert len(df) == 0 and warnings == []


def test_missing_dossier_home_gives_one_warning_for_the_host(tmp_path: Path) -> None:
    result = read_dispatch_events(config(tmp_path, [REPO, "acme/api"], {"far": tmp_path / "gone"}))
    (w,) = result.warnings
    assert w.code == "events_missing" and w.host == "far" and w.repo is None
    assert w.path == str(tmp_path / "gone")


def test_journal_that_is_a_directory_is_unreadable(tmp_path: Path) -> None:
    home = tmp_path / "h1"
    (home / "sched" / SLUG / "events.jsonl").mkdir(parents=True)
    (w,) = read_dispatch_events(config(tmp_path, [REPO], {"h1": home})).warnings
    assert w.code == "unreadable_file" and w.repo == REPO and "directory" in w.message


def test_permission_denied_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "h1"
    journal(home, SLUG, [ev()])

    real_open = Path.open

    def refuse(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self.name == "events.jsonl":
            raise PermissionError(13, "Permission denied", str(self))
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", refuse)
    (w,) = read_dispatch_events(config(tmp_path, [REPO], {"h1": home})).warnings
    assert w.code == "unreadable_file" and "permission denied" in w.message


# --- several hosts and repos ---


def test_frames_are_identical_whatever_the_host_order(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    journal(a, SLUG, [ev(issue=1), ev("stalled", issue=1), "bad"])
    journal(b, SLUG, [ev("redispatched", issue=2)])
    journal(b, "acme-api", [ev(issue=3), ev("mystery")])
    repos = [REPO, "acme/api"]
    one = read_dispatch_events(config(tmp_path, repos, {"a": a, "b": b, "c": tmp_path / "c"}))
    two = read_dispatch_events(config(tmp_path, list(reversed(repos)), {"c": tmp_path / "c", "b": b, "a": a}))
    pd.testing.assert_frame_equal(one.frame, two.frame)
    assert one.warnings == two.warnings and one.sources == two.sources
    assert list(zip(one.frame["host"], one.frame["repo"], one.frame["issue"], strict=True)) == [
        ("a", REPO, 1),
        ("a", REPO, 1),
        ("b", "acme/api", 3),
        ("b", REPO, 2),
    ]


def test_sched_directories_of_unconfigured_repos_are_noted(tmp_path: Path) -> None:
    home = tmp_path / "h1"
    journal(home, SLUG, [ev()])
    journal(home, "someone-else", [ev(issue=99)])
    (home / "sched" / "another").mkdir()
    result = read_dispatch_events(config(tmp_path, [REPO], {"h1": home}))
    assert result.frame["issue"].tolist() == [7]  # nothing read from them
    notes = [s for s in result.sources if s.path == str(home / "sched")]
    assert len(notes) == 1 and notes[0].notes is not None
    assert "2 sched directories" in notes[0].notes
    assert "someone-else" in notes[0].notes and "another" in notes[0].notes
    assert result.warnings == []


def test_repos_sharing_a_slug_are_not_read_and_both_are_warned(tmp_path: Path) -> None:
    home = tmp_path / "h1"
    journal(home, "a-b-c", [ev()])
    result = read_dispatch_events(config(tmp_path, ["a-b/c", "a/b-c"], {"h1": home}))
    assert len(result.frame) == 0
    assert sorted((w.code, w.repo) for w in result.warnings) == [
        ("events_missing", "a-b/c"),
        ("events_missing", "a/b-c"),
    ]


def test_nothing_is_written_into_the_dossier_home(tmp_path: Path) -> None:
    home = tmp_path / "h1"
    journal(home, SLUG, [ev(), "bad", ev("mystery")])
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*"))
    read_dispatch_events(config(tmp_path, [REPO, "acme/api"], {"h1": home}))
    after = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in home.rglob("*"))
    assert before == after


# --- hostile input ---


def test_a_deeply_nested_line_is_malformed_and_the_other_lines_count(tmp_path: Path) -> None:
    depth = 5000  # orjson refuses 1e400 first; the standard library then recurses once per level
    deep = '{"ts":"2026-11-10T03:03:40Z","event":"spawned","issue":7,"x":1e400,"y":' + "[" * depth
    deep += "]" * depth + "}"
    df, warnings = read_one(tmp_path, [ev(issue=1), deep, ev(issue=2)])
    assert df["issue"].tolist() == [1, 2] and df["line_no"].tolist() == [1, 3]
    (w,) = warnings
    assert (w.code, w.line, w.repo) == ("malformed_line", 2, REPO)
    assert "events.jsonl line 2" in w.message and "nested too deeply" in w.message


@needs_mkfifo
def test_a_fifo_in_place_of_a_journal_is_unreadable_and_never_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "h1"
    journal(home, "acme-api", [ev(issue=4)])
    fifo = fifo_never_opened(home / "sched" / SLUG / "events.jsonl", monkeypatch)
    result = read_dispatch_events(config(tmp_path, [REPO, "acme/api"], {"h1": home}))
    assert result.frame["repo"].tolist() == ["acme/api"]
    (w,) = result.warnings
    assert (w.code, w.repo, w.host, w.path) == ("unreadable_file", REPO, "h1", str(fifo))
    assert f"{fifo} is not a regular file (a FIFO)" in w.message


def test_unverified_exits_of_the_journal_are_listed_beside_the_frame(tmp_path: Path) -> None:
    """verify-incomplete / unverified-exit: not a row (the frame keeps the reference's four events),
    counted with the ignored lines, and listed in ``extra`` for our Unverified (journal) count."""
    lines = [
        '{"ts":"2026-08-29T23:05:53.635Z","event":"verify-incomplete","unit":"issue:3886","issue":3886,'
        '"detail":"unverified-exit","slot":3}',
        '{"ts":"2026-08-29T23:06:00.000Z","event":"verify-incomplete","issue":3886,"detail":"tests-missing"}',
        '{"ts":"2026-08-29T23:07:00.000Z","event":"verify-incomplete","issue":"3886","detail":"unverified-exit"}',
        '{"ts":"2026-08-29T23:05:53.635Z","event":"redispatched","unit":"issue:3886","issue":3886,"tier":"strong"}',
    ]
    home = tmp_path / "h1"
    journal(home, SLUG, lines)
    result = read_dispatch_events(config(tmp_path, [REPO], {"h1": home}))
    assert result.frame["event"].tolist() == ["redispatched"]
    assert result.extra["unverified_exit_events"] == [
        {"host": "h1", "repo": REPO, "issue": 3886, "ts": "2026-08-29T23:05:53.635Z"}
    ]
    (stat,) = result.sources
    assert "3 other scheduler events ignored" in (stat.notes or "")


# --- issue 15: words pandas reads as times, lone surrogates ---


def test_ts_now_is_a_malformed_line_never_the_current_time(tmp_path: Path) -> None:
    frame, warnings = read_one(tmp_path, [ev(ts="now"), ev(ts="today"), ev()])
    assert len(frame) == 1
    bad = only(warnings, "malformed_line")
    assert {w.line for w in bad} == {1, 2} and all("'ts'" in w.message for w in bad)


def test_a_lone_surrogate_in_an_event_is_kept_and_warned(tmp_path: Path) -> None:
    line = ev(detail="x").replace('"x"', '"\\udc00"')
    frame, warnings = read_one(tmp_path, [line])
    assert len(frame) == 1
    assert [w.line for w in only(warnings, "text_replaced")] == [1]
