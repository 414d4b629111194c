"""The deterministic fleet generator: the committed sample, the stress and parity profiles and the
benchmark sizes.

Most checks of the files run on the ``stress`` fleet (the sample's fleet with every anomaly and the
hostile strings, generated here into a temporary directory: the ``sample`` fixture); the committed
sample itself is checked for being reproducible, small, believable and free of hostile strings.

Every property of the files is checked by scanning them directly (JSON and regular expressions
written here, from the formats in docs/sources.md), never through the product's readers, so a reader bug
cannot hide a generator bug and vice versa. Expected values come from the sample's design and docs/.

One section then runs the product's pure readers and builders on the stress fleet: every
(code, asset) pair of ``WARNING_CODES`` must fire, each new anomaly must be reported at the place the
file scan found it, and the parity fleet must raise none of the stress-only warnings; on the committed
sample only the few believable warnings fire.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import re
import sqlite3
import tarfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from bench.fleets import ensure_fleet, fleet_marker
from scorecard_assets.config import DEFAULT_ROUTING_PREFIXES, load_config
from scorecard_assets.decisions.warnings import DECISION_CODES
from scorecard_assets.github.sync import API_ONLY_WARNING_CODES
from scorecard_assets.pairings.imported import read_cycle_files
from scorecard_assets.records import WARNING_CODES, DataWarning
from scorecard_assets.sample_fleet.generate import FleetExistsError, generate_fleet, main
from scorecard_assets.sessions.warnings import SESSION_WARNING_CODES
from scorecard_assets.sources.agent_logs import read_agent_logs
from scorecard_assets.sources.events import read_dispatch_events
from scorecard_assets.sources.runs_jsonl import read_run_telemetry
from scorecard_assets.sources.trails_recorded import read_recorded_trails
from scorecard_assets.transform.cycles import fleet_cycles
from scorecard_assets.transform.join import build_run_table
from scorecard_assets.transform.trail_runs import build_trail_runs
from scorecard_tests.oracles.reference import MARKER
from scorecard_tests.oracles.reference import parse as parse_milestone  # the grammar, written again

REPO_ROOT = Path(__file__).resolve().parents[3]
DATA = REPO_ROOT / "scorecard_assets" / "sample_fleet" / "data"
AS_OF = datetime(2026, 11, 23, tzinfo=UTC)

ISO_S = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
USABLE_AT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$")
ABORT = re.compile(
    r"Tool execution aborted|Tool execution (was )?interrupted|Task cancelled|The user (rejected|declined)"
    r"|The user doesn't want to proceed|tool use was rejected",
    re.IGNORECASE,
)
ESC = "\x1b"
BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
# The journal vocabulary (docs/sources.md "events.jsonl").
JOURNAL_VOCABULARY = frozenset(
    """
    assigned spawned exit-detected orphan-pid external-advance progress phase-updated verify-complete
    verify-incomplete stalled redispatched unit-failed member-advance-skipped dependents-blocked
    dispatch-profile-missing slot-released requeued ground-truth-unreachable suspect-dispatch
    dispatch-unhealthy dispatch-failure tick-failed pr-parked merge-accepted pr-watch-failed
    pr-watch-waiting teardown-done teardown-failed report-dispatched report-failed
    stale-failure-reconciled anchor-closed anchor-close-failed suite-failed git-failed attributed
    fix-dispatched fix-resolved member-evicted revert-conflict batch-rebased batch-dissolved
    batch-preserved batch-split batch-blocked gate-inconclusive gate-skipped milestone-post-failed
    fence-written fence-failed stale-closed fence-bound fence-bind-failed fence-released
    fence-release-failed deferred-to-owner announced-wait stopped batch-setup-done batch-setup-failed
    batch-warmup-done batch-warmup-failed member-advanced member-worktree-reused member-landed
    landing-failed member-worktree-torn-down stale-member-worktree label-blocked label-check-failed
    label-cleared run-log-skipped run-log-recorded run-log-no-usage run-log-failed engine-stale
    engine-auto-upgrade-attempted engine-auto-upgrade-failed reprioritized stale-milestone-ignored
    eviction-duplicate pr-detect-ambiguous member-handed-back dissolve-suppressed member-requeued
    kept-worktree-cleared batch-anchor-open-on-abandon batch-resumed member-reprompted
    """.split()  # noqa: SIM905
)
PHASE_ORDER = ["gate", "setup", "plan", "implement", "review", "ship", "ship", "report"]
DELIVERED_PHASES = {"ship", "report", "batch-ship", "batch-report"}
ROUTING = list(DEFAULT_ROUTING_PREFIXES)


# ---------------------------------------- helpers
def ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def slug(repo: str) -> str:
    """The slug rule of docs/sources.md "Repo slugs", written again here."""
    out = re.sub(r"[^A-Za-z0-9._-]", "-", repo)
    return "default" if out in (".", "..") else out


def canonical(raw: str) -> str:
    """docs/join.md "Model names" with the sample's alias table, written again here."""
    lowered = raw.strip().lower()
    value = lowered.lstrip("~")
    for _ in range(4):
        seps = ["/"] if "/" in value else ["/", "-"]
        hit = next(
            ((p, s) for p in ROUTING for s in seps if value.startswith(p + s) and len(value) > len(p + s)),
            None,
        )
        if hit is None:
            break
        value = value[len(hit[0] + hit[1]) :].lstrip("~")
    if value == "":
        return lowered
    return {"glm-latest": "glm-5.3"}.get(value, value)


@dataclass
class Run:
    repo: str
    issue: int
    run_id: str
    milestones: list[dict[str, Any]] = field(default_factory=list)

    @property
    def last(self) -> dict[str, Any]:
        return self.milestones[-1]

    @property
    def delivered(self) -> bool:
        return self.last["status"] == "done" and self.last["phase"] in DELIVERED_PHASES

    def first(self, phase: str) -> dict[str, Any] | None:
        return next((m for m in self.milestones if m["phase"] == phase), None)

    def model_of(self, phase: str) -> str | None:
        m = self.first(phase)
        return m["keys"].get("model") if m else None

    def start(self) -> datetime | None:
        ats = [m["at_time"] for m in self.milestones if m["at_time"] is not None]
        return ats[0] if ats else None

    def span(self) -> tuple[datetime, datetime]:
        times = [m["created"] for m in self.milestones]
        return min(times), max(times)


def _json_array(path: Path) -> tuple[list[Any], str | None]:
    """The entries of a recorded export file, or ``([], why)`` when it is absent or not an array."""
    if not path.is_file():
        return [], "absent"
    value = json.loads(path.read_text())
    return (value, None) if isinstance(value, list) else ([], f"a JSON {type(value).__name__}")


def _well_formed_comment(c: object) -> bool:
    """The fields the fleet scan relies on have their REST types (docs/sources.md "Fetching")."""
    return (
        isinstance(c, dict)
        and type(c.get("id")) is int
        and isinstance(c.get("issue_url"), str)
        and re.search(r"/issues/\d+$", c["issue_url"]) is not None
        and isinstance(c.get("body"), str)
        and isinstance(c.get("created_at"), str)
    )


