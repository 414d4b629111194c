"""``trail_comments`` -> ``trail_runs``: one row per (repo, issue, run id) of the runstate trails.

Contract of the output: ``schemas.TRAIL_RUNS``. Rules (docs/join.md "Trail runs", where we
differ from the reference and why):

- Milestones are grouped by ``run=`` in first-seen order; inside a run they keep comment order
  (never re-sorted by ``at=``). An empty ``run=`` is pooled as ``unknown-run`` (warning
  ``run_id_missing``).
- A milestone's time is its ``at=`` when usable (``usable_at_ns``), else the comment's server
  ``created_at`` (``at_source = "server"``, warning ``unusable_at``); the milestone keeps its place
  and spans run through it.
- Span of a milestone = rounded seconds since the previous milestone of the run (``None`` for the
  first). Negative spans stay in ``milestones`` (warning ``negative_span``), are left out of
  ``phase_seconds`` and counted per repo and phase (warning ``phase_negative_samples``).
- A ``ship`` right after a ``ship awaiting-merge`` of the same run is reported as ``merge-wait``
  (``batch-ship`` -> ``batch-merge-wait``); a different phase or status in between breaks that.
- Review counters come from the run's last ``review``/``batch-review`` milestone, validated as
  integers 0..10000 (warning ``review_counter_invalid``), ``ac_met`` clamped to ``ac_total``
  (warning ``ac_met_exceeds_total``), both kept only together with ``ac_total > 0``.

Performance: the frame is walked once as plain Python columns, grouped by issue with a single
pass; rows are built as columns and turned into a DataFrame at the end. Pure module: no Dagster.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

import numpy as np
import pandas as pd

from scorecard_assets.records import DataWarning, TableResult, collapse_warnings
from scorecard_assets.sanitize import render_value
from scorecard_assets.schemas import TRAIL_RUNS, empty_frame
from scorecard_assets.sources.runstate import CLASSIFY_PHASE, parse_milestone

ASSET = "trail_runs"
UNKNOWN_RUN = "unknown-run"
DELIVERED_PHASES = frozenset({"ship", "report", "batch-ship", "batch-report"})
REVIEW_PHASES = frozenset({"review", "batch-review"})
MERGE_WAIT_LABELS = {"ship": "merge-wait", "batch-ship": "batch-merge-wait"}
AWAITING_MERGE = "awaiting-merge"
RISK_CLASSES = frozenset({"low", "med", "high"})
CLASSIFIED_MODES = frozenset({"full", "slot"})
REVIEW_COUNTER_MAX = 10_000
WORK_COUNTER_MAX = 1_000_000  # files= / tests_run= (a large suite can run more than 10,000 tests)
EMPTY_PHASE_MARK = "(no phase)"
EMPTY_VALUE_MARK = "(empty)"

_NS_PER_S = 1_000_000_000
_NAT = np.iinfo(np.int64).min
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Stamps outside the nanosecond Timestamp range (years ~1677-2262) cannot be compared as times.
_MIN_NS = pd.Timestamp.min.value
_MAX_NS = pd.Timestamp.max.value
_AT_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:(Z)|([+-])(\d{2}):?(\d{2}))",
    re.ASCII,
)
_DIGITS_RE = re.compile(r"\d+", re.ASCII)

# Which figure loses the run when a counter is unreadable.
_COUNTER_FIGURE = {
    "fixed": "review-fixed",
    "escalated": "review-escalated",
    "ac_met": "conformance (AC met)",
    "ac_total": "conformance (AC met)",
    "files": "files-changed",
    "tests_run": "tests-run",
}


# --------------------------------------------------------------------------------------------
# value rules


def usable_at_ns(raw: str) -> int | None:
    """Epoch nanoseconds of a usable ``at=`` value, else None.

    Usable = non-empty, no ``$`` or backtick, the ISO shape of docs/join.md "Timing" (seconds
    required, optional fraction, ``Z`` or a ``+hh:mm``/``+hhmm`` offset), and a real calendar date
    and time (``2026-13-45T99:00:00Z`` is rejected). A real date outside the range a UTC
    nanosecond Timestamp can hold (about 1677-2262) is unusable too: it cannot be timed.
    """
    if not raw or "$" in raw or "`" in raw:
        return None
    m = _AT_RE.fullmatch(raw)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    try:
        base = datetime(year, month, day, hour, minute, second, tzinfo=UTC)
    except ValueError:
        return None
    offset_min = 0
    if m.group(8) is None:
        off_h, off_m = int(m.group(10)), int(m.group(11))
        if off_h > 23 or off_m > 59:
            return None
        offset_min = (off_h * 60 + off_m) * (1 if m.group(9) == "+" else -1)
    frac = m.group(7) or ""
    frac_ns = int((frac + "000000000")[:9])
    whole_us = (base - _EPOCH) // timedelta(microseconds=1)
    ns = whole_us * 1000 + frac_ns - offset_min * 60 * _NS_PER_S
    return ns if _MIN_NS <= ns <= _MAX_NS else None


def round_seconds(delta_ns: int) -> int:
    """Seconds rounded half up (JavaScript ``Math.round`` of milliseconds / 1000)."""
    return (delta_ns + _NS_PER_S // 2) // _NS_PER_S


def parse_counter(raw: str, maximum: int) -> int | None:
    """An ASCII-digit integer in ``0..maximum``, else None (no signs, spaces, hex or exponents)."""
    if not _DIGITS_RE.fullmatch(raw):
        return None
    significant = raw.lstrip("0")
    if len(significant) > len(str(maximum)):
        return None
    value = int(significant) if significant else 0
    return value if value <= maximum else None


def _iso(ns: int) -> str:
    return pd.Timestamp(ns, unit="ns", tz="UTC").isoformat().replace("+00:00", "Z")


def _ns_list(series: pd.Series) -> list[int]:
    """Epoch nanoseconds of a tz-aware datetime column (``_NAT`` for NaT)."""
    if len(series) == 0:
        return []
    values = pd.to_datetime(series, utc=True).dt.as_unit("ns")
    return values.array.asi8.tolist()


# --------------------------------------------------------------------------------------------
# per-milestone and per-run structures


@dataclass(slots=True)
class _Stone:
    """One parsed milestone of an issue's trail."""

    index: int
    comment_id: int
    phase: str
    status: str
    run: str
    at_raw: str
    keys: dict[str, str]
    ns: int  # _NAT when neither at= nor created_at gives a time
    at_source: str

    @property
    def timed(self) -> bool:
        return self.ns != _NAT

    @property
    def model(self) -> str | None:
        value = self.keys.get("model", "")
        return value if value else None


