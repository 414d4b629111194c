"""Batches: three member issues built separately and shipped together by an anchor issue.

Member dispatches journal under the unit ``batch:<id>`` with the member's issue number, log into
``batch-<id>-m<k>-<issue>.log`` and write runs.jsonl rows with the batch unit (which the scorecard
does not read as issue rows). The anchor's trail carries the batch phases, including a
``batch-review`` with review counters; each member records the merge as ``batch-ship done``.

Outcomes by the batch's ordinal (its id ends ``-NN``; docs/batches.md "The sample fleet"): 01 ships
after one CI fix and has a prep record (``batch-prep.jsonl`` and the operator's Claude Code
transcript); 02 is dissolved at ``batch-validate`` (one member evicted, one failed, all requeued);
03 ships from ``ops-laptop``, a host the config does not list, so its logs and journal are never
read; later ones ship with 0-2 CI fixes. The merged PRs go to the export's ``pulls.json``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorecard_assets.sample_fleet._catalog import DAY_MS, HOUR_MS, MINUTE_MS, REPOS, HostSpec, slug_of
from scorecard_assets.sample_fleet._model import Fleet, Segment, iso_millis, iso_seconds
from scorecard_assets.sample_fleet._render import Written, write
from scorecard_assets.sample_fleet._story import Cutoff, short_sha

if TYPE_CHECKING:
    from scorecard_assets.sample_fleet._planner import IssueSlot, Planner
    from scorecard_assets.sample_fleet._story import Story

ANCHOR_DELAY_MS = 40 * MINUTE_MS  # the members are built first
UNREAD_HOST = HostSpec("ops-laptop", "/home/op", 0.0)  # not in the config: nothing of it is read
PREP_SESSION = "5f0c2a9e-7d41-4b8e-9a62-3c1e8b7f4d20"
DISSOLVED, UNREAD = 2, 3  # ordinals; 1 ships after one CI fix, with a prep record
# In the default report window: the first three batches, days before the window's end.
WINDOW_OFFSETS_MS = (6 * DAY_MS + 5 * HOUR_MS, 9 * DAY_MS + 2 * HOUR_MS, 12 * DAY_MS + 7 * HOUR_MS)


def batch_slots(planner: Planner, lo: int, hi: int) -> list[IssueSlot]:
    """The batches' slots: an anchor and three members each; the first three inside the default window."""
    from scorecard_assets.sample_fleet._planner import IssueSlot

    n_batches = max(len(WINDOW_OFFSETS_MS), planner.issue_count() // 250)
    slots: list[IssueSlot] = []
    for b in range(n_batches):
        t = (
            hi - WINDOW_OFFSETS_MS[b]
            if b < len(WINDOW_OFFSETS_MS)
            else hi - (b + 1) * (hi - lo) // (n_batches + 1)
        )
        repo = REPOS[b % len(REPOS)]
        bid = f"b-{iso_seconds(t)[:10].replace('-', '')}-{b + 1:02d}"
        slots.append(IssueSlot(repo, t, "batch-anchor", batch_id=bid))
        for k in range(1, 4):
            slots.append(IssueSlot(repo, t + 5 * MINUTE_MS * k, "batch-member", batch_id=bid, batch_index=k))
    return slots


def _ordinal(bid: str) -> int:
    tail = bid.rsplit("-", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def _ci_fixes(ordinal: int) -> int:
    return 1 if ordinal == 1 else 0 if ordinal == UNREAD else ordinal % 3


def _records(fleet: Fleet) -> dict[str, list[dict[str, Any]]]:
    """What the renderers write besides the fleet's own lists (kept on the fleet object)."""
    return vars(fleet).setdefault("_batch_records", {"pulls": [], "prep": []})


def anchor(story: Story) -> None:
    rng = story.rng
    bid = story.slot.batch_id or "b-0"
    ordinal = _ordinal(bid)
    host = UNREAD_HOST if ordinal == UNREAD else story.host
    members = ",".join(str(m) for m in story.slot.batch_members)
    run = story.run_id()
    story.t += ANCHOR_DELAY_MS
    agent = story.agent("claude-sonnet-5")
    log = f"batch-{bid}-anchor-{story.n}.log"
    # the anchor's own dispatch runs under its issue unit: it is no member of the batch it sets up
    d = story.spawn("batch", agent, host=host, unit=f"issue:{story.n}", log_name=log)
    if ordinal == 1:
        _prep_record(story, bid, host)
    story.step(1, 4)
    setup = [("batch", bid), ("members", members), ("model", agent.spelling.trail)]
    story.post(d, "batch-setup", "done", run, setup)
    story.step(3, 12)
    if ordinal == DISSOLVED:
        _dissolve(story, d, bid, run, members)
        return
    story.post(d, "batch-validate", "done", run, [("batch", bid), ("ci_parity", "ok")])
    story.step(5, 20)
    counters = [("fixed", str(rng.randint(0, 4))), ("escalated", "0"), ("ac_met", "7"), ("ac_total", "8")]
    review = Segment("batch-review", 0, 0, fixes=2, verify_last=True)
    story.post(d, "batch-review", "done", run, [("batch", bid), *counters], seg=review)
    story.step(2, 8)
    pr = story.n + 1
    fixes = str(_ci_fixes(ordinal))
    ship = [("batch", bid), ("pr", str(pr)), ("ci_fix_attempts", "0")]
    story.post(d, "batch-ship", "awaiting-merge", run, ship)
    opened = story.t
    story.close(d)
    story.step(20, 90)
    done = [("batch", bid), ("pr", str(pr)), ("members", members), ("ci_fix_attempts", fixes)]
    story.post(None, "batch-ship", "done", run, [*done, ("merge_commit", short_sha(rng))])
    _records(story.p.fleet)["pulls"].append(
        {
            "repo": story.repo,
            "number": pr,
            "headRefName": f"batch/{bid}-{bid.split('-')[1]}",
            "createdAt": iso_seconds(opened),
            "mergedAt": iso_seconds(story.t),
            "closingIssuesReferences": [{"number": m} for m in story.slot.batch_members],
        }
    )
    story.journal(story.t + 50, host.name, "batch-setup-done", unit=f"batch:{bid}")
    story.step(2, 10)
    story.post(None, "batch-report", "done", run, [("batch", bid)], one_liner=True)
    story.issue.labels.append("batch")


def member(story: Story) -> None:
    rng = story.rng
    bid = story.slot.batch_id or "b-0"
    ordinal = _ordinal(bid)
    agent = story.agent("glm-5.3", ("llmgateway/glm-5.3",))
    run = story.run_id()
    log = f"batch-{bid}-m{story.slot.batch_index}-{story.n}.log"
    host = UNREAD_HOST if ordinal == UNREAD else story.host
    d = story.spawn("batch", agent, host=host, unit=f"batch:{bid}", log_name=log)
    story.step(1, 3)
    story.post(d, "gate", "done", run, [("batch", bid), ("model", agent.spelling.trail), ("next", "setup")])
    story.step(1, 3)
    story.post(d, "setup", "done", run, [("batch", bid), ("branch", f"batch/{bid}"), ("next", "plan")])
    story.step(3, 9)
    story.post(d, "plan", "done", run, [("batch", bid), ("next", "implement")])
    story.step(8, 30)
    files = rng.randint(1, 4)
    lines = [
        ("batch", bid),
        ("files", str(files)),
        ("tests_run", str(rng.randint(3, 60))),
        ("next", "batch-review"),
    ]
    seg = Segment("implement", 0, 0, files=files, edit_err=0.05, verify_last=True)
    story.post(d, "implement", "done", run, lines, seg=seg)
    story.close(d)
    if ordinal == DISSOLVED:  # evicted, failed or handed back to the queue: no merge to record
        if story.slot.batch_index < 3:
            event = "member-evicted" if story.slot.batch_index == 1 else "unit-failed"
            story.journal(story.t + 30_000, host.name, event, unit=f"batch:{bid}")
        return
    # the anchor ships the batch; each member records the merge
    merged = story.slot.start_ms + ANCHOR_DELAY_MS + 2 * HOUR_MS + rng.randint(0, 30) * MINUTE_MS
    story.t = max(merged, story.last_post + 30 * MINUTE_MS)
    if story.t >= story.p.cutoff:
        raise Cutoff
    story.post(None, "batch-ship", "done", run, [("batch", bid), ("merge_commit", short_sha(rng))])


def _dissolve(story: Story, d: Any, bid: str, run: str, members: str) -> None:
    """The validation gate trips the eviction threshold: the batch dissolves, its members requeue."""
    keys = [("batch", bid), ("reason", "eviction-threshold"), ("dissolved", "true"), ("requeued", members)]
    story.post(d, "batch-validate", "blocked", run, keys)
    story.close(d)
    story.journal(story.t + 40_000, d.host, "batch-dissolved", unit=f"batch:{bid}")


def _prep_record(story: Story, bid: str, host: HostSpec) -> None:
    """The operator prepared the batch in a Claude Code session, then ran ``sched enqueue``."""
    enqueued = story.t - 5 * MINUTE_MS
    turns = []
    for k in range(6):
        ts = enqueued - (95 - 15 * k) * MINUTE_MS
        usage = {
            "input_tokens": story.rng.randint(5, 40),
            "output_tokens": story.rng.randint(800, 4_000),
            "cache_creation_input_tokens": story.rng.randint(2_000, 30_000),
            "cache_read_input_tokens": story.rng.randint(60_000, 180_000),
        }
        turns.append((ts, f"msg_prep{k:02d}", usage))
    _records(story.p.fleet)["prep"].append(
        {"host": host.name, "repo": story.repo, "ts": enqueued, "batch": bid, "members": 3, "turns": turns}
    )


def render_batch_files(fleet: Fleet, root: Path, written: Written) -> None:
    """``pulls.json`` per exported repo, and the prep records with their transcripts per host."""
    records = _records(fleet)
    for repo in REPOS:
        owner, name = repo.name.split("/", 1)
        pulls = sorted((p for p in records["pulls"] if p["repo"] == repo.name), key=lambda p: -p["number"])
        body = [{k: v for k, v in p.items() if k != "repo"} for p in pulls]
        write(root / "github" / owner / name / "pulls.json", json.dumps(body, indent=1) + "\n", written, root)
    for prep in records["prep"]:
        if prep["host"] not in fleet.hosts:
            continue
        home = root / "hosts" / prep["host"]
        line = {"ts": iso_millis(prep["ts"]), "batch": prep["batch"], "session_id": PREP_SESSION}
        line |= {"source": "env", "members": prep["members"]}
        sched = home / ".dossier" / "sched" / slug_of(prep["repo"])
        write(sched / "batch-prep.jsonl", json.dumps(line) + "\n", written, root)
        transcript = [
            {
                "type": "assistant",
                "timestamp": iso_millis(ts),
                "sessionId": PREP_SESSION,
                "requestId": f"req_{msg_id}",
                "message": {"id": msg_id, "model": "claude-opus-5", "role": "assistant", "usage": usage},
            }
            for ts, msg_id, usage in prep["turns"]
        ]
        project = home / ".claude" / "projects" / f"-home-op-src-{slug_of(prep['repo'])}"
        text = "".join(json.dumps(t) + "\n" for t in transcript)
        write(project / f"{PREP_SESSION}.jsonl", text, written, root)