class Fleet:
    """Everything in one generated directory, read with plain json/re.

    Configured inputs that hold nothing usable are recorded, not read: ``export_problems`` (repo ->
    why its issues.json or comments.json gives no entries), ``bad_comments`` (comment entries without
    the REST types), ``homes`` (host -> configured dossier home) and ``log_dirs`` (directories found
    where log files would be).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = yaml.safe_load((root / "scorecard.yaml").read_text())
        self.repos = [r["name"] for r in self.config["repos"]]
        self.hosts = [h["name"] for h in self.config["hosts"]]
        self.homes = {h["name"]: root / h["dossier_home"] for h in self.config["hosts"]}
        self.issues: dict[str, list[dict]] = {}
        self.comments: dict[str, list[dict]] = {}
        self.export_problems: dict[str, dict[str, str]] = {}
        self.bad_comments: dict[str, list[dict]] = {}
        self.trail: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
        self.pr_numbers: set[tuple[str, int]] = set()
        for repo in self.repos:
            owner, name = repo.split("/")
            d = root / "github" / owner / name
            self.issues[repo], issues_problem = _json_array(d / "issues.json")
            entries, comments_problem = _json_array(d / "comments.json")
            problems = {"issues.json": issues_problem, "comments.json": comments_problem}
            self.export_problems[repo] = {k: v for k, v in problems.items() if v is not None}
            self.comments[repo] = [c for c in entries if _well_formed_comment(c)]
            self.bad_comments[repo] = [c for c in entries if not _well_formed_comment(c)]
            self.pr_numbers |= {(repo, i["number"]) for i in self.issues[repo] if i.get("pull_request")}
            for c in self.comments[repo]:
                n = int(c["issue_url"].rsplit("/", 1)[1])
                keys = parse_milestone(c["body"])
                if keys is None or (repo, n) in self.pr_numbers:
                    continue
                at = keys.get("at", "")
                usable = bool(USABLE_AT.match(at)) and "$" not in at and "`" not in at
                self.trail[(repo, n)].append(
                    {
                        "phase": keys.get("phase", ""),
                        "status": keys.get("status", ""),
                        "run": keys.get("run", ""),
                        "at": at,
                        "at_time": ts(at) if usable else None,
                        "created": ts(c["created_at"]),
                        "keys": keys,
                        "body": c["body"],
                    }
                )
        self.runs: list[Run] = []
        for (repo, n), ms in self.trail.items():
            by_id: dict[str, Run] = {}
            for m in ms:
                rid = m["run"] or "unknown-run"
                by_id.setdefault(rid, Run(repo, n, rid)).milestones.append(m)
            self.runs.extend(by_id.values())
        self.events: list[dict[str, Any]] = []
        self.event_files: dict[tuple[str, str], bytes] = {}
        self.logs: dict[tuple[str, str, str], bytes] = {}
        self.log_dirs: list[Path] = []
        for host in self.hosts:
            home = self.homes[host]
            if not home.is_dir():
                continue
            for repo in self.repos:
                sched = home / "sched" / slug(repo)
                path = sched / "events.jsonl"
                if path.exists():
                    raw = path.read_bytes()
                    self.event_files[(host, repo)] = raw
                    for no, line in enumerate(raw.decode().split("\n"), 1):
                        if not line:
                            continue
                        try:
                            obj = json.loads(line)
                        except ValueError:
                            obj = None
                        self.events.append({"host": host, "repo": repo, "line": no, "raw": line, "obj": obj})
                if (sched / "runs").is_dir():
                    for f in sorted((sched / "runs").iterdir()):
                        if f.is_dir():
                            self.log_dirs.append(f)
                        else:
                            self.logs[(host, repo, f.name)] = f.read_bytes()
        self.runs_files = {
            h: (self.homes[h] / "runs.jsonl").read_bytes()
            for h in self.hosts
            if (self.homes[h] / "runs.jsonl").is_file()
        }
        self.tele: list[dict[str, Any]] = []
        for host, raw in self.runs_files.items():
            for no, line in enumerate(raw.decode().split("\n"), 1):
                if not line:
                    continue
                try:
                    obj = json.loads(line)
                except ValueError:
                    obj = None
                self.tele.append({"host": host, "line": no, "raw": line, "obj": obj})

    # -- derived views
    def good_events(self) -> list[dict[str, Any]]:
        return [
            dict(e["obj"], _host=e["host"], _repo=e["repo"])
            for e in self.events
            if isinstance(e["obj"], dict)
        ]

    def good_tele(self) -> list[dict[str, Any]]:
        return [dict(t["obj"], _host=t["host"]) for t in self.tele if isinstance(t["obj"], dict)]

    def all_comments(self) -> list[dict]:
        return [c for repo in self.repos for c in self.comments[repo]]

    def repo_of_cwd(self, cwd: object) -> str | None:
        if not isinstance(cwd, str):
            return None
        for r in self.config["repos"]:
            if any(fnmatchcase(cwd, g) for g in r["checkouts"]):
                return r["name"]
        return None

    def log_lines(self, key: tuple[str, str, str]) -> list[str]:
        return self.logs[key].decode("utf-8", "replace").split("\n")


def log_issue(name: str) -> int | None:
    m = re.search(r"-(\d+)\.log$", name)
    return int(m.group(1)) if m else None


def slices(text: str) -> list[list[str]]:
    """Split a log into dispatch slices at each sched-dispatch preamble."""
    out: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith('{"type":"sched-dispatch"'):
            out.append([line])
        elif out and line:
            out[-1].append(line)
    return out


def loads(line: str) -> dict | None:
    try:
        obj = json.loads(line)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def tree_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# ---------------------------------------- fixtures
@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    """The stress fleet: the committed sample's fleet with every anomaly and the hostile strings."""
    out = tmp_path_factory.mktemp("stress") / "fleet"
    generate_fleet(out, profile="stress")
    return Fleet(out)


@pytest.fixture(scope="module")
def bundled() -> Fleet:
    """The committed sample (the default config)."""
    return Fleet(DATA)


@pytest.fixture(scope="module")
def fresh_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "fleet"
    generate_fleet(out)
    return out


@pytest.fixture(scope="module")
def parity(tmp_path_factory: pytest.TempPathFactory) -> Fleet:
    out = tmp_path_factory.mktemp("parity") / "fleet"
    generate_fleet(out, profile="parity")
    return Fleet(out)


# ---------------------------------------- determinism and config
def test_committed_sample_is_reproduced_byte_for_byte(fresh_sample: Path) -> None:
    committed = tree_digest(DATA)
    fresh = tree_digest(fresh_sample)
    assert sorted(fresh) == sorted(committed), "file lists differ: regenerate with `make sample`"
    differing = [p for p in committed if committed[p] != fresh[p]]
    assert differing == [], f"files differ from a fresh generation: {differing[:5]}"


def test_other_seed_gives_other_data(tmp_path: Path) -> None:
    out = tmp_path / "other"
    generate_fleet(out, seed=8)
    a = (DATA / "github" / "acme" / "api" / "comments.json").read_bytes()
    b = (out / "github" / "acme" / "api" / "comments.json").read_bytes()
    assert a != b


def test_sample_stays_small() -> None:
    total = sum(p.stat().st_size for p in DATA.rglob("*") if p.is_file())
    # ~8.3 MB of fleet plus ~0.5 MB of one developer's session stores (sessions/, docs/sessions.md)
    assert total <= 9_100_000, f"the committed sample is {total / 1e6:.1f} MB (budget ~9 MB)"


