"""Column contracts of the DataFrames that flow between assets.

Each contract maps a column to (kind, meaning). Kinds:

- ``str``      text (pandas ``str``/object); ``None``/NaN where the meaning says "or NA"
- ``int``      int64, never missing
- ``Int``      nullable Int64 (``pd.NA`` = not reported)
- ``float``    float64 (NaN = not reported)
- ``bool``     bool, never missing
- ``boolean``  nullable boolean (``pd.NA`` = unknown)
- ``datetime`` datetime64 with tz UTC (NaT = unknown)
- ``object``   Python objects (lists / dicts), documented per column

``contract_problems`` lists how a frame breaks a contract. The IO manager stores no asset frame that
breaks its contract (``require_contract``; docs/architecture.md "Frame contracts"); tests check their
builders with it too.
"""

from __future__ import annotations

import pandas as pd

Contract = dict[str, tuple[str, str]]

TRAIL_COMMENTS: Contract = {
    "repo": ("str", "owner/name"),
    "issue": ("int", "issue number"),
    "comment_id": ("int", "GitHub comment id"),
    "created_at": ("datetime", "server creation time of the comment"),
    "updated_at": ("datetime", "server update time (edits)"),
    "author": ("str", "comment author login ('' when unknown)"),
    "body": ("str", "raw body; only comments starting exactly with '<!-- runstate:v1 -->'"),
    "issue_state": ("str", "open | closed | ''"),
    "issue_updated_at": ("datetime", "the issue's updated_at (window selection in issues mode)"),
}
# Row order: repo, issue, created_at, comment_id (= append order of the trail).

RUN_TELEMETRY: Contract = {
    "host": ("str", "configured host name"),
    "source_file": ("str", "path of the runs.jsonl file"),
    "line_no": ("int", "1-based line number in source_file"),
    "timestamp": ("datetime", "entry write time (dispatch completion); NaT if missing/unparseable"),
    "dossier": ("str", "or NA"),
    "cwd": ("str", "or NA"),
    "unit": ("str", "raw unit or NA"),
    "issue": ("Int", "n of unit 'issue:<n>', else NA (batch:/absent units are not issue rows)"),
    "model": ("str", "or NA (may be comma-joined)"),
    "provider": ("str", "or NA"),
    "tier": ("str", "or NA"),
    "spawned_command": ("str", "or NA"),
    "duration_ms": ("float", "NaN = not reported"),
    "input_tokens": ("float", "uncached input; NaN = not reported"),
    "output_tokens": ("float", "NaN = not reported"),
    "cache_creation_tokens": ("float", "NaN = not reported"),
    "cache_read_tokens": ("float", "NaN = not reported"),
    "reasoning_tokens": ("float", "NaN = not reported"),
    "total_cost_usd": ("float", "NaN = not reported"),
    "cost_available": ("boolean", "False = subscription plan (zero costs); NA = not reported"),
}

DISPATCH_EVENTS: Contract = {
    "host": ("str", "configured host name"),
    "repo": ("str", "configured owner/name whose slug names the sched/<slug> directory"),
    "slug": ("str", "sched/<slug> directory name"),
    "source_file": ("str", "path of events.jsonl"),
    "line_no": ("int", "1-based line number"),
    "ts": ("datetime", "event time (compared as a time, not a string)"),
    "event": ("str", "spawned | redispatched | stalled | fence-written | verify-incomplete"),
    "issue": ("int", "issue number (JSON number in the line; other rows are skipped and counted)"),
    "unit": ("str", "or NA"),
    "tier": ("str", "or NA (only when a JSON string)"),
    "cmd": ("str", "or NA"),
    "agent_cli": ("str", "basename of the first whitespace token of cmd, or NA"),
    "detail": ("str", "or NA"),
    "is_report_agent": ("bool", "detail == 'report agent' (post-merge report dispatch)"),
    "log": ("str", "dispatch log path or NA"),
}