@dataclass
class _Issue:
    repo: str
    issue: int
    stones: list[_Stone] = field(default_factory=list)
    issue_updated_ns: int = _NAT
    latest_comment_ns: int = _NAT


@dataclass
class _Warnings:
    """Warnings of one repo, kept apart by kind so they can be emitted in the reference order."""

    per_trail: list[DataWarning] = field(default_factory=list)
    negative_by_phase: dict[str, int] = field(default_factory=dict)
    runs: int = 0
    classifier_only: int = 0
    cycle_runs: int = 0
    cycle_unclassified: int = 0


_COLUMNS = list(TRAIL_RUNS)


class _RowSink:
    """Column lists of the output frame, filled one run at a time."""

    def __init__(self) -> None:
        self.cols: dict[str, list[object]] = {c: [] for c in _COLUMNS}
        self.all_milestones: list[dict[str, object]] = []

    def add(self, row: dict[str, object]) -> None:
        for c in _COLUMNS:
            self.cols[c].append(row[c])

    def frame(self) -> pd.DataFrame:
        if not self.cols["repo"]:
            return empty_frame(TRAIL_RUNS)
        self._timestamps_into_milestones()
        c = self.cols
        data: dict[str, object] = {}
        for name, (kind, _) in TRAIL_RUNS.items():
            values = c[name]
            if kind == "datetime":
                arr = np.array(values, dtype=np.int64).view("datetime64[ns]")
                data[name] = pd.Series(arr).dt.tz_localize("UTC")
            elif kind == "int":
                data[name] = pd.Series(values, dtype="int64")
            elif kind == "Int":
                data[name] = pd.Series(pd.array(values, dtype="Int64"))
            elif kind == "float":
                data[name] = pd.Series(values, dtype="float64")
            elif kind == "bool":
                data[name] = pd.Series(values, dtype="bool")
            elif kind == "str":
                data[name] = pd.Series(values, dtype="str")
            else:
                arr_obj = np.empty(len(values), dtype=object)
                for i, v in enumerate(values):
                    arr_obj[i] = v
                data[name] = pd.Series(arr_obj, dtype=object)
        return pd.DataFrame(data)

    def _timestamps_into_milestones(self) -> None:
        """Replace each milestone's epoch-ns ``at`` by a UTC Timestamp (converted in one pass)."""
        ms = self.all_milestones
        if not ms:
            return
        ns = np.array([m["at"] for m in ms], dtype=np.int64).view("datetime64[ns]")
        stamps = pd.DatetimeIndex(ns).tz_localize("UTC")
        for m, ts in zip(ms, stamps, strict=True):
            m["at"] = ts