def test_config_loads_and_points_at_the_fleet(bundled: Fleet, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCORECARD_OUTPUT_DIR", raising=False)  # it would override output_dir
    cfg = load_config(DATA / "scorecard.yaml")
    assert cfg.as_of == date(2026, 11, 23)
    assert cfg.window.days == 30 and cfg.window.mode == "runs"
    assert cfg.models.aliases == {"glm-latest": "glm-5.3"}
    assert cfg.models.routing_prefixes == list(DEFAULT_ROUTING_PREFIXES)
    assert "gpt-5.6-luna" in cfg.models.prices
    # the bundled sample configures only what it has: no empty host, archive or export
    assert cfg.repo_names == ["acme/api", "acme/web", "acme-labs/infra.core"]
    assert [h.name for h in cfg.hosts] == ["build-1", "build-2"]
    assert all(h.dossier_home.is_dir() for h in cfg.hosts)
    assert [p.name for p in cfg.cycles_import] == ["imported-cycles.jsonl"]
    assert all(p.is_file() for p in cfg.cycles_import)
    assert cfg.github.recorded_dir == (DATA / "github").resolve()
    # reports of the bundled sample land in the repo's reports/, never inside the package
    assert (bundled.config["output_dir"], cfg.output_dir.name) == ("../../../reports", "reports")


def test_the_stress_config_lists_the_inputs_that_hold_nothing(sample: Fleet) -> None:
    cfg = load_config(sample.root / "scorecard.yaml")
    assert cfg.repo_names == ["acme/api", "acme/web", "acme-labs/infra.core", "acme/docs", "acme/mobile"]
    assert [h.name for h in cfg.hosts] == ["build-1", "build-2", "build-3", "build-0"]
    # the retired build-0 names its dossier's archive: a file where a directory belongs
    assert [h.dossier_home.is_dir() for h in cfg.hosts] == [True, True, True, False]
    assert [p.name for p in cfg.cycles_import] == ["imported-cycles.jsonl", "pool-export.json"]
    assert sample.config["output_dir"] == "reports"


HOSTILE_MARKS = ("evil.example", "rm -rf", "\x1b", "\u202e", "curl ", "free credits", "<<<<<<<")


def _text_of(path: Path) -> str:
    """A file's text; for an SQLite store (the OpenCode DB) the text of every cell, not its pages' bytes."""
    if path.suffix != ".db":
        return path.read_text(encoding="utf-8", errors="replace")
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        cells = [
            str(value)
            for table in tables
            for row in db.execute(f'SELECT * FROM "{table}"')
            for value in row
            if isinstance(value, str)
        ]
    assert cells, f"{path}: no text read from the store"
    return "\n".join(cells)


def test_the_bundled_sample_holds_no_hostile_string() -> None:
    found = {
        mark: p.relative_to(DATA).as_posix()
        for p in sorted(DATA.rglob("*"))
        if p.is_file()
        for mark in HOSTILE_MARKS
        if mark in _text_of(p)
    }
    assert found == {}


def test_the_stress_fleet_is_the_sample_fleet_with_more_damage(sample: Fleet, bundled: Fleet) -> None:
    """Same planned issues (numbers, titles) in both; only the anomalies (and the stress fleet's
    pull requests with runstate-looking comments) differ."""

    def planned(fleet: Fleet, repo: str) -> list[tuple[int, str]]:
        return [(i["number"], i["title"]) for i in fleet.issues[repo] if "pull_request" not in i]

    for repo in bundled.repos:
        assert planned(bundled, repo) == planned(sample, repo)
        assert planned(bundled, repo), repo


def test_slug_directories_follow_the_slug_rule(sample: Fleet) -> None:
    worked_in = sorted(slug(r) for r in sample.repos if sample.issues[r])
    assert worked_in == ["acme-api", "acme-labs-infra.core", "acme-web"]
    for host in ("build-1", "build-2"):
        sched = sample.homes[host] / "sched"
        assert sorted(p.name for p in sched.iterdir()) == worked_in
    assert slug("acme-labs/infra.core") == "acme-labs-infra.core"


def test_checkout_globs_match_most_runs_rows(sample: Fleet) -> None:
    rows = [
        t
        for t in sample.good_tele()
        if isinstance(t.get("cwd"), str) and str(t.get("dossier", "")).startswith("sched:")
    ]
    matched = sum(1 for t in rows if sample.repo_of_cwd(t["cwd"]))
    assert matched / len(rows) >= 0.95
    assert matched < len(rows)  # and a few that match no pattern


# ---------------------------------------- GitHub REST shapes
ISSUE_KEYS = {
    "id", "node_id", "number", "title", "state", "locked", "url", "repository_url", "html_url",
    "comments_url", "comments", "user", "labels", "created_at", "updated_at", "closed_at", "body",
    "author_association",
}  # fmt: skip
COMMENT_KEYS = {
    "id", "node_id", "url", "html_url", "issue_url", "body", "user", "created_at", "updated_at",
    "author_association",
}  # fmt: skip


def test_rest_shapes_and_order(sample: Fleet) -> None:
    for repo in sample.repos:
        api = f"https://api.github.com/repos/{repo}/"
        issues, comments = sample.issues[repo], sample.comments[repo]
        assert [i["number"] for i in issues] == sorted(i["number"] for i in issues)
        assert [(c["created_at"], c["id"]) for c in comments] == sorted(
            (c["created_at"], c["id"]) for c in comments
        )
        for i in issues:
            assert set(i) >= ISSUE_KEYS, ISSUE_KEYS - set(i)
            assert {"login", "id", "type"} <= set(i["user"])
            assert all(set(lb) >= {"name"} for lb in i["labels"])
            assert i["url"] == f"{api}issues/{i['number']}" and i["repository_url"] == api[:-1]
            assert ISO_S.match(i["created_at"]) and ISO_S.match(i["updated_at"])
            assert i["closed_at"] is None or ISO_S.match(i["closed_at"])
            assert i["state"] in ("open", "closed") and (i["state"] == "closed") == (
                i["closed_at"] is not None
            )
            if i.get("pull_request"):
                assert i["pull_request"]["url"] == f"{api}pulls/{i['number']}"
        listed = comments + sample.bad_comments[repo]  # a malformed entry still counts on GitHub
        per_issue = Counter(int(c["issue_url"].rsplit("/", 1)[1]) for c in listed)
        for i in issues:
            assert i["comments"] == per_issue[i["number"]]
            last = max(
                (c["updated_at"] for c in comments if c["issue_url"].endswith(f"/{i['number']}")), default=""
            )
            assert i["updated_at"] >= last
        for c in comments:
            assert set(c) >= COMMENT_KEYS, COMMENT_KEYS - set(c)
            assert c["url"] == f"{api}issues/comments/{c['id']}"
            assert c["issue_url"].startswith(f"{api}issues/")
            assert ISO_S.match(c["created_at"]) and c["updated_at"] >= c["created_at"]
        ids = [c["id"] for c in comments]
        assert len(set(ids)) == len(ids)


def test_issue_count_time_span_and_in_flight(sample: Fleet) -> None:
    issues = [(r, i) for r in sample.repos for i in sample.issues[r] if not i.get("pull_request")]
    assert len(issues) >= 400
    starts = [r.start() for r in sample.runs if r.start() is not None]
    assert min(starts) <= AS_OF - timedelta(weeks=16)
    assert max(starts) < AS_OF
    in_flight = [
        r
        for r in sample.runs
        if r.start()
        and r.start() >= AS_OF - timedelta(days=3)
        and not r.delivered
        and r.last["status"] != "blocked"
    ]
    assert len(in_flight) >= 3
    # nothing is recorded at or after as_of
    assert max(c["updated_at"] for c in sample.all_comments()) < "2026-11-23T00:00:00Z"


# ---------------------------------------- models, tiers, pairings
REQUIRED_SPELLINGS = {
    "glm-5.3", "llmgateway/glm-5.3", "zai-coding-plan/glm-5.3", "openrouter/~z-ai/glm-latest",
    "z-ai/glm-latest", "claude-sonnet-5", "claude-opus-5", "claude-opus-5[1m]", "openrouter-kimi-latest",
    "moonshotai/kimi-latest",
    "openai/gpt-5.6-luna", "qwen3-coder", "qwen/qwen3-coder",
}  # fmt: skip


def test_model_spellings_and_canonical_models(sample: Fleet) -> None:
    raw = {m["keys"]["model"] for ms in sample.trail.values() for m in ms if m["keys"].get("model")}
    assert raw >= REQUIRED_SPELLINGS, REQUIRED_SPELLINGS - raw
    assert {"glm-5.3-flash", "zai-coding-plan/glm-5.3-flash"} & raw
    canon = {canonical(s) for s in raw if s.isprintable() and "evil" not in s and "|" not in s}
    expected = {"glm-5.3", "claude-sonnet-5", "claude-opus-5", "claude-opus-5[1m]", "kimi-latest",
                "gpt-5.6-luna",
                "glm-5.3-flash", "qwen3-coder", "qwen/qwen3-coder"}  # fmt: skip
    assert expected <= canon
    # one gateway family folds five spellings into one canonical model
    assert {s for s in raw if canonical(s) == "glm-5.3"} >= {
        "glm-5.3",
        "llmgateway/glm-5.3",
        "zai-coding-plan/glm-5.3",
        "openrouter/~z-ai/glm-latest",
        "z-ai/glm-latest",
    }


def test_three_dispatch_tiers(sample: Fleet) -> None:
    tiers = {e.get("tier") for e in sample.good_events() if e.get("event") == "spawned"}
    assert {"mechanical", "mid", "strong"} <= tiers


def _pairing_runs(fleet: Fleet) -> dict[tuple[str, str], list[Run]]:
    pairs: dict[tuple[str, str], list[Run]] = defaultdict(list)
    for r in fleet.runs:
        plan, impl = r.model_of("plan"), r.model_of("implement")
        files = (r.first("implement") or {}).get("keys", {}).get("files", "0")
        if plan and impl and canonical(plan) != canonical(impl) and files.isdigit() and int(files) > 0:
            pairs[(canonical(plan), canonical(impl))].append(r)
    return pairs


def test_pairings_have_evidence_and_distinct_quality(sample: Fleet) -> None:
    pairs = {k: v for k, v in _pairing_runs(sample).items() if len(v) >= 15}
    assert len(pairs) >= 4, {k: len(v) for k, v in _pairing_runs(sample).items()}
    rate = {k: sum(r.delivered for r in v) / len(v) for k, v in pairs.items()}
    assert max(rate.values()) - min(rate.values()) >= 0.3, rate
    # the two deliberately close pairings
    a, b = ("claude-sonnet-5", "glm-5.3-flash"), ("claude-sonnet-5", "qwen3-coder")
    assert a in pairs and b in pairs
    assert abs(rate[a] - rate[b]) <= 0.15, (rate[a], rate[b])
    # enough of each in the default 30-day window too (the scorer drops groups under 10 judged cycles)
    lo = AS_OF - timedelta(days=30)
    in_window = {k: sum(1 for r in v if r.start() and r.start() >= lo) for k, v in pairs.items()}
    assert sum(1 for n in in_window.values() if n >= 10) >= 4, in_window


def test_pairing_builds_record_edit_calls(sample: Fleet) -> None:
    pairs = _pairing_runs(sample)
    numbers = {(r.repo, r.issue) for v in pairs.values() for r in v}
    with_edits = 0
    for (_host, repo, name), raw in sample.logs.items():
        n = log_issue(name)
        if (repo, n) in numbers and re.search(
            rb'"name":"(Edit|Write)"|"tool":"(edit|write)"|"type":"file_change"', raw
        ):
            with_edits += 1
    assert with_edits >= 60


# ---------------------------------------- trail situations
def test_full_cycle_trails_with_plausible_spans(sample: Fleet) -> None:
    full = [
        r
        for r in sample.runs
        if [m["phase"] for m in r.milestones] == PHASE_ORDER
        and [m["status"] for m in r.milestones][5:7] == ["awaiting-merge", "done"]
    ]
    assert len(full) >= 100
    for r in full:
        times = [m["at_time"] for m in r.milestones if m["at_time"] is not None]
        gaps = [(b - a).total_seconds() for a, b in zip(times, times[1:], strict=False)]
        assert all(g < 4 * 86400 for g in gaps)
        assert sum(1 for g in gaps if g < 0) <= 1


def test_outcomes_and_redispatches(sample: Fleet) -> None:
    runs = sample.runs
    blocked = [r for r in runs if r.last["status"] == "blocked"]
    assert blocked and all(r.last["keys"].get("reason") for r in blocked)
    fences = [m for ms in sample.trail.values() for m in ms if m["status"] == "superseded"]
    assert fences
    assert all(
        m["keys"].get("gen") == "1" and re.fullmatch(r"slot-\d+", m["keys"].get("takeover", ""))
        for m in fences
    )
    continued = [r for r in runs if any(m["status"] == "superseded" for m in r.milestones[:-1])]
    assert continued, "a fenced run that continues under the same run id"
    # a second run id after an unfinished first run (mid-pipeline done, then a new gate)
    two_runs = [
        key
        for key, ms in sample.trail.items()
        if len({m["run"] for m in ms if m["phase"] != "classify"}) >= 2
        and any(r.issue == key[1] and r.repo == key[0] and r.last["phase"] == "plan" for r in runs)
    ]
    assert two_runs
    abandoned = [
        r
        for r in runs
        if r.last["status"] == "done"
        and r.last["phase"] in ("plan", "implement")
        and len([x for x in runs if (x.repo, x.issue) == (r.repo, r.issue) and x.first("gate")]) == 1
        and r.start()
        and r.start() < AS_OF - timedelta(days=7)
    ]
    assert abandoned
    delivered = [r for r in runs if r.delivered]
    assert len(delivered) >= 200 and any(r.last["phase"] == "report" for r in delivered)


def test_classifier_runs_and_cycles_without_verdict(sample: Fleet) -> None:
    classify = [m for ms in sample.trail.values() for m in ms if m["phase"] == "classify"]
    assert classify
    assert {m["keys"].get("risk") for m in classify} == {"low", "med", "high"}
    assert {m["keys"].get("mode") for m in classify} == {"slot", "full"}
    classified = {k for k, ms in sample.trail.items() if any(m["phase"] == "classify" for m in ms)}
    cycles = {k for k, ms in sample.trail.items() if any(m["phase"] == "gate" for m in ms)}
    assert cycles - classified, "some cycles without a classifier verdict"
    assert classified - cycles, "some issues hold only a classifier run"


def test_batch_phases(sample: Fleet) -> None:
    phases = Counter(m["phase"] for ms in sample.trail.values() for m in ms)
    assert phases["batch-ship"] >= 3 and phases["batch-review"] >= 1
    review = next(m for ms in sample.trail.values() for m in ms if m["phase"] == "batch-review")
    assert {"fixed", "escalated", "ac_met", "ac_total"} <= set(review["keys"])


def test_review_counters_including_invalid_ones(sample: Fleet) -> None:
    reviews = [m["keys"] for ms in sample.trail.values() for m in ms if m["phase"] == "review"]
    assert sum(1 for k in reviews if {"fixed", "escalated", "ac_met", "ac_total"} <= set(k)) >= 200
    exceeding = [
        k
        for k in reviews
        if k.get("ac_met", "").isdigit()
        and k.get("ac_total", "").isdigit()
        and int(k["ac_met"]) > int(k["ac_total"])
    ]
    assert len(exceeding) == 1
    assert sum(1 for k in reviews if k.get("fixed") == "0x1f") == 1
    assert sum(1 for k in reviews if "ac_met" in k and "ac_total" not in k) == 1
    impl = [m["keys"] for ms in sample.trail.values() for m in ms if m["phase"] == "implement"]
    assert sum(1 for k in impl if k.get("files", "").isdigit() and k.get("tests_run", "").isdigit()) >= 200


def test_unusable_at_values(sample: Fleet) -> None:
    ms = [m for ms in sample.trail.values() for m in ms]
    pasted = [m for m in ms if m["at"] == "$(date"]
    assert len(pasted) == 1
    assert "at=$(date -u +%Y-%m-%dT%H:%M:%SZ)" in pasted[0]["body"].split("\n")[1]
    assert sum(1 for m in ms if m["at"] == "" and "at=" in m["body"]) == 1


def test_clock_skew_empty_run_and_missing_model(sample: Fleet) -> None:
    skewed = []
    for r in sample.runs:
        usable = [m["at_time"] for m in r.milestones if m["at_time"] is not None]
        if any(b < a for a, b in zip(usable, usable[1:], strict=False)):
            skewed.append(r)
    assert len(skewed) >= 2
    assert any(r.run_id == "unknown-run" for r in sample.runs)
    whole_runs_without_model = [
        r
        for r in sample.runs
        if len(r.milestones) >= 4 and r.first("gate") and not any("model" in m["keys"] for m in r.milestones)
    ]
    assert len(whole_runs_without_model) >= 5


def test_human_comments_edits_and_pull_requests(sample: Fleet) -> None:
    comments = sample.all_comments()
    human = [c for c in comments if not c["body"].startswith(MARKER)]
    assert len(human) >= 50
    near_miss = [c for c in human if MARKER in c["body"]]
    assert near_miss, "a comment holding the marker but not at the very start"
    edited = [c for c in comments if c["updated_at"] > c["created_at"]]
    assert len(edited) == 1
    prs = [(r, i["number"]) for r in sample.repos for i in sample.issues[r] if i.get("pull_request")]
    assert len(prs) >= 3
    pr_comments = [
        c
        for r in sample.repos
        for c in sample.comments[r]
        if (r, int(c["issue_url"].rsplit("/", 1)[1])) in set(prs)
    ]
    assert pr_comments and any(c["body"].startswith(MARKER) for c in pr_comments)


# ---------------------------------------- events.jsonl
def test_event_vocabulary_and_fields(sample: Fleet) -> None:
    events = sample.good_events()
    names = Counter(e.get("event") for e in events)
    required = {
        "assigned",
        "spawned",
        "progress",
        "phase-updated",
        "stalled",
        "verify-incomplete",
        "fence-written",
        "redispatched",
    }
    assert required <= set(names), required - set(names)
    others = {n for n in names if n in JOURNAL_VOCABULARY} - required
    assert len(others) >= 6
    unknown = {n for n in names if n not in JOURNAL_VOCABULARY}
    assert len(unknown) == 1
    for e in events:
        if e["event"] == "spawned":
            assert (
                isinstance(e.get("tier"), str)
                and isinstance(e.get("cmd"), str)
                and isinstance(e.get("log"), str)
            )
        if e["event"] == "redispatched":
            assert isinstance(e.get("tier"), str) and "cmd" not in e
        assert ISO_MS.match(e["ts"])
    assert sum(1 for e in events if isinstance(e.get("issue"), str)) == 1


def test_redispatch_sequences(sample: Fleet) -> None:
    """verify-incomplete, fence-written, redispatched (a tier, no cmd), then a spawn: a takeover."""
    by_issue: dict[tuple[str, object], list[dict]] = defaultdict(list)
    for e in sample.good_events():
        by_issue[(e["_repo"], e.get("issue"))].append(e)
    takeovers = stalls = 0
    for events in by_issue.values():
        names = [e["event"] for e in sorted(events, key=lambda e: e["ts"])]
        for i in range(len(names) - 3):
            takeovers += names[i : i + 4] == ["verify-incomplete", "fence-written", "redispatched", "spawned"]
            stalls += names[i : i + 4] == ["stalled", "fence-written", "redispatched", "spawned"]
    assert takeovers >= 1 and stalls >= 1


def test_report_agents_follow_merges(sample: Fleet) -> None:
    events = sample.good_events()
    merged: dict[tuple[str, str, object], str] = {}
    for e in events:
        if e["event"] == "merge-accepted":
            merged[(e["_host"], e["_repo"], e["issue"])] = e["ts"]
    reports = [e for e in events if e["event"] == "spawned" and e.get("detail") == "report agent"]
    assert len(reports) >= 100
    for e in reports:
        assert e["tier"] == "mechanical"
        assert merged[(e["_host"], e["_repo"], int(e["issue"]))] < e["ts"]


def test_event_command_lines(sample: Fleet) -> None:
    cmds = [e["cmd"] for e in sample.good_events() if e.get("event") == "spawned"]
    assert any(c.startswith("claude -p --output-format stream-json --verbose") for c in cmds)
    assert any(c.startswith("claude -p --output-format json") for c in cmds)
    assert any(c.startswith("opencode run --auto -m ") and c.endswith("--format json --") for c in cmds)
    assert any(c.startswith("codex exec --json -m gpt-5.6-luna") for c in cmds)
    assert sum(1 for c in cmds if c.startswith("/home/u/.opencode/bin/opencode run")) == 1


def test_one_journal_has_a_truncated_last_line(sample: Fleet) -> None:
    truncated = [k for k, raw in sample.event_files.items() if not raw.endswith(b"\n")]
    assert len(truncated) == 1
    last = sample.event_files[truncated[0]].decode().split("\n")[-1]
    assert loads(last) is None and last.startswith('{"ts":')


# ---------------------------------------- runs.jsonl
SCHEDULER_FIXED = {
    "resolved_version": "n/a",
    "source": "local",
    "verification": "skipped",
    "user": "sched",
    "nested": False,
}


def test_runs_jsonl_rows(sample: Fleet) -> None:
    rows = sample.good_tele()
    sched = [r for r in rows if str(r.get("dossier", "")).startswith("sched:")]
    assert all({k: r.get(k) for k in SCHEDULER_FIXED} == SCHEDULER_FIXED for r in sched)
    assert all(ISO_MS.match(r["timestamp"]) for r in rows)
    issue_rows = [r for r in sched if re.fullmatch(r"issue:\d+", str(r.get("unit")))]
    with_cost = [r for r in issue_rows if isinstance(r.get("total_cost_usd"), int | float)]
    assert len(with_cost) / len(issue_rows) >= 0.5
    null_usage = [
        r
        for r in issue_rows
        if all(r.get(k) is None for k in ("total_cost_usd", "input_tokens", "output_tokens"))
    ]
    assert len(null_usage) >= 50
    assert any(str(r.get("unit", "")).startswith("batch:") for r in rows)
    cli = [r for r in rows if "unit" not in r]
    assert len(cli) == 1 and not cli[0]["dossier"].startswith("sched:")
    assert {r.get("tier") for r in issue_rows} >= {"mechanical", "mid", "strong", None}
    wrong_type = [
        r
        for r in rows
        if any(isinstance(r.get(k), str) for k in ("input_tokens", "output_tokens", "total_cost_usd"))
    ]
    assert len(wrong_type) == 1


def test_runs_jsonl_attribution_cases(sample: Fleet) -> None:
    numbers: dict[int, set[str]] = defaultdict(set)
    for repo in sample.repos:
        for i in sample.issues[repo]:
            if not i.get("pull_request"):
                numbers[i["number"]].add(repo)
    unmatched = [
        r
        for r in sample.good_tele()
        if re.fullmatch(r"issue:\d+", str(r.get("unit"))) and sample.repo_of_cwd(r.get("cwd")) is None
    ]
    kinds = Counter(len(numbers[int(r["unit"].split(":")[1])]) for r in unmatched)
    assert kinds[1] >= 1, "a row attributed by its (unique) issue number"
    assert kinds[2] >= 1, "a row whose issue number exists in two repos: ambiguous"


def test_runs_jsonl_damage(sample: Fleet) -> None:
    truncated = [h for h, raw in sample.runs_files.items() if raw and not raw.endswith(b"\n")]
    assert len(truncated) == 1
    bad = [t for t in sample.tele if t["obj"] is None]
    lines_per_host = Counter(t["host"] for t in sample.tele)
    middle = [t for t in bad if 1 < t["line"] < lines_per_host[t["host"]]]
    assert len(middle) == 1 and len(bad) == 2


def test_runs_rows_follow_their_dispatches(sample: Fleet) -> None:
    """Per host and issue, the k-th completion row comes after the k-th spawn and after its milestones."""
    spawns: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    progress: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    damaged: set[tuple[str, int]] = set()  # issues with a journal line whose issue is not a number
    for e in sample.good_events():
        if isinstance(e.get("issue"), str):
            damaged.add((e["_host"], int(e["issue"])))
        if not isinstance(e.get("issue"), int) or not str(e.get("unit", "")).startswith("issue:"):
            continue
        key = (e["_host"], e["_repo"], e["issue"])
        if e["event"] == "spawned":
            spawns[key].append(e["ts"])
        elif e["event"] == "progress":
            progress[key].append(e["ts"])
    rows: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    unplaced: set[tuple[str, int]] = set()  # rows whose cwd names no repo: their issue is skipped
    for r in sample.good_tele():
        repo = sample.repo_of_cwd(r.get("cwd"))
        m = re.fullmatch(r"issue:(\d+)", str(r.get("unit")))
        if m and repo:
            rows[(r["_host"], repo, int(m.group(1)))].append(r["timestamp"])
        elif m:
            unplaced.add((r["_host"], int(m.group(1))))
    checked = 0
    for key, times in rows.items():
        if (key[0], key[2]) in unplaced | damaged:
            continue
        sp = sorted(spawns[key])
        times.sort()
        assert len(times) <= len(sp), key
        for k, t in enumerate(times):
            assert sp[k] < t
            nxt = sp[k + 1] if k + 1 < len(sp) else "9999"
            assert all(p <= t for p in progress[key] if sp[k] < p < nxt), key
            if k + 1 < len(sp):
                assert t <= nxt, key
            checked += 1
    assert checked >= 1000


# ---------------------------------------- agent logs
def test_agent_log_formats(sample: Fleet) -> None:
    formats: Counter[str] = Counter()
    claude_init_versions = set()
    tools: Counter[str] = Counter()
    bash_commands: set[str] = set()
    for key, raw in sample.logs.items():
        if log_issue(key[2]) is None:
            continue
        for sl in slices(raw.decode("utf-8", "replace")):
            pre = loads(sl[0])
            assert (
                pre is not None
                and pre["type"] == "sched-dispatch"
                and ISO_MS.match(pre["ts"])
                and isinstance(pre["cmd"], list)
            )
            objs = [loads(x) for x in sl[1:]]
            types = {o.get("type") for o in objs if o}
            if "system" in types:
                formats["claude-stream"] += 1
                for o in objs:
                    if o and o.get("type") == "system":
                        claude_init_versions.add(o.get("claude_code_version"))
                    if o and o.get("type") == "assistant":
                        for c in o["message"]["content"]:
                            if c["type"] == "tool_use":
                                tools[c["name"]] += 1
                                if c["name"] == "Bash":
                                    bash_commands.add(c["input"]["command"])
            elif types == {"result"} and len(objs) == 1:
                formats["claude-json"] += 1
            elif "step_start" in types:
                formats["opencode"] += 1
                assert all(isinstance(o.get("timestamp"), int) and o["timestamp"] > 1.7e12 for o in objs if o)
            elif "thread.started" in types:
                formats["codex"] += 1
    assert all(formats[f] >= 20 for f in ("claude-stream", "claude-json", "opencode", "codex")), formats
    assert claude_init_versions and None not in claude_init_versions
    assert tools["Edit"] and tools["Write"] and tools["Bash"]
    assert {"pytest -q", "npm test"} & bash_commands


def test_claude_results_errors_and_aborts(sample: Fleet) -> None:
    text = b"\n".join(sample.logs.values()).decode("utf-8", "replace")
    results = [o for o in map(loads, (ln for ln in text.split("\n") if '"type":"result"' in ln)) if o]
    assert results and all(
        {"usage", "modelUsage", "total_cost_usd", "duration_ms"} <= set(o) for o in results
    )
    differing = [o for o in results if len(o["modelUsage"]) > 1]
    assert differing, "some results whose modelUsage holds more than the usage block's model"
    assert '"is_error":true' in text
    claude_results = [
        r
        for o in map(loads, (ln for ln in text.split("\n") if '"type":"user"' in ln))
        if o
        for r in o["message"]["content"]
        if r.get("type") == "tool_result"
    ]
    assert any(r["is_error"] and ABORT.search(r["content"]) for r in claude_results), (
        "a Claude call a human stopped"
    )
    assert any(r["is_error"] and not ABORT.search(r["content"]) for r in claude_results), (
        "a failed Claude edit"
    )
    assert "Tool execution aborted" in text  # and an opencode one
    assert '"status":"failed"' in text and '"type":"file_change"' in text
    assert '"cost":' in text and '"tokens":{' in text and '"turn.completed"' in text


def test_append_mode_and_killed_agents(sample: Fleet) -> None:
    multi = [k for k, raw in sample.logs.items() if raw.count(b'{"type":"sched-dispatch"') >= 3]
    assert len(multi) >= 100
    cut, claude_killed = 0, 0
    for raw in sample.logs.values():
        for sl in slices(raw.decode("utf-8", "replace")):
            if len(sl) > 1 and loads(sl[-1]) is None:
                cut += 1
                no_result = not any('"type":"result"' in x for x in sl)
                claude_killed += any('"type":"system"' in x for x in sl) and no_result
    assert cut >= 3 and claude_killed >= 1
    assert any(not raw.endswith(b"\n") for raw in sample.logs.values()), "a log whose last line is cut"


def test_log_names(sample: Fleet) -> None:
    names = {k[2] for k in sample.logs}
    assert "engine.log" in names
    assert any(re.fullmatch(r"batch-b-\d{8}-\d{2}-m2-\d+\.log", n) for n in names)
    assert any(re.fullmatch(r"batch-b-\d{8}-\d{2}-gate-test\.focused-\d+\.log", n) for n in names)
    # an issue whose redispatch landed on the other host has a log on each host
    per_issue = Counter((k[1], k[2]) for k in sample.logs if k[2].startswith("issue-"))
    assert any(v == 2 for v in per_issue.values())


def test_cost_only_in_agent_log(sample: Fleet) -> None:
    """Rows whose runs.jsonl cost is null, for issues whose agent log records a cost."""
    null_cost: set[tuple[str, str, int]] = set()
    for r in sample.good_tele():
        repo = sample.repo_of_cwd(r.get("cwd"))
        m = re.fullmatch(r"issue:(\d+)", str(r.get("unit")))
        if repo and m and r.get("total_cost_usd") is None:
            null_cost.add((r["_host"], repo, int(m.group(1))))
    recovered = 0
    for host, repo, n in null_cost:
        raw = sample.logs.get((host, repo, f"issue-{n}.log"), b"")
        if re.search(rb'"total_cost_usd":\d', raw):
            recovered += 1
    assert recovered >= 30
    recent = {
        k
        for k in null_cost
        if any(
            r.start() and r.start() > AS_OF - timedelta(days=30)
            for r in sample.runs
            if (r.repo, r.issue) == k[1:]
        )
    }
    assert recent, "some of them inside the default window"


# ---------------------------------------- hostile strings and time
def test_hostile_strings(sample: Fleet) -> None:
    models = [m["keys"]["model"] for ms in sample.trail.values() for m in ms if "model" in m["keys"]]
    branches = [m["keys"]["branch"] for ms in sample.trail.values() for m in ms if "branch" in m["keys"]]
    ev_tiers = [str(e.get("tier")) for e in sample.good_events()]
    ev_cmds = [str(e.get("cmd")) for e in sample.good_events()]
    tele_tiers = [str(r.get("tier")) for r in sample.good_tele()]

    def has(values: list[str], pred) -> bool:
        return any(pred(v) for v in values)

    assert has(models, lambda v: "|" in v and "`" in v)
    assert has(models, lambda v: "[" in v and "](https://evil.example)" in v)
    assert has(models, lambda v: ESC in v)
    assert has(models, lambda v: BIDI.search(v) is not None)
    assert has(branches, lambda v: "`" in v and "|" in v and BIDI.search(v) is not None)
    assert has(ev_tiers, lambda v: ESC in v and "evil.example" in v)
    assert has(tele_tiers, lambda v: "|" in v and "`" in v and "evil.example" in v)
    assert has(ev_cmds, lambda v: "`" in v and ESC in v and "|" in v)


def test_milestone_times_match_server_times(sample: Fleet) -> None:
    far = [
        m
        for ms in sample.trail.values()
        for m in ms
        if m["at_time"] and abs((m["created"] - m["at_time"]).total_seconds()) > 5
    ]
    assert 1 <= len(far) <= 3, "only the clock-skew milestones disagree with the server"
    assert all(m["at_time"] < m["created"] for m in far)


def test_events_fall_inside_their_runs(sample: Fleet) -> None:
    spans: dict[tuple[str, int], list[tuple[datetime, datetime]]] = defaultdict(list)
    for r in sample.runs:
        spans[(r.repo, r.issue)].append(r.span())
    # a spawn precedes its run's first milestone by a few minutes; an abandoned run's
    # verify-incomplete comes when the scheduler notices the exit, up to ~20 minutes later
    slack = timedelta(minutes=25)
    outside = []
    for e in sample.good_events():
        key = (e["_repo"], e.get("issue"))
        if key not in spans:
            continue
        t = ts(e["ts"])
        if not any(lo - slack <= t <= hi + slack for lo, hi in spans[key]):
            outside.append((key, e["event"], e["ts"]))
    assert outside == []


def test_preambles_start_at_spawns(sample: Fleet) -> None:
    spawn_times: dict[tuple[str, str], set[str]] = defaultdict(set)
    for e in sample.good_events():
        if e["event"] == "spawned":
            spawn_times[(e["_host"], e["_repo"])].add(e["ts"])
    total = 0
    for (host, repo, name), raw in sample.logs.items():
        if log_issue(name) is None or "gate-test" in name:
            continue
        for sl in slices(raw.decode("utf-8", "replace")):
            pre = loads(sl[0])
            assert pre is not None and pre["ts"] in spawn_times[(host, repo)], (host, repo, name)
            total += 1
    assert total >= 1000


# ---------------------------------------- imported cycles
POOLED = (
    "model", "prov", "variant", "role", "pm", "pp", "pv", "bm", "bp", "bv", "harness", "hversion",
    "u", "a", "tedits", "tpaths", "teerr", "tcost", "tship", "tshipe", "thrs", "tver", "tabort",
    "latmed", "day",
)  # fmt: skip


def _valid_cycle(row: dict) -> bool:
    if tuple(row) != POOLED:
        return False
    ints = ("role", "u", "a", "tedits", "tpaths", "teerr", "tship", "tshipe", "tver", "tabort")
    if not all(isinstance(row[k], int) for k in ints):
        return False
    return (
        row["tshipe"] in (0, 1, 2)
        and row["role"] in (0, 1, 2)
        and bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}", row["day"]))
    )