AGENT_LOG_USAGE: Contract = {
    "host": ("str", "configured host name"),
    "repo": ("str", "configured owner/name (from the sched/<slug> directory)"),
    "slug": ("str", "sched/<slug> directory name"),
    "log_path": ("str", "path of the .log file"),
    "issue": ("int", "from the file name rule -(\\d+)\\.log$"),
    "slice_index": (
        "int",
        "0-based dispatch slice within the file (a slice starts at a sched-dispatch line)",
    ),
    "slice_start": ("datetime", "ts of the sched-dispatch preamble; NaT when absent"),
    "slice_end": ("datetime", "last timestamp seen in the slice (opencode), else NaT"),
    "agent_cli": (
        "str",
        "claude | opencode | codex (the CLI of the slice's content), else <basename of cmd0> | NA",
    ),
    "log_format": ("str", "claude-stream-json | claude-json | opencode-json | codex-json | unknown"),
    "cmd": ("str", "preamble cmd joined by spaces, or NA"),
    "models": (
        "str",
        "comma-joined distinct models named by the slice (modelUsage keys, message.model, -m/--model), or NA",
    ),
    "hversion": ("str", "agent CLI version when the log names it, else NA"),
    "cost_usd": ("float", "NaN when the slice records no cost"),
    "cost_kind": ("str", "modelUsage | usage | step_finish | estimate | NA"),
    "input_tokens": ("float", "uncached input; NaN = none recorded"),
    "output_tokens": ("float", ""),
    "cache_creation_tokens": ("float", ""),
    "cache_read_tokens": ("float", ""),
    "duration_ms": ("float", "API duration (Claude result duration_ms), NaN when unknown"),
    "result_records": ("int", "Claude result records in the slice"),
    "assistant_turns": ("int", "assistant messages / opencode steps / codex turns"),
    "tool_calls": ("int", ""),
    "edit_calls": (
        "int",
        "edit-tool calls (Edit/Write/MultiEdit/NotebookEdit, opencode edit/write/patch..., codex file_change)",
    ),
    "edit_errors": ("int", "failed edit calls that were not aborts"),
    "aborted_tool_calls": ("int", "tool calls stopped by a human (abort/interrupt/cancel/rejected)"),
    "verify_after_last_edit": ("boolean", "a verify command ran after the last edit; NA when no edits"),
    "verify_calls": ("int", "verify commands (tests, lint, build) run in the slice"),
    "latency_median_s": ("float", "upper-middle median of step latencies in seconds; NaN when unknown"),
    "step_latencies_ms": ("object", "the slice's step latencies in ms, in order (empty when unknown)"),
    "bytes": ("int", "bytes of the slice"),
}

TRAIL_RUNS: Contract = {
    "repo": ("str", "owner/name"),
    "issue": ("int", "issue number"),
    "run_id": ("str", "run= value; 'unknown-run' when empty"),
    "run_id_missing": ("bool", "the run= value was empty"),
    "run_order": ("int", "0-based first-seen order of the run in the issue's trail"),
    "issue_updated_at": (
        "datetime",
        "the issue's updated_at, else its latest comment updated_at (issues-mode selection)",
    ),
    "milestone_count": ("int", ""),
    "milestones": (
        "object",
        "list of dicts: phase (reported, merge-wait relabelled), raw_phase, status, at (Timestamp UTC), at_source ('at'|'server'), seconds (float|None), comment_id, model",
    ),
    "phase_seconds": ("object", "dict phase -> sum of non-null, non-negative span seconds"),
    "negative_spans": ("int", "spans < 0 (kept in milestones, excluded from phase_seconds)"),
    "started_at": ("datetime", "first milestone time"),
    "ended_at": ("datetime", "last milestone time"),
    "total_seconds": ("float", "round(ended - started); NaN with fewer than 2 milestones"),
    "delivered": ("bool", "last_status == done and last_phase in {ship, report, batch-ship, batch-report}"),
    "blocked": ("bool", "last_status == blocked"),
    "last_phase": ("str", "raw phase of the last milestone"),
    "last_status": ("str", "raw status of the last milestone"),
    "superseded_only": ("bool", "every non-classify milestone of the run has status superseded"),
    "classifier_only": ("bool", "every milestone has phase classify"),
    "risk_class": ("str", "low | med | high from the issue's classify milestone, else NA"),
    "classified_mode": ("str", "full | slot, else NA"),
    "model_raw": ("str", "model= of the first gate with one, else of the first milestone with one; NA"),
    "planner_model_raw": ("str", "model= of the run's plan milestone, else model_raw"),
    "builder_model_raw": ("str", "model= of the run's implement milestone, else model_raw"),
    "has_review": ("bool", "the run has a review or batch-review milestone"),
    "review_fixed": ("Int", "from the run's last review/batch-review milestone, validated 0..10000"),
    "review_escalated": ("Int", ""),
    "ac_met": ("Int", "kept only with ac_total > 0 (both or neither); clamped to ac_total"),
    "ac_total": ("Int", ""),
    "files_changed": ("Int", "files= of the last milestone that has it"),
    "tests_run": ("Int", "tests_run= of the last milestone that has it"),
}

