"""Plans which issues the fleet holds, then lets each one's story run (``_story``).

An issue starts as an :class:`IssueSlot`: a repo, a start time and a kind (single model, planner ->
builder pairing, classifier only, batch anchor or member). Slots are numbered per repo in creation
order, then simulated one by one with their own ``random.Random`` derived from the fleet seed and
the issue's identity, so one issue's choices never depend on another's.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from scorecard_assets.sample_fleet._catalog import (
    AS_OF_MS,
    DAY_MS,
    HOSTS,
    HOUR_MS,
    MINUTE_MS,
    MIXES,
    MODELS,
    PAIRINGS,
    PARITY_END_MS,
    PARITY_START_MS,
    REPOS,
    SINGLE_MIX,
    STREAM_JSON_SINCE_MS,
    VARIANT_OF_TIER,
    WEEK_MS,
    HostSpec,
    Pairing,
    RepoSpec,
    SizeSpec,
    Spelling,
    plan_profile,
)
from scorecard_assets.sample_fleet._model import Event, Fleet

T = TypeVar("T")

# Issue numbers are given per repo in this order; GitHub numbers issues and pull requests together,
# so an issue's pull request takes the next number.
NUMBERING_ORDER = ("acme/web", "acme-labs/infra.core", "acme/api")
GOLDEN = 0.6180339887498949


def weighted_choice(rng: random.Random, items: Sequence[tuple[T, float]]) -> T:
    """One item, with probability proportional to its weight."""
    x = rng.random() * sum(w for _, w in items)
    for item, w in items:
        x -= w
        if x < 0:
            return item
    return items[-1][0]


def spelling_of(model_key: str, trail: str) -> Spelling:
    """The spelling of ``model_key`` whose trail form is ``trail``."""
    return next(s for s in MODELS[model_key].spellings if s.trail == trail)


@dataclass
class IssueSlot:
    """An issue before it is numbered and simulated."""

    repo: RepoSpec
    start_ms: int
    kind: str  # single | pairing | classify-only | batch-anchor | batch-member
    pairing: Pairing | None = None
    model_key: str | None = None
    created_ms: int = 0
    number: int = 0
    host: HostSpec = HOSTS[0]
    batch_id: str | None = None
    batch_index: int = 0
    batch_members: tuple[int, ...] = ()
    reopen: bool = False


def _growing_counts(n: int, weeks: int) -> list[int]:
    """``n`` issues over ``weeks`` weeks, growing linearly from 0.6x to 1.4x the mean (a fleet that grows)."""
    weights = [0.6 + 0.8 * w / max(1, weeks - 1) for w in range(weeks)]
    exact = [n * x / sum(weights) for x in weights]
    counts = [int(x) for x in exact]
    by_remainder = sorted(range(weeks), key=lambda w: (counts[w] - exact[w], w))
    for w in by_remainder[: n - sum(counts)]:
        counts[w] += 1
    return counts


class Planner:
    """Builds a :class:`Fleet` for a size and a profile; also the shared helpers the stories use."""

    def __init__(self, size: SizeSpec, profile: str, seed: int) -> None:
        self.size = size
        self.profile = profile
        self.parity = profile == "parity"
        self.seed = seed
        self.mix = MIXES[size.mix]
        self.output_scale = size.output_scale
        self.rng = random.Random(f"fleet:{seed}:{size.name}:{plan_profile(profile)}")
        self.hosts: tuple[HostSpec, ...] = HOSTS[:1] if self.parity else HOSTS
        self.fleet = Fleet(size=size.name, profile=profile, seed=seed, hosts=[h.name for h in self.hosts])
        self.cutoff = PARITY_END_MS if self.parity else AS_OF_MS - 10 * MINUTE_MS
        self._spelling_cycles: dict[tuple[str, tuple[str, ...] | None], list[Spelling]] = {}
        self._spelling_turns: dict[tuple[str, tuple[str, ...] | None], int] = {}
        self._strata: dict[str, int] = {}
        self._strata_offset: dict[str, float] = {}

    # ------------------------------------------------------------------ the whole fleet
    def plan(self) -> Fleet:
        from scorecard_assets.sample_fleet._story import Story  # the story module uses this one's helpers

        slots = self._regular_slots() + self._in_flight_slots() + self._special_slots()
        self._number(slots)
        slots.sort(key=lambda s: (s.repo.name, s.number))
        self._mark_reopened(slots)
        for s in slots:
            rng = random.Random(
                f"issue:{self.seed}:{plan_profile(self.profile)}:{self.size.name}:{s.repo.name}:{s.number}"
            )
            story = Story(self, s, rng)
            story.tell()
            self.fleet.issues.append(story.issue)
        return self.fleet

    def span(self) -> tuple[int, int]:
        """Where regular issues start: the size's weeks before as_of (parity: the last 30 days)."""
        if self.parity:
            return PARITY_START_MS, PARITY_END_MS - 2 * DAY_MS
        return AS_OF_MS - self.size.weeks * WEEK_MS, AS_OF_MS - 4 * DAY_MS

    def issue_count(self) -> int:
        if self.parity:
            return max(40, round(self.size.issues * 28 / (self.size.weeks * 7)))
        return self.size.issues

    # ------------------------------------------------------------------ slots
    def _random_repo(self) -> RepoSpec:
        return weighted_choice(self.rng, [(r, r.share) for r in REPOS])

    def _work_slot(self, start: int, pairing: Pairing | None) -> IssueSlot:
        if pairing is not None:
            return IssueSlot(self._random_repo(), start, "pairing", pairing=pairing)
        key = weighted_choice(self.rng, [(k, float(w)) for k, w in SINGLE_MIX])
        return IssueSlot(self._random_repo(), start, "single", model_key=key)

    def _regular_slots(self) -> list[IssueSlot]:
        """Issues spread evenly over the weeks, with a floor of pairing runs per week (sample)."""
        lo, hi = self.span()
        n = self.issue_count()
        weeks = max(1, round((hi - lo) / WEEK_MS))
        width = (hi - lo) // weeks
        slots: list[IssueSlot] = []
        for w, count in enumerate(_growing_counts(n, weeks)):
            kinds: list[Pairing | None] = []
            if self.size.pairing_per_week:
                # more in the last five weeks, so every 30-day window near as_of holds at least
                # ten judged runs per pairing (the scorer drops smaller groups)
                quota = self.size.pairing_per_week if w >= weeks - 5 else 1
                if self.parity:  # a month only: leave room for single-model issues
                    quota = max(1, quota // 2)
                kinds = [p for p in PAIRINGS for _ in range(quota)]
            while len(kinds) < count:
                kinds.append(self.rng.choice(PAIRINGS) if self.rng.random() < self.mix.pairing else None)
            kinds = kinds[:count]
            self.rng.shuffle(kinds)
            times = sorted(lo + w * width + self.rng.randrange(width) for _ in range(count))
            slots.extend(self._work_slot(t, p) for t, p in zip(times, kinds, strict=True))
        return slots

    def _in_flight_slots(self) -> list[IssueSlot]:
        """Issues whose runs start in the last hours before the cutoff: most are still in flight."""
        out = []
        for k in range(max(9, self.issue_count() // 40)):
            # a third start in the last 100 minutes: their agents are still running at the cutoff;
            # the others mostly wait for review or merge
            minutes = (100, 8 * 60, 30 * 60)[k % 3]
            start = self.cutoff - minutes * MINUTE_MS + self.rng.randrange((minutes - 20) * MINUTE_MS)
            out.append(self._work_slot(start, self.rng.choice(PAIRINGS) if self.rng.random() < 0.5 else None))
        return out

    def _special_slots(self) -> list[IssueSlot]:
        """Classifier-only issues (not in parity) and batches of three members plus their anchor."""
        lo, hi = self.span()
        slots: list[IssueSlot] = []
        if not self.parity:
            for _ in range(max(5, self.issue_count() // 70)):
                slots.append(
                    IssueSlot(self._random_repo(), lo + self.rng.randrange(hi - lo), "classify-only")
                )
        from scorecard_assets.sample_fleet._batches import batch_slots  # (imports _story, which imports us)

        return slots + batch_slots(self, lo, hi)  # docs/batches.md "The sample fleet"

    def _number(self, slots: list[IssueSlot]) -> None:
        """Creation times, hosts and issue numbers (``n`` for the issue, ``n + 1`` for its PR).

        In the sample profile the infra repo's numbers start just below the web repo's last ones,
        so a few issue numbers exist in two repos, as they do in any real multi-repo fleet.
        """
        for s in slots:
            s.created_ms = s.start_ms - int(self.rng.uniform(0.2, 72.0) * HOUR_MS)
            s.host = weighted_choice(self.rng, [(h, h.share) for h in self.hosts])
        base = 1
        for name in NUMBERING_ORDER:
            mine = sorted((s for s in slots if s.repo.name == name), key=lambda s: (s.created_ms, s.start_ms))
            for k, s in enumerate(mine):
                s.number = base + 2 * k
            end = base + 2 * len(mine)
            base = (
                end - 20 if (not self.parity and name == "acme/web") else ((end + 100) // 1000 + 1) * 1000 + 1
            )
        anchors = {s.batch_id: s for s in slots if s.kind == "batch-anchor"}
        for s in slots:
            if s.kind == "batch-member" and s.batch_id:
                anchors[s.batch_id].batch_members += (s.number,)

    def _mark_reopened(self, slots: list[IssueSlot]) -> None:
        """A few older issues get delivered, then reopened for a second run (sample profile)."""
        if self.parity:
            return
        _, hi = self.span()
        older = [s for s in slots if s.kind in ("single", "pairing") and s.start_ms < hi - 6 * WEEK_MS]
        for s in self.rng.sample(older, min(len(older), max(2, len(slots) // 200))):
            s.reopen = True

    # ------------------------------------------------------------------ helpers for stories
    def agent_format(self, model_key: str, start_ms: int, role: str) -> tuple[str, str]:
        """(agent CLI, log format) of a dispatch of ``model_key`` starting at ``start_ms``.

        Classifier and report agents use Claude's single-object json output; Claude work dispatches
        moved from json to stream-json on one date. The parity fleet runs Claude only.
        """
        agent = MODELS[model_key].agent
        if self.parity:
            return "claude", "claude-stream"
        if role in ("classify", "report"):
            return "claude", "claude-json"
        if agent == "claude":
            return "claude", ("claude-stream" if start_ms >= STREAM_JSON_SINCE_MS else "claude-json")
        return agent, agent

    def command(self, agent: str, fmt: str, model_key: str, spelling: Spelling, tier: str) -> str:
        """The dispatch's command line (argv joined by spaces, no prompt: docs/sources.md "runs.jsonl")."""
        if agent == "claude":
            spec = MODELS[model_key]
            model = spelling.cli_model if spec.agent == "claude" else spec.log_model
            if fmt == "claude-json":
                return f"claude -p --output-format json --model {model}"
            return f"claude -p --output-format stream-json --verbose --model {model}"
        if agent == "opencode":
            variant = VARIANT_OF_TIER[tier]
            return f"opencode run --auto -m {spelling.cli_model} --variant {variant} --format json --"
        return f"codex exec --json -m {spelling.cli_model} --sandbox workspace-write --skip-git-repo-check -"

    def next_spelling(self, model_key: str, allowed: tuple[str, ...] | None = None) -> Spelling:
        """A model's spellings in a shuffled, weighted rotation, so that even a rare one appears."""
        key = (model_key, allowed)
        if key not in self._spelling_cycles:
            options = [s for s in MODELS[model_key].spellings if allowed is None or s.trail in allowed]
            cycle = [s for s in options for _ in range(s.weight)]
            self.rng.shuffle(cycle)
            self._spelling_cycles[key] = cycle
            self._spelling_turns[key] = 0
        turn = self._spelling_turns[key]
        self._spelling_turns[key] = turn + 1
        cycle = self._spelling_cycles[key]
        return cycle[turn % len(cycle)]

    def stratified(self, key: str) -> float:
        """The next value in [0, 1) of a per-key golden-ratio sequence.

        Outcomes drawn with it match their probabilities closely even over a few dozen runs, so two
        pairings given the same profile really do end up with near-equal delivery rates.
        """
        turn = self._strata.get(key, 0)
        self._strata[key] = turn + 1
        if turn == 0:
            self._strata_offset[key] = self.rng.random()
        return (self._strata_offset[key] + turn * GOLDEN) % 1.0

    def event(self, ts: int, host: str, repo: str, fields: dict[str, object]) -> None:
        self.fleet.events.append(Event(ts, host, repo, fields))

    def host_named(self, name: str) -> HostSpec:
        return next(h for h in self.hosts if h.name == name)