def test_imported_cycles(sample: Fleet) -> None:
    lines = (sample.root / "cycles" / "imported-cycles.jsonl").read_text().splitlines()
    rows = [json.loads(x) for x in lines[:-1]]  # the last line is cut short (checked below)
    valid = [r for r in rows if _valid_cycle(r)]
    assert 2 <= len(rows) - len(valid) <= 3
    assert len(valid) >= 30
    judged = [r for r in valid if r["a"] > 0 and r["tedits"] > 0 and r["tpaths"] > 0]
    in_window = Counter((r["pm"], r["bm"]) for r in judged if r["day"] >= "2026-10-24")
    assert sum(1 for v in in_window.values() if v >= 10) >= 2, "pairings the default window can rank"
    assert any(r["day"] < "2026-10-24" for r in valid), "and older rows for past windows"


# ---------------------------------------- configured inputs without data, damaged entries
def test_a_host_just_added_has_an_empty_runs_file_and_no_repo_directory(sample: Fleet) -> None:
    home = sample.homes["build-3"]
    assert home == sample.root / "hosts" / "build-3" / ".dossier"
    assert (home / "runs.jsonl").is_file() and (home / "runs.jsonl").stat().st_size == 0
    assert (home / "sched").is_dir() and not any(p.is_dir() for p in (home / "sched").iterdir())
    for repo in sample.repos:
        assert not (home / "sched" / slug(repo)).exists()