# run_table = TRAIL_RUNS columns plus these.
RUN_TABLE_EXTRA: Contract = {
    "model": ("str", "canonical model of model_raw; '<unknown>' when absent"),
    "provider": ("str", "gateway chain of model_raw, or NA (shown as 'direct')"),
    "planner_model": ("str", "canonical"),
    "planner_provider": ("str", "or NA"),
    "builder_model": ("str", "canonical"),
    "builder_provider": ("str", "or NA"),
    "is_canonical": (
        "bool",
        "the issue's canonical run over its whole trail (first delivered, else latest started)",
    ),
    "tier": ("str", "tier of the run's last work dispatch (non report-agent spawned/redispatched), else NA"),
    "agent_cli": ("str", "agent CLI of that dispatch, else NA"),
    "work_dispatches": (
        "object",
        "list of dicts {ts, tier, agent_cli} of the run's work dispatches (spawned/redispatched, not report agent), time order",
    ),
    "redispatches": ("int", "redispatched events attributed to the run (= escalations)"),
    "counted_events": (
        "object",
        "list of dicts {ts, event} of the run's stalled / redispatched / fence-written events, time order "
        "(issues mode counts only those inside the window)",
    ),
    "tele_rows": ("int", "runs.jsonl rows attributed to the run"),
    "tele_tier": ("str", "distinct runs.jsonl tiers, sorted, comma-joined, or NA"),
    "tele_cost_usd": ("float", "sums over attributed runs.jsonl rows; NaN if none reported"),
    "tele_input_tokens": ("float", ""),
    "tele_output_tokens": ("float", ""),
    "tele_cache_creation_tokens": ("float", ""),
    "tele_cache_read_tokens": ("float", ""),
    "tele_duration_ms": ("float", ""),
    "log_slices": ("int", "agent-log slices attributed to the run"),
    "log_cost_usd": ("float", "sums over attributed slices; NaN if none"),
    "log_input_tokens": ("float", ""),
    "log_output_tokens": ("float", ""),
    "log_cache_creation_tokens": ("float", ""),
    "log_cache_read_tokens": ("float", ""),
    "log_duration_ms": ("float", ""),
    "log_cost_estimated": ("bool", "log cost came from the price table"),
    "cost_usd": ("float", "per-field merge: runs.jsonl value if reported, else agent log"),
    "input_tokens": ("float", ""),
    "output_tokens": ("float", ""),
    "cache_creation_tokens": ("float", ""),
    "cache_read_tokens": ("float", ""),
    "duration_ms": ("float", ""),
    "cost_source": ("str", "runs.jsonl | agent-log | estimate | NA (no cost)"),
    "stalls": ("int", "stalled events attributed to the run"),
    "escalations": ("int", "redispatched events attributed to the run"),
    "unverified_exits": ("int", "fence-written events attributed to the run"),
    "unverified_exit_events": (
        "int",
        "verify-incomplete events (detail unverified-exit) attributed to the run",
    ),
    "wall_clock_minutes": ("float", "total_seconds / 60"),
    "api_minutes": ("float", "duration_ms / 60000"),
    "assistant_turns": ("Int", "summed over the run's slices; NA without a log"),
    "tool_calls": ("Int", ""),
    "edit_calls": ("Int", ""),
    "edit_errors": ("Int", ""),
    "aborted_tool_calls": ("Int", ""),
    "verify_after_last_edit": (
        "boolean",
        "a verify ran after the run's last edit: in the last slice with edits, or in any later slice; "
        "NA when no slice has edits",
    ),
    "latency_median_s": (
        "float",
        "upper-middle median (sorted[n // 2]) of all the run's step latencies, in seconds; NaN when unknown",
    ),
    "hversion": ("str", "agent CLI version from the log, or NA"),
}

RUN_TABLE: Contract = {**TRAIL_RUNS, **RUN_TABLE_EXTRA}

