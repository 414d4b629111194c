"""The data warnings of an agent-log read: a file's malformed lines, out-of-range values and bad
preambles, unreadable files and directories, repos without usable logs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from scorecard_assets.records import DataWarning
from scorecard_assets.sanitize import render_value
from scorecard_assets.sources.agent_logs.slices import EXAMPLES, SliceProblems, SliceResult, cost_missing
from scorecard_assets.sources.agent_logs.tally import DirTally

ASSET = "agent_log_usage"


def file_warnings(
    path: str, host: str, repo: str, issue: int, slices: Sequence[SliceResult | SliceProblems]
) -> list[DataWarning]:
    """One malformed-line warning and one out-of-range warning per file, plus one per bad preamble."""
    shown = render_value(path)
    found: list[DataWarning] = []
    malformed = sum(s.malformed for s in slices)
    if malformed:
        lines = [n for s in slices for n in s.malformed_lines][:EXAMPLES]
        truncated = bool(slices) and slices[-1].truncated_tail
        tail_note = "; the last line is truncated" if truncated else ""
        fields = [example for s in slices for example in s.malformed_fields]
        if fields:
            line, name, value = fields[0]
            tail_note += f"; first field of the wrong JSON type: {name} = {value} at line {line}"
        found.append(
            DataWarning(
                code="malformed_line",
                asset=ASSET,
                message=(
                    f"agent log {shown}: {malformed} line(s) are not valid JSON records (first at line(s) "
                    f"{', '.join(map(str, lines))}){tail_note}; they were skipped and the rest of the log "
                    "still counts"
                ),
                repo=repo,
                issue=issue,
                host=host,
                path=path,
                line=lines[0] if lines else None,
                values={
                    "lines": malformed,
                    "first_lines": ", ".join(map(str, lines)),
                    "truncated_last_line": truncated,
                    "field": fields[0][1] if fields else None,
                },
                count=malformed,
            )
        )
    bad = sum(s.bad_values for s in slices)
    if bad:
        line, name, value = next(example for s in slices for example in s.bad_value_examples)
        found.append(
            DataWarning(
                code="out_of_range_value",
                asset=ASSET,
                message=(
                    f"agent log {shown}: {bad} usage value(s) are not finite numbers in range "
                    f"(tokens 0..1e15, USD 0..1e6; first: {name} = {value} at line {line}); those values "
                    "were dropped and the rest of each record still counts"
                ),
                repo=repo,
                issue=issue,
                host=host,
                path=path,
                line=line,
                values={"count": bad, "field": name, "value": value},
                count=bad,
            )
        )
    replaced = sum(s.replaced for s in slices)
    if replaced:
        found.append(_replaced_warning(shown, path, host, repo, issue, slices, replaced))
    found.extend(_content_warnings(shown, path, host, repo, issue, slices))
    for s in slices:
        if s.preamble_problem is not None:
            found.append(
                DataWarning(
                    code="malformed_line",
                    asset=ASSET,
                    message=(
                        f"agent log {shown}: the dispatch preamble at line {s.line} has no usable ts "
                        f"({s.preamble_problem}); its slice is kept without a start time"
                    ),
                    repo=repo,
                    issue=issue,
                    host=host,
                    path=path,
                    line=s.line,
                    values={"ts": s.preamble_problem},
                )
            )
    return found


def _replaced_warning(
    shown: str,
    path: str,
    host: str,
    repo: str,
    issue: int,
    slices: Sequence[SliceResult | SliceProblems],
    replaced: int,
) -> DataWarning:
    """docs/reliability.md "Encodings": lines of valid JSON whose lone surrogate escapes were replaced
    by U+FFFD, as ``jsonl.replaced_text_warning`` reports them for runs.jsonl and events.jsonl, with the
    dispatch slices that hold them."""
    lines = [n for s in slices for n in s.replaced_lines][:EXAMPLES]
    holding = [s.index for s in slices if s.replaced]
    return DataWarning(
        code="text_replaced",
        asset=ASSET,
        message=(
            f"agent log {shown}: {replaced} line(s) hold a lone UTF-16 surrogate escape (first at line(s) "
            f"{', '.join(map(str, lines))}, in dispatch slice(s) {', '.join(map(str, holding[:EXAMPLES]))}); "
            "each was replaced by U+FFFD and the lines still count"
        ),
        repo=repo,
        issue=issue,
        host=host,
        path=path,
        line=lines[0] if lines else None,
        values={
            "lines": replaced,
            "first_lines": ", ".join(map(str, lines)),
            "slices": ", ".join(map(str, holding[:EXAMPLES])),
        },
        count=replaced,
    )


def unreadable(path: Path | str, host: str, repo: str | None, exc: OSError, what: str) -> DataWarning:
    reason = exc.strerror or type(exc).__name__
    return DataWarning(
        code="unreadable_file",
        asset=ASSET,
        message=(
            f"agent-log {what} {render_value(path)} could not be read ({render_value(reason)}); "
            "its usage is missing from this run"
        ),
        repo=repo,
        host=host,
        path=str(path),
        values={"error": render_value(reason)},
    )


def missing(runs_dir: Path, host: str, repo: str, tally: DirTally, exists: bool) -> DataWarning:
    where = render_value(runs_dir)
    if exists:
        reason = f"none of the {tally.files} log file(s) in {where} records usage"
    else:
        reason = f"there is no agent-log directory {where}"
    return DataWarning(
        code="agent_logs_missing",
        asset=ASSET,
        message=(
            f"{repo} on host {render_value(host)}: {reason}; "
            "no agent-log cost recovery for this repo on this host"
        ),
        repo=repo,
        host=host,
        path=str(runs_dir),
        values={"directory": str(runs_dir), "exists": exists, "log_files": tally.files},
    )


def shared_slug(runs_dir: Path, host: str, repo: str, slug: str, others: list[str]) -> DataWarning:
    return DataWarning(
        code="agent_logs_missing",
        asset=ASSET,
        message=(
            f"{repo} on host {render_value(host)}: the agent-log directory {render_value(runs_dir)} "
            f"is shared with {', '.join(others)} (same slug {slug}), so its logs cannot be attributed "
            "and are not read; no agent-log cost recovery for this repo on this host"
        ),
        repo=repo,
        host=host,
        path=str(runs_dir),
        values={"directory": str(runs_dir), "slug": slug, "shared_with": ", ".join(others)},
    )


def _content_warnings(
    shown: str, path: str, host: str, repo: str, issue: int, slices: Sequence[SliceResult | SliceProblems]
) -> list[DataWarning]:
    """docs/sources.md "Agent logs by content": one warning per file for the slices whose content is
    another CLI's than their command names, one for the slices that should carry a cost and have none."""
    found: list[DataWarning] = []
    hinted = [s for s in slices if s.format_hint is not None]
    if hinted:
        first = hinted[0]
        found.append(
            DataWarning(
                code="agent_log_format_mismatch",
                asset=ASSET,
                message=(
                    f"agent log {shown}: {len(hinted)} dispatch slice(s) whose records are another agent "
                    f"CLI's than the command names (first: slice {first.index} at line {first.line}, command "
                    f"{render_value(first.format_hint)}, records {first.log_format}); read by their content"
                ),
                repo=repo,
                issue=issue,
                host=host,
                path=path,
                line=first.line,
                values={
                    "slices": ", ".join(str(s.index) for s in hinted[:EXAMPLES]),
                    "command": render_value(first.format_hint),
                    "content": first.log_format,
                },
                count=len(hinted),
            )
        )
    costless = [
        s for s in slices if cost_missing(s.log_format, s.cost_usd, s.assistant_turns, s.result_records)
    ]
    if costless:
        first = costless[0]
        found.append(
            DataWarning(
                code="agent_log_cost_missing",
                asset=ASSET,
                message=(
                    f"agent log {shown}: {len(costless)} dispatch slice(s) in a format that records cost "
                    f"yield none (first: slice {first.index} at line {first.line}, {first.log_format}; "
                    "e.g. an agent killed before its result record); no agent-log cost for those dispatches"
                ),
                repo=repo,
                issue=issue,
                host=host,
                path=path,
                line=first.line,
                values={
                    "slices": ", ".join(str(s.index) for s in costless[:EXAMPLES]),
                    "content": first.log_format,
                },
                count=len(costless),
            )
        )
    return found