def test_a_retired_host_names_its_dossier_archive_as_home(sample: Fleet) -> None:
    home = sample.homes["build-0"]
    assert home.is_file() and not home.is_dir()
    assert tarfile.is_tarfile(home)
    with tarfile.open(home) as archive:
        assert ".dossier/runs.jsonl" in archive.getnames()
    assert "build-0" not in sample.runs_files


def test_two_configured_repos_without_a_usable_export(sample: Fleet) -> None:
    # acme/docs: never exported, while the recorded export directory itself exists
    assert (sample.root / "github").is_dir() and not (sample.root / "github" / "acme" / "docs").exists()
    assert sample.export_problems["acme/docs"] == {"issues.json": "absent", "comments.json": "absent"}
    # acme/mobile: its (empty) comment listing was saved, its issue listing is GitHub's rate-limit reply
    assert sample.export_problems["acme/mobile"] == {"issues.json": "a JSON dict"}
    reply = json.loads((sample.root / "github" / "acme" / "mobile" / "issues.json").read_text())
    assert "rate limit" in reply["message"]
    assert sample.comments["acme/mobile"] == [] and sample.bad_comments["acme/mobile"] == []
    for repo in ("acme/api", "acme/web", "acme-labs/infra.core"):
        assert sample.export_problems[repo] == {} and sample.issues[repo]
    # no checkout pattern: no runs.jsonl row can be attributed to either of them
    checkouts = {r["name"]: r["checkouts"] for r in sample.config["repos"]}
    assert checkouts["acme/docs"] == [] and checkouts["acme/mobile"] == []