# The report unit (scoring/issue_rows.py): one row per issue over a window's selected runs - the
# reference row fields (camelCase) in its order, then ours (riskClass .. runCount).
ISSUE_ROWS: Contract = {
    "repo": ("str", "owner/name"),
    "issue": ("int", "issue number"),
    "model": ("str", "canonical model of the canonical run ('<unknown>' when absent)"),
    "rawModel": ("str", "model= as written, or NA"),
    "provider": ("str", "gateway chain, or NA (shown as 'direct')"),
    "tier": ("str", "last in-window work-dispatch tier, else runs.jsonl tiers, else NA"),
    "agentCli": ("str", "agent CLI of the last in-window work dispatch naming one, or NA"),
    "delivered": ("bool", "canonical run delivered"),
    "blocked": ("bool", "canonical run blocked"),
    "costUsd": ("float", "merged cost; NaN = none reported"),
    "inputTokens": ("float", "merged uncached input tokens"),
    "outputTokens": ("float", "merged output tokens"),
    "cacheCreationTokens": ("float", "merged cache-creation tokens"),
    "cacheReadTokens": ("float", "merged cache-read tokens"),
    "apiMinutes": ("float", "merged API duration / 60000"),
    "costSource": ("str", "runs.jsonl | agent-log | estimate | NA (no cost)"),
    "stalls": ("int", "summed over the selected runs"),
    "escalations": ("int", "summed over the selected runs"),
    "unverifiedExits": ("int", "summed over the selected runs"),
    "reviewFixed": ("Int", "review run's fixed= (canonical run, else latest run with a review)"),
    "reviewEscalated": ("Int", ""),
    "acMet": ("Int", "both or neither with acTotal"),
    "acTotal": ("Int", ""),
    "wallClockMinutes": ("float", "canonical run total_seconds / 60"),
    "phaseSeconds": ("object", "dict phase -> seconds of the canonical run"),
    "riskClass": ("str", "low | med | high, or NA"),
    "plannerModel": ("str", "canonical planner model of the canonical run"),
    "builderModel": ("str", "canonical builder model of the canonical run"),
    "costEstimated": ("bool", "costSource == 'estimate'"),
    "unverifiedExitEvents": (
        "int",
        "verify-incomplete / unverified-exit events, summed over the selected runs",
    ),
    "canonicalRunId": ("str", "run id of the canonical run"),
    "runCount": ("int", "selected non-classifier runs of the issue"),
}

# The 25 pooled Pragmatikos fields (docs/pairings.md "Cycles") plus our provenance columns.
CYCLES: Contract = {
    "model": ("str", ""),
    "prov": ("str", ""),
    "variant": ("str", ""),
    "role": ("int", "2 build, 1 plan, 0 other"),
    "pm": ("str", "'' = no plan phase"),
    "pp": ("str", ""),
    "pv": ("str", ""),
    "bm": ("str", ""),
    "bp": ("str", ""),
    "bv": ("str", ""),
    "harness": ("str", ""),
    "hversion": ("str", ""),
    "u": ("int", ""),
    "a": ("int", ""),
    "tedits": ("int", ""),
    "tpaths": ("int", "0/1"),
    "teerr": ("int", ""),
    "tcost": ("float", ""),
    "tship": ("int", "0/1"),
    "tshipe": ("int", "0 judged, 1 pending, 2 unshippable"),
    "thrs": ("float", ""),
    "tver": ("int", "0/1"),
    "tabort": ("int", "0/1"),
    "latmed": ("float", "-1 when unknown"),
    "day": ("str", "YYYY-MM-DD"),
    "origin": ("str", "fleet | import:<file name>"),
    "started_at": ("datetime", "run start (fleet) or day 00:00 UTC (import)"),
    "repo": ("str", "fleet runs: owner/name; imports: NA"),
    "issue": ("Int", "fleet runs: issue; imports: NA"),
    "run_id": ("str", "fleet runs: run id; imports: NA"),
    "ended_at": ("datetime", "fleet runs: last milestone time (ship re-judging per window); imports: NaT"),
    "delivered": ("boolean", "fleet runs: delivered; imports: NA"),
    "blocked": ("boolean", "fleet runs: blocked; imports: NA"),
    "superseded_only": ("boolean", "fleet runs: superseded-only; imports: NA"),
}

