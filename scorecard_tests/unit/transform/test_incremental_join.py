"""``run_table`` issue by issue: equal to ``build_run_table`` from scratch, exactly (frame values,
dtypes and row order, warnings, extras), whatever changed between two refreshes
(docs/incremental.md "Recomputing changed issues", "Why the result equals a from-scratch build")."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scorecard_assets.config import DEFAULT_CONFIG_PATH, ScorecardConfig, load_config
from scorecard_assets.records import TableResult
from scorecard_assets.sample_fleet.generate import generate_fleet
from scorecard_assets.schemas import AGENT_LOG_USAGE, DISPATCH_EVENTS, empty_frame
from scorecard_assets.storage.location import as_location
from scorecard_assets.storage.tables import open_table, write_table
from scorecard_assets.transform import incremental, incremental_join
from scorecard_assets.transform.trail_runs import build_trail_runs
from scorecard_tests.factories.join_inputs import (
    JoinInputs,
    cut_before,
    edited_trails,
    read_join_inputs,
    truncated_telemetry,
    with_comments,
    without_issue,
)
from scorecard_tests.factories.telemetry import telemetry
from scorecard_tests.factories.trails import at, comments, concat, ms


@pytest.fixture(scope="module")
def sample_inputs(tmp_path_factory: pytest.TempPathFactory) -> JoinInputs:
    return read_join_inputs(load_config(DEFAULT_CONFIG_PATH), tmp_path_factory.mktemp("logs"))


@pytest.fixture(scope="module")
def generated_inputs(tmp_path_factory: pytest.TempPathFactory) -> JoinInputs:
    """A freshly generated fleet (size S, another seed than the bundled sample)."""
    out = tmp_path_factory.mktemp("fleet") / "S"
    generate_fleet(out, size="S", seed=11)
    return read_join_inputs(load_config(out / "scorecard.yaml"), tmp_path_factory.mktemp("logs"))


def _round_trip(folder: Path, frame: pd.DataFrame, columns: tuple[str, ...] | None = None) -> pd.DataFrame:
    """``frame`` after the table store (what the next run reads back as the stored value; only
    ``columns`` of it, as the asset reads it, when given)."""
    handle = write_table(as_location(folder), TableResult(frame=frame))
    reopened = open_table(handle.directory)
    assert reopened is not None
    return reopened.frame if columns is None else reopened.read(columns=columns)


class Store:
    """The stored value and the per-issue state of one refresh, as the asset keeps them."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = 0
        self.frame: pd.DataFrame | None = None
        self.state: tuple[pd.DataFrame, dict] | None = None

    def refresh(self, inputs: JoinInputs) -> tuple[TableResult, int | None]:
        result, digests, notes, recomputed = incremental_join.refresh_run_table(
            *inputs.args(), self.frame, self.state
        )
        self.count += 1
        token = f"token-{self.count}"
        path = self.folder / "state" / incremental_join.STATE_FILE
        incremental.save_keyed_state(path, digests, notes, token)
        self.state = incremental.load_keyed_state(path, token)
        assert self.state is not None
        # the asset reads only incremental_join.STORED_COLUMNS of its stored value
        self.frame = _round_trip(
            self.folder / f"value-{self.count}", result.frame, incremental_join.STORED_COLUMNS
        )
        return result, recomputed


def _assert_equals_scratch(folder: Path, result: TableResult, inputs: JoinInputs) -> None:
    scratch = inputs.build()
    pd.testing.assert_frame_equal(result.frame, scratch.frame, check_exact=True, check_dtype=True)
    assert list(result.frame.dtypes) == list(scratch.frame.dtypes)
    stored = _round_trip(folder / "check-incremental", result.frame)
    pd.testing.assert_frame_equal(
        stored, _round_trip(folder / "check-scratch", scratch.frame), check_exact=True
    )
    assert result.warnings == scratch.warnings
    assert result.extra == scratch.extra


def _issues(inputs: JoinInputs) -> int:
    return inputs.trail_runs[["repo", "issue"]].drop_duplicates().shape[0]