def test_one_comment_entry_writes_its_id_as_a_string(sample: Fleet) -> None:
    bad = [(repo, c) for repo in sample.repos for c in sample.bad_comments[repo]]
    assert len(bad) == 1, "exactly one malformed entry; every other entry keeps the REST types"
    repo, entry = bad[0]
    assert repo == "acme/web"
    assert isinstance(entry["id"], str) and entry["id"].isdigit()
    assert entry["url"].endswith(f"/issues/comments/{entry['id']}")
    assert MARKER not in entry["body"] and entry["user"]["login"] != "acme-fleet", "a human note"
    assert len(sample.comments["acme/web"]) >= 500


def test_a_directory_stands_where_a_log_would_be(sample: Fleet) -> None:
    assert len(sample.log_dirs) == 1
    (folder,) = sample.log_dirs
    assert re.fullmatch(r"issue-\d+\.log", folder.name)
    assert [p.name for p in folder.iterdir()] == [".keep"]
    host = folder.relative_to(sample.root).parts[1]
    repo = next(r for r in sample.repos if slug(r) == folder.parent.parent.name)
    # no log is hidden by it: the issue's work ran on the other host, where its log is
    assert (host, repo, folder.name) not in sample.logs
    assert any(k[0] != host and k[1:] == (repo, folder.name) for k in sample.logs)


