"""Incremental refresh rules and the issue-by-issue ``trail_runs``: equal to a from-scratch build,
exactly (docs/incremental.md "Why the result equals a from-scratch build")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecard_assets.config import DEFAULT_CONFIG_PATH, ScorecardConfig, load_config
from scorecard_assets.records import TableResult
from scorecard_assets.sample_fleet.generate import generate_fleet
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.tables import open_table, write_table
from scorecard_assets.transform import incremental
from scorecard_assets.transform.trail_runs import build_trail_runs

MARKER = "<!-- runstate:v1 -->"


@pytest.fixture(scope="module")
def sample_comments() -> pd.DataFrame:
    return read_recorded_trails(load_config(DEFAULT_CONFIG_PATH)).frame


@pytest.fixture(scope="module")
def generated_comments(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The trail of a freshly generated fleet (size S, another seed than the bundled sample)."""
    out = tmp_path_factory.mktemp("fleet") / "S"
    generate_fleet(out, size="S", seed=11)
    return read_recorded_trails(load_config(out / "scorecard.yaml")).frame


def _stored(tmp_path: Path, frame: pd.DataFrame, name: str) -> pd.DataFrame:
    """``frame`` after a round trip through the table store (what the next run reads back)."""
    handle = write_table(as_location(tmp_path / name), TableResult(frame=frame))
    reopened = open_table(handle.directory)
    assert reopened is not None
    return reopened.frame


def _first_build(tmp_path: Path, comments: pd.DataFrame):  # noqa: ANN202 - (stored frame, state)
    result, digests, per_issue, recomputed = incremental.refresh_trail_runs(comments, None, None)
    assert recomputed is None
    path = tmp_path / "state" / incremental.ISSUE_STATE_FILE
    incremental.save_issue_state(path, digests, per_issue, "token-1")
    state = incremental.load_issue_state(path, "token-1")
    assert state is not None
    return _stored(tmp_path, result.frame, "first"), state


def _assert_equals_scratch(tmp_path: Path, result: TableResult, comments: pd.DataFrame) -> None:
    scratch = build_trail_runs(comments)
    stored = _stored(tmp_path, result.frame, "incremental")
    expected = _stored(tmp_path, scratch.frame, "scratch")
    pd.testing.assert_frame_equal(stored, expected, check_exact=True)
    pd.testing.assert_frame_equal(result.frame.reset_index(drop=True), scratch.frame, check_exact=True)
    assert result.warnings == scratch.warnings
    assert result.extra == scratch.extra


