"""Batches: three member issues built separately and shipped together by an anchor issue.

Member dispatches journal under the unit ``batch:<id>`` with the member's issue number, log into
``batch-<id>-m<k>-<issue>.log`` and write runs.jsonl rows with the batch unit (which the scorecard
does not read as issue rows). The anchor's trail carries the batch phases, including a
``batch-review`` with review counters; each member records the merge as ``batch-ship done``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorecard_assets.sample_fleet._catalog import HOUR_MS, MINUTE_MS
from scorecard_assets.sample_fleet._model import Segment
from scorecard_assets.sample_fleet._story import Cutoff, short_sha

if TYPE_CHECKING:
    from scorecard_assets.sample_fleet._story import Story

ANCHOR_DELAY_MS = 40 * MINUTE_MS  # the members are built first


def anchor(story: Story) -> None:
    rng = story.rng
    bid = story.slot.batch_id or "b-0"
    members = ",".join(str(m) for m in story.slot.batch_members)
    run = story.run_id()
    story.t += ANCHOR_DELAY_MS
    agent = story.agent("claude-sonnet-5")
    d = story.spawn("batch", agent, unit=f"batch:{bid}", log_name=f"batch-{bid}-anchor-{story.n}.log")
    story.step(1, 4)
    setup = [("batch", bid), ("members", members), ("model", agent.spelling.trail)]
    story.post(d, "batch-setup", "done", run, setup)
    story.step(3, 12)
    story.post(d, "batch-validate", "done", run, [("batch", bid), ("ci_parity", "ok")])
    story.step(5, 20)
    counters = [("fixed", str(rng.randint(0, 4))), ("escalated", "0"), ("ac_met", "7"), ("ac_total", "8")]
    review = Segment("batch-review", 0, 0, fixes=2, verify_last=True)
    story.post(d, "batch-review", "done", run, [("batch", bid), *counters], seg=review)
    story.step(2, 8)
    pr = story.n + 1
    story.post(d, "batch-ship", "awaiting-merge", run, [("batch", bid), ("pr", str(pr))])
    story.close(d)
    story.step(20, 90)
    story.post(
        None, "batch-ship", "done", run, [("batch", bid), ("pr", str(pr)), ("merge_commit", short_sha(rng))]
    )
    story.journal(story.t + 50, story.host.name, "batch-setup-done", unit=f"batch:{bid}")
    story.step(2, 10)
    story.post(None, "batch-report", "done", run, [("batch", bid)], one_liner=True)
    story.issue.labels.append("batch")


def member(story: Story) -> None:
    rng = story.rng
    bid = story.slot.batch_id or "b-0"
    agent = story.agent("glm-5.3", ("llmgateway/glm-5.3",))
    run = story.run_id()
    log = f"batch-{bid}-m{story.slot.batch_index}-{story.n}.log"
    d = story.spawn("batch", agent, unit=f"batch:{bid}", log_name=log)
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
    # the anchor ships the batch; each member records the merge
    merged = story.slot.start_ms + ANCHOR_DELAY_MS + 2 * HOUR_MS + rng.randint(0, 30) * MINUTE_MS
    story.t = max(merged, story.last_post + 30 * MINUTE_MS)
    if story.t >= story.p.cutoff:
        raise Cutoff
    story.post(None, "batch-ship", "done", run, [("batch", bid), ("merge_commit", short_sha(rng))])