def _usage_numbers(result: dict[str, Any]) -> list[object]:
    """Every token count and cost of a Claude result record (modelUsage entries and usage)."""
    values: list[object] = [result.get("total_cost_usd")]
    for entry in result.get("modelUsage", {}).values():
        values += [v for k, v in entry.items() if k.endswith("Tokens") or k == "costUSD"]
    values += [v for k, v in result.get("usage", {}).items() if k.endswith("_tokens")]
    return values


def _out_of_range(value: object) -> bool:
    """docs/sources.md "Untrusted input": usage values are finite numbers >= 0 (tokens <= 1e15, USD <= 1e6)."""
    return isinstance(value, int | float) and (not math.isfinite(value) or value < 0 or value > 1e15)


def overflowing_results(fleet: Fleet) -> list[tuple[tuple[str, str, str], int]]:
    """(log key, 1-based line) of each Claude result holding an out-of-range usage value."""
    found = []
    for key, raw in fleet.logs.items():
        for no, line in enumerate(raw.decode("utf-8", "replace").split("\n"), 1):
            result = loads(line) if '"type":"result"' in line else None  # json reads 1e400 as inf
            if result is not None and any(_out_of_range(v) for v in _usage_numbers(result)):
                found.append((key, no))
    return found


def test_one_claude_result_has_a_token_count_beyond_any_float(sample: Fleet) -> None:
    found = overflowing_results(sample)
    assert len(found) == 1
    (host, repo, name), no = found[0]
    assert '"cacheReadInputTokens":1e400' in sample.log_lines((host, repo, name))[no - 1]
    # the issue's runs.jsonl row reports its cache reads, so the run's merged figures need no log value
    issue = log_issue(name)
    rows = [
        t
        for t in sample.good_tele()
        if t["_host"] == host
        and t.get("unit") == f"issue:{issue}"
        and sample.repo_of_cwd(t.get("cwd")) == repo
    ]
    assert rows and all(isinstance(t.get("cache_read_tokens"), int) for t in rows)


def test_imported_cycles_end_in_a_row_cut_short(sample: Fleet) -> None:
    raw = (sample.root / "cycles" / "imported-cycles.jsonl").read_text()
    assert not raw.endswith("\n")
    *whole, last = raw.split("\n")
    assert all(loads(line) is not None for line in whole)
    assert last.startswith('{"model":') and loads(last) is None


def test_a_configured_cycle_file_of_a_type_the_importer_does_not_take(sample: Fleet) -> None:
    files = [sample.root / f for f in sample.config["cycles_import"]]
    odd = [f for f in files if f.suffix not in (".jsonl", ".ndjson", ".csv")]
    assert [f.name for f in odd] == ["pool-export.json"] and odd[0].is_file()


# ---------------------------------------- parity profile
def test_parity_single_host_no_classifier_no_report_agents(parity: Fleet) -> None:
    assert len(parity.hosts) == 1
    assert not any(m["phase"] == "classify" for ms in parity.trail.values() for m in ms)
    events = parity.good_events()
    assert not any(e.get("detail") == "report agent" for e in events)
    assert not any(m["phase"] == "report" for ms in parity.trail.values() for m in ms)
    numbers = Counter(
        i["number"] for r in parity.repos for i in parity.issues[r] if not i.get("pull_request")
    )
    assert max(numbers.values()) == 1


def test_parity_clean_trails(parity: Fleet) -> None:
    for (repo, n), ms in parity.trail.items():
        for m in ms:
            assert m["at_time"] is not None, (repo, n, m["at"])
            if m["phase"] in ("review", "batch-review"):
                k = m["keys"]
                for key in ("fixed", "escalated", "ac_met", "ac_total"):
                    assert re.fullmatch(r"\d+", k.get(key, "")), (repo, n, key)
                assert int(k["ac_met"]) <= int(k["ac_total"])
    # review milestones only in the canonical run (first delivered in trail order, else the latest started)
    by_issue: dict[tuple[str, int], list[Run]] = defaultdict(list)
    for r in parity.runs:
        by_issue[(r.repo, r.issue)].append(r)
    for runs in by_issue.values():
        delivered = [r for r in runs if r.delivered]
        canon = (
            delivered[0]
            if delivered
            else max(runs, key=lambda r: r.start() or datetime.min.replace(tzinfo=UTC))
        )
        for r in runs:
            if r is not canon:
                assert not any(m["phase"] in ("review", "batch-review") for m in r.milestones)


def test_parity_logs(parity: Fleet) -> None:
    per_issue = Counter((k[1], log_issue(k[2])) for k in parity.logs if log_issue(k[2]) is not None)
    assert per_issue and max(per_issue.values()) == 1
    text = b"\n".join(parity.logs.values()).decode("utf-8", "replace")
    assert '"type":"step_start"' not in text and '"type":"thread.started"' not in text
    results = [o for o in map(loads, (ln for ln in text.split("\n") if '"type":"result"' in ln)) if o]
    assert len(results) >= 100
    for o in results:
        (entry,) = o["modelUsage"].values()
        u = o["usage"]
        assert (entry["inputTokens"], entry["outputTokens"]) == (u["input_tokens"], u["output_tokens"])
        assert (entry["cacheCreationInputTokens"], entry["cacheReadInputTokens"]) == (
            u["cache_creation_input_tokens"],
            u["cache_read_input_tokens"],
        )
        assert entry["costUSD"] == o["total_cost_usd"]
    for raw in parity.logs.values():
        for sl in slices(raw.decode("utf-8", "replace")):
            assert json.loads(sl[0])["cmd"][0] == "claude"


def test_parity_window_and_strings(parity: Fleet) -> None:
    start = AS_OF - timedelta(days=30)
    events = parity.good_events()
    assert all(e["cmd"].split()[0] == "claude" for e in events if e.get("event") == "spawned")
    for e in events:
        t = ts(e["ts"])
        assert start + timedelta(seconds=1) <= t < AS_OF, e["ts"]
    for r in parity.repos:
        for i in parity.issues[r]:
            assert i["updated_at"] >= start.strftime("%Y-%m-%d")
    blobs = [json.dumps(c["body"]) for c in parity.all_comments()]
    blobs += [e["raw"] for e in parity.events] + [t["raw"] for t in parity.tele]
    joined = "\n".join(blobs)
    assert "\\u001b" not in joined and "evil.example" not in joined and not BIDI.search(joined)
    assert "`" not in joined


def test_parity_has_none_of_the_configured_extras_or_damaged_entries(parity: Fleet) -> None:
    assert parity.hosts == ["build-1"] and parity.homes["build-1"].is_dir()
    assert parity.repos == ["acme/api", "acme/web", "acme-labs/infra.core"]
    assert all(parity.export_problems[r] == {} and parity.bad_comments[r] == [] for r in parity.repos)
    assert parity.config["cycles_import"] == ["cycles/imported-cycles.jsonl"]
    assert set(parity.event_files) == {("build-1", r) for r in parity.repos}
    assert {k[:2] for k in parity.logs} == {("build-1", r) for r in parity.repos}
    assert parity.log_dirs == [] and overflowing_results(parity) == []
    assert all(raw for raw in parity.runs_files.values())
    cycles = (parity.root / "cycles" / "imported-cycles.jsonl").read_text()
    assert cycles.endswith("\n") and all(loads(line) is not None for line in cycles.splitlines())


# ---------------------------------------- what the product's readers make of it
# (code, asset) pairs only the sample profile's anomalies cause; parity must raise none of them.
SAMPLE_ONLY_PAIRS = {
    ("telemetry_missing", "run_telemetry"),
    ("events_missing", "dispatch_events"),
    ("agent_logs_missing", "agent_log_usage"),
    ("repo_sync_failed", "trail_comments"),
    ("malformed_line", "trail_comments"),
    ("malformed_line", "cycles"),
    ("out_of_range_value", "agent_log_usage"),
    *(("unreadable_file", asset) for asset in WARNING_CODES["unreadable_file"].assets),
}
# The fleet's codes; the session sample is one clean developer (its codes: scorecard_tests/unit/sessions);
# the batch inputs' warnings are exercised on crafted files (unit/sources/test_batches.py), the
# decisions' on report assets (assets/test_decisions_assets.py), the API sync's against the fake GitHub.
ALL_PAIRS = sorted(
    (code, asset)
    for code, spec in WARNING_CODES.items()
    if code not in {*SESSION_WARNING_CODES, *DECISION_CODES, *API_ONLY_WARNING_CODES}
    for asset in spec.assets
    if not asset.startswith("batch_")
)


