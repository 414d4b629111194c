"""The run table (docs/join.md "Attribution", "The run table"; cases of the reference's tests)."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from scorecard_assets.config import ScorecardConfig
from scorecard_assets.records import DataWarning
from scorecard_assets.schemas import (
    AGENT_LOG_USAGE,
    DISPATCH_EVENTS,
    RUN_TABLE,
    RUN_TELEMETRY,
    TRAIL_RUNS,
    contract_problems,
    empty_frame,
)
from scorecard_assets.transform.join import build_run_table, canonical_flags
from scorecard_assets.transform.trail_runs import build_trail_runs
from scorecard_tests.factories.frames import contract_frame
from scorecard_tests.factories.telemetry import telemetry
from scorecard_tests.factories.trails import Ms, at, comments, concat, ms, run_row

REPO = "imboard-ai/ai-dossier"
MONO = "imboard-ai/imboard-monorepo"


def config(**models: object) -> ScorecardConfig:
    return ScorecardConfig.model_validate(
        {
            "repos": [
                {"name": REPO, "checkouts": ["/home/u/projects/ai-dossier/*"]},
                {"name": MONO, "checkouts": ["/home/u/imboard/*"]},
            ],
            "models": models,
        }
    )


def typed(
    rows: list[dict[str, object]], contract: dict[str, tuple[str, str]], defaults: dict[str, object]
) -> pd.DataFrame:
    return contract_frame(rows, contract, defaults)


def events(*rows: dict[str, object]) -> pd.DataFrame:
    defaults = {
        "host": "h1",
        "repo": REPO,
        "slug": "imboard-ai-ai-dossier",
        "source_file": "events.jsonl",
        "line_no": 1,
        "is_report_agent": False,
    }
    fixed = []
    for r in rows:
        r = dict(r)
        r.setdefault("is_report_agent", r.get("detail") == "report agent")
        fixed.append(r)
    return typed(fixed, DISPATCH_EVENTS, defaults)


def slices(*rows: dict[str, object]) -> pd.DataFrame:
    defaults = {
        "host": "h1",
        "repo": REPO,
        "slug": "imboard-ai-ai-dossier",
        "log_path": "runs/issue-1.log",
        "slice_index": 0,
        "log_format": "claude-stream-json",
        "result_records": 1,
        "assistant_turns": 0,
        "tool_calls": 0,
        "edit_calls": 0,
        "edit_errors": 0,
        "aborted_tool_calls": 0,
        "verify_calls": 0,
        "bytes": 100,
    }
    rows = tuple({"step_latencies_ms": [], **r} for r in rows)
    return typed(list(rows), AGENT_LOG_USAGE, defaults)


def no_telemetry() -> pd.DataFrame:
    return empty_frame(RUN_TELEMETRY)


def table(
    trail: pd.DataFrame,
    tele: pd.DataFrame | None = None,
    ev: pd.DataFrame | None = None,
    logs: pd.DataFrame | None = None,
    cfg: ScorecardConfig | None = None,
) -> tuple[pd.DataFrame, list[DataWarning]]:
    runs = build_trail_runs(trail).frame
    result = build_run_table(
        runs,
        tele if tele is not None else no_telemetry(),
        ev if ev is not None else events(),
        logs if logs is not None else slices(),
        cfg or config(),
    )
    assert contract_problems(result.frame, RUN_TABLE) == []
    return result.frame, result.warnings


def delivered_trail(
    issue: int = 1,
    model: str = "claude-sonnet-5",
    run: str = "r-1-aaaa",
    repo: str = REPO,
    day: str = "2026-09-01",
    first_id: int = 1,
    **review: str,
) -> pd.DataFrame:
    stones = [
        ms("gate", at=at("10:00:00", day), run=run, model=model),
        ms("implement", at=at("10:30:00", day), run=run),
    ]
    if review:
        stones.append(ms("review", at=at("10:45:00", day), run=run, **review))
    stones.append(ms("ship", at=at("11:00:00", day), run=run))
    return comments(*stones, repo=repo, issue=issue, first_id=first_id)


def by_code(warnings: list[DataWarning], code: str) -> list[DataWarning]:
    return [w for w in warnings if w.code == code]


# --------------------------------------------------------------------------------------------
# contracts


def test_empty_inputs_conform() -> None:
    result = build_run_table(empty_frame(TRAIL_RUNS), no_telemetry(), events(), slices(), config())
    assert len(result.frame) == 0
    assert contract_problems(result.frame, RUN_TABLE) == []
    assert result.warnings == []


def test_empty_trail_with_telemetry_reports_it_unattributed() -> None:
    result = build_run_table(
        empty_frame(TRAIL_RUNS), telemetry({"issue": 3, "total_cost_usd": 1.0}), events(), slices(), config()
    )
    assert contract_problems(result.frame, RUN_TABLE) == []
    assert [w.code for w in result.warnings] == ["telemetry_unattributed"]


# --------------------------------------------------------------------------------------------
# canonical run (reference test cases)


def canonical_of(*stones: Ms) -> list[str]:
    frame, _ = table(comments(*stones))
    return frame.loc[frame["is_canonical"], "run_id"].tolist()


def test_delivered_run_beats_a_more_recent_blocked_run() -> None:
    assert canonical_of(
        ms("ship", at=at("10:00:00"), run="r-old"),
        ms("implement", "blocked", at=at("12:00:00"), run="r-new"),
    ) == ["r-old"]


def test_without_delivery_the_most_recently_started_run_wins() -> None:
    assert canonical_of(
        ms("implement", "blocked", at=at("12:00:00"), run="r-late"),
        ms("implement", "partial", at=at("10:00:00"), run="r-early"),
    ) == ["r-late"]


def test_first_delivered_in_trail_order_wins() -> None:
    assert canonical_of(
        ms("ship", at=at("12:00:00"), run="r-first"),
        ms("report", at=at("10:00:00"), run="r-second"),
    ) == ["r-first"]


def test_start_ties_keep_trail_order_and_missing_start_sorts_last() -> None:
    same = at("10:00:00")
    assert canonical_of(ms("gate", at=same, run="r-a"), ms("gate", at=same, run="r-b")) == ["r-a"]
    runs = build_trail_runs(
        comments(ms("gate", at=at("10:00:00"), run="r-a"), ms("gate", at=at("11:00:00"), run="r-b"))
    ).frame
    runs.loc[1, "started_at"] = pd.NaT
    assert canonical_flags(runs).tolist() == [True, False]


def test_one_canonical_run_per_issue_and_classifier_runs_only_when_alone() -> None:
    trail = concat(
        comments(
            ms("classify", at=at("12:00:00"), run="r-1-c"),
            ms("implement", "partial", at=at("10:00:00"), run="r-1-a"),
            issue=1,
        ),
        comments(ms("classify", at=at("09:00:00"), run="r-2-c"), issue=2, first_id=10),
    )
    frame, _ = table(trail)
    assert frame.groupby("issue")["is_canonical"].sum().tolist() == [1, 1]
    assert run_row(frame, "r-1-a")["is_canonical"]
    assert run_row(frame, "r-2-c")["is_canonical"]


def test_canonical_flags_on_no_runs() -> None:
    assert canonical_flags(empty_frame(TRAIL_RUNS)).tolist() == []


# --------------------------------------------------------------------------------------------
# names (reference test cases)


def test_models_are_canonicalised_with_raw_kept() -> None:
    frame, _ = table(
        comments(
            ms("gate", at=at("10:00:00"), model="llmgateway/glm-5.3"),
            ms("plan", at=at("10:05:00"), model="openrouter/~z-ai/glm-latest"),
            ms("implement", at=at("10:30:00"), model="claude-opus-5[1m]"),
        )
    )
    row = frame.iloc[0]
    assert (row["model"], row["provider"], row["model_raw"]) == (
        "glm-5.3",
        "llmgateway",
        "llmgateway/glm-5.3",
    )
    assert (row["planner_model"], row["planner_provider"]) == ("glm-5.3", "openrouter/z-ai")
    assert row["builder_model"] == "claude-opus-5[1m]" and pd.isna(row["builder_provider"])


def test_run_without_model_is_the_unknown_bucket() -> None:
    frame, _ = table(comments(ms("gate", at=at("10:00:00"))))
    assert frame.iloc[0]["model"] == "<unknown>" and pd.isna(frame.iloc[0]["provider"])


def test_declared_alias_folds_a_moving_tag() -> None:
    frame, warnings = table(
        delivered_trail(model="moonshotai/kimi-latest"), cfg=config(aliases={"kimi-latest": "kimi-k3"})
    )
    assert frame.iloc[0]["model"] == "kimi-k3"
    assert by_code(warnings, "moving_tag") == []


# --------------------------------------------------------------------------------------------
# dispatch information (reference test cases) and tier


def test_spawn_then_redispatch_sets_tier_cli_and_escalations() -> None:
    ev = events(
        {
            "ts": "2026-09-01T09:59:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "mid",
            "cmd": "claude -p --model sonnet",
            "agent_cli": "claude",
        },
        {"ts": "2026-09-01T10:40:00Z", "event": "redispatched", "issue": 1, "tier": "strong"},
        {"ts": "2026-09-01T10:20:00Z", "event": "stalled", "issue": 1},
        {"ts": "2026-09-01T10:35:00Z", "event": "stalled", "issue": 1},
        {"ts": "2026-09-01T10:39:00Z", "event": "fence-written", "issue": 1},
    )
    frame, _ = table(delivered_trail(), ev=ev)
    row = frame.iloc[0]
    assert (row["tier"], row["agent_cli"]) == ("strong", "claude")
    assert (row["escalations"], row["redispatches"], row["stalls"], row["unverified_exits"]) == (1, 1, 2, 1)
    assert [d["tier"] for d in row["work_dispatches"]] == ["mid", "strong"]
    assert row["work_dispatches"][0]["ts"] == pd.Timestamp("2026-09-01T09:59:00Z")
    # the counted events keep their times, so a window can count only its own (issues mode)
    assert [(str(e["ts"]), e["event"]) for e in row["counted_events"]] == [
        ("2026-09-01 10:20:00+00:00", "stalled"),
        ("2026-09-01 10:35:00+00:00", "stalled"),
        ("2026-09-01 10:39:00+00:00", "fence-written"),
        ("2026-09-01 10:40:00+00:00", "redispatched"),
    ]


def test_tier_is_never_taken_from_the_report_agent() -> None:
    ev = events(
        {
            "ts": "2026-09-01T09:59:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "mid",
            "agent_cli": "opencode",
        },
        {
            "ts": "2026-09-01T11:05:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "mechanical",
            "agent_cli": "claude",
            "detail": "report agent",
        },
    )
    frame, _ = table(delivered_trail(), ev=ev)
    row = frame.iloc[0]
    assert (row["tier"], row["agent_cli"]) == ("mid", "opencode")
    assert len(row["work_dispatches"]) == 1


def test_tier_is_not_limited_to_a_window() -> None:
    ev = events(
        {
            "ts": "2026-06-01T00:00:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "strong",
            "agent_cli": "claude",
        }
    )
    frame, _ = table(delivered_trail(), ev=ev)
    assert frame.iloc[0]["tier"] == "strong"


def test_events_go_to_the_run_nearest_in_time() -> None:
    trail = concat(
        delivered_trail(run="r-1-a", day="2026-09-01"),
        delivered_trail(run="r-1-b", day="2026-09-05", first_id=50),
    )
    ev = events(
        {"ts": "2026-09-01T09:58:00Z", "event": "spawned", "issue": 1, "tier": "mid", "agent_cli": "claude"},
        {"ts": "2026-09-01T10:10:00Z", "event": "stalled", "issue": 1},
        {
            "ts": "2026-09-05T09:58:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "strong",
            "agent_cli": "opencode",
        },
        {"ts": "2026-09-05T10:50:00Z", "event": "fence-written", "issue": 1},
    )
    frame, _ = table(trail, ev=ev)
    first, second = run_row(frame, "r-1-a"), run_row(frame, "r-1-b")
    assert (first["tier"], first["stalls"], first["unverified_exits"]) == ("mid", 1, 0)
    assert (second["tier"], second["stalls"], second["unverified_exits"]) == ("strong", 0, 1)


def test_redispatch_without_cmd_borrows_the_next_spawns_cli_within_minutes() -> None:
    ev = events(
        {"ts": "2026-09-01T10:20:00Z", "event": "redispatched", "issue": 1, "tier": "strong"},
        {
            "ts": "2026-09-01T10:21:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "strong",
            "agent_cli": "opencode",
        },
        {"ts": "2026-09-01T10:40:00Z", "event": "redispatched", "issue": 1, "tier": "strong"},
        {
            "ts": "2026-09-01T10:50:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "strong",
            "agent_cli": "claude",
        },
    )
    frame, _ = table(delivered_trail(), ev=ev)
    clis = [d["agent_cli"] for d in frame.iloc[0]["work_dispatches"]]
    assert clis == ["opencode", "opencode", None, "claude"]


def test_hosts_are_merged() -> None:
    ev = events(
        {"ts": "2026-09-01T10:10:00Z", "event": "stalled", "issue": 1, "host": "h1"},
        {"ts": "2026-09-01T10:11:00Z", "event": "stalled", "issue": 1, "host": "h2"},
    )
    tele = telemetry(
        {"issue": 1, "host": "h1", "timestamp": "2026-09-01T10:30:00Z", "total_cost_usd": 1.25},
        {"issue": 1, "host": "h2", "timestamp": "2026-09-01T10:59:00Z", "total_cost_usd": 2.5},
    )
    frame, _ = table(delivered_trail(), tele=tele, ev=ev)
    row = frame.iloc[0]
    assert row["stalls"] == 2
    assert (row["tele_rows"], row["tele_cost_usd"]) == (2, 3.75)


def test_tier_unknown_is_counted_per_repo_for_non_classifier_runs() -> None:
    trail = concat(
        delivered_trail(issue=1),
        delivered_trail(issue=2, first_id=10),
        comments(ms("classify", at=at("09:00:00"), run="r-3-c"), issue=3, first_id=20),
    )
    ev = events({"ts": "2026-09-01T09:59:00Z", "event": "spawned", "issue": 1, "tier": "mid"})
    _, warnings = table(trail, ev=ev)
    (w,) = by_code(warnings, "tier_unknown")
    assert w.repo == REPO and w.values == {"runs": 1}


# --------------------------------------------------------------------------------------------
# telemetry and cost merge (reference test cases)


def test_join_of_the_reference_case() -> None:
    """reference test case: llmgateway/glm-5.3, tier mid, opencode, delivered, cost 2.5, API 1 min, review 3/0."""
    ev = events(
        {
            "ts": "2026-09-01T09:59:00Z",
            "event": "spawned",
            "issue": 1,
            "tier": "mid",
            "cmd": "opencode run",
            "agent_cli": "opencode",
        }
    )
    tele = telemetry(
        {
            "issue": 1,
            "cwd": "/home/u/projects/ai-dossier/main",
            "timestamp": "2026-09-01T11:00:00Z",
            "total_cost_usd": 2.5,
            "duration_ms": 60_000.0,
        }
    )
    frame, _ = table(delivered_trail(model="llmgateway/glm-5.3", fixed="3", escalated="0"), tele=tele, ev=ev)
    row = frame.iloc[0]
    assert (row["model"], row["model_raw"], row["provider"]) == (
        "glm-5.3",
        "llmgateway/glm-5.3",
        "llmgateway",
    )
    assert (row["tier"], row["agent_cli"]) == ("mid", "opencode")
    assert bool(row["delivered"])
    assert (row["cost_usd"], row["cost_source"], row["api_minutes"]) == (2.5, "runs.jsonl", 1.0)
    assert (row["review_fixed"], row["review_escalated"]) == (3, 0)


def test_no_dispatch_info_keeps_the_telemetry_tier_and_no_cost() -> None:
    tele = telemetry({"issue": 1, "timestamp": "2026-09-01T11:00:00Z", "tier": "strong"})
    frame, warnings = table(delivered_trail(), tele=tele)
    row = frame.iloc[0]
    assert pd.isna(row["tier"]) and row["tele_tier"] == "strong"
    assert math.isnan(row["cost_usd"]) and pd.isna(row["cost_source"])
    assert by_code(warnings, "tier_unknown") == []


def test_end_to_end_reference_case() -> None:
    """reference test case: runs.jsonl cost 3.5 / 100 in / 200 out / 120,000 ms + spawned mid + gate & ship done."""
    tele = telemetry(
        {
            "issue": 1,
            "timestamp": "2026-09-01T11:00:00Z",
            "total_cost_usd": 3.5,
            "input_tokens": 100.0,
            "output_tokens": 200.0,
            "duration_ms": 120_000.0,
        }
    )
    ev = events(
        {"ts": "2026-09-01T09:59:00Z", "event": "spawned", "issue": 1, "tier": "mid", "agent_cli": "claude"}
    )
    trail = comments(
        ms("gate", at=at("10:00:00", "2026-09-01"), model="claude-sonnet-5"),
        ms("ship", at=at("11:00:00", "2026-09-01")),
    )
    frame, _ = table(trail, tele=tele, ev=ev)
    row = frame.iloc[0]
    assert (row["model"], bool(row["delivered"]), row["cost_usd"]) == ("claude-sonnet-5", True, 3.5)
    assert (row["input_tokens"], row["output_tokens"], row["api_minutes"], row["tier"]) == (
        100,
        200,
        2.0,
        "mid",
    )
    routed, _ = table(delivered_trail(model="openrouter/~z-ai/glm-latest"))
    assert (routed.iloc[0]["model"], routed.iloc[0]["provider"]) == ("glm-5.3", "openrouter/z-ai")


def test_telemetry_sums_keep_missing_fields_missing() -> None:
    """reference test case at run level: a field no row reported stays NaN, never 0."""
    tele = telemetry(
        {"issue": 1, "timestamp": "2026-09-01T10:30:00Z", "input_tokens": 900.0},
        {"issue": 1, "timestamp": "2026-09-01T10:40:00Z", "input_tokens": 100.0, "tier": "mid,strong"},
        {"issue": 1, "timestamp": "2026-09-01T10:50:00Z", "tier": "mechanical"},
    )
    frame, _ = table(delivered_trail(), tele=tele)
    row = frame.iloc[0]
    assert row["tele_input_tokens"] == 1000
    assert math.isnan(row["tele_output_tokens"]) and math.isnan(row["output_tokens"])
    assert math.isnan(row["tele_cost_usd"])
    assert row["tele_tier"] == "mechanical,mid,strong"


def test_runs_jsonl_cost_stays_even_when_the_log_says_otherwise() -> None:
    tele = telemetry({"issue": 1, "timestamp": "2026-09-01T11:00:00Z", "total_cost_usd": 4.173})
    logs = slices({"issue": 1, "slice_start": "2026-09-01T09:59:00Z", "cost_usd": 99.0})
    row = table(delivered_trail(), tele=tele, logs=logs)[0].iloc[0]
    assert (row["cost_usd"], row["cost_source"], row["log_cost_usd"]) == (4.173, "runs.jsonl", 99.0)


def test_per_field_fill_from_the_agent_log() -> None:
    tele = telemetry(
        {
            "issue": 1,
            "timestamp": "2026-09-01T11:00:00Z",
            "duration_ms": 600_000.0,
            "tier": "strong",
            "cache_creation_tokens": 30.0,
        }
    )
    logs = slices(
        {
            "issue": 1,
            "slice_start": "2026-09-01T09:59:00Z",
            "cost_usd": 58.72,
            "input_tokens": 7.0,
            "duration_ms": 1.0,
            "cache_read_tokens": 40.0,
            "cache_creation_tokens": 999.0,
        }
    )
    row = table(delivered_trail(), tele=tele, logs=logs)[0].iloc[0]
    assert (row["cost_usd"], row["input_tokens"], row["cost_source"]) == (58.72, 7, "agent-log")
    assert row["duration_ms"] == 600_000 and row["tele_tier"] == "strong"
    # cache halves carried through the merge, each from its own source
    assert (row["cache_creation_tokens"], row["cache_read_tokens"]) == (30, 40)


def test_no_cost_anywhere_has_no_source() -> None:
    tele = telemetry({"issue": 1, "timestamp": "2026-09-01T11:00:00Z", "input_tokens": 5.0})
    row = table(delivered_trail(), tele=tele)[0].iloc[0]
    assert math.isnan(row["cost_usd"]) and pd.isna(row["cost_source"]) and row["input_tokens"] == 5
    bare = table(delivered_trail())[0].iloc[0]
    assert all(math.isnan(bare[c]) for c in ("cost_usd", "input_tokens", "output_tokens", "duration_ms"))


def test_telemetry_goes_only_to_its_own_repo() -> None:
    trail = concat(delivered_trail(issue=7, repo=REPO), delivered_trail(issue=7, repo=MONO, first_id=20))
    tele = telemetry(
        {
            "issue": 7,
            "cwd": "/home/u/imboard/main",
            "timestamp": "2026-09-01T11:00:00Z",
            "total_cost_usd": 4.0,
        },
        {"issue": 7, "cwd": None, "timestamp": "2026-09-01T11:00:00Z", "total_cost_usd": 100.0},
    )
    frame, warnings = table(trail, tele=tele)
    costs = dict(zip(frame["repo"], frame["cost_usd"], strict=True))
    assert costs[MONO] == 4.0 and math.isnan(costs[REPO])
    assert {w.code for w in warnings} >= {"telemetry_unattributed", "issue_number_ambiguous"}


# --------------------------------------------------------------------------------------------
# agent logs


def test_agent_log_cost_sums_every_slice_of_every_log() -> None:
    logs = slices(
        {
            "issue": 1,
            "log_path": "h1/runs/issue-1.log",
            "slice_index": 0,
            "slice_start": "2026-09-01T09:59:00Z",
            "cost_usd": 1.5,
            "input_tokens": 10.0,
            "assistant_turns": 3,
            "tool_calls": 5,
        },
        {
            "issue": 1,
            "log_path": "h1/runs/issue-1.log",
            "slice_index": 1,
            "slice_start": "2026-09-01T10:31:00Z",
            "cost_usd": 2.5,
            "input_tokens": 20.0,
            "assistant_turns": 4,
            "tool_calls": 1,
        },
        {
            "issue": 1,
            "log_path": "h2/runs/batch-b-20260901-02-m2-1.log",
            "host": "h2",
            "slice_start": "2026-09-01T10:50:00Z",
            "cost_usd": 1.5,
            "log_format": "opencode-json",
        },
    )
    row = table(delivered_trail(), logs=logs)[0].iloc[0]
    assert (row["log_slices"], row["log_cost_usd"], row["log_input_tokens"]) == (3, 5.5, 30)
    assert (row["cost_usd"], row["cost_source"]) == (5.5, "agent-log")
    assert (row["assistant_turns"], row["tool_calls"]) == (7, 6)
    assert not bool(row["log_cost_estimated"])


def test_log_quality_fields() -> None:
    logs = slices(
        {
            "issue": 1,
            "slice_index": 0,
            "slice_start": "2026-09-01T09:59:00Z",
            "edit_calls": 2,
            "edit_errors": 1,
            "verify_after_last_edit": True,
            "verify_calls": 1,
            "latency_median_s": 1.0,
            "step_latencies_ms": [1000, 1000, 1000, 1000],
            "hversion": "1.0.0",
        },
        {
            "issue": 1,
            "slice_index": 1,
            "slice_start": "2026-09-01T10:20:00Z",
            "edit_calls": 1,
            "verify_after_last_edit": False,
            "latency_median_s": 4.0,
            "step_latencies_ms": [4000],
            "aborted_tool_calls": 1,
        },
        {
            "issue": 1,
            "slice_index": 2,
            "slice_start": "2026-09-01T10:40:00Z",
            "edit_calls": 0,
            "latency_median_s": 9.0,
            "step_latencies_ms": [9000],
            "hversion": "1.2.0",
        },
    )
    row = table(delivered_trail(), logs=logs)[0].iloc[0]
    assert (row["edit_calls"], row["edit_errors"], row["aborted_tool_calls"]) == (3, 1, 1)
    assert not pd.isna(row["verify_after_last_edit"]) and not bool(row["verify_after_last_edit"])
    # the upper median of all six steps (sorted[3] = 1 s), not the median of the slices' medians (4 s)
    assert row["latency_median_s"] == 1.0
    assert row["hversion"] == "1.2.0"
    # a later dispatch that only re-ran the tests verifies the run's last edit
    logs.loc[2, "verify_calls"] = 1
    row = table(delivered_trail(), logs=logs)[0].iloc[0]
    assert bool(row["verify_after_last_edit"])
    # a verify before the last edit does not
    logs.loc[2, "verify_calls"] = 0
    logs.loc[0, "verify_calls"] = 3
    row = table(delivered_trail(), logs=logs)[0].iloc[0]
    assert not bool(row["verify_after_last_edit"])


def test_run_without_slices_has_no_log_fields() -> None:
    row = table(delivered_trail())[0].iloc[0]
    assert row["log_slices"] == 0
    for col in (
        "assistant_turns",
        "tool_calls",
        "edit_calls",
        "edit_errors",
        "aborted_tool_calls",
        "verify_after_last_edit",
        "hversion",
    ):
        assert pd.isna(row[col]), col
    assert math.isnan(row["latency_median_s"])


def test_cost_is_estimated_from_the_price_table_for_tokens_without_cost() -> None:
    prices = {
        "glm-5.3": {"input": 1.0, "output": 4.0, "cached_input": 0.25},
        "claude-sonnet-5": {"input": 3.0, "output": 15.0},
    }
    logs = slices(
        # slice model named by the log: 1M in * $1 + 0.5M out * $4 + 2M cache read * $0.25 = $3.50
        {
            "issue": 1,
            "slice_index": 0,
            "slice_start": "2026-09-01T09:59:00Z",
            "models": "zai-coding-plan/glm-5.3",
            "input_tokens": 1_000_000.0,
            "output_tokens": 500_000.0,
            "cache_read_tokens": 2_000_000.0,
        },
        # no model in the slice: the run's builder model (claude-sonnet-5): 0.1M * $3 + 0.1M * $15 = $1.80
        {
            "issue": 1,
            "slice_index": 1,
            "slice_start": "2026-09-01T10:30:00Z",
            "input_tokens": 100_000.0,
            "output_tokens": 100_000.0,
        },
    )
    frame, warnings = table(delivered_trail(), logs=logs, cfg=config(prices=prices))
    row = frame.iloc[0]
    assert row["log_cost_usd"] == pytest.approx(3.5 + 1.8)
    assert bool(row["log_cost_estimated"]) and row["cost_source"] == "estimate"
    (w,) = by_code(warnings, "cost_estimated")
    assert w.values["slices"] == 2
    assert "claude-sonnet-5" in w.message and "glm-5.3" in w.message


def test_no_price_means_no_estimate() -> None:
    logs = slices(
        {"issue": 1, "slice_start": "2026-09-01T09:59:00Z", "input_tokens": 10.0, "output_tokens": 5.0}
    )
    frame, warnings = table(delivered_trail(), logs=logs)
    row = frame.iloc[0]
    assert math.isnan(row["cost_usd"]) and pd.isna(row["cost_source"]) and not bool(row["log_cost_estimated"])
    assert row["input_tokens"] == 10
    assert by_code(warnings, "cost_estimated") == []


# --------------------------------------------------------------------------------------------
# model warnings (c7, c8, c9)


def test_model_missing_only_when_another_bucket_exists() -> None:
    trail = concat(
        delivered_trail(issue=1),
        comments(ms("gate", at=at("10:00:00")), issue=2, first_id=10),
        comments(ms("classify", at=at("09:00:00"), run="r-3-c"), issue=3, first_id=20),
    )
    (w,) = by_code(table(trail)[1], "model_missing")
    assert w.values == {"runs": 1} and w.repo == REPO
    alone = concat(
        comments(ms("gate", at=at("10:00:00"))), comments(ms("gate", at=at("10:00:00")), issue=2, first_id=5)
    )
    assert by_code(table(alone)[1], "model_missing") == []


def test_model_routing_prefix_pairs() -> None:
    trail = concat(
        delivered_trail(issue=1, model="qwen/qwen3-coder"),
        delivered_trail(issue=2, model="qwen3-coder", first_id=10),
        delivered_trail(issue=3, model="acme-sonnet", first_id=20),
    )
    warnings = by_code(table(trail)[1], "model_routing_prefix")
    assert [(w.values["model"], w.values["other"]) for w in warnings] == [("qwen/qwen3-coder", "qwen3-coder")]


def test_moving_tag_names_the_model_and_its_run_count() -> None:
    trail = concat(
        delivered_trail(issue=1, model="openrouter-kimi-latest", repo=MONO),
        delivered_trail(issue=2, model="llmgateway/glm-latest", repo=MONO, first_id=10),
    )
    (w,) = by_code(table(trail)[1], "moving_tag")
    assert w.repo == MONO and w.values == {"model": "kimi-latest", "runs": 1}


# --------------------------------------------------------------------------------------------
# pass-through and derived columns


def test_trail_columns_pass_through_and_derived_minutes() -> None:
    trail = delivered_trail(fixed="2", ac_met="4", ac_total="5")
    runs = build_trail_runs(trail).frame
    frame, _ = table(trail)
    row = frame.iloc[0]
    assert row["wall_clock_minutes"] == 60.0
    assert row["phase_seconds"] == runs.iloc[0]["phase_seconds"]
    assert (row["ac_met"], row["ac_total"], row["review_fixed"]) == (4, 5, 2)
    assert list(frame.columns)[: len(TRAIL_RUNS)] == list(TRAIL_RUNS)


def test_classifier_only_runs_are_flagged_in_the_run_table() -> None:
    trail = comments(
        ms("classify", at=at("09:00:00"), run="r-1-c", risk="low"),
        *[
            ms("gate", at=at("10:00:00"), run="r-1-a", model="glm-5.3"),
            ms("ship", at=at("11:00:00"), run="r-1-a"),
        ],
    )
    frame, warnings = table(trail)
    assert run_row(frame, "r-1-c")["classifier_only"] and not run_row(frame, "r-1-a")["classifier_only"]
    assert by_code(warnings, "model_missing") == []


def test_reader_estimates_are_disclosed_per_repo() -> None:
    trail = concat(delivered_trail(issue=1), delivered_trail(issue=2, repo=MONO, first_id=10))
    logs = slices(
        # the log reader already priced this one; the model falls back to the run's builder model
        {"issue": 1, "slice_start": "2026-09-01T09:59:00Z", "cost_usd": 1.25, "cost_kind": "estimate"},
        {
            "issue": 2,
            "repo": MONO,
            "slice_start": "2026-09-01T09:59:00Z",
            "cost_usd": 2.0,
            "cost_kind": "modelUsage",
        },
    )
    frame, warnings = table(trail, logs=logs)
    row = frame[frame["repo"] == REPO].iloc[0]
    assert (row["cost_usd"], row["cost_source"]) == (1.25, "estimate")
    assert frame[frame["repo"] == MONO].iloc[0]["cost_source"] == "agent-log"
    (w,) = by_code(warnings, "cost_estimated")
    assert w.repo == REPO and w.values == {"slices": 1, "models": "claude-sonnet-5"}


def test_gateway_spellings_share_one_bucket_and_keep_their_raw_model() -> None:
    """reference test case (model buckets): glm-5.3 + llmgateway/glm-5.3 -> one bucket; delivered, blocked, unfinished."""
    trail = concat(
        delivered_trail(issue=1, model="glm-5.3"),
        comments(
            ms("gate", at=at("10:00:00"), run="r-2-a", model="llmgateway/glm-5.3"),
            ms("implement", "blocked", at=at("10:30:00"), run="r-2-a", reason="flaky-ci"),
            issue=2,
            first_id=10,
        ),
        comments(
            ms("gate", at=at("10:00:00"), run="r-3-a", model="glm-5.3"),
            ms("review", "partial", at=at("10:30:00"), run="r-3-a"),
            issue=3,
            first_id=20,
        ),
    )
    frame, warnings = table(trail)
    assert frame["model"].tolist() == ["glm-5.3"] * 3
    assert frame["model_raw"].tolist() == ["glm-5.3", "llmgateway/glm-5.3", "glm-5.3"]
    assert frame["provider"].isna().tolist() == [True, False, True]
    assert (int(frame["delivered"].sum()), int(frame["blocked"].sum())) == (1, 1)
    unfinished = ~frame["delivered"] & ~frame["blocked"]
    assert int(unfinished.sum()) == 1
    assert by_code(warnings, "model_routing_prefix") == []  # folded, so no second key


def test_verify_comes_from_the_last_slice_with_edits_even_when_unknown() -> None:
    logs = slices(
        {
            "issue": 1,
            "slice_index": 0,
            "slice_start": "2026-09-01T09:59:00Z",
            "edit_calls": 2,
            "verify_after_last_edit": True,
        },
        {"issue": 1, "slice_index": 1, "slice_start": "2026-09-01T10:20:00Z", "edit_calls": 1},
    )
    row = table(delivered_trail(), logs=logs)[0].iloc[0]
    assert pd.isna(row["verify_after_last_edit"])


def test_journal_unverified_exits_are_counted_per_run_beside_the_reference_proxy() -> None:
    ev = events(
        {"ts": "2026-09-01T10:39:00Z", "event": "fence-written", "issue": 1},
        {"ts": "2026-09-01T09:59:00Z", "event": "spawned", "issue": 1, "tier": "mid", "agent_cli": "claude"},
    )
    listed = [
        {"host": "h1", "repo": REPO, "issue": 1, "ts": "2026-09-01T10:38:00.000Z"},
        {"host": "h1", "repo": REPO, "issue": 1, "ts": "2026-09-01T10:50:00.000Z"},
        {"host": "h1", "repo": REPO, "issue": 99, "ts": "2026-09-01T10:50:00.000Z"},  # no trail
    ]
    runs = build_trail_runs(delivered_trail()).frame
    with_listed = build_run_table(runs, no_telemetry(), ev, slices(), config(), unverified_exit_events=listed)
    without = build_run_table(runs, no_telemetry(), ev, slices(), config())
    assert contract_problems(with_listed.frame, RUN_TABLE) == []
    row = with_listed.frame.iloc[0]
    assert (row["unverified_exits"], row["unverified_exit_events"], row["tier"]) == (1, 2, "mid")
    assert without.frame.iloc[0]["unverified_exit_events"] == 0
    assert [e["event"] for e in row["counted_events"]].count("verify-incomplete") == 2