@pytest.mark.parametrize("fleet", ["sample_inputs", "generated_inputs"])
def test_a_week_appended_everywhere_and_edited_trails_give_the_scratch_result(
    fleet: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    inputs: JoinInputs = request.getfixturevalue(fleet)
    cutoff = inputs.comments["created_at"].quantile(0.85)
    store = Store(tmp_path)
    first, recomputed = store.refresh(cut_before(inputs, cutoff))
    assert recomputed is None, "no state yet: everything is joined"
    _assert_equals_scratch(tmp_path, first, cut_before(inputs, cutoff))

    after = edited_trails(inputs, 5)  # the week's comments, telemetry, events and slices; 5 edits
    result, recomputed = store.refresh(after)
    assert recomputed is not None and 5 <= recomputed < _issues(after)
    _assert_equals_scratch(tmp_path, result, after)


def test_unchanged_inputs_recompute_nothing(sample_inputs: JoinInputs, tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.refresh(sample_inputs)
    result, recomputed = store.refresh(sample_inputs)
    assert recomputed == 0
    _assert_equals_scratch(tmp_path, result, sample_inputs)


@pytest.mark.parametrize("fleet", ["sample_inputs", "generated_inputs"])
def test_a_deleted_issue_and_a_truncated_journal_give_the_scratch_result(
    fleet: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    inputs: JoinInputs = request.getfixturevalue(fleet)
    store = Store(tmp_path)
    store.refresh(inputs)
    tele = inputs.telemetry.dropna(subset=["issue"])
    first = inputs.trail_runs[inputs.trail_runs["issue"].isin(tele["issue"])].iloc[0]
    fewer = without_issue(inputs, str(first["repo"]), int(first["issue"]))
    assert len(fewer.trail_runs) < len(inputs.trail_runs)
    result, recomputed = store.refresh(fewer)
    assert recomputed == 0, "the deleted issue's rows go; nobody else's inputs changed"
    _assert_equals_scratch(tmp_path, result, fewer)

    cut = truncated_telemetry(fewer)
    assert len(cut.telemetry) < len(fewer.telemetry)
    result, recomputed = store.refresh(cut)
    assert recomputed is not None and 0 < recomputed < _issues(cut)
    _assert_equals_scratch(tmp_path, result, cut)

    result, recomputed = store.refresh(inputs)  # the issue and the lines come back
    assert recomputed is not None and recomputed > 0
    _assert_equals_scratch(tmp_path, result, inputs)


def test_an_appended_telemetry_row_recomputes_its_issue_only(
    sample_inputs: JoinInputs, tmp_path: Path
) -> None:
    store = Store(tmp_path)
    store.refresh(sample_inputs)
    t = sample_inputs.telemetry
    row = (
        t[t["issue"].notna() & t["total_cost_usd"].notna()].iloc[[-1]].assign(line_no=t["line_no"].max() + 1)
    )
    more = replace(sample_inputs, telemetry=pd.concat([t, row], ignore_index=True))
    result, recomputed = store.refresh(more)
    assert recomputed == 1
    _assert_equals_scratch(tmp_path, result, more)
    assert result.frame["tele_rows"].sum() == sample_inputs.build().frame["tele_rows"].sum() + 1


def test_a_telemetry_row_that_becomes_ambiguous_leaves_its_issue(tmp_path: Path) -> None:
    """A runs.jsonl row without a matching checkout belongs to the one repo whose trails hold its
    issue number; once another repo's trail holds the number too, it belongs to none: that is a
    fleet-wide fact, and the first repo's issue must be joined again."""
    cfg = ScorecardConfig.model_validate({"repos": [{"name": "acme/a"}, {"name": "acme/b"}]})
    trail_a = comments(ms("gate", at=at("10:00:00"), run="r-a"), repo="acme/a", issue=5)
    trail_b = comments(ms("gate", at=at("10:30:00"), run="r-b"), repo="acme/b", issue=5, first_id=10)
    other = comments(ms("gate", at=at("09:00:00"), run="r-c"), repo="acme/b", issue=6, first_id=20)
    rows = telemetry({"issue": 5, "total_cost_usd": 2.0}, {"issue": 6, "total_cost_usd": 1.0})
    base = JoinInputs(
        cfg=cfg, comments=concat(trail_a, other), trail_runs=build_trail_runs(concat(trail_a, other)).frame,
        telemetry=rows, events=empty_frame(DISPATCH_EVENTS), unverified=None,
        slices=empty_frame(AGENT_LOG_USAGE),
    )  # fmt: skip
    store = Store(tmp_path)
    first, _ = store.refresh(base)
    assert first.frame.loc[first.frame["repo"].eq("acme/a"), "tele_cost_usd"].tolist() == [2.0]
    both = with_comments(base, concat(trail_a, other, trail_b))
    result, recomputed = store.refresh(both)
    assert recomputed == 2, "acme/a#5 lost its row, acme/b#5 is new"
    _assert_equals_scratch(tmp_path, result, both)
    assert result.frame["tele_cost_usd"].isna().sum() == 2
    assert "issue_number_ambiguous" in {w.code for w in result.warnings}


def test_state_that_does_not_match_the_stored_rows_is_a_full_build(
    sample_inputs: JoinInputs, tmp_path: Path
) -> None:
    store = Store(tmp_path)
    store.refresh(sample_inputs)
    assert store.frame is not None
    store.frame = store.frame.iloc[1:]  # a stored value that lost a row (not the one the state describes)
    result, recomputed = store.refresh(sample_inputs)
    assert recomputed is None
    _assert_equals_scratch(tmp_path, result, sample_inputs)


def _subset(frame: pd.DataFrame, rng: np.random.Generator, p: float) -> pd.DataFrame:
    return frame[rng.random(len(frame)) >= p].reset_index(drop=True)


def _random_variant(inputs: JoinInputs, seed: int) -> JoinInputs:
    """``inputs`` with random rows of every input left out: whole issues' comments, single comments,
    telemetry rows, events, unverified exits and slices."""
    rng = np.random.default_rng(seed)
    issues = inputs.comments[["repo", "issue"]].drop_duplicates()
    gone = _subset(issues, rng, 0.9)
    c = inputs.comments.merge(gone, on=["repo", "issue"], how="left", indicator=True)
    c = c[c["_merge"] == "left_only"].drop(columns="_merge")
    c = _subset(c, rng, rng.choice([0.0, 0.02]))
    unverified = inputs.unverified
    if unverified:
        unverified = [e for e in unverified if rng.random() >= 0.2]
    return replace(
        with_comments(inputs, c),
        telemetry=_subset(inputs.telemetry, rng, rng.choice([0.0, 0.03])),
        events=_subset(inputs.events, rng, rng.choice([0.0, 0.03])),
        unverified=unverified,
        slices=_subset(inputs.slices, rng, rng.choice([0.0, 0.03])),
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=st.integers(0, 2**32 - 1), second=st.integers(0, 2**32 - 1))
def test_any_two_versions_of_the_inputs_refresh_to_the_scratch_result(
    sample_inputs: JoinInputs, tmp_path_factory: pytest.TempPathFactory, first: int, second: int
) -> None:
    folder = tmp_path_factory.mktemp("split")
    store = Store(folder)
    store.refresh(_random_variant(sample_inputs, first))
    later = _random_variant(sample_inputs, second)
    result, recomputed = store.refresh(later)
    assert recomputed is not None
    _assert_equals_scratch(folder, result, later)