def read_everything(root: Path) -> list[DataWarning]:
    """The warnings of every pure reader and builder, run on the fleet as the assets run them."""
    cfg = load_config(root / "scorecard.yaml")
    trails = read_recorded_trails(cfg)
    telemetry = read_run_telemetry(cfg.hosts)
    events = read_dispatch_events(cfg)
    logs = read_agent_logs(cfg)
    runs = build_trail_runs(trails.frame)
    table = build_run_table(runs.frame, telemetry.frame, events.frame, logs.frame, cfg)
    assert cfg.as_of is not None
    snapshot = pd.Timestamp(cfg.as_of.isoformat(), tz="UTC") + pd.Timedelta(days=1)
    cycles = fleet_cycles(table.frame, as_of=snapshot)
    imported = read_cycle_files(list(cfg.cycles_import))
    results = (trails, telemetry, events, logs, runs, table, cycles, imported)
    return [w for result in results for w in result.warnings]


@pytest.fixture(scope="module")
def sample_warnings(sample: Fleet) -> list[DataWarning]:
    return read_everything(sample.root)


@pytest.mark.parametrize(
    "pair",
    ALL_PAIRS,
    ids=lambda p: f"{p[0]}@{p[1]}",
)
def test_every_warning_code_fires_on_every_asset_it_belongs_to(
    sample_warnings: list[DataWarning], pair: tuple[str, str]
) -> None:
    fired = {(w.code, w.asset) for w in sample_warnings}
    assert fired <= set(ALL_PAIRS), "a warning outside the catalogue"
    assert pair in fired


def test_the_readers_report_each_new_anomaly_where_it_is(
    sample: Fleet, sample_warnings: list[DataWarning]
) -> None:
    def raised(code: str, asset: str) -> list[DataWarning]:
        return [w for w in sample_warnings if (w.code, w.asset) == (code, asset)]

    assert {w.host for w in raised("telemetry_missing", "run_telemetry")} == {"build-3"}
    no_events = {(w.host, w.repo) for w in raised("events_missing", "dispatch_events")}
    assert {("build-3", r) for r in sample.repos} | {
        ("build-1", "acme/docs"),
        ("build-2", "acme/mobile"),
    } <= no_events
    no_logs = {(w.host, w.repo) for w in raised("agent_logs_missing", "agent_log_usage")}
    assert {(h, r) for h in ("build-3", "build-0") for r in sample.repos} <= no_logs
    assert [w.repo for w in raised("repo_sync_failed", "trail_comments")] == ["acme/docs"]

    (bad_entry,) = raised("malformed_line", "trail_comments")
    comments_path = sample.root / "github" / "acme" / "web" / "comments.json"
    entries = json.loads(comments_path.read_text())
    position = next(i for i, c in enumerate(entries, 1) if not _well_formed_comment(c))
    assert (bad_entry.repo, Path(bad_entry.path or ""), bad_entry.line) == (
        "acme/web",
        comments_path,
        position,
    )

    unreadable_logs = raised("unreadable_file", "agent_log_usage")
    assert sorted(Path(w.path or "").name for w in unreadable_logs) == [
        "dossier-2026-10-02.tar",
        "issue-1217.log",
    ]
    unreadable = {
        w.asset: w for w in sample_warnings if w.code == "unreadable_file" and w.asset != "agent_log_usage"
    }
    assert len(unreadable) == sum(1 for w in sample_warnings if w.code == "unreadable_file") - 2
    assert unreadable["trail_comments"].repo == "acme/mobile"
    assert Path(unreadable["trail_comments"].path or "").name == "issues.json"
    assert unreadable["run_telemetry"].host == unreadable["dispatch_events"].host == "build-0"
    assert Path(unreadable["cycles"].path or "").name == "pool-export.json"

    ((host, repo, name), line) = overflowing_results(sample)[0]
    (overflow,) = raised("out_of_range_value", "agent_log_usage")
    log_path = sample.homes[host] / "sched" / slug(repo) / "runs" / name
    assert (Path(overflow.path or ""), overflow.line) == (log_path, line)

    (cut_short,) = raised("malformed_line", "cycles")
    cycles_text = (sample.root / "cycles" / "imported-cycles.jsonl").read_text()
    assert cut_short.line == len(cycles_text.split("\n"))


# The only (code, asset) pairs the committed sample raises: each a problem a real fleet's week has.
BUNDLED_PAIRS = {
    ("unusable_at", "trail_runs"),  # a pasted $(date ...) in one at=
    ("negative_span", "trail_runs"),  # one writer's clock behind
    ("phase_negative_samples", "trail_runs"),
    ("classifier_only_runs", "trail_runs"),
    ("risk_unclassified", "trail_runs"),
    ("malformed_line", "dispatch_events"),  # a journal cut mid-line while being written
    ("malformed_line", "agent_log_usage"),  # killed agents, and one still running
    ("model_routing_prefix", "run_table"),  # gateway spellings
    ("moving_tag", "run_table"),  # kimi-latest has no declared alias
    ("cost_estimated", "run_table"),  # the Codex logs carry tokens only
    ("agent_log_cost_missing", "agent_log_usage"),  # the killed agent's log has no result record
    ("tier_unknown", "run_table"),  # the infra.core batch ran on a laptop the config does not list
}


def test_the_bundled_sample_raises_only_believable_warnings() -> None:
    fired = {(w.code, w.asset) for w in read_everything(DATA)}
    assert fired == BUNDLED_PAIRS


def test_parity_readers_raise_none_of_the_sample_only_warnings(parity: Fleet) -> None:
    fired = {(w.code, w.asset) for w in read_everything(parity.root)}
    assert fired & SAMPLE_ONLY_PAIRS == set()
    assert fired, "the parity fleet keeps its shared anomalies"


# ---------------------------------------- sizes and CLI
def test_size_s_is_a_tenth_of_m(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """S must land within +-25 % of the M targets / 10 (M: ~5,000 issues, ~60,000 comments, ...)."""
    monkeypatch.delenv("SCORECARD_OUTPUT_DIR", raising=False)  # it would override output_dir
    s = generate_fleet(tmp_path / "S", size="S")
    targets = {
        "issues": 500,
        "comments": 6000,
        "events": 10000,
        "runs_jsonl_lines": 2000,
        "logs": 500,
        "log_bytes": 50e6,
    }
    for name, target in targets.items():
        value = getattr(s, name)
        assert 0.75 * target <= value <= 1.25 * target, (name, value, target)
    assert load_config(tmp_path / "S" / "scorecard.yaml").output_dir == (tmp_path / "S" / "reports").resolve()


def test_refuses_to_replace_a_foreign_directory(tmp_path: Path) -> None:
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("precious")
    with pytest.raises(FleetExistsError):
        generate_fleet(foreign)
    assert (foreign / "keep.txt").read_text() == "precious"
    assert main(["--out", str(foreign)]) == 2


def test_cli_regenerates_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p"
    assert main(["--out", str(out), "--profile", "parity", "--seed", "3"]) == 0
    first = tree_digest(out)
    (out / "stray.txt").write_text("left over")
    assert main(["--out", str(out), "--profile", "parity", "--seed", "3"]) == 0
    assert tree_digest(out) == first
    assert "issues" in capsys.readouterr().out
    marker = json.loads((out / "fleet.json").read_text())
    assert (marker["profile"], marker["seed"], marker["size"]) == ("parity", 3, "sample")


def test_ensure_fleet_generates_once_and_reuses(tmp_path: Path) -> None:
    path = ensure_fleet("sample", tmp_path, profile="parity", seed=5)
    assert path == tmp_path / "sample" and (path / "scorecard.yaml").is_file()
    stamp = (path / "fleet.json").stat().st_mtime_ns
    assert ensure_fleet("sample", tmp_path, profile="parity", seed=5) == path
    assert (path / "fleet.json").stat().st_mtime_ns == stamp, "a current fleet is reused, not rewritten"
    marker = json.loads((path / "fleet.json").read_text())
    (path / "fleet.json").write_text(json.dumps({**marker, "version": "0"}))
    ensure_fleet("sample", tmp_path, profile="parity", seed=5)
    assert fleet_marker(path) == marker, "a fleet from another generator version is regenerated"
    with pytest.raises(ValueError):
        ensure_fleet("XXXL", tmp_path)  # XL and XXL are history fleets (bench.history)