def _edited(comments: pd.DataFrame, count: int) -> pd.DataFrame:
    """``comments`` with the body of ``count`` milestone comments (in distinct issues) changed."""
    out = comments.copy()
    milestones = out[out["body"].str.startswith(MARKER)].drop_duplicates(["repo", "issue"])
    picked = milestones.index[:: max(1, len(milestones) // count)][:count]
    out.loc[picked, "body"] = out.loc[picked, "body"].str.replace(
        "status=done", "status=blocked", regex=False
    )
    out.loc[picked, "updated_at"] = out.loc[picked, "updated_at"] + pd.Timedelta(seconds=1)
    return out


@pytest.mark.parametrize("fleet", ["sample_comments", "generated_comments"])
def test_appended_and_edited_comments_give_the_scratch_result(
    fleet: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    comments: pd.DataFrame = request.getfixturevalue(fleet)
    cutoff = comments["created_at"].quantile(0.8)
    before = comments[comments["created_at"] < cutoff].reset_index(drop=True)
    stored, state = _first_build(tmp_path, before)

    after = _edited(comments, 5)  # a week of new comments (new issues, new runs) and five edits
    result, _, _, recomputed = incremental.refresh_trail_runs(after, stored, state)
    assert recomputed is not None and 0 < recomputed < after[["repo", "issue"]].drop_duplicates().shape[0]
    _assert_equals_scratch(tmp_path, result, after)


def test_unchanged_comments_recompute_nothing(sample_comments: pd.DataFrame, tmp_path: Path) -> None:
    stored, state = _first_build(tmp_path, sample_comments)
    shuffled = sample_comments.sample(frac=1.0, random_state=3)  # arrival order does not matter
    result, _, _, recomputed = incremental.refresh_trail_runs(shuffled, stored, state)
    assert recomputed == 0
    _assert_equals_scratch(tmp_path, result, sample_comments)


def test_a_deleted_comment_is_a_full_refresh(sample_comments: pd.DataFrame, tmp_path: Path) -> None:
    stored, state = _first_build(tmp_path, sample_comments)
    first_issue = sample_comments[["repo", "issue"]].iloc[0]
    gone = (sample_comments["repo"] == first_issue["repo"]) & (
        sample_comments["issue"] == first_issue["issue"]
    )
    fewer = sample_comments[~gone].reset_index(drop=True)
    result, _, _, recomputed = incremental.refresh_trail_runs(fewer, stored, state)
    assert recomputed is None
    _assert_equals_scratch(tmp_path, result, fewer)


def test_state_of_another_stored_value_is_not_used(sample_comments: pd.DataFrame, tmp_path: Path) -> None:
    _first_build(tmp_path, sample_comments)
    path = tmp_path / "state" / incremental.ISSUE_STATE_FILE
    assert incremental.load_issue_state(path, "another-token") is None
    assert incremental.load_issue_state(path, None) is None
    path.write_bytes(b"not parquet")
    assert incremental.load_issue_state(path, "token-1") is None


def test_issue_digests_see_every_column(sample_comments: pd.DataFrame) -> None:
    base = incremental.issue_digests(sample_comments)
    assert len(base) == sample_comments[["repo", "issue"]].drop_duplicates().shape[0]
    touched = sample_comments.copy()
    touched.loc[touched.index[0], "author"] = "someone-else"
    changed = incremental.changed_issues(base, incremental.issue_digests(touched))
    assert changed is not None
    first = sample_comments.iloc[0]
    assert changed.to_dict("records") == [{"repo": first["repo"], "issue": first["issue"]}]
    assert incremental.changed_issues(None, base) is None


def test_still_current_compares_every_part() -> None:
    record = incremental.built_from("run_table", "1", versions={"trail_runs": "a"}, config="c")
    assert incremental.still_current(
        record, incremental.built_from("run_table", "1", versions={"trail_runs": "a"}, config="c")
    )
    assert not incremental.still_current(
        record, incremental.built_from("run_table", "2", versions={"trail_runs": "a"}, config="c")
    )
    assert not incremental.still_current(
        record, incremental.built_from("run_table", "1", versions={"trail_runs": "b"}, config="c")
    )
    assert not incremental.still_current(None, record)
    assert not incremental.still_current({**record, "extra": 1}, record)


def test_the_config_digest_follows_the_config() -> None:
    cfg = load_config(DEFAULT_CONFIG_PATH)
    other = ScorecardConfig.model_validate({**cfg.model_dump(), "as_of": None})
    assert incremental.config_digest(cfg) == incremental.config_digest(load_config(DEFAULT_CONFIG_PATH))
    assert incremental.config_digest(cfg) != incremental.config_digest(other)


def test_a_result_digest_ignores_read_counters_only() -> None:
    frame = pd.DataFrame({"a": [1, 2]})
    one = TableResult(frame=frame, extra={"reads": {"full": 2}, "rows": 2})
    assert incremental.result_digest(one, ignore_extra=["reads"]) == incremental.result_digest(
        TableResult(frame=frame.copy(), extra={"reads": {"unchanged": 2}, "rows": 2}), ignore_extra=["reads"]
    )
    assert incremental.result_digest(one) != incremental.result_digest(TableResult(frame=frame.iloc[::-1]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=2048))
def test_any_damaged_state_file_means_a_full_rebuild(tmp_path: Path, data: bytes) -> None:
    """The state file is read back from a store; whatever bytes it holds, it is used or refused whole."""
    path = tmp_path / incremental.ISSUE_STATE_FILE
    path.write_bytes(data)
    assert incremental.load_issue_state(path, "token-1") is None
