"""Deliberate data problems, placed on chosen issues after the fleet is planned.

Every data warning the scorecard can raise needs a cause in the sample. The regular simulation
already produces the common ones (old telemetry with null cost, killed agents, a moving ``-latest``
tag, a ``[1m]`` variant, gateway spellings, classifier-only runs, redispatches, stalls); this module
adds the rare and the hostile ones on a few deterministically chosen issues, and returns the damage
the renderer applies while writing (truncated last lines, malformed lines and entries, a directory
where a log would be, a token count of ``1e400``, the configured extras of ``_extras``).

The ``stress`` profile gets every one of them (its fleet is the sample's, planned with the same
draws); the ``sample`` profile only the few a real week has (:func:`_realistic`); the ``parity``
profile only the problems both the reference and the product treat the same way.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from scorecard_assets.sample_fleet._catalog import (
    AS_OF_MS,
    DAY_MS,
    HOSTILE_BRANCH,
    HOSTILE_CMD_SUFFIX,
    HOSTILE_MODELS,
    HOSTILE_TIER_EVENT,
    HOSTILE_TIER_TELEMETRY,
    HOUR_MS,
    HUMANS,
    MINUTE_MS,
    REPOS,
    plan_profile,
)
from scorecard_assets.sample_fleet._model import (
    Dispatch,
    Event,
    Fleet,
    Issue,
    Milestone,
    Note,
    PullRequest,
    TeleRow,
    iso_seconds,
)
from scorecard_assets.sample_fleet._render import RenderFlags

DATE_PASTE = "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
FULL_PATH_OPENCODE = "/home/u/.opencode/bin/opencode"


class _Picker:
    """Chooses distinct issues for each anomaly, reproducibly, preferring the default report window."""

    def __init__(self, fleet: Fleet, rng: random.Random, window: Callable[[Issue], bool]) -> None:
        self.fleet = fleet
        self.rng = rng
        self.window = window
        self.used: set[tuple[str, int]] = set()

    def pick(self, pred: Callable[[Issue], bool], k: int = 1) -> list[Issue]:
        """Up to ``k`` unused issues satisfying ``pred``."""
        pool = [i for i in self.fleet.issues if (i.repo, i.number) not in self.used and pred(i)]
        chosen = self.rng.sample(pool, min(k, len(pool)))
        chosen.sort(key=lambda i: (i.repo, i.number))
        for i in chosen:
            self.used.add((i.repo, i.number))
        return chosen

    def recent(self, pred: Callable[[Issue], bool], k: int = 1) -> list[Issue]:
        """Like :meth:`pick`, from the default window first, then from any time."""
        chosen = self.pick(lambda i: pred(i) and self.window(i), k)
        return chosen + (self.pick(pred, k - len(chosen)) if len(chosen) < k else [])


def _runs(issue: Issue) -> list[str]:
    seen: list[str] = []
    for m in issue.milestones:
        if m.phase != "classify" and m.run not in seen:
            seen.append(m.run)
    return seen


def _first(issue: Issue, phase: str, status: str | None = None) -> Milestone | None:
    return next(
        (m for m in issue.milestones if m.phase == phase and (status is None or m.status == status)), None
    )


def _starts_in(lo: int, hi: int) -> Callable[[Issue], bool]:
    def pred(i: Issue) -> bool:
        work = [m for m in i.milestones if m.phase != "classify"]
        return bool(work) and lo <= work[0].at_ms < hi

    return pred


def _plain(i: Issue) -> bool:
    """Delivered in one clean run with a review: a full trail to damage in a known way."""
    return (
        i.kind in ("single", "pairing")
        and i.closed_ms is not None
        and len(_runs(i)) == 1
        and all(m.status != "superseded" for m in i.milestones)
        and _first(i, "review") is not None
    )


def _plain_single(i: Issue) -> bool:
    """A plain single-model issue (pairings stay untouched so their scores mean what they say)."""
    return i.kind == "single" and _plain(i)


def inject(fleet: Fleet, dispatches_by_issue: dict[tuple[str, int], list[Dispatch]]) -> RenderFlags:
    """Apply the anomalies of ``fleet.profile`` in place; return the damage the renderer applies."""
    parity = fleet.profile == "parity"
    rng = random.Random(f"anomalies:{fleet.seed}:{fleet.size}:{plan_profile(fleet.profile)}")
    window = _starts_in(AS_OF_MS - 29 * DAY_MS, AS_OF_MS - 4 * DAY_MS)
    picker = _Picker(fleet, rng, window)
    if fleet.profile == "sample":
        return _realistic(fleet, picker)
    scale = max(1, len(fleet.issues) // 400)

    _trail_anomalies(picker, parity, scale)
    if not parity:
        _hostile_dispatches(picker, dispatches_by_issue)
    _github_extras(fleet, picker)
    _event_anomalies(fleet, rng)
    _telemetry_anomalies(fleet, picker, parity, dispatches_by_issue)
    for d in fleet.dispatches:
        if d.killed and d.turn_count:
            d.truncate_tail = True
    # at least one Claude stream with a call the human stopped (the draw leaves usage unchanged)
    claude = [d for d in fleet.dispatches if d.fmt == "claude-stream" and d.role == "work" and d.end_ms]
    if claude and not any(d.abort for d in claude):
        rng.choice(claude).abort = True
    # an agent still writing when the record ends: its last line is cut (a Claude stream if any)
    running = sorted(
        (d for d in fleet.dispatches if d.end_ms is None and d.turn_count),
        key=lambda d: (d.repo, d.issue, d.start_ms),
    )
    streams = [d for d in running if d.fmt == "claude-stream"]
    if streams or running:
        rng.choice(streams or running).truncate_tail = True
    # drawn last, so that every choice above stays what it was before these were added
    if not parity:
        _overflow_one_claude_result(picker, dispatches_by_issue)
        _wrap_one_claude_command(fleet)
    hosts = fleet.hosts
    return RenderFlags(
        truncate_runs_on=(hosts[-1],),
        malformed_runs_on=(hosts[0],),
        truncate_events_of=((hosts[0], REPOS[1].name),),
        extra_log_files=True,
        gate_logs=not parity,
        configured_extras=not parity,
        quoted_comment_id_in=None if parity else REPOS[1].name,
        log_dir_in_place_of=None if parity else _log_dir_site(fleet, window),
        truncated_cycle_row=not parity,
    )


def _realistic(fleet: Fleet, picker: _Picker) -> RenderFlags:
    """The bundled sample: the handful of problems a real fleet's week has (docs/sample_fleet.md
    "What the sample shows"), nothing hostile. The regular simulation already gives old telemetry
    whose cost is only in the agent log, a moving ``-latest`` tag, a ``[1m]`` variant, gateway
    spellings, classifier-only runs and killed agents; this adds one pasted ``at=``, one writer with
    a slow clock, one journal cut mid-line while it was written and one agent still running."""
    rng = picker.rng
    for issue in picker.recent(_plain_single):
        gate = _first(issue, "gate")
        assert gate is not None
        gate.at_text = DATE_PASTE
    for issue in picker.recent(_plain_single):
        impl, review = _first(issue, "implement"), _review(issue)
        assert impl is not None
        review.at_text = iso_seconds(impl.at_ms - rng.randint(3, 9) * MINUTE_MS)
    for edited in picker.pick(lambda i: bool(i.notes) and i.notes[0].posted_ms < AS_OF_MS - 2 * DAY_MS):
        n = edited.notes[0]
        n.body += "\n\n(edit: added the stack trace)"
        n.edited_ms = n.posted_ms + 2 * HOUR_MS + rng.randint(0, 3_600_000)
    for d in fleet.dispatches:
        if d.killed and d.turn_count:
            d.truncate_tail = True
    running = sorted(
        (d for d in fleet.dispatches if d.end_ms is None and d.turn_count),
        key=lambda d: (d.repo, d.issue, d.start_ms),
    )
    streams = [d for d in running if d.fmt == "claude-stream"]
    if streams or running:
        rng.choice(streams or running).truncate_tail = True
    hosts = fleet.hosts
    return RenderFlags(
        truncate_events_of=((hosts[0], REPOS[1].name),),
        extra_log_files=False,
        gate_logs=True,
        invalid_cycle_rows=False,
        surrogate_in_event_detail=False,
        surrogate_in_log=False,
    )


WRAPPER_SCRIPT = "/opt/agents/bin/run-agent"


def _wrap_one_claude_command(fleet: Fleet) -> None:
    """One finished Claude work dispatch was started through a wrapper script: its log preamble names
    the script, its records are Claude's (read by content; the cost is kept, the mismatch warned)."""
    finished = sorted(
        (
            d
            for d in fleet.dispatches
            if d.role == "work" and d.fmt == "claude-json" and d.end_ms is not None and not d.killed
        ),
        key=lambda d: (d.repo, d.issue, d.start_ms),
    )
    if finished:
        finished[len(finished) // 2].cmd = f"{WRAPPER_SCRIPT} {finished[len(finished) // 2].cmd}"


def _overflow_one_claude_result(
    picker: _Picker, dispatches_by_issue: dict[tuple[str, int], list[Dispatch]]
) -> None:
    """One finished Claude work dispatch writes a token count of its result as ``1e400``.

    It belongs to a plain single-model issue whose runs.jsonl row reports cache reads, so the run's
    merged figures come from runs.jsonl and the report's numbers stay what they were.
    """

    def overflowing(d: Dispatch) -> bool:
        return (
            d.role == "work"
            and d.fmt in ("claude-stream", "claude-json")
            and d.end_ms is not None
            and not d.killed
            and d.telemetry is not None
            and isinstance(d.telemetry.get("cache_read_tokens"), int)
        )

    def candidates(i: Issue) -> list[Dispatch]:
        return [d for d in dispatches_by_issue.get((i.repo, i.number), []) if overflowing(d)]

    for issue in picker.recent(lambda i: _plain_single(i) and bool(candidates(i))):
        candidates(issue)[0].overflow_usage = True


def _log_dir_site(fleet: Fleet, window: Callable[[Issue], bool]) -> tuple[str, str, int] | None:
    """(host, repo, issue) for a directory named like a log: the first host's first repo, an issue
    of the default window that has no log on that host (its work ran elsewhere), so no log is hidden."""
    host, repo = fleet.hosts[0], REPOS[0].name
    logged = {d.issue for d in fleet.dispatches if d.host == host and d.repo == repo}
    free = [i for i in fleet.issues if i.repo == repo and i.number not in logged]
    chosen = sorted(i.number for i in free if window(i)) or sorted(i.number for i in free)
    return (host, repo, chosen[0]) if chosen else None


def _review(issue: Issue) -> Milestone:
    m = _first(issue, "review")
    assert m is not None
    return m


def _trail_anomalies(picker: _Picker, parity: bool, scale: int) -> None:
    rng = picker.rng
    if not parity:
        for issue in picker.recent(_plain_single):
            gate = _first(issue, "gate")
            assert gate is not None
            gate.at_text = DATE_PASTE  # a pasted shell substitution: the header yields at='$(date'
        for issue in picker.recent(_plain_single):
            setup = _first(issue, "setup")
            assert setup is not None
            setup.at_text = ""
        for issue in picker.recent(_plain_single):
            rv = _review(issue)
            rv.set_key("ac_met", str(int(rv.key("ac_total") or "3") + 2))
        for issue in picker.recent(_plain_single):
            _review(issue).set_key("fixed", "0x1f")
        for issue in picker.recent(_plain_single):
            _review(issue).drop_key("ac_total")
        for issue, model in zip(
            picker.recent(_plain_single, len(HOSTILE_MODELS)), HOSTILE_MODELS, strict=False
        ):
            for m in issue.milestones:
                m.drop_key("model")
            gate = _first(issue, "gate")
            assert gate is not None
            gate.set_key("model", model)
        for issue in picker.recent(_plain_single):
            setup = _first(issue, "setup")
            assert setup is not None
            setup.set_key("branch", HOSTILE_BRANCH)
    skewed = picker.recent(_plain_single) + picker.pick(lambda i: _plain_single(i) and not picker.window(i))
    for issue in skewed:
        impl, review = _first(issue, "implement"), _review(issue)
        assert impl is not None
        review.at_text = iso_seconds(
            impl.at_ms - rng.randint(3, 9) * MINUTE_MS
        )  # the writer's clock is behind
    for issue in picker.recent(_plain_single):
        for phase in ("setup", "plan"):
            m = _first(issue, phase)
            assert m is not None
            m.run = ""

    def one_run_single(i: Issue) -> bool:
        return i.kind == "single" and len(_runs(i)) == 1 and _first(i, "gate") is not None

    for issue in picker.recent(one_run_single, 3) + picker.pick(one_run_single, 6 * scale):
        for m in issue.milestones:
            m.drop_key("model")


def _github_extras(fleet: Fleet, picker: _Picker) -> None:
    rng = picker.rng
    for edited in picker.pick(lambda i: bool(i.notes) and i.notes[0].posted_ms < AS_OF_MS - 2 * DAY_MS):
        n = edited.notes[0]
        n.body += "\n\n(edit: added the stack trace)"
        n.edited_ms = n.posted_ms + 2 * HOUR_MS + rng.randint(0, 3_600_000)
    for issue in picker.recent(_plain):
        gate = _first(issue, "gate")
        assert gate is not None
        near_miss = " " + gate.body().replace("run=", "run=copy-of-")
        issue.notes.append(Note(HUMANS[1], near_miss, gate.posted_ms + 30 * MINUTE_MS))
    for repo in REPOS:
        for issue in picker.recent(lambda i, r=repo.name: i.repo == r and _plain(i) and i.pr is not None, 2):
            waiting = _first(issue, "ship", "awaiting-merge")
            done = _first(issue, "ship", "done")
            assert waiting is not None and done is not None and issue.pr is not None
            pr = PullRequest(
                issue.repo,
                issue.pr,
                f"Fix #{issue.number}: {issue.title}",
                waiting.posted_ms - 30_000,
                done.posted_ms,
            )
            echo = Milestone(
                waiting.phase,
                waiting.status,
                waiting.run,
                waiting.at_ms,
                waiting.posted_ms + 5_000,
                list(waiting.lines),
            )
            pr.echoes.append(echo)  # a runstate-looking comment on a pull request: readers must skip it
            pr.notes.append(
                Note(HUMANS[0], "LGTM, merging once CI is green.", waiting.posted_ms + 10 * MINUTE_MS)
            )
            fleet.prs.append(pr)


def _hostile_dispatches(picker: _Picker, dispatches_by_issue: dict[tuple[str, int], list[Dispatch]]) -> None:
    def work_dispatch(agent: str | None = None) -> Dispatch | None:
        def mine(d: Dispatch) -> bool:
            return d.role == "work" and (agent is None or d.agent == agent)

        def has_agent(i: Issue) -> bool:
            return _plain(i) and any(mine(d) for d in dispatches_by_issue.get((i.repo, i.number), []))

        for issue in picker.recent(has_agent):
            return next(d for d in dispatches_by_issue[(issue.repo, issue.number)] if mine(d))
        return None

    d = work_dispatch()
    if d is not None and d.spawn_event is not None:
        d.spawn_event["tier"] = HOSTILE_TIER_EVENT
    d = work_dispatch("claude")
    if d is not None and d.spawn_event is not None:
        d.spawn_event["cmd"] = str(d.spawn_event["cmd"]) + HOSTILE_CMD_SUFFIX
    d = work_dispatch("opencode")
    if d is not None:
        d.cmd = FULL_PATH_OPENCODE + d.cmd[len("opencode") :]
        if d.spawn_event is not None:
            d.spawn_event["cmd"] = d.cmd
        if d.telemetry is not None:
            d.telemetry["spawned_command"] = d.cmd
            d.telemetry["llm"] = FULL_PATH_OPENCODE


def _event_anomalies(fleet: Fleet, rng: random.Random) -> None:
    """A line whose ``issue`` is a string (on a line the scorecard reads) and an unknown event name."""
    spawned = [e for e in fleet.events if e.fields.get("event") == "spawned"]
    reports = [e for e in spawned if e.fields.get("detail") == "report agent"]
    target = rng.choice(reports or spawned)  # a report agent's spawn: the row's figures do not move
    target.fields["issue"] = str(target.fields["issue"])
    base = rng.choice([e for e in spawned if e is not target])
    fleet.events.append(
        Event(
            base.ts + 1_500,
            base.host,
            base.repo,
            {
                "event": "lease-renewed",
                "unit": base.fields["unit"],
                "issue": base.fields["issue"],
                "slot": base.fields.get("slot"),
                "ttl_s": 900,
            },
        )
    )


def _telemetry_anomalies(
    fleet: Fleet,
    picker: _Picker,
    parity: bool,
    dispatches_by_issue: dict[tuple[str, int], list[Dispatch]],
) -> None:
    host = fleet.hosts[0]
    fleet.tele.append(
        TeleRow(
            AS_OF_MS - 9 * DAY_MS + 3_723_000,
            host,
            {
                "dossier": "acme/git/full-cycle-issue",
                "resolved_version": "3.8.0",
                "source": "registry",
                "verification": "passed",
                "llm": "claude-code",
                "user": "dana-k",
                "cwd": "/home/sched/src/acme/api",
                "nested": False,
                "duration_ms": 5400,
                "input_tokens": 10,
                "output_tokens": 20,
                "total_cost_usd": 0.01,
            },
        )
    )
    numbers: dict[int, list[str]] = {}
    for i in fleet.issues:
        numbers.setdefault(i.number, []).append(i.repo)

    def tele_rows(issue: Issue) -> list[dict]:
        return [
            d.telemetry
            for d in dispatches_by_issue.get((issue.repo, issue.number), [])
            if d.telemetry is not None and d.role == "work" and d.telemetry.get("input_tokens") is not None
        ]

    for issue in picker.pick(lambda i: len(numbers[i.number]) == 1 and bool(tele_rows(i))):
        tele_rows(issue)[0]["cwd"] = f"/tmp/sched-recover/issue-{issue.number}"
    if not parity:
        for issue in picker.pick(lambda i: len(numbers[i.number]) > 1 and bool(tele_rows(i))):
            for row in tele_rows(issue)[:1]:
                row["cwd"] = f"/tmp/sched-recover/issue-{issue.number}"
    for issue in picker.pick(lambda i: bool(tele_rows(i))):
        row = tele_rows(issue)[0]
        row["input_tokens"] = str(row["input_tokens"])  # a number written as a string
    if not parity:
        for issue in picker.pick(lambda i: bool(tele_rows(i))):
            tele_rows(issue)[0]["tier"] = HOSTILE_TIER_TELEMETRY