_KIND_CHECK = {
    "int": lambda s: pd.api.types.is_integer_dtype(s.dtype) and not isinstance(s.dtype, pd.Int64Dtype),
    "Int": lambda s: isinstance(s.dtype, pd.Int64Dtype),
    "float": lambda s: pd.api.types.is_float_dtype(s.dtype),
    "bool": lambda s: pd.api.types.is_bool_dtype(s.dtype) and not isinstance(s.dtype, pd.BooleanDtype),
    "boolean": lambda s: isinstance(s.dtype, pd.BooleanDtype),
    "datetime": lambda s: isinstance(s.dtype, pd.DatetimeTZDtype) and str(s.dtype.tz) == "UTC",
    "str": lambda s: pd.api.types.is_string_dtype(s.dtype) or s.dtype == object,
    "object": lambda s: s.dtype == object,
}


def contract_problems(df: pd.DataFrame, contract: Contract) -> list[str]:
    """Columns missing from ``df`` or of the wrong kind (empty list = conforms)."""
    problems: list[str] = []
    for col, (kind, _) in contract.items():
        if col not in df.columns:
            problems.append(f"missing column {col!r}")
        elif not _KIND_CHECK[kind](df[col]):
            problems.append(f"column {col!r} is {df[col].dtype}, expected {kind}")
    return problems


class ContractError(ValueError):
    """A produced frame that breaks its contract: a bug in the code that built it, not bad input."""


def require_contract(df: pd.DataFrame, contract: Contract, what: str) -> pd.DataFrame:
    """``df`` when it keeps ``contract``, else :class:`ContractError` naming ``what`` and every problem."""
    problems = contract_problems(df, contract)
    if problems:
        raise ContractError(f"{what} breaks its frame contract (schemas.py): " + "; ".join(problems))
    return df


# The pandas dtype of each column kind.
KIND_DTYPES = {
    "int": "int64",
    "Int": "Int64",
    "float": "float64",
    "bool": "bool",
    "boolean": "boolean",
    "datetime": "datetime64[us, UTC]",
    "str": "str",
    "object": "object",
}


def empty_frame(contract: Contract) -> pd.DataFrame:
    """A zero-row frame with every column of ``contract`` at its kind."""
    return pd.DataFrame({c: pd.Series(dtype=KIND_DTYPES[k]) for c, (k, _) in contract.items()})


# ------------------------------------------------------------------ batch inputs (docs/batches.md)

BATCH_JOURNAL: Contract = {
    "host": ("str", "host name"),
    "repo": ("str", "owner/name"),
    "line_no": ("int", "line of events.jsonl"),
    "ts": ("str", "event time as written"),
    "batch": ("str", "batch id (the unit batch:<id>)"),
    "event": ("str", "scheduler event"),
    "issue": ("Int", "member issue"),
    "kind": ("str", "kind= of the event (member-advance-recovered), or NA"),
}
BATCH_LOGS: Contract = {
    "host": ("str", "host name"),
    "repo": ("str", "owner/name"),
    "batch": ("str", "batch id from the log name"),
    "file": ("str", "log file name under runs/"),
    "issue": ("Int", "member issue (m<k>/fix logs), NA for tail/report"),
    "model": ("str", "agent-reported model, else the preamble's -m/--model"),
    "input_tokens": ("float", "NaN = not reported"),
    "output_tokens": ("float", ""),
    "cache_creation_tokens": ("float", ""),
    "cache_read_tokens": ("float", ""),
    "cost_usd": ("float", ""),
}
BATCH_PREP: Contract = {
    "host": ("str", "host name"),
    "repo": ("str", "owner/name of the sched folder"),
    "line_no": ("int", "line of batch-prep.jsonl"),
    "ts": ("int", "enqueue time, ms since the epoch"),
    "batch": ("str", "batch id"),
    "session_id": ("str", "operator session"),
    "members": ("Int", "members= when > 0"),
    "from_ms": ("int", "start of the attribution window (exclusive), ms"),
    "prep_tokens": ("float", "tokens of the session in (from_ms, ts]; 0 = none found"),
}
BATCH_PULL_REQUESTS: Contract = {
    "repo": ("str", "owner/name"),
    "number": ("int", "PR number"),
    "head": ("str", "head branch"),
    "created_at": ("str", "ISO time, or NA"),
    "merged_at": ("str", "ISO time, or NA (not merged)"),
    "closing": ("str", "closing issue numbers, comma-joined"),
}


def typed_frame(rows: list[dict[str, object]], contract: Contract) -> pd.DataFrame:
    """``rows`` as a frame with every column of ``contract`` at its kind."""
    if not rows:
        return empty_frame(contract)
    df = pd.DataFrame(rows, columns=list(contract))
    return df.astype({c: KIND_DTYPES[k] for c, (k, _) in contract.items()})
