"""One issue's history on a single clock: dispatches, milestones, journal lines and telemetry rows.

A :class:`Story` walks forward in time. ``spawn`` starts an agent dispatch (journal: assigned,
spawned), ``post`` records a milestone (trail comment, plus the scheduler's progress line), ``close``
ends the dispatch (log slice synthesised, runs.jsonl row written just after). Reaching the cutoff
raises :class:`Cutoff` wherever the story is, which leaves the issue in flight with its agent still
running. The narrative methods (``work_issue``, ``run``, ``implement`` ...) compose these steps.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from scorecard_assets.sample_fleet import _script
from scorecard_assets.sample_fleet._catalog import (
    DELIVERED_PHASES,
    ESCALATION,
    HELPER_MODEL,
    HOUR_MS,
    HUMAN_NOTES,
    HUMANS,
    MINUTE_MS,
    MODELS,
    NOTES_AFTER,
    SINGLE_QUALITY,
    TELEMETRY_V2_SINCE_MS,
    TITLE_OBJECTS,
    TITLE_SUFFIXES,
    TITLE_VERBS,
    HostSpec,
    Quality,
    Spelling,
    main_checkout,
    slug_of,
    worktree,
)
from scorecard_assets.sample_fleet._model import (
    Dispatch,
    Issue,
    Milestone,
    Note,
    Segment,
    TeleRow,
    iso_millis,
    iso_seconds,
)
from scorecard_assets.sample_fleet._planner import spelling_of

if TYPE_CHECKING:
    from scorecard_assets.sample_fleet._planner import IssueSlot, Planner

DOSSIER_OF_ROLE = {
    "classify": "sched:classify",
    "work": "sched:cycle",
    "report": "sched:report",
    "batch": "sched:batch",
}
TOKEN_FIELDS = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens")


class Cutoff(Exception):
    """The story reached the end of recorded time: the issue stays where it is (in flight)."""


@dataclass(frozen=True)
class Agent:
    """Who does a piece of work: a model reached through one spelling, at a dispatch tier."""

    model_key: str
    spelling: Spelling
    tier: str


@dataclass
class RunPlan:
    """What one run of an issue will do."""

    planner: Agent
    builder: Agent
    quality: Quality
    outcome: str  # deliver | blocked:<phase> | abandon:<phase> | handoff (a new run follows the plan)
    pairing: bool = False
    report_agent: bool = True
    stall: bool = False
    fence_after_plan: bool = False
    continuation: bool = False
    plan_model: bool = False
    build_on_other_host: bool = False


def short_sha(rng: random.Random, n: int = 7) -> str:
    return "".join(rng.choice("0123456789abcdef") for _ in range(n))


class Story:
    """Simulates one issue from its first dispatch to where the record ends."""

    def __init__(self, planner: Planner, slot: IssueSlot, rng: random.Random) -> None:
        self.p = planner
        self.slot = slot
        self.rng = rng
        self.repo = slot.repo.name
        self.n = slot.number
        self.host = slot.host
        self.unit = f"issue:{self.n}"
        self.t = slot.start_ms
        self.last_post = self.t
        self.open: Dispatch | None = None
        title = f"{rng.choice(TITLE_VERBS)} {rng.choice(TITLE_OBJECTS)}{rng.choice(TITLE_SUFFIXES)}"
        labels = ["sched", f"area:{rng.choice(['core', 'ui', 'ops', 'docs', 'billing'])}"]
        body = (
            f"{title}.\n\nAcceptance criteria:\n- behaviour covered by a test\n"
            f"- no regression in the {slot.repo.language} suite\n"
        )
        self.issue = Issue(self.repo, self.n, title, body, slot.created_ms, labels, kind=slot.kind)

    # ================================================================== primitives
    def run_id(self) -> str:
        return f"r-{self.n}-{short_sha(self.rng, 4)}"

    def step(self, lo_min: float, hi_min: float) -> int:
        """Advance the clock by a random number of minutes; stop the story at the cutoff."""
        self.t += int(self.rng.uniform(lo_min, hi_min) * MINUTE_MS) + self.rng.randrange(1000)
        if self.t >= self.p.cutoff:
            raise Cutoff
        return self.t

    def journal(
        self, ts: int, host: str, event: str, *, unit: str | None = None, **fields: Any
    ) -> dict[str, Any]:
        """Append a scheduler journal line for this issue; returns its fields (for later edits)."""
        line: dict[str, Any] = {"event": event, "unit": unit or self.unit, "issue": self.n, **fields}
        self.p.event(ts, host, self.repo, line)
        return line

    def spawn(
        self,
        role: str,
        agent: Agent,
        *,
        host: HostSpec | None = None,
        detail: str | None = None,
        assigned: bool = True,
        log_name: str | None = None,
        unit: str | None = None,
        step_s: float = 5.0,
    ) -> Dispatch:
        """Start an agent dispatch now: ``assigned`` (unless continuing a slot) and ``spawned`` lines."""
        host = host or self.host
        cli, fmt = self.p.agent_format(agent.model_key, self.t, role)
        cmd = self.p.command(cli, fmt, agent.model_key, agent.spelling, agent.tier)
        unit = unit or self.unit
        log_name = log_name or f"issue-{self.n}.log"
        cwd = (
            worktree(host, self.repo, self.n) if role in ("work", "batch") else main_checkout(host, self.repo)
        )
        one_m = agent.spelling.cli_model.endswith("[1m]")
        d = Dispatch(
            host=host.name,
            repo=self.repo,
            issue=self.n,
            unit=unit,
            role=role,
            model_key=agent.model_key,
            spelling=agent.spelling,
            tier=agent.tier,
            agent=cli,
            fmt=fmt,
            cmd=cmd,
            start_ms=self.t,
            log_name=log_name,
            cwd=cwd,
            slot=self.rng.randint(1, 4),
            log_model=agent.spelling.cli_model if one_m else MODELS[agent.model_key].log_model,
            step_s=step_s,
            lang=self.slot.repo.language,
            output_scale=self.p.output_scale,
        )
        d.side_model = not self.p.parity and cli == "claude" and role == "work" and self.rng.random() < 0.5
        extra = {"detail": detail} if detail else {}
        if assigned:
            self.journal(
                self.t - self.rng.randint(4, 15), host.name, "assigned", unit=unit, slot=d.slot, **extra
            )
        d.spawn_event = self.journal(
            self.t,
            host.name,
            "spawned",
            unit=unit,
            pid=self.rng.randint(100_000, 4_190_000),
            tier=agent.tier,
            slot=d.slot,
            cmd=cmd,
            log=f"{host.dossier}/sched/{slug_of(self.repo)}/runs/{log_name}",
            **extra,
        )
        self.open = d
        self.last_post = self.t
        self.p.fleet.dispatches.append(d)
        return d

    def post(
        self,
        d: Dispatch | None,
        phase: str,
        status: str,
        run: str,
        lines: list[tuple[str, str]],
        *,
        seg: Segment | None = None,
        one_liner: bool = False,
    ) -> Milestone:
        """A milestone at the current time (the server stores it a moment later).

        With a dispatch ``d`` the agent posted it: the work since its previous milestone becomes a
        segment of its log, and the scheduler journals the progress. ``None`` = the scheduler posted.
        """
        posted = self.t + self.rng.randint(300, 2600)
        m = Milestone(phase, status, run, self.t, posted, list(lines), one_liner=one_liner)
        self.issue.milestones.append(m)
        if d is not None:
            s = seg or Segment(phase, 0, 0)
            s.t0, s.t1 = self.last_post, self.t
            d.segments.append(s)
            self.last_post = self.t
            ts = posted + self.rng.randint(80, 900)
            if self.rng.random() < self.p.mix.phase_updated:
                self.journal(ts - 1, d.host, "phase-updated", unit=d.unit, phase=phase, slot=d.slot)
            self.journal(
                ts, d.host, "progress", unit=d.unit, slot=d.slot, detail=f"milestone {phase}/{status}"
            )
        return m

    def work_silently(self, d: Dispatch, lo_min: float, hi_min: float, seg: Segment) -> None:
        """Work that ends without a milestone (the dispatch is cut short or only fixes CI)."""
        self.step(lo_min, hi_min)
        seg.t0, seg.t1, seg.ends_with_post = self.last_post, self.t, False
        d.segments.append(seg)
        self.last_post = self.t

    def close(
        self, d: Dispatch, *, killed: bool = False, subtype: str = "success", detected: bool = True
    ) -> None:
        """The agent process ends: its log slice, exit detection and its runs.jsonl row."""
        end = self.t + self.rng.randint(5_000, 90_000)
        d.end_ms, d.killed, d.end_subtype = end, killed, subtype
        self.settle_script(d)
        abnormal = killed or subtype != "success"
        if detected and (abnormal or self.rng.random() < self.p.mix.exit_seen):
            pid = self.rng.randint(100_000, 4_190_000)
            self.journal(
                end + self.rng.randint(200, 1500), d.host, "exit-detected", unit=d.unit, pid=pid, slot=d.slot
            )
        row_ts = self.telemetry(d)
        self.t = max(end, row_ts) + 1000
        self.open = None

    def leave_running(self, d: Dispatch) -> None:
        """The record ends while this agent still works: a log slice without a result, no row."""
        phase = d.segments[-1].phase if d.segments else "implement"
        end = min(self.p.cutoff, self.last_post + 20 * MINUTE_MS)
        d.segments.append(Segment(phase, self.last_post, end, ends_with_post=False))
        self.settle_script(d)

    def settle_script(self, d: Dispatch) -> None:
        """Fix the dispatch's script seed; keep only what its runs.jsonl row needs from the turns."""
        d.script_seed = self.rng.getrandbits(64)
        turns = _script.script(d)
        d.turn_count = len(turns)
        d.usage = _script.scheduler_usage(d, turns)

    def telemetry(self, d: Dispatch) -> int:
        """The dispatch's runs.jsonl row, written just after it ended; returns the row's time.

        Rows before the telemetry upgrade carry no tier, provider or usage (the cost is only in the
        agent log); a few newer rows lost their cost too.
        """
        assert d.end_ms is not None
        ts = d.end_ms + self.rng.randint(150, 2400)
        usage = d.usage
        old = ts < TELEMETRY_V2_SINCE_MS
        row: dict[str, Any] = {
            "dossier": DOSSIER_OF_ROLE[d.role],
            "resolved_version": "n/a",
            "source": "local",
            "verification": "skipped",
            "llm": d.cmd.split()[0],
            "user": "sched",
            "cwd": d.cwd,
            "nested": False,
            "duration_ms": d.end_ms - d.start_ms,
            "spawned_command": d.cmd,
            "model": d.spelling.cli_model if old else usage["model"],
        }
        if not old:
            row["provider"] = d.agent if d.agent in ("claude", "opencode") else None
        row |= {"exit_code": None, "spawn_error": None}
        row |= {k: None if old else usage[k] for k in TOKEN_FIELDS}
        if d.agent == "opencode" and not old:
            row |= {"reasoning_tokens": usage["reasoning_tokens"], "steps": usage["steps"]}
        cost = None if old else usage["total_cost_usd"]
        if cost is not None and self.rng.random() < 0.07:
            cost = None  # the scheduler lost this cost: only the agent log has it
        row["total_cost_usd"] = cost
        if d.agent == "opencode" and not old:
            row["cost_available"] = not d.spelling.subscription
        row["unit"] = d.unit
        if not old:
            row["tier"] = d.tier
        d.telemetry = row
        self.p.fleet.tele.append(TeleRow(ts, d.host, row))
        if usage["input_tokens"] is None and not old:  # newer schedulers journal a missing usage
            self.journal(ts + self.rng.randint(1, 40), d.host, "run-log-no-usage", unit=d.unit, slot=d.slot)
        return ts + 40

    def note(self, body: str, at: int | None = None) -> None:
        """A human comment (dropped when it would fall after the end of recorded time)."""
        when = self.t if at is None else at
        if when < self.p.cutoff:
            self.issue.notes.append(Note(self.rng.choice(HUMANS), body, when))

    def agent(self, model_key: str, allowed: tuple[str, ...] | None = None) -> Agent:
        return Agent(model_key, self.p.next_spelling(model_key, allowed), MODELS[model_key].tier)

    def helper_agent(self) -> Agent:
        """The cheap model of classifier and report dispatches."""
        return Agent(HELPER_MODEL, MODELS[HELPER_MODEL].spellings[0], "mechanical")

    # ================================================================== the story
    def tell(self) -> None:
        from scorecard_assets.sample_fleet import _batches

        try:
            if self.slot.kind == "classify-only":
                self.classify(final=True)
            elif self.slot.kind == "batch-anchor":
                _batches.anchor(self)
            elif self.slot.kind == "batch-member":
                _batches.member(self)
            else:
                self.work_issue()
        except Cutoff:
            if self.open is not None:
                self.leave_running(self.open)
        self.close_issue_if_delivered()

    def close_issue_if_delivered(self) -> None:
        ms = self.issue.milestones
        if self.issue.reopened or not ms:
            return
        if ms[-1].status == "done" and ms[-1].phase in DELIVERED_PHASES:
            merged = [m for m in ms if m.phase in ("ship", "batch-ship") and m.status == "done"]
            self.issue.closed_ms = (merged[-1] if merged else ms[-1]).posted_ms + 4000

    def plan_run(self) -> RunPlan:
        """The agents and the outcome of the issue's main run, drawn from the quality profile.

        Whether the run ships is drawn from a stratified sequence per model or pairing, so realised
        delivery rates follow the profiles closely; how it fails otherwise is drawn at random.
        """
        rng = self.rng
        pairing = self.slot.pairing if self.slot.kind == "pairing" else None
        if pairing is not None:
            spelling = spelling_of(pairing.planner, pairing.planner_spelling)
            planner = Agent(pairing.planner, spelling, MODELS[pairing.planner].tier)
            builder = self.agent(pairing.builder, pairing.builder_spellings)
            q = pairing.quality
        else:
            planner = builder = self.agent(self.slot.model_key or "claude-sonnet-5")
            q = SINGLE_QUALITY[planner.model_key]
        if self.p.stratified(pairing.key if pairing else planner.model_key) < q.deliver:
            outcome = "deliver"
        elif rng.random() < q.blocked:
            # a pairing's plan is the strong model's part: its runs fail in the build, if at all
            phases = ["implement", "implement", "review", "ship"] + ([] if pairing else ["gate"])
            outcome = "blocked:" + rng.choice(phases)
        else:
            outcome = "abandon:" + ("implement" if pairing else rng.choice(["plan", "implement"]))
        plan = RunPlan(planner, builder, q, outcome, pairing=pairing is not None)
        plan.report_agent = not self.p.parity and rng.random() < 0.8
        plan.stall = rng.random() < q.stall
        plan.fence_after_plan = not plan.stall and not plan.pairing and rng.random() < 0.04
        plan.continuation = rng.random() < self.p.mix.continuation
        plan.plan_model = plan.pairing or rng.random() < 0.3
        plan.build_on_other_host = len(self.p.hosts) > 1 and rng.random() < self.p.mix.other_host
        return plan

    def work_issue(self) -> None:
        rng = self.rng
        if not self.p.parity and rng.random() < self.p.mix.classify:
            self.classify(final=False)
            self.step(1, 40)
        plan = self.plan_run()
        if self.slot.reopen:
            self.delivered_then_reopened(plan)
        elif plan.outcome == "deliver" and rng.random() < 0.05:
            # the first agent exits after planning; the redispatched agent starts a new run
            self.run(replace(plan, outcome="handoff"))
            self.step(8, 25)
            self.redispatch_after_exit(plan)
            self.run(plan, continue_dispatch=True)
        elif plan.outcome == "blocked:implement" and rng.random() < 0.35:
            self.run(plan)
            self.step(120, 2 * 24 * 60)
            self.note("Unblocked: the CI runner image was fixed, retrying.")
            self.step(5, 90)
            self.run(replace(plan, outcome="deliver", stall=False))
        else:
            self.run(plan)
        self.discussion()

    def delivered_then_reopened(self, plan: RunPlan) -> None:
        """Delivered, then reopened: a second run reaches review and is blocked at ship."""
        done = replace(plan, outcome="deliver", stall=False, fence_after_plan=False)
        self.run(done)
        self.step(12 * 60, 3 * 24 * 60)
        self.note("This regressed after the deploy; reopening.")
        self.issue.reopened = True
        self.step(5, 60)
        self.run(replace(done, outcome="blocked:ship", report_agent=False))

    def discussion(self) -> None:
        """Human comments spread over the issue's life (their number averages the mix's ``notes``)."""
        rng = self.rng
        lo = self.issue.created_ms
        hi = max(lo + HOUR_MS, self.t + rng.randint(60_000, 3 * HOUR_MS))
        mean = self.p.mix.notes
        count = int(mean) + (1 if rng.random() < mean - int(mean) else 0)
        for _ in range(count):
            self.note(rng.choice(NOTES_AFTER + HUMAN_NOTES), at=lo + rng.randrange(hi - lo))

    # ------------------------------------------------------------------ classifier
    def classify(self, final: bool) -> None:
        """A classifier dispatch posts its verdict under its own run id."""
        rng = self.rng
        d = self.spawn("classify", self.helper_agent(), detail="classifier")
        self.step(0.4, 2.5)
        risk = rng.choice(["low", "low", "med", "med", "high"])
        mode = "full" if risk == "high" or rng.random() < 0.3 else "slot"
        verdict = [
            ("mode", mode),
            ("risk", risk),
            ("est_files", str(rng.randint(1, 12))),
            ("est_diff", str(rng.randint(20, 900))),
            ("areas", rng.choice(["api,docs", "ui", "billing,api", "ops", "cli,docs"])),
            ("test_scope", rng.choice(["focused", "full", "none"])),
            ("deps", "none"),
            ("confidence", f"{rng.uniform(0.55, 0.97):.2f}"),
        ]
        self.post(d, "classify", "done", self.run_id(), verdict, one_liner=True)
        self.close(d)
        if final and rng.random() < 0.5:
            self.note(
                "Holding this one: needs a product decision before anyone starts.", at=self.t + 3 * HOUR_MS
            )

    # ------------------------------------------------------------------ a run
    def run(self, plan: RunPlan, continue_dispatch: bool = False) -> None:
        """gate, setup, plan by the planner; then the builder (a second dispatch for a pairing)."""
        rng = self.rng
        q = plan.quality
        run = self.run_id()
        planner_model = [("model", plan.planner.spelling.trail)]
        d = (
            self.open
            if (continue_dispatch and self.open)
            else self.spawn("work", plan.planner, step_s=q.step_s)
        )
        self.step(0.6, 4)
        self.post(
            d,
            "gate",
            "done",
            run,
            [("base_branch", "main"), ("warnings", "none"), *planner_model, ("next", "setup")],
        )
        if plan.outcome == "blocked:gate":
            self.post(d, "gate", "blocked", run, [("reason", "needs-clarification")], one_liner=True)
            self.close(d)
            self.note("Clarified the expected behaviour in the description.", at=self.t + 2 * HOUR_MS)
            return
        self.step(1, 6)
        setup = [
            ("branch", f"sched/issue-{self.n}-{short_sha(rng, 4)}"),
            ("worktree", worktree(self.p.host_named(d.host), self.repo, self.n)),
            ("pool_claimed", f"slot-{d.slot}"),
            ("next", "plan"),
        ]
        self.post(d, "setup", "done", run, setup)
        self.step(3 * q.speed, 25 * q.speed)
        plan_lines = [("planning", "done"), ("open_questions", str(rng.choice([0, 0, 0, 1, 2])))]
        self.post(
            d,
            "plan",
            "done",
            run,
            [*plan_lines, *(planner_model if plan.plan_model else []), ("next", "implement")],
        )
        if plan.outcome in ("abandon:plan", "handoff"):
            self.step(2, 15)
            self.close(d)
            if plan.outcome == "abandon:plan":
                self.abandon(d)
            return
        if plan.fence_after_plan:
            self.step(3, 20)
            self.close(d)
            d = self.fenced_redispatch(d, run, "plan", reason="verify")
        if plan.pairing:
            self.step(0.3, 1.5)
            self.close(d)
            self.step(0.2, 1.5)
            other = self.other_host() if plan.build_on_other_host else None
            d = self.spawn("work", plan.builder, host=other, step_s=q.step_s, assigned=other is not None)
        self.implement(d, run, plan)

    def implement(self, d: Dispatch, run: str, plan: RunPlan) -> None:
        rng = self.rng
        q = plan.quality
        files = rng.randint(1, 7)
        partial = Segment("implement", 0, 0, files=max(1, files // 2), edit_err=q.edit_err, verify_last=False)
        if plan.continuation:
            self.work_silently(d, 10 * q.speed, 35 * q.speed, partial)
            self.close(d, subtype="error_max_turns")
            self.journal(
                self.t, d.host, "requeued", unit=d.unit, slot=d.slot, detail="max turns reached; continuing"
            )
            self.step(0.2, 2)
            d = self.spawn("work", Agent(d.model_key, d.spelling, d.tier), step_s=d.step_s, assigned=False)
        if plan.stall:
            self.work_silently(d, 30 * q.speed, 80 * q.speed, replace(partial))
            self.t += 90 * MINUTE_MS
            if self.t >= self.p.cutoff:
                raise Cutoff
            self.journal(
                self.t, d.host, "stalled", unit=d.unit, slot=d.slot, detail="no progress for 90m in implement"
            )
            self.close(d, killed=True, detected=False)
            d = self.fenced_redispatch(d, run, "implement", reason="stall")
        self.step(10 * q.speed, 110 * q.speed)
        lines = [
            ("files", str(files)),
            ("tests_added", str(rng.randint(0, 3))),
            ("tests_run", str(rng.randint(4, 240))),
        ]
        if plan.pairing or rng.random() < 0.5:
            lines.append(("model", plan.builder.spelling.trail))
        seg = Segment(
            "implement", 0, 0, files=files, edit_err=q.edit_err, verify_last=rng.random() < q.verify
        )
        d.abort = d.abort or rng.random() < q.abort
        if plan.outcome == "blocked:implement":
            reason = rng.choice(["flaky-ci", "tests-failing", "missing-credentials"])
            self.post(d, "implement", "blocked", run, [*lines, ("reason", reason)], seg=seg)
            self.close(d)
            return
        self.post(d, "implement", "done", run, [*lines, ("next", "review")], seg=seg)
        if plan.outcome == "abandon:implement":
            self.step(2, 20)
            self.close(d)
            self.abandon(d)
            return
        self.review(d, run, plan)

    def review(self, d: Dispatch, run: str, plan: RunPlan) -> None:
        rng = self.rng
        q = plan.quality
        self.step(4 * q.speed, 40 * q.speed)
        fixed = int(rng.expovariate(1.0 / q.fixed))
        ac_total = rng.randint(2, 8)
        ac_met = sum(1 for _ in range(ac_total) if rng.random() < q.ac_ratio)
        lines = [
            ("head", short_sha(rng)),
            ("fixed", str(fixed)),
            ("escalated", str(1 if rng.random() < q.escalated else 0)),
            ("agents_done", rng.choice(["1,2,3", "1,2,3,4,5"])),
            ("agents_pending", "none"),
            ("ac_met", str(ac_met)),
            ("ac_total", str(ac_total)),
        ]
        if rng.random() < 0.3:
            lines.append(("tier", "full"))  # the review tier, not a dispatch tier
        seg = Segment(
            "review", 0, 0, fixes=min(fixed, 6), edit_err=q.edit_err, verify_last=rng.random() < q.verify
        )
        if plan.outcome == "blocked:review":
            self.post(d, "review", "blocked", run, [*lines, ("reason", "ac-unmet")], seg=seg)
            self.close(d)
            return
        self.post(d, "review", "done", run, [*lines, ("next", "ship")], seg=seg)
        self.ship(d, run, plan)

    def ship(self, d: Dispatch, run: str, plan: RunPlan) -> None:
        """Open the pull request, park it; CI fixes may follow; then the merge and the report."""
        rng = self.rng
        self.step(2, 12)
        pr = self.n + 1
        self.issue.pr = pr
        head = short_sha(rng)
        if plan.outcome == "blocked:ship":
            lines = [("pr", str(pr)), ("head", head), ("ci_fix_attempts", "3"), ("reason", "ci-red")]
            self.post(d, "ship", "blocked", run, lines)
            self.close(d)
            return
        lines = [("pr", str(pr)), ("head", head), ("ci_fix_attempts", "0")]
        self.post(d, "ship", "awaiting-merge", run, lines)
        self.close(d)
        self.journal(self.t, d.host, "verify-complete")
        self.journal(self.t + 1, d.host, "pr-parked", pr=pr)
        attempts = rng.choice(self.p.mix.ci_fix)
        for k in range(attempts):
            self.ci_fix(d, pr, k + 1, plan)
        self.merge(d.host, run, pr, attempts)
        if plan.report_agent:
            self.report_agent(d.host, run, pr)

    def ci_fix(self, built: Dispatch, pr: int, attempt: int, plan: RunPlan) -> None:
        """CI failed on the open pull request: a fix dispatch (same model and tier) pushes a fix."""
        self.step(4, 25)
        check = self.rng.choice(["lint", "unit tests", "type check", "e2e smoke"])
        self.journal(
            self.t - 2, built.host, "fix-dispatched", pr=pr, attempt=attempt, detail=f"ci failed: {check}"
        )
        agent = Agent(built.model_key, built.spelling, built.tier)
        host = self.p.host_named(built.host)
        d = self.spawn("work", agent, host=host, detail="ci fix", assigned=False, step_s=built.step_s)
        q = plan.quality
        self.work_silently(
            d, 3 * q.speed, 20 * q.speed, Segment("implement", 0, 0, files=1, edit_err=q.edit_err)
        )
        self.close(d)
        self.journal(self.t, built.host, "fix-resolved", pr=pr, attempt=attempt)

    def merge(self, host: str, run: str, pr: int, attempts: int) -> None:
        """The pull request merges after a wait; the scheduler tears down and records ``ship done``."""
        rng = self.rng
        self.step(8, rng.choice([40, 180, 900, 1800]))
        merged = self.t
        self.journal(
            merged + rng.randint(30_000, 120_000), host, "merge-accepted", pr=pr, mergedAt=iso_seconds(merged)
        )
        self.t = merged + rng.randint(125_000, 180_000)
        if self.t >= self.p.cutoff:
            raise Cutoff
        self.journal(self.t, host, "teardown-done", cleanup="done")
        self.t += rng.randint(400, 1500)
        lines = [
            ("pr", str(pr)),
            ("merge_commit", short_sha(rng)),
            ("ci_fix_attempts", str(attempts)),
            ("cleanup", "done"),
            ("next", "report"),
        ]
        self.post(None, "ship", "done", run, lines)

    def report_agent(self, host_name: str, run: str, pr: int) -> None:
        """After the merge, a cheap report agent (tier mechanical) posts the report milestone."""
        rng = self.rng
        self.t += rng.randint(2_000, 60_000)
        self.journal(self.t - 3, host_name, "report-dispatched", slot=1, pr=pr, cleanup="done")
        host = self.p.host_named(host_name)
        d = self.spawn("report", self.helper_agent(), host=host, detail="report agent")
        self.step(1.5, 9)
        self.post(d, "report", "done", run, [("traps_added", str(rng.choice([0, 0, 1, 2])))], one_liner=True)
        self.close(d)

    def abandon(self, d: Dispatch) -> None:
        """The agent exited mid-pipeline and the scheduler gave up: the run stays at a ``done``."""
        last = self.issue.milestones[-1]
        self.journal(
            self.t + 5,
            d.host,
            "verify-incomplete",
            unit=d.unit,
            detail="unverified-exit",
            slot=d.slot,
            last_progress_at=iso_millis(last.posted_ms),
            observed=f"milestone {last.phase}/{last.status}; closed=false",
        )
        self.journal(self.t + 9, d.host, "unit-failed", unit=d.unit, detail="redispatch budget exhausted")

    def other_host(self) -> HostSpec:
        return next((h for h in self.p.hosts if h.name != self.host.name), self.host)

    def redispatch_after_exit(self, plan: RunPlan) -> Dispatch:
        """The agent exited without finishing: verify-incomplete, redispatched one tier up, spawned."""
        last = self.issue.milestones[-1]
        host = self.host.name
        self.journal(
            self.t,
            host,
            "verify-incomplete",
            detail="unverified-exit",
            slot=2,
            last_progress_at=iso_millis(last.posted_ms),
            observed=f"milestone {last.phase}/{last.status}; closed=false",
        )
        self.t += 3
        tier = ESCALATION[plan.planner.tier]
        self.journal(self.t, host, "redispatched", tier=tier, slot=2)
        self.t += self.rng.randint(5, 40)
        agent = Agent(plan.planner.model_key, plan.planner.spelling, tier)
        return self.spawn("work", agent, assigned=False, step_s=plan.quality.step_s)

    def fenced_redispatch(self, old: Dispatch, run: str, phase: str, reason: str) -> Dispatch:
        """A fence over a dead or stalled agent, then a redispatch (one tier up) in the same run."""
        rng = self.rng
        host = old.host
        last = self.issue.milestones[-1]
        if reason == "verify":
            self.journal(
                self.t,
                host,
                "verify-incomplete",
                detail="unverified-exit",
                slot=old.slot,
                last_progress_at=iso_millis(last.posted_ms),
                observed=f"milestone {last.phase}/{last.status}; closed=false",
            )
        self.t += rng.randint(5, 15)
        takeover = f"slot-{rng.randint(1, 4)}"
        detail = f"{run} gen=1 takeover={takeover}"
        self.journal(self.t, host, "fence-written", slot=old.slot, fence_gen=1, detail=detail)
        self.post(None, phase, "superseded", run, [("gen", "1"), ("takeover", takeover)], one_liner=True)
        self.t += rng.randint(1, 4)
        tier = ESCALATION[old.tier]
        self.journal(self.t, host, "redispatched", tier=tier, slot=old.slot)
        self.t += rng.randint(5, 30)
        moved = len(self.p.hosts) > 1 and rng.random() < 2 * self.p.mix.other_host
        target = self.other_host() if moved else self.p.host_named(host)
        return self.spawn(
            "work", Agent(old.model_key, old.spelling, tier), host=target, assigned=False, step_s=old.step_s
        )