# --------------------------------------------------------------------------------------------
# grouping


def _issues(df: pd.DataFrame) -> Iterator[_Issue]:
    """Issues of the trail in frame order, each with its parsed milestones in comment order."""
    repos = df["repo"].tolist()
    numbers = df["issue"].tolist()
    ids = df["comment_id"].tolist()
    bodies = df["body"].tolist()
    created = _ns_list(df["created_at"])
    updated = _ns_list(df["updated_at"])
    issue_updated = _ns_list(df["issue_updated_at"])
    current: _Issue | None = None
    for i in range(len(repos)):
        key = (repos[i], int(numbers[i]))
        if current is None or (current.repo, current.issue) != key:
            if current is not None:
                yield current
            current = _Issue(repo=key[0], issue=key[1])
        if issue_updated[i] != _NAT:
            current.issue_updated_ns = max(current.issue_updated_ns, issue_updated[i])
        comment_ns = updated[i] if updated[i] != _NAT else created[i]
        current.latest_comment_ns = max(current.latest_comment_ns, comment_ns)
        parsed = parse_milestone(bodies[i])
        if parsed is None:
            continue
        at_ns = usable_at_ns(parsed.at)
        current.stones.append(
            _Stone(
                index=len(current.stones),
                comment_id=int(ids[i]),
                phase=parsed.phase,
                status=parsed.status,
                run=parsed.run,
                at_raw=parsed.at,
                keys=parsed.keys,
                ns=at_ns if at_ns is not None else created[i],
                at_source="at" if at_ns is not None else "server",
            )
        )
    if current is not None:
        yield current


def _runs_of(stones: list[_Stone]) -> dict[str, list[_Stone]]:
    """Milestones grouped by run id, first-seen run order, comment order inside a run."""
    runs: dict[str, list[_Stone]] = {}
    for s in stones:
        runs.setdefault(s.run or UNKNOWN_RUN, []).append(s)
    return runs


# --------------------------------------------------------------------------------------------
# warnings


def _ref(issue: _Issue) -> str:
    return f"{issue.repo}#{issue.issue}"


def _warn(code: str, issue: _Issue, run_id: str | None, message: str, **values: object) -> DataWarning:
    return DataWarning(
        code=code,
        asset=ASSET,
        message=message,
        repo=issue.repo,
        issue=issue.issue,
        run_id=render_value(run_id) if run_id is not None else None,
        values={k: v for k, v in values.items() if v is None or isinstance(v, str | int | float | bool)},
    )


def _phase_mark(phase: str) -> str:
    return render_value(phase) if phase else EMPTY_PHASE_MARK


def _unusable_at_warning(issue: _Issue, run_id: str, stone: _Stone) -> DataWarning:
    value = render_value(stone.at_raw) if stone.at_raw else EMPTY_VALUE_MARK
    phase = _phase_mark(stone.phase)
    consequence = (
        "it is timed by the comment's server creation time instead"
        if stone.timed
        else "the comment has no server time either, so the milestone is untimed"
    )
    return _warn(
        "unusable_at",
        issue,
        run_id,
        f"{_ref(issue)} run {render_value(run_id)}: the {phase} milestone has an unusable at= value "
        f"{value}; {consequence}",
        phase=phase,
        at=value,
    )


