"""The recorded GitHub export -> trail_comments (docs/sources.md "Fetching")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import WARNING_CODES, DataWarning
from scorecard_assets.schemas import TRAIL_COMMENTS, contract_problems
from scorecard_assets.sources.trails_recorded import RecordedTrailsError, read_recorded_trails
from scorecard_tests.fakes.files import fifo_never_opened, needs_mkfifo

MARKER = "<!-- runstate:v1 -->"
API = "https://api.github.com/repos"


def milestone(phase: str, run: str = "r-5-aaaa") -> str:
    return f"{MARKER}\nphase={phase} status=done run={run} at=2026-09-01T10:00:00Z\nmodel=claude-sonnet-5"


def comment(
    cid: Any, issue: int, body: Any, created: Any = "2026-09-01T10:00:05Z", **extra: Any
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "id": cid,
        "issue_url": f"{API}/acme/api/issues/{issue}",
        "body": body,
        "created_at": created,
        "updated_at": created,
        "user": {"login": "fleet-bot"},
    }
    obj.update(extra)
    return obj


def issue(number: Any, **extra: Any) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "number": number,
        "state": "closed",
        "title": f"issue {number}",
        "created_at": "2026-08-30T00:00:00Z",
        "updated_at": "2026-09-02T00:00:00Z",
    }
    obj.update(extra)
    return obj


def export(root: Path, repo: str, *, issues: Any = None, comments: Any = None) -> Path:
    """Write ``<root>/<owner>/<name>/{issues,comments}.json``; ``None`` leaves a file out."""
    repo_dir = root.joinpath(*repo.split("/"))
    repo_dir.mkdir(parents=True, exist_ok=True)
    for name, value in (("issues.json", issues), ("comments.json", comments)):
        if isinstance(value, bytes):
            (repo_dir / name).write_bytes(value)
        elif value is not None:
            (repo_dir / name).write_text(json.dumps(value), encoding="utf-8")
    return repo_dir


def config(root: Path | None, repos: list[str]) -> ScorecardConfig:
    return ScorecardConfig.model_validate(
        {
            "repos": [{"name": r} for r in repos],
            "github": {"source": "recorded", "recorded_dir": root and str(root)},
        }
    )


def only(warnings: list[DataWarning], code: str) -> list[DataWarning]:
    return [w for w in warnings if w.code == code]


# --- a good export ---


def test_milestone_comments_become_rows_in_trail_order(tmp_path: Path) -> None:
    comments = [
        comment(30, 5, milestone("plan"), "2026-09-01T11:00:00Z"),
        comment(10, 5, milestone("gate"), "2026-09-01T10:00:00Z"),
        comment(20, 5, "LGTM, thanks!", "2026-09-01T10:30:00Z"),  # not a milestone
        comment(40, 6, " " + milestone("gate")),  # leading space: not a milestone
        comment(50, 3, milestone("gate", "r-3-bbbb"), "2026-09-03T00:00:00Z"),
    ]
    export(tmp_path, "acme/api", issues=[issue(5), issue(3, state="open")], comments=comments)
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    df = result.frame
    assert contract_problems(df, TRAIL_COMMENTS) == []
    assert list(zip(df["issue"], df["comment_id"], strict=True)) == [(3, 50), (5, 10), (5, 30)]
    assert set(df["repo"]) == {"acme/api"} and set(df["author"]) == {"fleet-bot"}
    assert df["issue_state"].tolist() == ["open", "closed", "closed"]
    assert df["issue_updated_at"].iloc[0] == pd.Timestamp("2026-09-02T00:00:00Z")
    assert df["created_at"].iloc[1] == pd.Timestamp("2026-09-01T10:00:00Z")
    assert df["body"].iloc[1].startswith(MARKER)
    assert result.warnings == []
    (stat,) = result.sources
    assert (stat.source, stat.repo, stat.files, stat.rows, stat.malformed) == ("trails", "acme/api", 2, 3, 0)
    assert stat.bytes > 0
    assert result.extra["lines"] == 7  # 2 issues + 5 comments


def test_comments_of_pull_requests_are_not_trails(tmp_path: Path) -> None:
    pr = issue(8, pull_request={"url": f"{API}/acme/api/pulls/8"})
    export(
        tmp_path,
        "acme/api",
        issues=[issue(5), pr],
        comments=[comment(1, 5, milestone("gate")), comment(2, 8, milestone("gate"))],
    )
    df = read_recorded_trails(config(tmp_path, ["acme/api"])).frame
    assert df["issue"].tolist() == [5]


def test_several_repos_are_read(tmp_path: Path) -> None:
    export(tmp_path, "acme/api", issues=[issue(5)], comments=[comment(1, 5, milestone("gate"))])
    other = [dict(comment(2, 5, milestone("gate")), issue_url=f"{API}/acme/web/issues/5")]
    export(tmp_path, "acme/web", issues=[issue(5)], comments=other)
    result = read_recorded_trails(config(tmp_path, ["acme/web", "acme/api"]))
    assert list(zip(result.frame["repo"], result.frame["comment_id"], strict=True)) == [
        ("acme/api", 1),
        ("acme/web", 2),
    ]
    assert [s.repo for s in result.sources] == ["acme/web", "acme/api"]
    assert [s.rows for s in result.sources] == [1, 1]


# --- bad entries ---


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        (comment("12", 5, milestone("gate")), "id"),
        (comment(True, 5, milestone("gate")), "id"),
        (comment(12, 5, 42), "body"),
        (comment(12, 5, milestone("gate"), created=None), "created_at"),
        (comment(12, 5, milestone("gate"), created="yesterday"), "created_at"),
        (comment(12, 5, milestone("gate"), created="2026-09-01T10:00:00"), "created_at"),  # no timezone
        (dict(comment(12, 5, milestone("gate")), issue_url="https://example/x"), "issue_url"),
        (dict(comment(12, 5, milestone("gate")), issue_url=None), "issue_url"),
    ],
)
def test_a_bad_comment_entry_is_skipped_and_reported_by_index_and_field(
    tmp_path: Path, bad: dict[str, Any], field: str
) -> None:
    comments = [
        comment(1, 5, milestone("gate")),
        bad,
        comment(3, 5, milestone("plan"), "2026-09-01T10:10:00Z"),
    ]
    repo_dir = export(tmp_path, "acme/api", issues=[issue(5)], comments=comments)
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert result.frame["comment_id"].tolist() == [1, 3]
    (w,) = result.warnings
    assert w.code == "malformed_line" and w.asset == "trail_comments"
    assert w.line == 2 and w.repo == "acme/api"
    assert w.path == str(repo_dir / "comments.json")
    assert "comments.json" in w.message and field in w.message
    assert result.sources[0].malformed == 1


@pytest.mark.parametrize("bad", [7, "text", None, [1]])
def test_a_comment_entry_that_is_not_an_object(tmp_path: Path, bad: object) -> None:
    export(tmp_path, "acme/api", issues=[issue(5)], comments=[bad, comment(1, 5, milestone("gate"))])
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert result.frame["comment_id"].tolist() == [1]
    (w,) = result.warnings
    assert w.line == 1 and "object" in w.message


@pytest.mark.parametrize(
    ("bad", "field"),
    [(issue("5"), "number"), (issue(None), "number"), (issue(6, updated_at="soon"), "updated_at")],
)
def test_a_bad_issue_entry_is_skipped_and_its_comments_keep_empty_metadata(
    tmp_path: Path, bad: dict[str, Any], field: str
) -> None:
    number = bad["number"] if isinstance(bad["number"], int) else 6
    export(tmp_path, "acme/api", issues=[issue(5), bad], comments=[comment(1, number, milestone("gate"))])
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    (w,) = result.warnings
    assert w.code == "malformed_line" and w.line == 2 and "issues.json" in w.message and field in w.message
    row = result.frame.iloc[0]
    assert row["issue_state"] == "" and pd.isna(row["issue_updated_at"])


def test_duplicate_comment_ids_count_once_and_the_last_edit_wins(tmp_path: Path) -> None:
    old = comment(1, 5, milestone("gate"), "2026-09-01T10:00:00Z")
    edited = dict(old, body=milestone("gate") + "\nfixed=2", updated_at="2026-09-01T12:00:00Z")
    stale = dict(old, body=milestone("gate") + "\nfixed=0", updated_at="2026-09-01T11:00:00Z")
    export(tmp_path, "acme/api", issues=[issue(5)], comments=[old, edited, stale])
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    df = result.frame
    assert df["comment_id"].tolist() == [1]
    assert df["body"].iloc[0].endswith("fixed=2")
    assert df["updated_at"].iloc[0] == pd.Timestamp("2026-09-01T12:00:00Z")
    dup = only(result.warnings, "malformed_line")
    assert [w.line for w in dup] == [2, 3]


# --- failing repos ---


def test_a_missing_repo_directory_fails_that_repo_only(tmp_path: Path) -> None:
    export(tmp_path, "acme/api", issues=[issue(5)], comments=[comment(1, 5, milestone("gate"))])
    result = read_recorded_trails(config(tmp_path, ["acme/api", "acme/gone"]))
    assert result.frame["repo"].tolist() == ["acme/api"]
    (w,) = result.warnings
    assert w.code == "repo_sync_failed" and WARNING_CODES[w.code].reference == "f"
    assert w.repo == "acme/gone" and "acme/gone" in w.message and "absent" in w.message
    gone = [s for s in result.sources if s.repo == "acme/gone"][0]
    assert (gone.files, gone.rows) == (0, 0)


@pytest.mark.parametrize(
    ("comments", "reason"),
    [
        (None, "does not exist"),
        (b"[{", "not valid JSON"),
        (b'{"id": 1}', "not an array"),
        (b"", "not valid JSON"),
    ],
)
def test_a_missing_or_unusable_comments_file_fails_the_repo(
    tmp_path: Path, comments: bytes | None, reason: str
) -> None:
    export(tmp_path, "acme/api", issues=[issue(5)], comments=[comment(1, 5, milestone("gate"))])
    broken = export(tmp_path, "acme/bad", issues=[issue(5)], comments=comments)
    result = read_recorded_trails(config(tmp_path, ["acme/api", "acme/bad"]))
    assert result.frame["repo"].tolist() == ["acme/api"]
    (w,) = result.warnings
    assert w.code == "repo_sync_failed" and w.repo == "acme/bad"
    assert w.path == str(broken / "comments.json") and reason in w.message


def test_a_comments_path_that_is_a_directory_fails_the_repo(tmp_path: Path) -> None:
    export(tmp_path, "acme/api", issues=[issue(5)], comments=[comment(1, 5, milestone("gate"))])
    broken = export(tmp_path, "acme/bad", issues=[issue(5)])
    (broken / "comments.json").mkdir()
    (w,) = read_recorded_trails(config(tmp_path, ["acme/api", "acme/bad"])).warnings
    assert w.code == "repo_sync_failed" and "directory" in w.message


@pytest.mark.parametrize("issues", [None, b"not json", b'{"number": 5}'])
def test_missing_or_unusable_issues_file_keeps_rows_without_metadata(
    tmp_path: Path, issues: bytes | None
) -> None:
    repo_dir = export(tmp_path, "acme/api", issues=issues, comments=[comment(1, 5, milestone("gate"))])
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    df = result.frame
    assert df["comment_id"].tolist() == [1]
    assert df["issue_state"].tolist() == [""] and df["issue_updated_at"].isna().all()
    (w,) = result.warnings
    assert w.code == "unreadable_file" and w.path == str(repo_dir / "issues.json") and w.repo == "acme/api"
    assert result.sources[0].files == (0 if issues is None else 1) + 1


def test_every_repo_failing_raises_with_each_reason(tmp_path: Path) -> None:
    export(tmp_path, "acme/bad", issues=[issue(5)], comments=b"{")
    with pytest.raises(RecordedTrailsError) as info:
        read_recorded_trails(config(tmp_path, ["acme/bad", "acme/gone"]))
    message = str(info.value)
    assert "acme/bad" in message and "acme/gone" in message
    assert set(info.value.reasons) == {"acme/bad", "acme/gone"}
    assert "not valid JSON" in info.value.reasons["acme/bad"]


def test_no_recorded_dir_fails_every_repo(tmp_path: Path) -> None:
    with pytest.raises(RecordedTrailsError):
        read_recorded_trails(config(None, ["acme/api"]))


def test_repos_with_no_milestones_are_not_failures(tmp_path: Path) -> None:
    export(tmp_path, "acme/api", issues=[], comments=[])
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert len(result.frame) == 0 and contract_problems(result.frame, TRAIL_COMMENTS) == []
    assert result.warnings == []


def test_nothing_is_written_into_the_export(tmp_path: Path) -> None:
    export(
        tmp_path, "acme/api", issues=[issue(5), issue("x")], comments=[comment(1, 5, milestone("gate")), 3]
    )
    before = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    read_recorded_trails(config(tmp_path, ["acme/api"]))
    after = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    assert before == after


# --- hostile input: ids beyond int64, FIFOs, numbers beyond double range ---

INT64_MAX = 2**63 - 1


@pytest.mark.parametrize(
    ("bad", "field", "shown"),
    [
        (comment(2**64 - 1, 5, milestone("gate")), "id", "18446744073709551615"),  # used to become -1
        (comment(2**63, 5, milestone("gate")), "id", "9223372036854775808"),  # used to become INT64_MIN
        (comment(0, 5, milestone("gate")), "id", "0"),
        (comment(-3, 5, milestone("gate")), "id", "-3"),
        (comment(12, 99999999999999999999, milestone("gate")), "issue_url", "99999999999999999999"),
        (comment(12, 2**63, milestone("gate")), "issue_url", "9223372036854775808"),
        (comment(12, 0, milestone("gate")), "issue_url", "0"),
    ],
)
def test_ids_and_issue_numbers_outside_int64_are_bad_entries(
    tmp_path: Path, bad: dict[str, Any], field: str, shown: str
) -> None:
    comments = [
        comment(1, 5, milestone("gate")),
        bad,
        comment(INT64_MAX, INT64_MAX, milestone("plan"), "2026-09-01T10:10:00Z"),  # the largest usable
    ]
    repo_dir = export(tmp_path, "acme/api", issues=[issue(5)], comments=comments)
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    df = result.frame
    assert df["comment_id"].tolist() == [1, INT64_MAX] and df["issue"].tolist() == [5, INT64_MAX]
    (w,) = result.warnings
    assert (w.code, w.line, w.path) == ("malformed_line", 2, str(repo_dir / "comments.json"))
    assert w.values["field"] == field
    assert "comments.json entry 2" in w.message and shown in w.message and str(INT64_MAX) in w.message
    assert result.sources[0].malformed == 1


def test_an_issue_number_outside_int64_is_a_bad_entry(tmp_path: Path) -> None:
    issues = [issue(5), issue(2**63), issue(2**64 - 1)]
    repo_dir = export(tmp_path, "acme/api", issues=issues, comments=[comment(1, 5, milestone("gate"))])
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert result.frame["issue_state"].tolist() == ["closed"]
    assert [(w.code, w.line, w.path, w.values["field"]) for w in result.warnings] == [
        ("malformed_line", 2, str(repo_dir / "issues.json"), "number"),
        ("malformed_line", 3, str(repo_dir / "issues.json"), "number"),
    ]
    assert "9223372036854775808 is outside 1..9223372036854775807" in result.warnings[0].message


def test_a_number_beyond_double_range_costs_its_entry_not_the_file(tmp_path: Path) -> None:
    good = json.dumps(comment(1, 5, milestone("gate"))).encode()
    bad = json.dumps(comment(2, 5, milestone("plan"))).encode().replace(b'"id": 2', b'"id": 1e400')
    export(tmp_path, "acme/api", issues=[issue(5)], comments=b"[" + good + b"," + bad + b"]")
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert result.frame["comment_id"].tolist() == [1]
    (w,) = result.warnings
    assert (w.code, w.line, w.values["field"]) == ("malformed_line", 2, "id")


@needs_mkfifo
def test_a_fifo_in_place_of_comments_json_fails_that_repo_without_being_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export(tmp_path, "acme/api", issues=[issue(5)], comments=[comment(1, 5, milestone("gate"))])
    broken = export(tmp_path, "acme/bad", issues=[issue(5)])
    fifo = broken / "comments.json"
    fifo_never_opened(fifo, monkeypatch)
    result = read_recorded_trails(config(tmp_path, ["acme/api", "acme/bad"]))
    assert result.frame["repo"].tolist() == ["acme/api"]
    (w,) = result.warnings
    assert (w.code, w.repo, w.path) == ("repo_sync_failed", "acme/bad", str(fifo))
    assert f"{fifo} is not a regular file (a FIFO)" in w.message


@needs_mkfifo
def test_a_fifo_in_place_of_issues_json_is_unreadable_without_being_opened(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo_dir = export(tmp_path, "acme/api", comments=[comment(1, 5, milestone("gate"))])
    fifo = repo_dir / "issues.json"
    fifo_never_opened(fifo, monkeypatch)
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert result.frame["comment_id"].tolist() == [1]
    (w,) = result.warnings
    assert (w.code, w.repo, w.path) == ("unreadable_file", "acme/api", str(fifo))
    assert f"{fifo} is not a regular file (a FIFO)" in w.message


# --- issue 15: times outside the frames' range ---


@pytest.mark.parametrize("created", ["9999-12-31T23:59:59Z", "0001-01-01T00:00:00Z", "2262-04-12T00:00:00Z"])
def test_a_comment_time_outside_the_representable_range_is_a_malformed_entry(
    tmp_path: Path, created: str
) -> None:
    comments = [comment(10, 5, milestone("plan")), comment(11, 5, milestone("gate"), created)]
    export(tmp_path, "acme/api", issues=[issue(5)], comments=comments)
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert result.frame["comment_id"].tolist() == [10]
    (bad,) = only(result.warnings, "malformed_line")
    assert bad.line == 2 and "created_at" in bad.message


@pytest.mark.parametrize(
    ("created", "kept"),
    [
        ("1677-09-21T23:00:00-02:00", True),  # 1677-09-22T01:00Z: inside, though its local date is not
        ("1677-09-22T01:00:00+02:00", False),  # 1677-09-21T23:00Z: outside, though its local date is not
        ("1678-01-01T00:30:00+23:00", True),
        ("2261-12-31T23:30:00-23:00", True),
        ("2262-04-10T23:00:00-02:00", False),  # 2262-04-11T01:00Z
        ("2262-04-10T23:00:00+02:00", True),
    ],
)
def test_the_range_edges_are_judged_in_utc(tmp_path: Path, created: str, kept: bool) -> None:
    comments = [comment(10, 5, milestone("plan")), comment(11, 5, milestone("gate"), created)]
    export(tmp_path, "acme/api", issues=[issue(5)], comments=comments)
    result = read_recorded_trails(config(tmp_path, ["acme/api"]))
    assert sorted(result.frame["comment_id"].tolist()) == ([10, 11] if kept else [10])
    assert len(only(result.warnings, "malformed_line")) == (0 if kept else 1)