def _negative_span_warning(issue: _Issue, run_id: str, phase: str, prev_ns: int, ns: int) -> DataWarning:
    start, end = _iso(prev_ns), _iso(ns)
    return _warn(
        "negative_span",
        issue,
        run_id,
        f"{_ref(issue)} run {render_value(run_id)}: the {_phase_mark(phase)} milestone is stamped before "
        f"the previous one ({start} → {end}); the negative duration stays in the run's milestones but "
        "not in its phase totals (the writers' clocks probably disagree)",
        phase=_phase_mark(phase),
        start=start,
        end=end,
    )


def _run_id_missing_warning(issue: _Issue, count: int) -> DataWarning:
    return _warn(
        "run_id_missing",
        issue,
        UNKNOWN_RUN,
        f"{_ref(issue)}: {count} milestone(s) carry no run id and are pooled as {UNKNOWN_RUN}; "
        "durations computed across them may mix different runs",
        milestones=count,
    )


def _counter_warning(issue: _Issue, run_id: str, key: str, raw: str, maximum: int) -> DataWarning:
    value = render_value(raw) if raw else EMPTY_VALUE_MARK
    return _warn(
        "review_counter_invalid",
        issue,
        run_id,
        f"{_ref(issue)} run {render_value(run_id)}: {key}={value} is not an integer from 0 to {maximum}; "
        f"the run is left out of the {_COUNTER_FIGURE[key]} figures",
        key=key,
        value=value,
    )


def _ac_clamp_warning(issue: _Issue, run_id: str, met: int, total: int) -> DataWarning:
    return _warn(
        "ac_met_exceeds_total",
        issue,
        run_id,
        f"{_ref(issue)} run {render_value(run_id)}: ac_met={met} exceeds ac_total={total}; ac_met is "
        f"clamped to {total}, so 0 unmet criteria is a lower bound rather than a measured value",
        ac_met=met,
        ac_total=total,
    )


def _repo_warnings(repo: str, w: _Warnings) -> list[DataWarning]:
    """Per-repo aggregates, after the repo's per-trail warnings (the reference's order: docs/scoring.md
    "Window warnings")."""
    return [*w.per_trail, *_phase_skew_warnings(repo, w), *_coverage_warnings(repo, w)]


def _aggregates_of(runs: pd.DataFrame) -> _Warnings:
    """The counts behind the per-repo aggregate warnings, recounted from rows of one repo."""
    w = _Warnings()
    for milestones in runs["milestones"]:
        for m in milestones if isinstance(milestones, list | tuple) else ():
            seconds = m.get("seconds") if isinstance(m, dict) else None
            if seconds is not None and seconds < 0:
                w.negative_by_phase[m["phase"]] = w.negative_by_phase.get(m["phase"], 0) + 1
    classifier_only = runs["classifier_only"].astype(bool)
    w.runs = len(runs)
    w.classifier_only = int(classifier_only.sum())
    w.cycle_runs = w.runs - w.classifier_only
    w.cycle_unclassified = int((~classifier_only & runs["risk_class"].isna()).sum())
    return w


def phase_skew_warnings(runs: pd.DataFrame, repo: str) -> list[DataWarning]:
    """c6 over ``runs`` (rows of one repo, e.g. a window's selection): phases with negative spans."""
    return _phase_skew_warnings(repo, _aggregates_of(runs))


def coverage_warnings(runs: pd.DataFrame, repo: str) -> list[DataWarning]:
    """c10 and c11 over ``runs`` (rows of one repo): classifier-only runs, risk-class coverage."""
    return _coverage_warnings(repo, _aggregates_of(runs))


def _phase_skew_warnings(repo: str, w: _Warnings) -> list[DataWarning]:
    out: list[DataWarning] = []
    for phase, k in w.negative_by_phase.items():
        shown = _phase_mark(phase)
        out.append(
            DataWarning(
                code="phase_negative_samples",
                asset=ASSET,
                repo=repo,
                message=f"{repo}: phase {shown} has {k} negative span sample(s) (clock skew); they are left "
                "out of its totals, so its median and minimum rest on fewer samples and are unreliable",
                values={"phase": shown, "negative_samples": k},
                count=1,
            )
        )
    return out


def _coverage_warnings(repo: str, w: _Warnings) -> list[DataWarning]:
    out: list[DataWarning] = []
    if w.classifier_only:
        out.append(
            DataWarning(
                code="classifier_only_runs",
                asset=ASSET,
                repo=repo,
                message=f"{repo}: {w.classifier_only} of {w.runs} runs hold only classify milestones; they "
                "are excluded from the model tables (no model=, they never ship)",
                values={"classifier_only_runs": w.classifier_only, "runs": w.runs},
            )
        )
    if 0 < w.cycle_unclassified < w.cycle_runs:
        pct = (w.cycle_unclassified * 100 * 2 + w.cycle_runs) // (2 * w.cycle_runs)
        out.append(
            DataWarning(
                code="risk_unclassified",
                asset=ASSET,
                repo=repo,
                message=f"{repo}: {w.cycle_unclassified} of {w.cycle_runs} cycle runs ({pct}%) have no valid "
                "classifier risk= (low, med or high); they fall under <unclassified> and the risk-class "
                "rows cover only the classified runs",
                values={"unclassified": w.cycle_unclassified, "cycle_runs": w.cycle_runs, "pct": pct},
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# per-run facts


@dataclass(frozen=True)
class _Classification:
    index: int
    risk: str | None
    mode: str | None


def _classifications(stones: list[_Stone]) -> list[_Classification]:
    out: list[_Classification] = []
    for s in stones:
        if s.phase == CLASSIFY_PHASE:
            risk = s.keys.get("risk")
            mode = s.keys.get("mode")
            out.append(
                _Classification(
                    s.index,
                    risk if risk in RISK_CLASSES else None,
                    mode if mode in CLASSIFIED_MODES else None,
                )
            )
    return out


def _classification_for(run_start: int, classes: list[_Classification]) -> _Classification | None:
    """The issue's classify milestone closest before the run's first milestone, else its first one."""
    if not classes:
        return None
    before = [c for c in classes if c.index <= run_start]
    return before[-1] if before else classes[0]


def _run_model(stones: list[_Stone]) -> str | None:
    """model= of the first gate that has one, else of the first milestone that has one."""
    for s in stones:
        if s.phase == "gate" and s.model:
            return s.model
    for s in stones:
        if s.model:
            return s.model
    return None


def _phase_model(stones: list[_Stone], phase: str) -> str | None:
    """model= of the run's last ``phase`` milestone that records one (the work that counted)."""
    for s in reversed(stones):
        if s.phase == phase and s.model:
            return s.model
    return None


@dataclass
class _Timing:
    milestones: list[dict[str, object]]
    phase_seconds: dict[str, float]
    negative: list[tuple[str, int, int]]  # (phase, previous ns, ns)
    started_ns: int
    ended_ns: int
    total_seconds: float


def _timing(stones: list[_Stone]) -> _Timing:
    milestones: list[dict[str, object]] = []
    phase_seconds: dict[str, float] = {}
    negative: list[tuple[str, int, int]] = []
    prev: _Stone | None = None
    for s in stones:
        phase = s.phase
        if (
            prev is not None
            and phase in MERGE_WAIT_LABELS
            and prev.phase == phase
            and prev.status == AWAITING_MERGE
        ):
            phase = MERGE_WAIT_LABELS[phase]
        seconds: float | None = None
        if prev is not None and prev.timed and s.timed:
            seconds = float(round_seconds(s.ns - prev.ns))
            if seconds < 0:
                negative.append((phase, prev.ns, s.ns))
            else:
                phase_seconds[phase] = phase_seconds.get(phase, 0.0) + seconds
        milestones.append(
            {
                "phase": phase,
                "raw_phase": s.phase,
                "status": s.status,
                "at": s.ns,
                "at_source": s.at_source,
                "seconds": seconds,
                "comment_id": s.comment_id,
                "model": s.model,
            }
        )
        prev = s
    timed = [s.ns for s in stones if s.timed]
    started = timed[0] if timed else _NAT
    ended = timed[-1] if timed else _NAT
    total = float(round_seconds(ended - started)) if len(timed) >= 2 else float("nan")
    return _Timing(milestones, phase_seconds, negative, started, ended, total)


@dataclass
class _Review:
    has_review: bool = False
    fixed: int | None = None
    escalated: int | None = None
    ac_met: int | None = None
    ac_total: int | None = None


def _counter(
    keys: dict[str, str], key: str, maximum: int, issue: _Issue, run_id: str, out: list[DataWarning]
) -> int | None:
    if key not in keys:
        return None
    raw = keys[key]
    value = parse_counter(raw, maximum)
    if value is None:
        out.append(_counter_warning(issue, run_id, key, raw, maximum))
    return value


def _review(stones: list[_Stone], issue: _Issue, run_id: str, out: list[DataWarning]) -> _Review:
    last = next((s for s in reversed(stones) if s.phase in REVIEW_PHASES), None)
    if last is None:
        return _Review()
    fixed = _counter(last.keys, "fixed", REVIEW_COUNTER_MAX, issue, run_id, out)
    escalated = _counter(last.keys, "escalated", REVIEW_COUNTER_MAX, issue, run_id, out)
    met = _counter(last.keys, "ac_met", REVIEW_COUNTER_MAX, issue, run_id, out)
    total = _counter(last.keys, "ac_total", REVIEW_COUNTER_MAX, issue, run_id, out)
    if met is None or total is None or total <= 0:
        return _Review(True, fixed, escalated, None, None)
    if met > total:
        out.append(_ac_clamp_warning(issue, run_id, met, total))
        met = total
    return _Review(True, fixed, escalated, met, total)


def _last_counter(
    stones: list[_Stone], key: str, issue: _Issue, run_id: str, out: list[DataWarning]
) -> int | None:
    """``key=`` of the run's last milestone that carries it, validated as 0..WORK_COUNTER_MAX."""
    for s in reversed(stones):
        if key in s.keys:
            return _counter(s.keys, key, WORK_COUNTER_MAX, issue, run_id, out)
    return None


def _superseded_only(stones: list[_Stone]) -> bool:
    """At least one non-classify milestone, and every one of them is a superseded (fence) record."""
    work = [s for s in stones if s.phase != CLASSIFY_PHASE]
    return bool(work) and all(s.status == "superseded" for s in work)


# --------------------------------------------------------------------------------------------
# the builder


def _issue_rows(issue: _Issue, sink: _RowSink, w: _Warnings) -> None:
    runs = _runs_of(issue.stones)
    missing = sum(1 for s in issue.stones if not s.run)
    if missing:
        w.per_trail.append(_run_id_missing_warning(issue, missing))
    classes = _classifications(issue.stones)
    updated_ns = issue.issue_updated_ns if issue.issue_updated_ns != _NAT else issue.latest_comment_ns
    for order, (run_id, stones) in enumerate(runs.items()):
        for s in stones:
            if s.at_source == "server":
                w.per_trail.append(_unusable_at_warning(issue, run_id, s))
        timing = _timing(stones)
        for phase, prev_ns, ns in timing.negative:
            w.per_trail.append(_negative_span_warning(issue, run_id, phase, prev_ns, ns))
            w.negative_by_phase[phase] = w.negative_by_phase.get(phase, 0) + 1
        review = _review(stones, issue, run_id, w.per_trail)
        files = _last_counter(stones, "files", issue, run_id, w.per_trail)
        tests = _last_counter(stones, "tests_run", issue, run_id, w.per_trail)
        last = stones[-1]
        classifier_only = all(s.phase == CLASSIFY_PHASE for s in stones)
        klass = _classification_for(stones[0].index, classes)
        model = _run_model(stones)
        w.runs += 1
        if classifier_only:
            w.classifier_only += 1
        else:
            w.cycle_runs += 1
            if klass is None or klass.risk is None:
                w.cycle_unclassified += 1
        sink.all_milestones.extend(timing.milestones)
        sink.add(
            {
                "repo": issue.repo,
                "issue": issue.issue,
                "run_id": run_id,
                "run_id_missing": any(not s.run for s in stones),
                "run_order": order,
                "issue_updated_at": updated_ns,
                "milestone_count": len(stones),
                "milestones": timing.milestones,
                "phase_seconds": timing.phase_seconds,
                "negative_spans": len(timing.negative),
                "started_at": timing.started_ns,
                "ended_at": timing.ended_ns,
                "total_seconds": timing.total_seconds,
                "delivered": last.status == "done" and last.phase in DELIVERED_PHASES,
                "blocked": last.status == "blocked",
                "last_phase": last.phase,
                "last_status": last.status,
                "superseded_only": _superseded_only(stones),
                "classifier_only": classifier_only,
                "risk_class": klass.risk if klass else None,
                "classified_mode": klass.mode if klass else None,
                "model_raw": model,
                "planner_model_raw": _phase_model(stones, "plan") or model,
                "builder_model_raw": _phase_model(stones, "implement") or model,
                "has_review": review.has_review,
                "review_fixed": review.fixed,
                "review_escalated": review.escalated,
                "ac_met": review.ac_met,
                "ac_total": review.ac_total,
                "files_changed": files,
                "tests_run": tests,
            }
        )


def _trail_order(df: pd.DataFrame) -> pd.DataFrame:
    """The comments in trail (append) order: repo, issue, server creation time, comment id."""
    return df.sort_values(["repo", "issue", "created_at", "comment_id"], kind="stable")


def build_trail_runs(trail_comments: pd.DataFrame) -> TableResult:
    """One ``schemas.TRAIL_RUNS`` row per (repo, issue, run) of ``trail_comments`` (``TRAIL_COMMENTS``).

    Comments that are not runstate milestones are ignored (an issue without milestones has no run).
    Warnings (codes c1-c6, c10, c11) are collapsed: identical messages become one record whose
    ``count`` says how often it occurred. ``extra`` holds ``milestones`` and ``runs`` counts.
    """
    sink = _RowSink()
    per_repo: dict[str, _Warnings] = {}
    milestones = 0
    if len(trail_comments):
        for issue in _issues(_trail_order(trail_comments)):
            if not issue.stones:
                continue
            milestones += len(issue.stones)
            _issue_rows(issue, sink, per_repo.setdefault(issue.repo, _Warnings()))
    warnings: list[DataWarning] = []
    for repo, w in per_repo.items():
        warnings.extend(_repo_warnings(repo, w))
    frame = sink.frame()
    return TableResult(
        frame=frame,
        warnings=collapse_warnings(warnings),
        extra={"milestones": milestones, "runs": len(frame)},
    )


# --------------------------------------------------------------------------------------------
# per issue (the incremental refresh, docs/incremental.md "Recomputing changed issues")

IssueKey = tuple[str, int]


def trail_runs_by_issue(
    trail_comments: pd.DataFrame,
) -> tuple[pd.DataFrame, dict[IssueKey, list[DataWarning]]]:
    """The rows :func:`build_trail_runs` gives for ``trail_comments`` and each issue's per-trail
    warnings (uncollapsed, in the order the build makes them); the per-repo aggregates are left to
    :func:`trail_runs_warnings`, which recounts them from rows."""
    sink = _RowSink()
    per_issue: dict[IssueKey, list[DataWarning]] = {}
    if len(trail_comments):
        for issue in _issues(_trail_order(trail_comments)):
            if not issue.stones:
                continue
            w = _Warnings()
            _issue_rows(issue, sink, w)
            if w.per_trail:
                per_issue[(issue.repo, issue.issue)] = w.per_trail
    return sink.frame(), per_issue


def trail_runs_warnings(
    frame: pd.DataFrame, per_issue: dict[IssueKey, list[DataWarning]]
) -> list[DataWarning]:
    """The warnings :func:`build_trail_runs` gives for the trail whose rows are ``frame`` (in its
    order) and whose issues' per-trail warnings are ``per_issue``."""
    warnings: list[DataWarning] = []
    if not len(frame):
        return warnings
    keys = frame[["repo", "issue"]].drop_duplicates()
    repos = keys["repo"].tolist()
    issues = keys["issue"].tolist()
    by_repo: dict[str, list[DataWarning]] = {}
    for repo, number in zip(repos, issues, strict=True):
        by_repo.setdefault(repo, []).extend(per_issue.get((repo, int(number)), []))
    repo_col = frame["repo"]
    for repo, per_trail in by_repo.items():
        agg = _aggregates_of(frame[repo_col == repo])
        agg.per_trail = per_trail
        warnings.extend(_repo_warnings(repo, agg))
    return collapse_warnings(warnings)
